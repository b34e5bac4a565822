// vector_add: schemas and the CPU kernel. The CUDA kernels are in vector_add_cuda.cu (ours) and
// vector_add_naive_cuda.cu (the seed's one-thread-per-element kernel, a benchmark baseline).
#include "common/checks.h"
#include "common/cpu_loops.h"
#include "common/torch_api.h"
#include "vector_add/vector_add.h"

namespace examples::vector_add {

using opgen::Tensor;

Tensor forward_cpu(const Tensor& a, const Tensor& b) {
  opgen::check_floating(a, "a");
  opgen::check_same_dtype(a, "a", b, "b");
  opgen::check_same_shape(a, "a", b, "b");
  const Tensor lhs = opgen::contiguous(a);
  const Tensor rhs = opgen::contiguous(b);
  Tensor c = opgen::empty_like(lhs);
  OPGEN_DISPATCH_FLOATING(lhs.scalar_type(), "vector_add_cpu", [&] {
    opgen::cpu::map(Add{}, lhs.numel(), c.mutable_data_ptr<scalar_t>(), lhs.const_data_ptr<scalar_t>(),
                    rhs.const_data_ptr<scalar_t>());
  });
  return c;
}

OPGEN_LIBRARY_FRAGMENT(examples, m) {
  m.def("vector_add(Tensor a, Tensor b) -> Tensor");
  // CUDA only, float32 only, fewer than 2^31 elements: the seed's kernel, kept to benchmark against.
  m.def("vector_add_naive(Tensor a, Tensor b) -> Tensor");
}

OPGEN_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("vector_add", OPGEN_KERNEL(forward_cpu));
}

}  // namespace examples::vector_add
