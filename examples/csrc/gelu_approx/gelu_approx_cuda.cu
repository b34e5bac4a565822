// gelu_approx: CUDA kernels, through the vectorized element-wise map (16-byte loads, scalar tail,
// 64-bit indices) of common/elementwise.cuh, on the current stream of the input's device.
#include <ATen/Dispatch.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/checks.h"
#include "common/elementwise.cuh"
#include "gelu_approx/gelu_approx.h"

namespace examples::gelu_approx {

at::Tensor forward_cuda(const at::Tensor& x) {
  opgen::check_floating(x, "x");
  const c10::cuda::CUDAGuard device_guard(x.device());
  const at::Tensor input = x.contiguous();
  at::Tensor y = at::empty_like(input);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "gelu_approx_cuda", [&] {
    opgen::cuda::launch_map(Forward{}, input.numel(), y.mutable_data_ptr<scalar_t>(),
                            input.const_data_ptr<scalar_t>());
  });
  return y;
}

at::Tensor backward_cuda(const at::Tensor& grad, const at::Tensor& x) {
  opgen::check_floating(x, "x");
  opgen::check_same_device(grad, "grad", x, "x");
  opgen::check_same_dtype(grad, "grad", x, "x");
  opgen::check_same_shape(grad, "grad", x, "x");
  const c10::cuda::CUDAGuard device_guard(x.device());
  const at::Tensor g = grad.contiguous();
  const at::Tensor input = x.contiguous();
  at::Tensor dx = at::empty_like(input);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "gelu_approx_backward_cuda", [&] {
    opgen::cuda::launch_map(Backward{}, input.numel(), dx.mutable_data_ptr<scalar_t>(),
                            g.const_data_ptr<scalar_t>(), input.const_data_ptr<scalar_t>());
  });
  return dx;
}

TORCH_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("gelu_approx", &forward_cuda);
  m.impl("gelu_approx_backward", &backward_cuda);
}

}  // namespace examples::gelu_approx
