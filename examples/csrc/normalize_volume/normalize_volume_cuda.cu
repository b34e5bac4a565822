// normalize_volume: CUDA kernel, through the element-wise map of common/elementwise.cuh: each
// thread moves 4 voxels at a time (an 8-byte uint16 load, a 16-byte float store; a volume that
// starts mid-vector, such as flat[1:].view(...), is read with two aligned loads shifted into place);
// 64-bit indices; on the stream normalize_volume.cpp passes (the current stream of volume's device).
// No torch header here.
#include "common/elementwise.cuh"
#include "normalize_volume/normalize_volume.h"

namespace examples::normalize_volume {

using opgen::Buffer;

// out (float32) = volume (uint16) / max_value, both contiguous.
void forward_cuda(opgen::CudaStream stream, const Buffer& out, const Buffer& volume, float max_value) {
  opgen::cuda::launch_map(stream, Normalize{max_value}, volume.numel, out.as<float>(), volume.as<const uint16_t>());
}

}  // namespace examples::normalize_volume
