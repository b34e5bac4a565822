// scale: the element-wise math, shared by the CPU kernel (scale.cpp) and the CUDA kernel
// (scale_cuda.cu), so the two cannot drift apart.
#pragma once

#include <c10/macros/Macros.h>

#include <cmath>

namespace examples::scale {

// y = f(x). T is float or double: float16 and bfloat16 inputs are computed in float.
// Placeholder math (SiLU, x * sigmoid(x)): replace it with scale's, together with Backward below
// and reference() in opgen_examples/ops/scale.py.
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

}  // namespace examples::scale
