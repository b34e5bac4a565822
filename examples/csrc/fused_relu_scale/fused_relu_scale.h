// fused_relu_scale: the element-wise math, shared by the CPU kernel (fused_relu_scale.cpp) and the CUDA kernel
// (fused_relu_scale_cuda.cu), so the two cannot drift apart. Torch-free: the .cu compiles in seconds.
#pragma once

#include <cmath>

#include "common/kernel_types.h"  // OPGEN_HOST_DEVICE

namespace examples::fused_relu_scale {

// y = max(x, 0) * alpha. T is the math type: float for float16 and bfloat16 inputs, else the input
// dtype. Written as a comparison, not fmax, so that NaN propagates as it does through torch.relu.
template <typename T>
struct Forward {
  T alpha;
  OPGEN_HOST_DEVICE T operator()(T x) const {
    return (x < T(0) ? T(0) : x) * alpha;
  }
};

// dx = grad * alpha where x > 0, else 0 (the gradient at x = 0 is 0, as for torch.relu).
template <typename T>
struct Backward {
  T alpha;
  OPGEN_HOST_DEVICE T operator()(T grad, T x) const {
    return x <= T(0) ? T(0) : grad * alpha;
  }
};

}  // namespace examples::fused_relu_scale
