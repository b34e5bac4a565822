// gelu_approx: the element-wise math, shared by the CPU kernel (gelu_approx.cpp), the CUDA kernel
// (gelu_approx_cuda.cu) and the ops that fuse GELU (fused_bias_gelu, fused_linear_gelu), so none of
// them can drift apart. Torch-free: the .cu compiles in seconds.
//
// tanh GELU: y = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3).
// Computed as y = x * s with s = 0.5 (1 + tanh(u)) = sigmoid(2u) = 1 / (1 + exp(-2u)):
//   - one exp2 and one division, no tanh (fast on the GPU: two MUFU ops, plus a few FMAs);
//   - no cancellation: the tanh form computes 1 + tanh(u) ~ 0 for negative x and loses every digit
//     there, the sigmoid form keeps full relative accuracy;
//   - saturates cleanly: exp2 overflowing to +inf gives y = x / inf = -0 (x very negative), and
//     underflowing to 0 gives y = x (x very positive), for every finite x, float16 extremes included.
#pragma once

#include <cmath>

#include "common/kernel_types.h"  // OPGEN_HOST_DEVICE

namespace examples::gelu_approx {

namespace detail {

constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kCubic = 0.044715;
constexpr double kLog2e = 1.44269504088896340736;
// -2u * log2(e) = x * (kLinear + kCubicLog2 * x^2), so exp(-2u) = exp2(x * (kLinear + kCubicLog2 * x^2)).
constexpr double kLinear = -2.0 * kSqrt2OverPi * kLog2e;
constexpr double kCubicLog2 = kLinear * kCubic;
// d(2u)/dx = kSlope + kSlopeCubic * x^2.
constexpr double kSlope = 2.0 * kSqrt2OverPi;
constexpr double kSlopeCubic = 6.0 * kSqrt2OverPi * kCubic;
// Past |x| = 10 the derivative is 0 or 1 to far below double precision (|f'(x) - step| < 1e-35).
constexpr double kDerivativeSaturates = 10.0;

// exp(-2u) for the argument x.
template <typename T>
OPGEN_HOST_DEVICE T exp_minus_2u(T x) {
  return std::exp2(x * (T(kLinear) + T(kCubicLog2) * x * x));
}

// a / b; in float on the GPU, the fast division (2 ulp; 0 when b overflows), not IEEE's ~10 instructions.
OPGEN_HOST_DEVICE inline float divide(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fdividef(a, b);
#else
  return a / b;
#endif
}

OPGEN_HOST_DEVICE inline double divide(double a, double b) {
  return a / b;
}

}  // namespace detail

// y = gelu_tanh(x). T is the math type: float for float16 and bfloat16 inputs, else the input dtype.
template <typename T>
struct Forward {
  OPGEN_HOST_DEVICE T operator()(T x) const {
    return detail::divide(x, T(1) + detail::exp_minus_2u(x));
  }
};

// dx = grad * gelu_tanh'(x).
// With s = sigmoid(2u): y = x s, so y' = s + x ds/dx = s + x (2u)' s (1 - s), where 1 - s = exp(-2u) s
// (no cancellation). x is clamped to the range where the derivative is not yet saturated, which keeps
// x^3 and exp(-2u) finite for every input (+-inf included); NaN passes through the clamp.
template <typename T>
struct Backward {
  OPGEN_HOST_DEVICE T operator()(T grad, T x) const {
    constexpr T kLimit = T(detail::kDerivativeSaturates);
    const T xc = x > kLimit ? kLimit : (x < -kLimit ? -kLimit : x);
    const T e = detail::exp_minus_2u(xc);
    const T s = detail::divide(T(1), T(1) + e);
    const T slope = T(detail::kSlope) + T(detail::kSlopeCubic) * xc * xc;
    return grad * (s + xc * slope * s * (e * s));
  }
};

}  // namespace examples::gelu_approx
