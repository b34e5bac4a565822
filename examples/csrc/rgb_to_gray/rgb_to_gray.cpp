// rgb_to_gray: schema and CPU kernel. The CUDA kernel is in rgb_to_gray_cuda.cu.
// An 8-bit H x W x 3 RGB image to an 8-bit H x W gray one. Not differentiable (integer data).
#include "common/cpu_loops.h"
#include "common/torch_api.h"
#include "rgb_to_gray/rgb_to_gray.h"

namespace examples::rgb_to_gray {

using opgen::Tensor;

Tensor forward_cpu(const Tensor& img) {
  check_image(img);
  const Tensor input = opgen::contiguous(img);
  Tensor gray = opgen::empty(input, {input.size(0), input.size(1)});
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

OPGEN_LIBRARY_FRAGMENT(examples, m) {
  m.def("rgb_to_gray(Tensor img) -> Tensor");
  m.def("rgb_to_gray_naive(Tensor img) -> Tensor");  // the seed's kernel, CUDA only
}

OPGEN_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("rgb_to_gray", OPGEN_KERNEL(forward_cpu));
}

}  // namespace examples::rgb_to_gray
