// The row-wise kind's statistic that takes one reduction where the plain loops take two
// (common/rowwise.h): a row's maximum with the sum of exp(x - maximum) (a softmax, a log-softmax).
// Each thread of a row works out its own elements' first; the partial results are then combined
// across the row's threads once. The combine is symmetric, bit for bit (combine(a, b) ==
// combine(b, a)), so that every thread of a row ends with the same result whichever order a
// reduction pairs them in. (A row's mean and variance so, Chan's pairwise update, measured slower
// on an H100 than two plain sums: 77% of a copy against 88% for a LayerNorm of bfloat16 rows of
// 1024.) Torch-free; host and device.
#pragma once

#include <cmath>

#include "common/kernel_types.h"

namespace examples::opgen {

// The largest element and the sum of exp(element - max): log(sum) + max is the log-sum-exp.
template <typename T>
struct RowExpSum {
  T max;
  T sum;
};

// The larger of a and b, NaN winning as in torch's max (row.max's combine, on both devices).
template <typename T>
OPGEN_HOST_DEVICE T row_max(T a, T b) {
  return (a > b || a != a) ? a : b;
}

// exp(v) for the sums of exp: exp2 on float (a few instructions on CUDA, against expf's more),
// exp on double.
template <typename T>
OPGEN_HOST_DEVICE T row_exp(T v) {
  if constexpr (std::is_same_v<T, float>) {
    return std::exp2(v * 1.4426950408889634f);
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
