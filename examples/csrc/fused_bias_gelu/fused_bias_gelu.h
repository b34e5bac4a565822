// fused_bias_gelu: the element-wise math, shared by the CPU and CUDA kernels derived from the
// declaration in opgen_examples/ops/fused_bias_gelu.py (bias broadcast over x's last dimensions).
// The GELU itself is gelu_approx's, so every GELU in the project is the same function. Torch-free.
#pragma once

#include "common/kernel_types.h"  // OPGEN_HOST_DEVICE, opgen::Grads
#include "gelu_approx/gelu_approx.h"

namespace examples::fused_bias_gelu {

// y = gelu_tanh(x + bias), the sum taken in T (float for float16/bfloat16 inputs): one rounding, at the end.
template <typename T>
struct Forward {
  OPGEN_HOST_DEVICE T operator()(T x, T bias) const {
    return gelu_approx::Forward<T>{}(x + bias);
  }
};

// dz = grad * gelu_tanh'(x + bias): the gradient of x, and of bias before it is summed over the rows.
template <typename T>
struct Backward {
  OPGEN_HOST_DEVICE opgen::Grads<T, 2> operator()(T grad, T x, T bias) const {
    const T dz = gelu_approx::Backward<T>{}(grad, x + bias);
    return {dz, dz};
  }
};

}  // namespace examples::fused_bias_gelu
