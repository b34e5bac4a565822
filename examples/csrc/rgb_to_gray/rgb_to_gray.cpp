// rgb_to_gray: host code for CPU and CUDA (checks, allocation, device guard, stream) and the CPU
// kernel; the declaration in opgen_examples/ops/rgb_to_gray.py registers it. The math is in
// rgb_to_gray.h, the CUDA kernels in rgb_to_gray_cuda.cu (ours) and rgb_to_gray_naive_cuda.cu (the
// seed's, a benchmark baseline).
// An 8-bit H x W x 3 RGB image to an 8-bit H x W gray one. Not differentiable (integer data).
#include <limits>

#include "common/checks.h"
#include "common/cpu_loops.h"
#include "common/torch_api.h"
#include "rgb_to_gray/rgb_to_gray.h"

namespace examples::rgb_to_gray {

using opgen::Buffer;
using opgen::Tensor;

#ifdef OPGEN_WITH_CUDA
// In rgb_to_gray_cuda.cu and rgb_to_gray_naive_cuda.cu (no torch headers there).
void forward_cuda(opgen::CudaStream stream, const Buffer& gray, const Buffer& rgb);
void naive_cuda(opgen::CudaStream stream, const Buffer& gray, const Buffer& rgb, int height, int width);
#endif

namespace {

void check_image(const Tensor& img) {
  opgen::check_dtype(img, "img", opgen::kByte);
  OPGEN_CHECK(img.dim() == 3 && img.size(2) == 3, "img must be an H x W x 3 (RGB) image, got shape ",
              opgen::shape_name(img));
}

}  // namespace

Tensor forward(const Tensor& img) {
  check_image(img);
#ifdef OPGEN_WITH_CUDA
  const opgen::DeviceGuard device_guard(img);
#endif
  const Tensor input = opgen::contiguous(img);
  Tensor gray = opgen::empty(input, {input.size(0), input.size(1)});
#ifdef OPGEN_WITH_CUDA
  if (input.is_cuda()) {
    forward_cuda(opgen::current_stream(), opgen::output(gray), opgen::input(input));
    return gray;
  }
#endif
  const uint8_t* rgb = input.const_data_ptr<uint8_t>();
  uint8_t* out = gray.mutable_data_ptr<uint8_t>();
  constexpr int64_t kGrain = 32768;
  opgen::cpu::parallel_for(gray.numel(), kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      out[p] = luma(rgb[3 * p], rgb[3 * p + 1], rgb[3 * p + 2]);
    }
  });
  return gray;
}

#ifdef OPGEN_WITH_CUDA
// The seed's kernel: CUDA only, 16 x 16 one-pixel threads, an int index.
Tensor naive(const Tensor& img) {
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
  naive_cuda(opgen::current_stream(), opgen::output(gray), opgen::input(input), height, width);
  return gray;
}
#endif

}  // namespace examples::rgb_to_gray
