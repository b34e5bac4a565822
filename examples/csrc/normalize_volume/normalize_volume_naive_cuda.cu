// normalize_volume_naive: the seed's kernel (8x8x4 threads per block, one voxel each, an int
// index, a division per voxel), registered only as a benchmark baseline for normalize_volume (host
// code and checks in normalize_volume.cpp). No torch header here.
#include "common/cuda_utils.cuh"

namespace examples::normalize_volume {

using opgen::Buffer;

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

// volume: contiguous uint16 dim_z x dim_y x dim_x, fewer than 2^31 voxels; out: float32, same shape.
void naive_cuda(opgen::CudaStream stream, const Buffer& out, const Buffer& volume, int dim_z, int dim_y, int dim_x,
                float max_value) {
  if (out.numel == 0) {
    return;
  }
  const dim3 block(8, 8, 4);
  const dim3 grid((dim_x + 7) / 8, (dim_y + 7) / 8, (dim_z + 3) / 4);
  naive_normalize_kernel<<<grid, block, 0, stream>>>(volume.as<const unsigned short>(), out.as<float>(), dim_x,
                                                     dim_y, dim_z, max_value);
  OPGEN_CUDA_LAUNCH_CHECK();
}

}  // namespace examples::normalize_volume
