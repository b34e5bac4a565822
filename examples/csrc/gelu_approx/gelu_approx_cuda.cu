// gelu_approx: CUDA kernels, through the vectorized element-wise map of common/elementwise.cuh
// (16-byte loads, scalar tail, 64-bit indices). gelu_approx.cpp checks the arguments, makes the
// tensors contiguous, sets the device and passes the current stream. No torch header here: nvcc
// compiles this file in about a second.
#include "common/elementwise.cuh"
#include "gelu_approx/gelu_approx.h"

namespace examples::gelu_approx {

using opgen::Buffer;

void forward_cuda(opgen::CudaStream stream, const Buffer& result, const Buffer& x) {
  OPGEN_CUDA_DISPATCH_FLOATING(result.dtype, "gelu_approx_cuda", [&] {
    using T = opgen::opmath_t<scalar_t>;
    opgen::cuda::launch_map(stream, Forward<T>{}, result.numel, result.as<scalar_t>(), x.as<const scalar_t>());
  });
}

void backward_cuda(opgen::CudaStream stream, const Buffer& grad, const Buffer& x, const Buffer& grad_x) {
  OPGEN_CUDA_DISPATCH_FLOATING(grad.dtype, "gelu_approx_backward_cuda", [&] {
    using T = opgen::opmath_t<scalar_t>;
    opgen::cuda::launch_map(stream, Backward<T>{}, grad.numel, grad_x.as<scalar_t>(), grad.as<const scalar_t>(),
                            x.as<const scalar_t>());
  });
}

}  // namespace examples::gelu_approx
