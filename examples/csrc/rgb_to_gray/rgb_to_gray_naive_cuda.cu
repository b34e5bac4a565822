// rgb_to_gray_naive: the seed's kernel (16x16 threads per block, one pixel each, an int index,
// float weights truncated to uint8), registered only as a benchmark baseline for rgb_to_gray (host
// code and checks in rgb_to_gray.cpp). The seed declared its own `uchar3`, which clashes with
// CUDA's; CUDA's has the same 3-byte layout. No torch header here.
#include "common/cuda_utils.cuh"

namespace examples::rgb_to_gray {

using opgen::Buffer;

__global__ void naive_rgb_to_gray_kernel(const uchar3* img, unsigned char* gray, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) {
    const int idx = y * width + x;
    const uchar3 pixel = img[idx];
    gray[idx] = static_cast<unsigned char>(0.299f * pixel.x + 0.587f * pixel.y + 0.114f * pixel.z);
  }
}

// gray (height x width) from img (height x width x 3), contiguous uint8, fewer than 2^31 bytes.
void naive_cuda(opgen::CudaStream stream, const Buffer& gray, const Buffer& img, int height, int width) {
  if (gray.numel == 0) {
    return;
  }
  const dim3 block(16, 16);
  const dim3 grid((width + 15) / 16, (height + 15) / 16);
  naive_rgb_to_gray_kernel<<<grid, block, 0, stream>>>(img.as<const uchar3>(), gray.as<unsigned char>(), width,
                                                       height);
  OPGEN_CUDA_LAUNCH_CHECK();
}

}  // namespace examples::rgb_to_gray
