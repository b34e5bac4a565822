// gelu_approx: the element-wise math, shared by the CPU kernel (gelu_approx.cpp) and the CUDA kernel
// (gelu_approx_cuda.cu), so the two cannot drift apart. Torch-free: the .cu compiles in seconds.
#pragma once

#include <cmath>

#include "common/kernel_types.h"  // OPGEN_HOST_DEVICE

namespace examples::gelu_approx {

// y = f(x), element by element. T is the math type: float for float16
// and bfloat16 inputs, else the input dtype.
// Placeholder math (SiLU, x * sigmoid(x)): replace it with gelu_approx's, together with Backward below
// and reference() in opgen_examples/ops/gelu_approx.py.
template <typename T>
struct Forward {
  OPGEN_HOST_DEVICE T operator()(T x) const {
    return x / (T(1) + std::exp(-x));
  }
};

// dx = grad * dy/dx, given grad = dL/dy.
template <typename T>
struct Backward {
  OPGEN_HOST_DEVICE T operator()(T grad, T x) const {
    const T s = T(1) / (T(1) + std::exp(-x));
    return grad * s * (T(1) + x * (T(1) - s));
  }
};

}  // namespace examples::gelu_approx
