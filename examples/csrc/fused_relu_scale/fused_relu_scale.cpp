// fused_relu_scale: schemas and CPU kernels. The CUDA kernels are in fused_relu_scale_cuda.cu.
#include "common/checks.h"
#include "common/cpu_loops.h"
#include "common/torch_api.h"
#include "fused_relu_scale/fused_relu_scale.h"

namespace examples::fused_relu_scale {

using opgen::Tensor;

Tensor forward_cpu(const Tensor& x, double alpha) {
  opgen::check_floating(x, "x");
  const Tensor input = opgen::contiguous(x);
  Tensor y = opgen::empty_like(input);
  OPGEN_DISPATCH_FLOATING(input.scalar_type(), "fused_relu_scale_cpu", [&] {
    using opmath_t = opgen::opmath_t<scalar_t>;
    opgen::cpu::map(Forward<opmath_t>{static_cast<opmath_t>(alpha)}, input.numel(), y.mutable_data_ptr<scalar_t>(),
                    input.const_data_ptr<scalar_t>());
  });
  return y;
}

Tensor backward_cpu(const Tensor& grad, const Tensor& x, double alpha) {
  opgen::check_floating(x, "x");
  opgen::check_same_dtype(grad, "grad", x, "x");
  opgen::check_same_shape(grad, "grad", x, "x");
  const Tensor g = opgen::contiguous(grad);
  const Tensor input = opgen::contiguous(x);
  Tensor dx = opgen::empty_like(input);
  OPGEN_DISPATCH_FLOATING(input.scalar_type(), "fused_relu_scale_backward_cpu", [&] {
    using opmath_t = opgen::opmath_t<scalar_t>;
    opgen::cpu::map(Backward<opmath_t>{static_cast<opmath_t>(alpha)}, input.numel(), dx.mutable_data_ptr<scalar_t>(),
                    g.const_data_ptr<scalar_t>(), input.const_data_ptr<scalar_t>());
  });
  return dx;
}

OPGEN_LIBRARY_FRAGMENT(examples, m) {
  m.def("fused_relu_scale(Tensor x, float alpha) -> Tensor");
  m.def("fused_relu_scale_backward(Tensor grad, Tensor x, float alpha) -> Tensor");
  m.def("fused_relu_scale_naive(Tensor x, float alpha) -> Tensor");  // the seed's kernel, CUDA only
}

OPGEN_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("fused_relu_scale", OPGEN_KERNEL(forward_cpu));
  m.impl("fused_relu_scale_backward", OPGEN_KERNEL(backward_cpu));
}

}  // namespace examples::fused_relu_scale
