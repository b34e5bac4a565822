// vector_add: CUDA kernel, through the element-wise map of common/elementwise.cuh: 16-byte vector
// loads and stores when a, b and the result are 16-byte aligned, one element at a time otherwise
// (a misaligned view such as a[1:]), 64-bit indices, on the current stream of the inputs' device.
#include "common/checks.h"
#include "common/elementwise.cuh"
#include "common/torch_api.h"
#include "vector_add/vector_add.h"

namespace examples::vector_add {

using opgen::Tensor;

Tensor forward_cuda(const Tensor& a, const Tensor& b) {
  opgen::check_floating(a, "a");
  opgen::check_same_device(a, "a", b, "b");
  opgen::check_same_dtype(a, "a", b, "b");
  opgen::check_same_shape(a, "a", b, "b");
  const opgen::DeviceGuard device_guard(a);
  const Tensor lhs = opgen::contiguous(a);
  const Tensor rhs = opgen::contiguous(b);
  Tensor c = opgen::empty_like(lhs);
  OPGEN_DISPATCH_FLOATING(lhs.scalar_type(), "vector_add_cuda", [&] {
    opgen::cuda::launch_map(Add{}, lhs.numel(), c.mutable_data_ptr<scalar_t>(), lhs.const_data_ptr<scalar_t>(),
                            rhs.const_data_ptr<scalar_t>());
  });
  return c;
}

OPGEN_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("vector_add", OPGEN_KERNEL(forward_cuda));
}

}  // namespace examples::vector_add
