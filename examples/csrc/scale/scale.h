// scale: the element-wise math, shared by the CPU kernel (scale.cpp) and the CUDA kernel
// (scale_cuda.cu), so the two cannot drift apart. Torch-free: the .cu compiles in seconds.
#pragma once

#include <cmath>

#include "common/kernel_types.h"  // OPGEN_HOST_DEVICE

namespace examples::scale {

// y = x * factor. T is the math type: float16 and bfloat16 inputs are scaled in float (factor
// rounded to float once, on the host) and the product rounded once, as PyTorch's x * factor does.
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
