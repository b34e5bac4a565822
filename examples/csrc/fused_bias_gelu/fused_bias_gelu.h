// fused_bias_gelu: the element-wise math, shared by the CPU kernel (fused_bias_gelu.cpp) and the
// CUDA kernel (fused_bias_gelu_cuda.cu). The GELU itself is gelu_approx's, so every GELU in the
// project is the same function. Torch-free.
#pragma once

#include "common/kernel_types.h"  // OPGEN_HOST_DEVICE
#include "gelu_approx/gelu_approx.h"

namespace examples::fused_bias_gelu {

// y = gelu_tanh(x + bias), the sum taken in T (float for float16/bfloat16 inputs): one rounding, at the end.
struct Forward {
  template <typename T>
  OPGEN_HOST_DEVICE T operator()(T x, T bias) const {
    return gelu_approx::Forward<T>{}(x + bias);
  }
};

// dz = grad * gelu_tanh'(x + bias): the gradient of x (and, summed over the rows, of bias).
struct Backward {
  template <typename T>
  OPGEN_HOST_DEVICE T operator()(T grad, T x, T bias) const {
    return gelu_approx::Backward<T>{}(grad, x + bias);
  }
};

}  // namespace examples::fused_bias_gelu
