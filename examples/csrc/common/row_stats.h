// The row-wise kind's statistic that takes one reduction where the plain loops take two
// (common/rowwise.h): a row's maximum with the sum of exp(x - maximum) (a softmax, a log-softmax),
// and the softmax built on it.
// Each thread of a row works out its own elements' first; the partial results are then combined
// across the row's threads once. The combine is symmetric, bit for bit (combine(a, b) ==
// combine(b, a)), so that every thread of a row ends with the same result whichever order a
// reduction pairs them in. (A row's mean and variance so, Chan's pairwise update, measured slower
// on an H100 than two plain sums: 77% of a copy against 88% for a LayerNorm of bfloat16 rows of
// 1024.) Torch-free; host and device.
#pragma once

#include <cmath>
#include <type_traits>

#include "common/kernel_types.h"

namespace examples::opgen {

// The largest element and the sum of exp(element - max): log(sum) + max is the log-sum-exp.
template <typename T>
struct RowExpSum {
  T max;
  T sum;
};

// The larger of a and b, NaN winning as in torch's max (row.max's combine, on both devices): one
// instruction for float on CUDA (max.NaN, compute capability 8.0 and up) where the compare-and-select
// takes three, in a loop that runs once an element.
template <typename T>
OPGEN_HOST_DEVICE T row_max(T a, T b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (std::is_same_v<T, float>) {
    float larger;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(larger) : "f"(a), "f"(b));
    return larger;
  }
#endif
  return (a > b || a != a) ? a : b;
}

// 2^v on CUDA, float: the hardware's exp2 alone (ex2.approx.ftz: 2 ulp, results below 2^-126
// flushed to 0, which no sum of exp(v - max) >= 1 notices), where exp2f adds three instructions for
// subnormal results and expf more; exp2 on the host and on double. A softmax folds its sum into the
// power: y = 2^((x - max) log2(e) - log2(sum)), an FFMA and this an element.
template <typename T>
OPGEN_HOST_DEVICE T row_exp2(T v) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) {
    float power;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(power) : "f"(v));
    return power;
  }
#endif
  return std::exp2(v);
}

// log2(e): e^v = 2^(v log2(e)).
template <typename T>
constexpr T kLog2E = T(1.4426950408889634);

// exp(v) for the sums of exp: row_exp2 of v log2(e) for float (on CUDA, two instructions), exp on
// double.
template <typename T>
OPGEN_HOST_DEVICE T row_exp(T v) {
  if constexpr (std::is_same_v<T, float>) {
    return row_exp2(v * kLog2E<float>);
  } else {
    return std::exp(v);
  }
}

template <typename T>
OPGEN_HOST_DEVICE RowExpSum<T> combine_exp_sums(const RowExpSum<T>& a, const RowExpSum<T>& b) {
  const T top = row_max(a.max, b.max);
  if (top == -INFINITY) {  // both empty (or all -inf): nothing to rescale, exp(-inf - -inf) is NaN
    return {top, a.sum + b.sum};
  }
  return {top, a.sum * row_exp(a.max - top) + b.sum * row_exp(b.max - top)};
}

// A row's softmax (row.softmax's): .max and .sum as row.exp_sum gives them, and p[j] = exp(f(j) - max)
// / sum, worked out from f(j) where it is asked for: 2^((f(j) - max) log2(e) - log2(sum)), an FFMA
// and one exp2 (f(j) - max first: it is exact, where f(j) log2(e) - max log2(e) would round at large
// logits). A row of -inf (every entry masked) gives NaN, as torch's softmax does. (CUDA's register
// kernels keep each element's exp instead: rowwise.cuh.)
template <typename T, typename F>
struct RowSoftmax {
  T max;
  T sum;
  T log2_sum;
  F f;

  template <typename J>
  OPGEN_HOST_DEVICE T operator[](J j) const {
    return row_exp2(std::fma(f(j) - max, kLog2E<T>, -log2_sum));
  }
};

template <typename T, typename F>
OPGEN_HOST_DEVICE RowSoftmax<T, F> row_softmax(const RowExpSum<T>& terms, const F& f) {
  return {terms.max, terms.sum, std::log2(terms.sum), f};
}

// One thread's part of a row: visit(g) calls g(j) for each of its elements j; f(j) is the value of
// element j. Two passes over them: the largest, then the sum of exp(value - largest).
template <typename Visit, typename F>
OPGEN_HOST_DEVICE auto partial_exp_sum(const Visit& visit, const F& f) {
  using T = decltype(f(int64_t(0)));
  T top = T(-INFINITY);
  visit([&](auto j) { top = row_max(top, f(j)); });
  const T shift = top == T(-INFINITY) ? T(0) : top;  // no elements, or all -inf: every term is 0
  T sum(0);
  visit([&](auto j) { sum += row_exp(f(j) - shift); });
  return RowExpSum<T>{top, sum};
}

}  // namespace examples::opgen
