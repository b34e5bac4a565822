// normalize_volume: schema and CPU kernel. The CUDA kernel is in normalize_volume_cuda.cu.
// A uint16 D x H x W volume (a CT scan, say) to float32, in [0, 1] when max_value is the largest
// voxel value. Not differentiable (the input is integer), so no backward.
#include "common/cpu_loops.h"
#include "common/torch_api.h"
#include "normalize_volume/normalize_volume.h"

namespace examples::normalize_volume {

using opgen::Tensor;

Tensor forward_cpu(const Tensor& volume, double max_value) {
  check_arguments(volume, max_value);
  const Tensor input = opgen::contiguous(volume);
  Tensor out = opgen::empty(input, opgen::sizes(input), opgen::kFloat);
  opgen::cpu::map(Normalize{static_cast<float>(max_value)}, input.numel(), out.mutable_data_ptr<float>(),
                  input.const_data_ptr<uint16_t>());
  return out;
}

OPGEN_LIBRARY_FRAGMENT(examples, m) {
  m.def("normalize_volume(Tensor volume, float max_value) -> Tensor");
  m.def("normalize_volume_naive(Tensor volume, float max_value) -> Tensor");  // the seed's kernel, CUDA only
}

OPGEN_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("normalize_volume", OPGEN_KERNEL(forward_cpu));
}

}  // namespace examples::normalize_volume
