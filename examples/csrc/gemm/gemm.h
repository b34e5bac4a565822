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

}  // namespace examples::gemm
