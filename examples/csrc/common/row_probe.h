// Whether a row-wise functor reduces or syncs across a row's threads, asked on the host before a
// CUDA launch (rowwise.cuh): one that does not has its rows split over blocks, where a reduction
// could not be made. Torch-free, and free of CUDA too (tests/ compile it with a plain C++ compiler).
#pragma once

#include <cstdint>
#include <utility>

#include "common/kernel_types.h"
#include "common/row_stats.h"

namespace examples::opgen::cuda {

// A functor run on the host over rows whose elements are never read (its loops do nothing), to learn
// whether it reduces or syncs across a row's threads: which of those calls it makes may depend on
// the rows' lengths and its scalars, not on elements (rowwise.h). (OPGEN_HOST_DEVICE as the
// functor's lambdas are, which call them.)
struct RowProbe {
  bool* across;

  template <typename F>
  OPGEN_HOST_DEVICE auto sum(int64_t, const F& f) const {
    *across = true;
    return decltype(f(int64_t(0)))(0);
  }

  template <typename F>
  OPGEN_HOST_DEVICE auto max(int64_t n, const F& f) const {
    return sum(n, f);
  }

  template <typename F>
  OPGEN_HOST_DEVICE auto exp_sum(int64_t, const F& f) const {
    *across = true;
    using T = decltype(f(int64_t(0)));
    return RowExpSum<T>{T(0), T(1)};
  }

  template <typename F>
  OPGEN_HOST_DEVICE void for_each(int64_t, const F&) const {}

  OPGEN_HOST_DEVICE void sync() const {
    *across = true;
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
bool reduces_across_threads(const Op& op, const RowTensors<const S, N>& in, const RowTensors<S, K>& out,
                            std::index_sequence<I...>, std::index_sequence<O...>) {
  bool across = false;
  op(RowProbe{&across}, ProbeIn<S>{in.cols[I]}..., ProbeOut<S>{out.cols[O]}...);
  return across;
}

}  // namespace examples::opgen::cuda
