// fused_relu_scale: CUDA kernels, through the element-wise map of common/elementwise.cuh (16-byte
// vectors when aligned, one element at a time otherwise, 64-bit indices), on the current stream.
// One pass over memory where eager relu(x) * alpha makes two.
#include "common/checks.h"
#include "common/elementwise.cuh"
#include "common/torch_api.h"
#include "fused_relu_scale/fused_relu_scale.h"

namespace examples::fused_relu_scale {

using opgen::Tensor;

Tensor forward_cuda(const Tensor& x, double alpha) {
  opgen::check_floating(x, "x");
  const opgen::DeviceGuard device_guard(x);
  const Tensor input = opgen::contiguous(x);
  Tensor y = opgen::empty_like(input);
  OPGEN_DISPATCH_FLOATING(input.scalar_type(), "fused_relu_scale_cuda", [&] {
    using opmath_t = opgen::opmath_t<scalar_t>;
    opgen::cuda::launch_map(Forward<opmath_t>{static_cast<opmath_t>(alpha)}, input.numel(),
                            y.mutable_data_ptr<scalar_t>(), input.const_data_ptr<scalar_t>());
  });
  return y;
}

Tensor backward_cuda(const Tensor& grad, const Tensor& x, double alpha) {
  opgen::check_floating(x, "x");
  opgen::check_same_device(grad, "grad", x, "x");
  opgen::check_same_dtype(grad, "grad", x, "x");
  opgen::check_same_shape(grad, "grad", x, "x");
  const opgen::DeviceGuard device_guard(x);
  const Tensor g = opgen::contiguous(grad);
  const Tensor input = opgen::contiguous(x);
  Tensor dx = opgen::empty_like(input);
  OPGEN_DISPATCH_FLOATING(input.scalar_type(), "fused_relu_scale_backward_cuda", [&] {
    using opmath_t = opgen::opmath_t<scalar_t>;
    opgen::cuda::launch_map(Backward<opmath_t>{static_cast<opmath_t>(alpha)}, input.numel(),
                            dx.mutable_data_ptr<scalar_t>(), g.const_data_ptr<scalar_t>(),
                            input.const_data_ptr<scalar_t>());
  });
  return dx;
}

OPGEN_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("fused_relu_scale", OPGEN_KERNEL(forward_cuda));
  m.impl("fused_relu_scale_backward", OPGEN_KERNEL(backward_cuda));
}

}  // namespace examples::fused_relu_scale
