// fused_linear_gelu: y = gelu_tanh(x @ weight^T + bias), i.e. nn.Linear followed by
// nn.GELU(approximate="tanh"). Schema and CPU kernel; the CUDA kernel is in fused_linear_gelu_cuda.cu.
//
// CPU: addmm (a BLAS GEMM with the bias as its C operand), then the shared GELU functor in place.
// (at::_addmm_activation is not used here: on CPU it applies the exact erf GELU, not the tanh one.)
#include "common/use_aten.h"  // on the full ATen API: see docs/index.md for why

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <torch/library.h>

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

TORCH_LIBRARY_FRAGMENT(examples, m) {
  m.def("fused_linear_gelu(Tensor x, Tensor weight, Tensor bias) -> Tensor");
  m.def("fused_linear_gelu_naive(Tensor x, Tensor weight, Tensor bias) -> Tensor");  // the seed's kernel, CUDA only
}

TORCH_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("fused_linear_gelu", &forward_cpu);
}

}  // namespace examples::fused_linear_gelu
