// The row-wise kind on the CPU: an op whose math sees one row of its last dimension at a time (a
// norm, a softmax, a gated activation), written once as a functor for both devices:
//
//   template <typename T>
//   struct Forward {
//     T eps;  // the schema's scalars, in the math type T
//     template <typename Row, typename In, typename Out>
//     OPGEN_HOST_DEVICE void operator()(const Row& row, const In& x, const In& weight, const Out& y) const {
//       const T mean_square = row.sum(x.cols, [&](auto j) { return x[j] * x[j]; }) / T(x.cols);
//       const T scale = T(1) / sqrt(mean_square + eps);
//       row.for_each(y.cols, [&](auto j) { y.set(j, x[j] * scale * weight[j]); });
//     }
//   };
//
// x[j] is element j of the row in the math type (float for 16-bit floats); y.set(j, v) stores v
// rounded to the output's dtype; x.round(v) is v rounded to x's dtype and back (an intermediate as a
// 16-bit kernel rounds it); In::storage_t is the dtype's type. row.sum(n, f) / row.max(n, f) reduce f(j) over
// j < n, row.for_each(n, f) calls f(j) for j < n, row.sync() orders stores before later reads of
// them. row.exp_sum(n, f) gives .max, the largest f(j), and .sum, the sum of exp(f(j) - .max) (a
// softmax's), in one reduction where row.max and row.sum take two (common/row_stats.h);
// row.mean_var(n, f) gives .mean and .var, the mean and (biased) variance of f(j) (a LayerNorm's), in
// one reduction where the mean's square is at most the variance (else two, as accurate as two sums);
// row.softmax(n, f) gives that reduction's .max and .sum, and p[j] = exp(f(j) - .max) / .sum for
// j < n (CUDA keeps each exp where it holds the row in registers: one exp an element);
// opgen::row_exp(v) (row_stats.h) is e^v as those sums take it, opgen::row_exp2(v) 2^v (one hardware exp2
// for float on CUDA).
// On CUDA several threads share each row (rowwise.cuh): every thread runs the functor, so each of
// these calls must be reached by all of them (no row.sum inside an `if` on j), and which of them a
// functor calls may depend on the rows' lengths and its scalars, not on elements (a functor that
// reduces nothing has its rows spread over as many threads as suit them); loops run over at most
// the widest row, and a functor sets every element of each output row. Take j as `auto`:
// where CUDA holds rows in registers (rows on 16-byte boundaries) it then names this thread's
// register of element j (x[j], y.set(j, v)); arithmetic on it (x[j + h]) gives a plain index, read
// from memory. Torch-free except for the thread pool.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "common/cpu_loops.h"
#include "common/kernel_types.h"
#include "common/row_stats.h"

namespace examples::opgen {

namespace cpu {

template <typename S>
struct RowIn {
  using storage_t = S;
  using math_t = opmath_t<S>;
  const S* data;
  int64_t cols;

  // v rounded to the tensor's dtype and back, as a kernel computing in the dtype would round it.
  math_t round(math_t v) const {
    return rounded<S>(v);
  }

  math_t operator[](int64_t j) const {
    return static_cast<math_t>(data[j]);
  }
};

template <typename S>
struct RowOut {
  using storage_t = S;
  using math_t = opmath_t<S>;
  S* data;  // null: a result nobody asked for (a gradient not needed), computed but not stored
  int64_t cols;

  void set(int64_t j, math_t value) const {
    if (data != nullptr) {
      data[j] = static_cast<S>(value);
    }
  }
};

// One row's loops, run by one thread.
struct Row {
  // Float terms summed in double: one float running through a long row drifts (LayerNorm's
  // variance at 70001 elements cost its output up to 4.6e-5, past its float32 tolerance, where the
  // CUDA kernels' per-thread partial sums and tree stay well within it), rounded once at the end.
  template <typename F>
  auto sum(int64_t n, const F& f) const {
    using T = decltype(f(int64_t(0)));
    using Total = std::conditional_t<std::is_same_v<T, float>, double, T>;
    Total total(0);
    for (int64_t j = 0; j < n; ++j) {
      total += Total(f(j));
    }
    return T(total);
  }

  // Two passes, in double for float terms as sum's.
  template <typename F>
  auto mean_var(int64_t n, const F& f) const {
    using T = decltype(f(int64_t(0)));
    using Total = std::conditional_t<std::is_same_v<T, float>, double, T>;
    const Total count = Total(n > 0 ? n : 1);
    Total total(0);
    for (int64_t j = 0; j < n; ++j) {
      total += Total(f(j));
    }
    const Total mean = total / count;
    Total deviations(0);
    for (int64_t j = 0; j < n; ++j) {
      const Total d = Total(f(j)) - mean;
      deviations += d * d;
    }
    return RowMeanVar<T>{T(mean), T(deviations / count)};
  }

  template <typename F>
  auto max(int64_t n, const F& f) const {
    using T = decltype(f(int64_t(0)));
    T best = -std::numeric_limits<T>::infinity();
    for (int64_t j = 0; j < n; ++j) {
      const T value = f(j);
      best = row_max(value, best);
    }
    return best;
  }

  template <typename F>
  void for_each(int64_t n, const F& f) const {
    for (int64_t j = 0; j < n; ++j) {
      f(j);
    }
  }

  template <typename F>
  auto exp_sum(int64_t n, const F& f) const {
    return partial_exp_sum([&](const auto& g) { for_each(n, g); }, f);
  }

  template <typename F>
  auto softmax(int64_t n, const F& f) const {
    return row_softmax(exp_sum(n, f), f);
  }

  void sync() const {}
};

template <typename Op, typename S, int N, int K, std::size_t... I, std::size_t... O>
void call_row(const Op& op, int64_t r, const RowTensors<const S, N>& in, const RowTensors<S, K>& out,
              std::index_sequence<I...>, std::index_sequence<O...>) {
  op(Row{}, RowIn<S>{in.data[I] + r * in.row_stride[I], in.cols[I]}...,
     RowOut<S>{out.data[O] == nullptr ? nullptr : out.data[O] + r * out.row_stride[O], out.cols[O]}...);
}

// op(row, inputs' rows..., outputs' rows...) for each of `rows` rows, in parallel over rows.
template <typename Op, typename S, int N, int K>
void map_rows(const Op& op, int64_t rows, const RowTensors<const S, N>& in, const RowTensors<S, K>& out) {
  int64_t work = 1;  // elements a row touches: rows of a few elements go many to a task
  for (int i = 0; i < N; ++i) {
    work += in.cols[i];
  }
  parallel_for(rows, std::max<int64_t>(1, 32768 / work), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      call_row(op, r, in, out, std::make_index_sequence<N>{}, std::make_index_sequence<K>{});
    }
  });
}

}  // namespace cpu
}  // namespace examples::opgen
