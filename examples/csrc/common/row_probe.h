// What a row-wise functor does across a row, asked on the host before a CUDA launch (rowwise.cuh):
// whether it reduces or syncs across a row's threads (one that does not has its rows split over
// blocks, where a reduction could not be made), and the longest of its row loops (a split row's
// threads cover that, not a wider input that the functor reads only by plain index: a gated
// activation's second half) and the shortest (a kernel's twin for whole rows, which checks no
// element against a row's end, runs only where every loop covers the row). Torch-free, and free of
// CUDA too (tests/ compile it with a plain C++ compiler).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "common/kernel_types.h"
#include "common/row_stats.h"

namespace examples::opgen::cuda {

// What the probe found.
struct RowUse {
  bool across = false;           // a reduction or a sync across the row's threads
  int64_t longest = 0;           // the largest n of its loops (row.for_each, row.sum, ...)
  int64_t shortest = INT64_MAX;  // the smallest (none: INT64_MAX)
};

// A functor run on the host over rows whose elements are never read (its loops do nothing), to learn
// what it does across a row: which of those calls it makes, and their lengths, may depend on the
// rows' lengths and its scalars, not on elements (rowwise.h). (OPGEN_HOST_DEVICE as the functor's
// lambdas are, which call them.)
struct RowProbe {
  RowUse* use;

  template <typename F>
  OPGEN_HOST_DEVICE auto sum(int64_t n, const F& f) const {
    reduce(n);
    return decltype(f(int64_t(0)))(0);
  }

  template <typename F>
  OPGEN_HOST_DEVICE auto max(int64_t n, const F& f) const {
    return sum(n, f);
  }

  template <typename F>
  OPGEN_HOST_DEVICE auto mean_var(int64_t n, const F& f) const {
    reduce(n);
    using T = decltype(f(int64_t(0)));
    return RowMeanVar<T>{T(0), T(0)};
  }

  template <typename F>
  OPGEN_HOST_DEVICE auto exp_sum(int64_t n, const F& f) const {
    reduce(n);
    using T = decltype(f(int64_t(0)));
    return RowExpSum<T>{T(0), T(1)};
  }

  template <typename F>
  OPGEN_HOST_DEVICE auto softmax(int64_t n, const F& f) const {
    return row_softmax(exp_sum(n, f), f);
  }

  template <typename F>
  OPGEN_HOST_DEVICE void for_each(int64_t n, const F&) const {
    loop(n);
  }

  OPGEN_HOST_DEVICE void sync() const {
    use->across = true;
  }

 private:
  OPGEN_HOST_DEVICE void reduce(int64_t n) const {
    use->across = true;
    loop(n);
  }

  OPGEN_HOST_DEVICE void loop(int64_t n) const {
    use->longest = std::max(use->longest, n);
    use->shortest = std::min(use->shortest, n);
  }
};

template <typename S>
struct ProbeIn {
  using storage_t = S;
  using math_t = opmath_t<S>;
  int64_t cols;

  OPGEN_HOST_DEVICE math_t round(math_t v) const {
    return v;
  }

  OPGEN_HOST_DEVICE math_t operator[](int64_t) const {
    return math_t(0);
  }
};

template <typename S>
struct ProbeOut {
  using storage_t = S;
  using math_t = opmath_t<S>;
  int64_t cols;

  OPGEN_HOST_DEVICE void set(int64_t, math_t) const {}
};

template <typename Op, typename S, int N, int K, std::size_t... I, std::size_t... O>
RowUse probe_row_use(const Op& op, const RowTensors<const S, N>& in, const RowTensors<S, K>& out,
                     std::index_sequence<I...>, std::index_sequence<O...>) {
  RowUse use;
  op(RowProbe{&use}, ProbeIn<S>{in.cols[I]}..., ProbeOut<S>{out.cols[O]}...);
  return use;
}

}  // namespace examples::opgen::cuda
