// vector_add: CUDA kernels, through the vectorized element-wise map of common/elementwise.cuh
// (16-byte loads, scalar tail, 64-bit indices). vector_add.cpp checks the arguments, makes the
// tensors contiguous, sets the device and passes the current stream. No torch header here: nvcc
// compiles this file in about a second.
#include "common/elementwise.cuh"
#include "vector_add/vector_add.h"

namespace examples::vector_add {

using opgen::Buffer;

void forward_cuda(opgen::CudaStream stream, const Buffer& result, const Buffer& a, const Buffer& b) {
  OPGEN_CUDA_DISPATCH_FLOATING(result.dtype, "vector_add_cuda", [&] {
    using T = opgen::opmath_t<scalar_t>;
    opgen::cuda::launch_map(stream, Forward<T>{}, result.numel, result.as<scalar_t>(), a.as<const scalar_t>(),
                            b.as<const scalar_t>());
  });
}

void backward_cuda(opgen::CudaStream stream, const Buffer& grad, const Buffer& a, const Buffer& b, const Buffer& grad_a,
                   const Buffer& grad_b) {
  OPGEN_CUDA_DISPATCH_FLOATING(grad.dtype, "vector_add_backward_cuda", [&] {
    using T = opgen::opmath_t<scalar_t>;
    // A gradient nobody needs has a null buffer: the kernel computes it but does not store it.
    const opgen::Array<scalar_t*, 2> grads{{grad_a.as<scalar_t>(), grad_b.as<scalar_t>()}};
    opgen::cuda::launch_map(stream, Backward<T>{}, grad.numel, grads, grad.as<const scalar_t>(), a.as<const scalar_t>(),
                            b.as<const scalar_t>());
  });
}

}  // namespace examples::vector_add
