// fused_linear_gelu: argument checks and shapes, shared by the CPU (fused_linear_gelu.cpp) and CUDA
// (fused_linear_gelu_cuda.cu) kernels. The GELU is gelu_approx's (gelu_approx/gelu_approx.h).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/accumulate.h>

#include <vector>

#include "common/checks.h"

namespace examples::fused_linear_gelu {

// x (..., in_features), weight (out_features, in_features), bias (out_features): one dtype, one device.
inline void check_arguments(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  opgen::check_floating(x, "x");
  TORCH_CHECK(x.dim() >= 1, "x must have at least 1 dimension (in_features), got a scalar");
  opgen::check_same_device(weight, "weight", x, "x");
  opgen::check_same_device(bias, "bias", x, "x");
  opgen::check_same_dtype(weight, "weight", x, "x");
  opgen::check_same_dtype(bias, "bias", x, "x");
  opgen::check_dim(weight, "weight", 2);
  opgen::check_dim(bias, "bias", 1);
  TORCH_CHECK(weight.size(1) == x.size(-1), "weight must have x.size(-1) = ", x.size(-1),
              " columns (in_features), got shape ", weight.sizes());
  TORCH_CHECK(bias.size(0) == weight.size(0), "bias must have weight.size(0) = ", weight.size(0),
              " elements (out_features), got ", bias.size(0));
}

// x as a (batch, in_features) matrix, batch = the product of its leading dims (1 for 1-D x).
// (reshape({-1, 0}) is ambiguous when in_features == 0, so the batch is spelled out.)
inline at::Tensor as_matrix(const at::Tensor& x) {
  const int64_t batch = c10::multiply_integers(x.sizes().begin(), x.sizes().end() - 1);
  return x.reshape({batch, x.size(-1)});
}

// x's leading dims, then out_features.
inline std::vector<int64_t> output_shape(const at::Tensor& x, const at::Tensor& weight) {
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = weight.size(0);
  return shape;
}

}  // namespace examples::fused_linear_gelu
