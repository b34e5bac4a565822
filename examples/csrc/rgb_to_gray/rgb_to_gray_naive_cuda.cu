// rgb_to_gray_naive: the seed's kernel (16x16 threads per block, one pixel each, an int index,
// float weights truncated to uint8), registered only as a benchmark baseline for rgb_to_gray. The
// seed declared its own `uchar3`, which clashes with CUDA's; CUDA's has the same 3-byte layout.
#include <limits>

#include "common/checks.h"
#include "common/torch_api.h"

namespace examples::rgb_to_gray {

using opgen::Tensor;

__global__ void naive_rgb_to_gray_kernel(const uchar3* img, unsigned char* gray, int width, int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) {
    const int idx = y * width + x;
    const uchar3 pixel = img[idx];
    gray[idx] = static_cast<unsigned char>(0.299f * pixel.x + 0.587f * pixel.y + 0.114f * pixel.z);
  }
}

Tensor naive_cuda(const Tensor& img) {
  opgen::check_dtype(img, "img", opgen::kByte);
  OPGEN_CHECK(img.dim() == 3 && img.size(2) == 3, "img must be H x W x 3, got shape ", opgen::shape_name(img));
  OPGEN_CHECK(img.numel() <= std::numeric_limits<int>::max(), "rgb_to_gray_naive indexes with int: img has ",
              img.numel(), " elements, more than 2^31 - 1");
  const int height = static_cast<int>(img.size(0));
  const int width = static_cast<int>(img.size(1));
  OPGEN_CHECK((int64_t(height) + 15) / 16 <= 65535, "rgb_to_gray_naive: img has ", height,
              " rows, more than its grid's 65535 x 16");
  const opgen::DeviceGuard device_guard(img);
  const Tensor input = opgen::contiguous(img);
  Tensor gray = opgen::empty(input, {height, width});
  if (gray.numel() == 0) {
    return gray;
  }
  const dim3 block(16, 16);
  const dim3 grid((width + 15) / 16, (height + 15) / 16);
  naive_rgb_to_gray_kernel<<<grid, block, 0, opgen::current_stream()>>>(
      reinterpret_cast<const uchar3*>(input.const_data_ptr<uint8_t>()), gray.mutable_data_ptr<uint8_t>(), width,
      height);
  OPGEN_CUDA_LAUNCH_CHECK();
  return gray;
}

OPGEN_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("rgb_to_gray_naive", OPGEN_KERNEL(naive_cuda));
}

}  // namespace examples::rgb_to_gray
