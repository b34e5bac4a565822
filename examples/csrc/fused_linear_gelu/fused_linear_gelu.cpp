// fused_linear_gelu: y = gelu_tanh(x @ weight^T + bias), i.e. nn.Linear followed by
// nn.GELU(approximate="tanh"). CPU kernel; the CUDA kernel is in fused_linear_gelu_cuda.cu, the autograd
// formula in fused_linear_gelu_autograd.cpp. The declaration in opgen_examples/ops/fused_linear_gelu.py
// registers them.
//
// CPU: addmm (a BLAS GEMM with the bias as its C operand), then the shared GELU functor in place.
// (at::_addmm_activation is not used here: on CPU it applies the exact erf GELU, not the tanh one.)
#include "common/use_aten.h"  // on the full ATen API: see docs/index.md for why

#include <ATen/Dispatch.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/addmm.h>

#include "common/cpu_loops.h"
#include "fused_linear_gelu/fused_linear_gelu.h"
#include "gelu_approx/gelu_approx.h"

namespace examples::fused_linear_gelu {

at::Tensor forward_cpu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  check_arguments(x, weight, bias);
  const at::Tensor x2d = as_matrix(x);
  at::Tensor y = at::addmm(bias, x2d, weight.t()).contiguous();  // a fresh tensor: GELU it in place
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, y.scalar_type(), "fused_linear_gelu_cpu", [&] {
    scalar_t* data = y.mutable_data_ptr<scalar_t>();
    opgen::cpu::map(gelu_approx::Forward<opgen::opmath_t<scalar_t>>{}, y.numel(), data, static_cast<const scalar_t*>(data));
  });
  return y.view(output_shape(x, weight));
}

}  // namespace examples::fused_linear_gelu
