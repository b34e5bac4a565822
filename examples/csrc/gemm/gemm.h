// gemm: what the host code (gemm.cpp) hands the CUDA launchers (gemm_cuda.cu). Torch-free.
#pragma once

#include <cstdint>

#include "common/kernel_types.h"

namespace examples::gemm {

// A row-major matrix with unit column stride: its memory and the elements between rows.
struct Matrix {
  opgen::Buffer data;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t ld = 0;
};

// Whether every row of a float32 matrix starts on a 16-byte boundary (the float32 kernel copies b's
// rows 16 bytes at a time).
inline bool rows_16_byte_aligned(const Matrix& m) {
  return reinterpret_cast<std::uintptr_t>(m.data.data) % 16 == 0 && m.ld % 4 == 0;
}

}  // namespace examples::gemm
