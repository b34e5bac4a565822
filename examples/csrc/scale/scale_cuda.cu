// scale: CUDA kernels, through the vectorized element-wise map of common/elementwise.cuh
// (16-byte loads, scalar tail, 64-bit indices). scale.cpp checks the arguments, makes the
// tensors contiguous, sets the device and passes the current stream. No torch header here: nvcc
// compiles this file in about a second.
#include "common/elementwise.cuh"
#include "scale/scale.h"

namespace examples::scale {

using opgen::Buffer;

void forward_cuda(opgen::CudaStream stream, const Buffer& result, const Buffer& x, double factor) {
  OPGEN_CUDA_DISPATCH_FLOATING(result.dtype, "scale_cuda", [&] {
    using T = opgen::opmath_t<scalar_t>;
    opgen::cuda::launch_map(stream, Forward<T>{static_cast<T>(factor)}, result.numel, result.as<scalar_t>(),
                            x.as<const scalar_t>());
  });
}

void backward_cuda(opgen::CudaStream stream, const Buffer& grad, const Buffer& x, const Buffer& grad_x, double factor) {
  OPGEN_CUDA_DISPATCH_FLOATING(grad.dtype, "scale_backward_cuda", [&] {
    using T = opgen::opmath_t<scalar_t>;
    opgen::cuda::launch_map(stream, Backward<T>{static_cast<T>(factor)}, grad.numel, grad_x.as<scalar_t>(),
                            grad.as<const scalar_t>(), x.as<const scalar_t>());
  });
}

}  // namespace examples::scale
