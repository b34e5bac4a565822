// scale: CUDA kernel, through the element-wise map of common/elementwise.cuh (16-byte vectors when
// aligned, one element at a time otherwise, 64-bit indices), on the current stream of x's device.
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/checks.h"
#include "common/elementwise.cuh"
#include "scale/scale.h"

namespace examples::scale {

at::Tensor forward_cuda(const at::Tensor& x, double factor) {
  opgen::check_floating(x, "x");
  const c10::cuda::CUDAGuard device_guard(x.device());
  const at::Tensor input = x.contiguous();
  at::Tensor y = at::empty(input.sizes(), input.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "scale_cuda", [&] {
    using opmath_t = at::opmath_type<scalar_t>;
    opgen::cuda::launch_map(Scale<opmath_t>{static_cast<opmath_t>(factor)}, input.numel(),
                            y.mutable_data_ptr<scalar_t>(), input.const_data_ptr<scalar_t>());
  });
  return y;
}

TORCH_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("scale", &forward_cuda);
}

}  // namespace examples::scale
