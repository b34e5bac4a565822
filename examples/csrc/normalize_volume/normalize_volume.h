// normalize_volume: the argument checks and the per-voxel math, shared by the CPU kernel
// (normalize_volume.cpp) and the CUDA kernel (normalize_volume_cuda.cu), so the two cannot drift apart.
#pragma once

#include <cstdint>

#include "common/checks.h"
#include "common/torch_api.h"  // C10_HOST_DEVICE

namespace examples::normalize_volume {

inline void check_arguments(const opgen::Tensor& volume, double max_value) {
  opgen::check_dtype(volume, "volume", opgen::kUInt16);
  opgen::check_dim(volume, "volume", 3);
  // Checked as the kernels use it, in float: this also refuses NaN and values that round to 0.
  OPGEN_CHECK(static_cast<float>(max_value) > 0, "max_value must be positive, got ", max_value);
}

// float(v) / max_value: a uint16 voxel is exact in float, so the result is the correctly rounded
// quotient by max_value (rounded to float once, on the host), as volume.float() / max_value on CPU.
struct Normalize {
  float max_value;

  C10_HOST_DEVICE float operator()(uint16_t v) const {
    return static_cast<float>(v) / max_value;
  }
};

}  // namespace examples::normalize_volume
