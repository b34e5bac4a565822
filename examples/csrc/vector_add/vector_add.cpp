// vector_add: schema and CPU kernels. The CUDA kernels are in vector_add_cuda.cu.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <torch/library.h>

#include "common/checks.h"
#include "common/cpu_loops.h"
#include "vector_add/vector_add.h"

namespace examples::vector_add {

at::Tensor forward_cpu(const at::Tensor& x) {
  opgen::check_floating(x, "x");
  const at::Tensor input = x.contiguous();
  at::Tensor y = at::empty_like(input);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "vector_add_cpu", [&] {
    opgen::cpu::map(Forward{}, input.numel(), y.mutable_data_ptr<scalar_t>(), input.const_data_ptr<scalar_t>());
  });
  return y;
}

at::Tensor backward_cpu(const at::Tensor& grad, const at::Tensor& x) {
  opgen::check_floating(x, "x");
  opgen::check_same_dtype(grad, "grad", x, "x");
  opgen::check_same_shape(grad, "grad", x, "x");
  const at::Tensor g = grad.contiguous();
  const at::Tensor input = x.contiguous();
  at::Tensor dx = at::empty_like(input);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "vector_add_backward_cpu", [&] {
    opgen::cpu::map(Backward{}, input.numel(), dx.mutable_data_ptr<scalar_t>(), g.const_data_ptr<scalar_t>(),
                    input.const_data_ptr<scalar_t>());
  });
  return dx;
}

TORCH_LIBRARY_FRAGMENT(examples, m) {
  m.def("vector_add(Tensor x) -> Tensor");
  m.def("vector_add_backward(Tensor grad, Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("vector_add", &forward_cpu);
  m.impl("vector_add_backward", &backward_cpu);
}

}  // namespace examples::vector_add
