// normalize_volume: host code for CPU and CUDA (checks, allocation, device guard, stream) and the
// CPU kernel; the declaration in opgen_examples/ops/normalize_volume.py registers it. The math is in
// normalize_volume.h, the CUDA kernels in normalize_volume_cuda.cu (ours) and
// normalize_volume_naive_cuda.cu (the seed's, a benchmark baseline).
// A uint16 D x H x W volume (a CT scan, say) to float32, in [0, 1] when max_value is the largest
// voxel value. Not differentiable (the input is integer), so no backward.
#include <limits>

#include "common/checks.h"
#include "common/cpu_loops.h"
#include "common/torch_api.h"
#include "normalize_volume/normalize_volume.h"

namespace examples::normalize_volume {

using opgen::Buffer;
using opgen::Tensor;

#ifdef OPGEN_WITH_CUDA
// In normalize_volume_cuda.cu and normalize_volume_naive_cuda.cu (no torch headers there).
void forward_cuda(opgen::CudaStream stream, const Buffer& out, const Buffer& volume, float max_value);
void naive_cuda(opgen::CudaStream stream, const Buffer& out, const Buffer& volume, int dim_z, int dim_y, int dim_x,
                float max_value);
#endif

namespace {

void check_arguments(const Tensor& volume, double max_value) {
  opgen::check_dtype(volume, "volume", opgen::kUInt16);
  opgen::check_dim(volume, "volume", 3);
  // Checked as the kernels use it, in float: this also refuses NaN and values that round to 0.
  OPGEN_CHECK(static_cast<float>(max_value) > 0, "max_value must be positive, got ", max_value);
}

}  // namespace

Tensor forward(const Tensor& volume, double max_value) {
  check_arguments(volume, max_value);
#ifdef OPGEN_WITH_CUDA
  const opgen::DeviceGuard device_guard(volume);
#endif
  const Tensor input = opgen::contiguous(volume);
  Tensor out = opgen::empty(input, opgen::sizes(input), opgen::kFloat);
#ifdef OPGEN_WITH_CUDA
  if (input.is_cuda()) {
    forward_cuda(opgen::current_stream(), opgen::output(out), opgen::input(input), static_cast<float>(max_value));
    return out;
  }
#endif
  opgen::cpu::map(Normalize{static_cast<float>(max_value)}, input.numel(), out.mutable_data_ptr<float>(),
                  input.const_data_ptr<uint16_t>());
  return out;
}

#ifdef OPGEN_WITH_CUDA
// The seed's kernel: CUDA only, a 3-D grid of one-voxel threads, an int index.
Tensor naive(const Tensor& volume, double max_value) {
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
  naive_cuda(opgen::current_stream(), opgen::output(out), opgen::input(input), dim_z, dim_y, dim_x,
             static_cast<float>(max_value));
  return out;
}
#endif

}  // namespace examples::normalize_volume
