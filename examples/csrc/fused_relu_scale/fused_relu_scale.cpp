// fused_relu_scale: schemas and CPU kernels. The CUDA kernels are in fused_relu_scale_cuda.cu.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <torch/library.h>

#include "common/checks.h"
#include "common/cpu_loops.h"
#include "fused_relu_scale/fused_relu_scale.h"

namespace examples::fused_relu_scale {

at::Tensor forward_cpu(const at::Tensor& x, double alpha) {
  opgen::check_floating(x, "x");
  const at::Tensor input = x.contiguous();
  at::Tensor y = at::empty(input.sizes(), input.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "fused_relu_scale_cpu", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    opgen::cpu::map(Forward<opmath_t>{static_cast<opmath_t>(alpha)}, input.numel(), y.mutable_data_ptr<scalar_t>(),
                    input.const_data_ptr<scalar_t>());
  });
  return y;
}

at::Tensor backward_cpu(const at::Tensor& grad, const at::Tensor& x, double alpha) {
  opgen::check_floating(x, "x");
  opgen::check_same_dtype(grad, "grad", x, "x");
  opgen::check_same_shape(grad, "grad", x, "x");
  const at::Tensor g = grad.contiguous();
  const at::Tensor input = x.contiguous();
  at::Tensor dx = at::empty(input.sizes(), input.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "fused_relu_scale_backward_cpu", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    opgen::cpu::map(Backward<opmath_t>{static_cast<opmath_t>(alpha)}, input.numel(), dx.mutable_data_ptr<scalar_t>(),
                    g.const_data_ptr<scalar_t>(), input.const_data_ptr<scalar_t>());
  });
  return dx;
}

TORCH_LIBRARY_FRAGMENT(examples, m) {
  m.def("fused_relu_scale(Tensor x, float alpha) -> Tensor");
  m.def("fused_relu_scale_backward(Tensor grad, Tensor x, float alpha) -> Tensor");
  m.def("fused_relu_scale_naive(Tensor x, float alpha) -> Tensor");  // the seed's kernel, CUDA only
}

TORCH_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("fused_relu_scale", &forward_cpu);
  m.impl("fused_relu_scale_backward", &backward_cpu);
}

}  // namespace examples::fused_relu_scale
