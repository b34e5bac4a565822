// fused_bias_gelu: the element-wise math and the argument checks, shared by the CPU kernel
// (fused_bias_gelu.cpp) and the CUDA kernel (fused_bias_gelu_cuda.cu). The GELU itself is
// gelu_approx's, so every GELU in the project is the same function.
#pragma once

#include "common/checks.h"
#include "common/torch_api.h"  // C10_HOST_DEVICE
#include "gelu_approx/gelu_approx.h"

namespace examples::fused_bias_gelu {

// y = gelu_tanh(x + bias), the sum taken in T (float for float16/bfloat16 inputs): one rounding, at the end.
struct Forward {
  template <typename T>
  C10_HOST_DEVICE T operator()(T x, T bias) const {
    return gelu_approx::Forward<T>{}(x + bias);
  }
};

// dz = grad * gelu_tanh'(x + bias): the gradient of x (and, summed over the rows, of bias).
struct Backward {
  template <typename T>
  C10_HOST_DEVICE T operator()(T grad, T x, T bias) const {
    return gelu_approx::Backward<T>{}(grad, x + bias);
  }
};

// x: floating, at least 1-D; bias: 1-D with x.size(-1) elements, same dtype and device as x.
inline void check_arguments(const opgen::Tensor& x, const opgen::Tensor& bias) {
  opgen::check_floating(x, "x");
  OPGEN_CHECK(x.dim() >= 1, "x must have at least 1 dimension (the one bias is added along), got a scalar");
  opgen::check_same_device(bias, "bias", x, "x");
  opgen::check_same_dtype(bias, "bias", x, "x");
  opgen::check_dim(bias, "bias", 1);
  OPGEN_CHECK(bias.size(0) == x.size(-1), "bias must have x.size(-1) = ", x.size(-1), " elements, got ",
              bias.size(0));
}

}  // namespace examples::fused_bias_gelu
