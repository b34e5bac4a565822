// scale: the element-wise math, shared by the CPU kernel (scale.cpp) and the CUDA kernel
// (scale_cuda.cu), so the two cannot drift apart. Torch-free: the .cu compiles in seconds.
#pragma once

#include <cmath>

#include "common/kernel_types.h"  // OPGEN_HOST_DEVICE

namespace examples::scale {

// y = f(x) with factor, element by element. T is the math type: float for float16
// and bfloat16 inputs, else the input dtype; number arguments arrive as T.
// Placeholder math (the product of the arguments): replace it with scale's, together with
// Backward below and reference() in opgen_examples/ops/scale.py.
template <typename T>
struct Forward {
  T factor;
  OPGEN_HOST_DEVICE T operator()(T x) const {
    return x * factor;
  }
};

// dx = grad * dy/dx, given grad = dL/dy.
template <typename T>
struct Backward {
  T factor;
  OPGEN_HOST_DEVICE T operator()(T grad, T x) const {
    return grad * factor;
  }
};

}  // namespace examples::scale
