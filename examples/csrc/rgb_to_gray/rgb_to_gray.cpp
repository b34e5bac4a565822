// rgb_to_gray: schema and CPU kernel. The CUDA kernel is in rgb_to_gray_cuda.cu.
// An 8-bit H x W x 3 RGB image to an 8-bit H x W gray one. Not differentiable (integer data).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include "rgb_to_gray/rgb_to_gray.h"

namespace examples::rgb_to_gray {

at::Tensor forward_cpu(const at::Tensor& img) {
  check_image(img);
  const at::Tensor input = img.contiguous();
  at::Tensor gray = at::empty({input.size(0), input.size(1)}, input.options());
  const uint8_t* rgb = input.const_data_ptr<uint8_t>();
  uint8_t* out = gray.mutable_data_ptr<uint8_t>();
  constexpr int64_t kGrain = 32768;
  at::parallel_for(0, gray.numel(), kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      out[p] = luma(rgb[3 * p], rgb[3 * p + 1], rgb[3 * p + 2]);
    }
  });
  return gray;
}

TORCH_LIBRARY_FRAGMENT(examples, m) {
  m.def("rgb_to_gray(Tensor img) -> Tensor");
  m.def("rgb_to_gray_naive(Tensor img) -> Tensor");  // the seed's kernel, CUDA only
}

TORCH_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("rgb_to_gray", &forward_cpu);
}

}  // namespace examples::rgb_to_gray
