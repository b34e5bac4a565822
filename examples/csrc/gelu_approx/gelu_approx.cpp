// gelu_approx: schema and CPU kernels. The CUDA kernels are in gelu_approx_cuda.cu.
#include "common/checks.h"
#include "common/cpu_loops.h"
#include "common/torch_api.h"
#include "gelu_approx/gelu_approx.h"

namespace examples::gelu_approx {

using opgen::Tensor;

Tensor forward_cpu(const Tensor& x) {
  opgen::check_floating(x, "x");
  const Tensor input = opgen::contiguous(x);
  Tensor y = opgen::empty_like(input);
  OPGEN_DISPATCH_FLOATING(input.scalar_type(), "gelu_approx_cpu", [&] {
    opgen::cpu::map(Forward{}, input.numel(), y.mutable_data_ptr<scalar_t>(), input.const_data_ptr<scalar_t>());
  });
  return y;
}

Tensor backward_cpu(const Tensor& grad, const Tensor& x) {
  opgen::check_floating(x, "x");
  opgen::check_same_dtype(grad, "grad", x, "x");
  opgen::check_same_shape(grad, "grad", x, "x");
  const Tensor g = opgen::contiguous(grad);
  const Tensor input = opgen::contiguous(x);
  Tensor dx = opgen::empty_like(input);
  OPGEN_DISPATCH_FLOATING(input.scalar_type(), "gelu_approx_backward_cpu", [&] {
    opgen::cpu::map(Backward{}, input.numel(), dx.mutable_data_ptr<scalar_t>(), g.const_data_ptr<scalar_t>(),
                    input.const_data_ptr<scalar_t>());
  });
  return dx;
}

OPGEN_LIBRARY_FRAGMENT(examples, m) {
  m.def("gelu_approx(Tensor x) -> Tensor");
  m.def("gelu_approx_backward(Tensor grad, Tensor x) -> Tensor");
}

OPGEN_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("gelu_approx", OPGEN_KERNEL(forward_cpu));
  m.impl("gelu_approx_backward", OPGEN_KERNEL(backward_cpu));
}

}  // namespace examples::gelu_approx
