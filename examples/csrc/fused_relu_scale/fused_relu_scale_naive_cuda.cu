// fused_relu_scale_naive: the seed's kernel (one thread per float32 element, an int index),
// registered only as a benchmark baseline for fused_relu_scale (host code in fused_relu_scale.cpp).
// The seed's launcher also synchronized the device after each launch; that is left out, so the
// timing is the kernel's.
#include "common/cuda_utils.cuh"

namespace examples::fused_relu_scale {

using opgen::Buffer;

__global__ void naive_relu_scale_kernel(const float* input, float* output, int n, float alpha) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < n) {
    output[idx] = fmaxf(input[idx], 0.0f) * alpha;
  }
}

// y = max(x, 0) * alpha, float32, contiguous, fewer than 2^31 elements.
void naive_cuda(opgen::CudaStream stream, const Buffer& y, const Buffer& x, float alpha) {
  const int n = static_cast<int>(y.numel);
  if (n == 0) {
    return;
  }
  constexpr int kThreads = 256;  // the seed's block size
  naive_relu_scale_kernel<<<(int64_t(n) + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
      x.as<const float>(), y.as<float>(), n, alpha);
  OPGEN_CUDA_LAUNCH_CHECK();
}

}  // namespace examples::fused_relu_scale
