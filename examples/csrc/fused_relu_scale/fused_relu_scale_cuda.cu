// fused_relu_scale: CUDA kernels, through the element-wise map of common/elementwise.cuh (16-byte
// vectors when aligned, one element at a time otherwise, 64-bit indices), on the current stream.
// One pass over memory where eager relu(x) * alpha makes two.
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/checks.h"
#include "common/elementwise.cuh"
#include "fused_relu_scale/fused_relu_scale.h"

namespace examples::fused_relu_scale {

at::Tensor forward_cuda(const at::Tensor& x, double alpha) {
  opgen::check_floating(x, "x");
  const c10::cuda::CUDAGuard device_guard(x.device());
  const at::Tensor input = x.contiguous();
  at::Tensor y = at::empty(input.sizes(), input.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "fused_relu_scale_cuda", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    opgen::cuda::launch_map(Forward<opmath_t>{static_cast<opmath_t>(alpha)}, input.numel(),
                            y.mutable_data_ptr<scalar_t>(), input.const_data_ptr<scalar_t>());
  });
  return y;
}

at::Tensor backward_cuda(const at::Tensor& grad, const at::Tensor& x, double alpha) {
  opgen::check_floating(x, "x");
  opgen::check_same_device(grad, "grad", x, "x");
  opgen::check_same_dtype(grad, "grad", x, "x");
  opgen::check_same_shape(grad, "grad", x, "x");
  const c10::cuda::CUDAGuard device_guard(x.device());
  const at::Tensor g = grad.contiguous();
  const at::Tensor input = x.contiguous();
  at::Tensor dx = at::empty(input.sizes(), input.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "fused_relu_scale_backward_cuda", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    opgen::cuda::launch_map(Backward<opmath_t>{static_cast<opmath_t>(alpha)}, input.numel(),
                            dx.mutable_data_ptr<scalar_t>(), g.const_data_ptr<scalar_t>(),
                            input.const_data_ptr<scalar_t>());
  });
  return dx;
}

TORCH_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("fused_relu_scale", &forward_cuda);
  m.impl("fused_relu_scale_backward", &backward_cuda);
}

}  // namespace examples::fused_relu_scale
