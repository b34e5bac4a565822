// gelu_approx: CUDA kernels, through the vectorized element-wise map (16-byte loads, scalar tail,
// 64-bit indices) of common/elementwise.cuh, on the current stream of the input's device.
#include "common/checks.h"
#include "common/elementwise.cuh"
#include "common/torch_api.h"
#include "gelu_approx/gelu_approx.h"

namespace examples::gelu_approx {

using opgen::Tensor;

Tensor forward_cuda(const Tensor& x) {
  opgen::check_floating(x, "x");
  const opgen::DeviceGuard device_guard(x);
  const Tensor input = opgen::contiguous(x);
  Tensor y = opgen::empty_like(input);
  OPGEN_DISPATCH_FLOATING(input.scalar_type(), "gelu_approx_cuda", [&] {
    opgen::cuda::launch_map(Forward{}, input.numel(), y.mutable_data_ptr<scalar_t>(),
                            input.const_data_ptr<scalar_t>());
  });
  return y;
}

Tensor backward_cuda(const Tensor& grad, const Tensor& x) {
  opgen::check_floating(x, "x");
  opgen::check_same_device(grad, "grad", x, "x");
  opgen::check_same_dtype(grad, "grad", x, "x");
  opgen::check_same_shape(grad, "grad", x, "x");
  const opgen::DeviceGuard device_guard(x);
  const Tensor g = opgen::contiguous(grad);
  const Tensor input = opgen::contiguous(x);
  Tensor dx = opgen::empty_like(input);
  OPGEN_DISPATCH_FLOATING(input.scalar_type(), "gelu_approx_backward_cuda", [&] {
    opgen::cuda::launch_map(Backward{}, input.numel(), dx.mutable_data_ptr<scalar_t>(),
                            g.const_data_ptr<scalar_t>(), input.const_data_ptr<scalar_t>());
  });
  return dx;
}

OPGEN_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("gelu_approx", OPGEN_KERNEL(forward_cuda));
  m.impl("gelu_approx_backward", OPGEN_KERNEL(backward_cuda));
}

}  // namespace examples::gelu_approx
