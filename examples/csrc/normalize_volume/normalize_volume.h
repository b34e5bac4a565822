// normalize_volume: the per-voxel math, shared by the CPU kernel (normalize_volume.cpp) and the CUDA
// kernel (normalize_volume_cuda.cu), so the two cannot drift apart. Torch-free.
#pragma once

#include <cstdint>

#include "common/kernel_types.h"  // OPGEN_HOST_DEVICE

namespace examples::normalize_volume {

// float(v) / max_value: a uint16 voxel is exact in float, so the result is the correctly rounded
// quotient by max_value (rounded to float once, on the host), as volume.float() / max_value on CPU.
struct Normalize {
  float max_value;

  OPGEN_HOST_DEVICE float operator()(uint16_t v) const {
    return static_cast<float>(v) / max_value;
  }
};

}  // namespace examples::normalize_volume
