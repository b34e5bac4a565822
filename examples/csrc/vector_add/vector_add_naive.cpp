// vector_add_naive: the seed's one-thread-per-element kernel (vector_add_naive_cuda.cu), kept as a
// benchmark baseline. CUDA only, float32 only, fewer than 2^31 elements (its index is an int).
// vector_add itself is declared in opgen_examples/ops/vector_add.py: its glue is derived at build time, and
// the declaration registers naive too (variants=).
#include <limits>

#include "common/checks.h"
#include "common/torch_api.h"

namespace examples::vector_add {

using opgen::Buffer;
using opgen::Tensor;

#ifdef OPGEN_WITH_CUDA
// In vector_add_naive_cuda.cu.
void naive_cuda(opgen::CudaStream stream, const Buffer& c, const Buffer& a, const Buffer& b);

Tensor naive(const Tensor& a, const Tensor& b) {
  opgen::check_dtype(a, "a", opgen::kFloat);
  opgen::check_same_device(a, "a", b, "b");
  opgen::check_same_dtype(a, "a", b, "b");
  opgen::check_same_shape(a, "a", b, "b");
  OPGEN_CHECK(a.numel() <= std::numeric_limits<int>::max(), "vector_add_naive indexes with int: a has ",
              a.numel(), " elements, more than 2^31 - 1");
  const opgen::DeviceGuard device_guard(a);
  const Tensor lhs = opgen::contiguous(a);
  const Tensor rhs = opgen::contiguous(b);
  Tensor c = opgen::empty_like(lhs);
  naive_cuda(opgen::current_stream(), opgen::output(c), opgen::input(lhs), opgen::input(rhs));
  return c;
}
#endif

}  // namespace examples::vector_add
