// vector_add_naive: the seed's kernel (one thread per float32 element, a 32-bit index, no
// vectors), registered only as a benchmark baseline for vector_add. Its int index is why it
// refuses 2^31 elements or more (checked in vector_add.cpp); use vector_add for real work.
#include "common/cuda_utils.cuh"

namespace examples::vector_add {

using opgen::Buffer;

__global__ void naive_add_kernel(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    c[i] = a[i] + b[i];
  }
}

// c = a + b, float32, contiguous, c.numel < 2^31.
void naive_cuda(opgen::CudaStream stream, const Buffer& c, const Buffer& a, const Buffer& b) {
  const int n = static_cast<int>(c.numel);
  if (n == 0) {
    return;
  }
  constexpr int kThreads = 256;
  naive_add_kernel<<<(int64_t(n) + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
      a.as<const float>(), b.as<const float>(), c.as<float>(), n);
  OPGEN_CUDA_LAUNCH_CHECK();
}

}  // namespace examples::vector_add
