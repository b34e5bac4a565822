// fused_relu_scale: the element-wise math, shared by the CPU kernels (fused_relu_scale.cpp) and the
// CUDA kernels (fused_relu_scale_cuda.cu), so the two cannot drift apart.
#pragma once

#include "common/torch_api.h"  // C10_HOST_DEVICE

namespace examples::fused_relu_scale {

// y = max(x, 0) * alpha. T is float or double (float16 and bfloat16 are computed in float).
// Written as a comparison, not fmax, so that NaN propagates as it does through torch.relu.
template <typename T>
struct Forward {
  T alpha;

  C10_HOST_DEVICE T operator()(T x) const {
    return (x < T(0) ? T(0) : x) * alpha;
  }
};

// dx = grad * alpha where x > 0, else 0 (the gradient at x = 0 is 0, as for torch.relu).
template <typename T>
struct Backward {
  T alpha;

  C10_HOST_DEVICE T operator()(T grad, T x) const {
    return x <= T(0) ? T(0) : grad * alpha;
  }
};

}  // namespace examples::fused_relu_scale
