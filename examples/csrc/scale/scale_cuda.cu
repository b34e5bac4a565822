// scale: CUDA kernel, through the element-wise map of common/elementwise.cuh (16-byte vectors when
// aligned, one element at a time otherwise, 64-bit indices), on the current stream of x's device.
#include "common/checks.h"
#include "common/elementwise.cuh"
#include "common/torch_api.h"
#include "scale/scale.h"

namespace examples::scale {

using opgen::Tensor;

Tensor forward_cuda(const Tensor& x, double factor) {
  opgen::check_floating(x, "x");
  const opgen::DeviceGuard device_guard(x);
  const Tensor input = opgen::contiguous(x);
  Tensor y = opgen::empty_like(input);
  OPGEN_DISPATCH_FLOATING(input.scalar_type(), "scale_cuda", [&] {
    using opmath_t = opgen::opmath_t<scalar_t>;
    opgen::cuda::launch_map(Scale<opmath_t>{static_cast<opmath_t>(factor)}, input.numel(),
                            y.mutable_data_ptr<scalar_t>(), input.const_data_ptr<scalar_t>());
  });
  return y;
}

OPGEN_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("scale", OPGEN_KERNEL(forward_cuda));
}

}  // namespace examples::scale
