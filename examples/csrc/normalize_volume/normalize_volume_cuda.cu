// normalize_volume: CUDA kernel, through the element-wise map of common/elementwise.cuh: with
// aligned pointers each thread moves 4 voxels at a time (an 8-byte uint16 load, a 16-byte float
// store), one voxel at a time otherwise; 64-bit indices; on the current stream of volume's device.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include "common/elementwise.cuh"
#include "normalize_volume/normalize_volume.h"

namespace examples::normalize_volume {

at::Tensor forward_cuda(const at::Tensor& volume, double max_value) {
  check_arguments(volume, max_value);
  const c10::cuda::CUDAGuard device_guard(volume.device());
  const at::Tensor input = volume.contiguous();
  at::Tensor out = at::empty(input.sizes(), input.options().dtype(at::kFloat));
  opgen::cuda::launch_map(Normalize{static_cast<float>(max_value)}, input.numel(), out.mutable_data_ptr<float>(),
                          input.const_data_ptr<uint16_t>());
  return out;
}

TORCH_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("normalize_volume", &forward_cuda);
}

}  // namespace examples::normalize_volume
