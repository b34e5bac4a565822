// The row-wise kind's statistics that take one reduction where the plain loops take two
// (common/rowwise.h): a row's maximum with the sum of exp(x - maximum) (a softmax, a log-softmax),
// the softmax built on it, and a row's mean with its variance (a LayerNorm).
// Each thread of a row works out its own elements' first; the partial results are then combined
// across the row's threads once. The combine is symmetric, bit for bit (combine(a, b) ==
// combine(b, a)), so that every thread of a row ends with the same result whichever order a
// reduction pairs them in. (A row's mean and variance by Chan's pairwise update, measured slower
// on an H100 than two plain sums: 77% of a copy against 88% for a LayerNorm of bfloat16 rows of
// 1024; on an H200, 51% against 63% at 32768.) Torch-free; host and device.
#pragma once

#include <cfloat>
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

// exp(v - shift) for the v of a pass, as 2^(v log2(e) - scaled) where scaled is shift log2(e)
// rounded: one FFMA and an exp2 an element on CUDA (float), where (v - shift) log2(e) takes an FADD
// and an FMUL. Each term is then off by the same factor, 2^-(scaled - shift log2(e)) (an FMA gives
// that rounding exactly: up to half an ulp of 1.4 shift, 5e-4 at 1e4), and a sum of them times
// `correction` is the sum of exp(v - shift), as exact as the two-instruction form's. `fused` is false
// on the host, for double, and where shift log2(e) is not finite (|shift| > 2.3e38, or NaN): row_exp
// there. (Measured on an H200, bfloat16 rows of 65536 in clusters, % of a copy, with this and the
// one-exp combine below against without, in one run, two rounds: softmax 87.3-87.6 against 83.8-83.9,
// log-softmax 85.9-86.3 against 78.5-79.0; at 16384 and below within a point.)
template <typename T>
struct ShiftedExp {
  bool fused = false;
  T scaled = T(0);
  T correction = T(1);

  OPGEN_HOST_DEVICE explicit ShiftedExp(T shift) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<T, float>) {
      scaled = shift * kLog2E<float>;
      fused = std::fabs(scaled) <= FLT_MAX;
      correction = fused ? row_exp2(-std::fma(shift, kLog2E<float>, -scaled)) : 1.0f;
    }
#endif
  }

  // 2^(v log2(e) - scaled): exp(v - shift) / correction (only where fused).
  OPGEN_HOST_DEVICE T operator()(T v) const {
    return row_exp2(std::fma(v, kLog2E<T>, -scaled));
  }
};

// The two sums as one: the larger max, and the smaller one's sum rescaled to it (one exp, no branch).
// Both empty (max -inf: their difference NaN) add nothing; a NaN max wins, as in row_max.
template <typename T>
OPGEN_HOST_DEVICE RowExpSum<T> combine_exp_sums(const RowExpSum<T>& a, const RowExpSum<T>& b) {
  const bool a_larger = a.max >= b.max;
  const T larger_sum = a_larger ? a.sum : b.sum, smaller_sum = a_larger ? b.sum : a.sum;
  const T gap = std::fmax(-std::fabs(a.max - b.max), T(-INFINITY));  // NaN (both -inf): -inf
  return {row_max(a.max, b.max), larger_sum + smaller_sum * row_exp(gap)};
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

// A row's mean and variance (biased, as a LayerNorm's), row.mean_var's.
template <typename T>
struct RowMeanVar {
  T mean;
  T var;
};

// The sum and the sum of squares of a row's elements: row.mean_var's one reduction.
template <typename T>
struct RowSquares {
  T sum;
  T squares;
};

template <typename T>
OPGEN_HOST_DEVICE RowSquares<T> add_squares(const RowSquares<T>& a, const RowSquares<T>& b) {
  return {a.sum + b.sum, a.squares + b.squares};
}

// One thread's part of a row (visit and f as partial_exp_sum's): its elements' sum and sum of squares.
template <typename Visit, typename F>
OPGEN_HOST_DEVICE auto partial_squares(const Visit& visit, const F& f) {
  using T = decltype(f(int64_t(0)));
  RowSquares<T> partial{T(0), T(0)};
  visit([&](auto j) {
    const T v = f(j);
    partial.sum += v;
    partial.squares += v * v;
  });
  return partial;
}

// The mean and variance of n elements from their sum and sum of squares, where that is as accurate
// as two passes: the mean's square at most the variance (the subtraction then cancels at most one
// bit; rows of a LayerNorm's activations, centred, are so). Otherwise, or where a sum is not finite,
// from deviations(mean), the sum of (element - mean)^2: a second pass, as two plain sums would take.
// (Measured on an H200, a LayerNorm of bfloat16 rows, % of a copy from 1024 to 65536 elements:
// 91.6, 90.4, 88.4, 86.9, 80.4, 80.2, 66.3 against 84.0, 79.1, 76.7, 75.1, 69.6, 62.4, 53.5 for two
// sums; rows offset by 8 standard deviations, taking the second pass, 79.2, 74.4, 72.6, 71.2, 66.1,
// 60.8, 51.4: 2-5 points below two sums. The sums of squares alone would be 10x less accurate in
// float32 at 4 standard deviations off, and wrong at 500: errors of 0.3 where two passes' are 3e-4.)
// The mean is the first pass's: far off zero, its float sums' rounding moves it by a few spacings at
// the offset (float32 LayerNorm rows 500 standard deviations off: errors up to 4.3e-4, 11x torch's,
// whose Welford mean rounds less, on an H200). Corrected in the second pass by the average deviation
// from it, the error matched torch's, but in one run its extra sum cost rows 8 standard deviations off
// 12-20 points of a copy and the backward 7-10% at 4096 and 16384 elements (its registers): not taken.
template <typename T, typename Deviations>
OPGEN_HOST_DEVICE RowMeanVar<T> finish_mean_var(const RowSquares<T>& sums, int64_t n, const Deviations& deviations) {
  const T count = T(n > 0 ? n : 1);
  const T mean = sums.sum / count;
  const T var = sums.squares / count - mean * mean;
  if (mean * mean <= var) {  // (false where either is NaN)
    return {mean, var};
  }
  return {mean, deviations(mean) / count};
}

// The sum of (f(j) - mean)^2 over a row's j < n.
template <typename Row, typename F, typename T>
OPGEN_HOST_DEVICE T row_deviations(const Row& row, int64_t n, const F& f, T mean) {
  return row.sum(n, [&](auto j) {
    const T d = f(j) - mean;
    return d * d;
  });
}

// row.mean_var as two plain sums, the mean's and the squared deviations': where a row is a few lanes
// of a warp, whose reductions are a few shuffles, the one-reduction form's second pass costs more
// registers than its reduction saves (float32 rows of 32 elements on an H200: 50.7 us against 41.5).
template <typename Row, typename F>
OPGEN_HOST_DEVICE auto two_sum_mean_var(const Row& row, int64_t n, const F& f) {
  using T = decltype(f(int64_t(0)));
  const T count = T(n > 0 ? n : 1);
  const T mean = row.sum(n, f) / count;
  return RowMeanVar<T>{mean, row_deviations(row, n, f, mean) / count};
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
  const ShiftedExp<T> power(shift);
  if (power.fused) {
    visit([&](auto j) { sum += power(f(j)); });
    return RowExpSum<T>{top, sum * power.correction};
  }
  visit([&](auto j) { sum += row_exp(f(j) - shift); });
  return RowExpSum<T>{top, sum};
}

}  // namespace examples::opgen
