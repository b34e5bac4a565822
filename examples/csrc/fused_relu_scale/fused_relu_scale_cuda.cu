// fused_relu_scale: CUDA kernels, through the vectorized element-wise map of common/elementwise.cuh
// (16-byte loads, scalar tail, 64-bit indices). fused_relu_scale.cpp checks the arguments, makes the
// tensors contiguous, sets the device and passes the current stream. No torch header here: nvcc
// compiles this file in about a second.
#include "common/elementwise.cuh"
#include "fused_relu_scale/fused_relu_scale.h"

namespace examples::fused_relu_scale {

using opgen::Buffer;

void forward_cuda(opgen::CudaStream stream, const Buffer& result, const Buffer& x, double alpha) {
  OPGEN_CUDA_DISPATCH_FLOATING(result.dtype, "fused_relu_scale_cuda", [&] {
    using T = opgen::opmath_t<scalar_t>;
    opgen::cuda::launch_map(stream, Forward<T>{static_cast<T>(alpha)}, result.numel, result.as<scalar_t>(),
                            x.as<const scalar_t>());
  });
}

void backward_cuda(opgen::CudaStream stream, const Buffer& grad, const Buffer& x, const Buffer& grad_x, double alpha) {
  OPGEN_CUDA_DISPATCH_FLOATING(grad.dtype, "fused_relu_scale_backward_cuda", [&] {
    using T = opgen::opmath_t<scalar_t>;
    opgen::cuda::launch_map(stream, Backward<T>{static_cast<T>(alpha)}, grad.numel, grad_x.as<scalar_t>(),
                            grad.as<const scalar_t>(), x.as<const scalar_t>());
  });
}

}  // namespace examples::fused_relu_scale
