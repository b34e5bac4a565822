// fused_relu_scale: the element-wise math, shared by the CPU kernel (fused_relu_scale.cpp) and the CUDA kernel
// (fused_relu_scale_cuda.cu), so the two cannot drift apart. Torch-free: the .cu compiles in seconds.
#pragma once

#include <cmath>

#include "common/kernel_types.h"  // OPGEN_HOST_DEVICE

namespace examples::fused_relu_scale {

// y = f(x) with alpha, element by element. T is the math type: float for float16
// and bfloat16 inputs, else the input dtype; number arguments arrive as T.
// Placeholder math (the product of the arguments): replace it with fused_relu_scale's, together with
// Backward below and reference() in opgen_examples/ops/fused_relu_scale.py.
template <typename T>
struct Forward {
  T alpha;
  OPGEN_HOST_DEVICE T operator()(T x) const {
    return x * alpha;
  }
};

// dx = grad * dy/dx, given grad = dL/dy.
template <typename T>
struct Backward {
  T alpha;
  OPGEN_HOST_DEVICE T operator()(T grad, T x) const {
    return grad * alpha;
  }
};

}  // namespace examples::fused_relu_scale
