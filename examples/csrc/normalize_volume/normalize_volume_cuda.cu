// normalize_volume: CUDA kernel, through the element-wise map of common/elementwise.cuh: with
// aligned pointers each thread moves 4 voxels at a time (an 8-byte uint16 load, a 16-byte float
// store), one voxel at a time otherwise; 64-bit indices; on the current stream of volume's device.
#include "common/elementwise.cuh"
#include "common/torch_api.h"
#include "normalize_volume/normalize_volume.h"

namespace examples::normalize_volume {

using opgen::Tensor;

Tensor forward_cuda(const Tensor& volume, double max_value) {
  check_arguments(volume, max_value);
  const opgen::DeviceGuard device_guard(volume);
  const Tensor input = opgen::contiguous(volume);
  Tensor out = opgen::empty(input, opgen::sizes(input), opgen::kFloat);
  opgen::cuda::launch_map(Normalize{static_cast<float>(max_value)}, input.numel(), out.mutable_data_ptr<float>(),
                          input.const_data_ptr<uint16_t>());
  return out;
}

OPGEN_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("normalize_volume", OPGEN_KERNEL(forward_cuda));
}

}  // namespace examples::normalize_volume
