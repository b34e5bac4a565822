// vector_add: schemas and the CPU kernel. The CUDA kernels are in vector_add_cuda.cu (ours) and
// vector_add_naive_cuda.cu (the seed's one-thread-per-element kernel, a benchmark baseline).
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <torch/library.h>

#include "common/checks.h"
#include "common/cpu_loops.h"
#include "vector_add/vector_add.h"

namespace examples::vector_add {

at::Tensor forward_cpu(const at::Tensor& a, const at::Tensor& b) {
  opgen::check_floating(a, "a");
  opgen::check_same_dtype(a, "a", b, "b");
  opgen::check_same_shape(a, "a", b, "b");
  const at::Tensor lhs = a.contiguous();
  const at::Tensor rhs = b.contiguous();
  at::Tensor c = at::empty(lhs.sizes(), lhs.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, lhs.scalar_type(), "vector_add_cpu", [&] {
    opgen::cpu::map(Add{}, lhs.numel(), c.mutable_data_ptr<scalar_t>(), lhs.const_data_ptr<scalar_t>(),
                    rhs.const_data_ptr<scalar_t>());
  });
  return c;
}

TORCH_LIBRARY_FRAGMENT(examples, m) {
  m.def("vector_add(Tensor a, Tensor b) -> Tensor");
  // CUDA only, float32 only, fewer than 2^31 elements: the seed's kernel, kept to benchmark against.
  m.def("vector_add_naive(Tensor a, Tensor b) -> Tensor");
}

TORCH_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("vector_add", &forward_cpu);
}

}  // namespace examples::vector_add
