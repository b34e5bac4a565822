// rgb_to_gray: the per-pixel math, shared by the CPU kernel (rgb_to_gray.cpp) and the CUDA kernel
// (rgb_to_gray_cuda.cu), so the two agree bit for bit. Torch-free.
#pragma once

#include <cstdint>

#include "common/kernel_types.h"  // OPGEN_HOST_DEVICE

namespace examples::rgb_to_gray {

// BT.601 luma, 0.299 R + 0.587 G + 0.114 B, in 16.16 fixed point, rounded to nearest. The weights
// are rounded so that they sum to exactly 2^16: white stays 255 and the sum fits in 32 bits.
// Integer math gives the same byte on every device (the seed's float formula truncated instead).
OPGEN_HOST_DEVICE inline uint8_t luma(uint32_t r, uint32_t g, uint32_t b) {
  return static_cast<uint8_t>((19595u * r + 38470u * g + 7471u * b + 32768u) >> 16);
}

}  // namespace examples::rgb_to_gray
