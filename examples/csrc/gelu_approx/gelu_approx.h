// gelu_approx: the element-wise math, shared by the CPU kernel (gelu_approx.cpp) and the CUDA kernel
// (gelu_approx_cuda.cu), so the two cannot drift apart.
#pragma once

#include <c10/macros/Macros.h>

#include <cmath>

namespace examples::gelu_approx {

// y = f(x). T is float or double: float16 and bfloat16 inputs are computed in float.
// Placeholder math (SiLU, x * sigmoid(x)): replace it with gelu_approx's, together with Backward below
// and reference() in opgen_examples/ops/gelu_approx.py.
struct Forward {
  template <typename T>
  C10_HOST_DEVICE T operator()(T x) const {
    return x / (T(1) + std::exp(-x));
  }
};

// dx = grad * f'(x)
struct Backward {
  template <typename T>
  C10_HOST_DEVICE T operator()(T grad, T x) const {
    const T s = T(1) / (T(1) + std::exp(-x));
    return grad * s * (T(1) + x * (T(1) - s));
  }
};

}  // namespace examples::gelu_approx
