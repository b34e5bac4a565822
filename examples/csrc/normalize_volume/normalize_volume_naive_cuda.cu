// normalize_volume_naive: the seed's kernel (8x8x4 threads per block, one voxel each, an int
// index, a division per voxel), registered only as a benchmark baseline for normalize_volume.
#include <limits>

#include "common/checks.h"
#include "common/torch_api.h"

namespace examples::normalize_volume {

using opgen::Tensor;

__global__ void naive_normalize_kernel(const unsigned short* in, float* out, int dim_x, int dim_y, int dim_z,
                                       float max_value) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < dim_x && y < dim_y && z < dim_z) {
    const int idx = z * dim_y * dim_x + y * dim_x + x;
    out[idx] = static_cast<float>(in[idx]) / max_value;
  }
}

Tensor naive_cuda(const Tensor& volume, double max_value) {
  opgen::check_dtype(volume, "volume", opgen::kUInt16);
  opgen::check_dim(volume, "volume", 3);
  OPGEN_CHECK(volume.numel() <= std::numeric_limits<int>::max(), "normalize_volume_naive indexes with int: ",
              "volume has ", volume.numel(), " elements, more than 2^31 - 1");
  const int dim_z = static_cast<int>(volume.size(0));
  const int dim_y = static_cast<int>(volume.size(1));
  const int dim_x = static_cast<int>(volume.size(2));
  OPGEN_CHECK((int64_t(dim_y) + 7) / 8 <= 65535 && (int64_t(dim_z) + 3) / 4 <= 65535,
              "normalize_volume_naive: volume shape ", opgen::shape_name(volume), " is past its grid's limits");
  const opgen::DeviceGuard device_guard(volume);
  const Tensor input = opgen::contiguous(volume);
  Tensor out = opgen::empty(input, opgen::sizes(input), opgen::kFloat);
  if (out.numel() == 0) {
    return out;
  }
  const dim3 block(8, 8, 4);
  const dim3 grid((dim_x + 7) / 8, (dim_y + 7) / 8, (dim_z + 3) / 4);
  naive_normalize_kernel<<<grid, block, 0, opgen::current_stream()>>>(
      reinterpret_cast<const unsigned short*>(input.const_data_ptr<uint16_t>()), out.mutable_data_ptr<float>(), dim_x,
      dim_y, dim_z, static_cast<float>(max_value));
  OPGEN_CUDA_LAUNCH_CHECK();
  return out;
}

OPGEN_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("normalize_volume_naive", OPGEN_KERNEL(naive_cuda));
}

}  // namespace examples::normalize_volume
