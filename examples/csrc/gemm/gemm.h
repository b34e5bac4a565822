// gemm: argument checks shared by the CPU (gemm.cpp) and CUDA (gemm_cuda.cu) kernels.
#pragma once

#include <ATen/core/Tensor.h>

#include "common/checks.h"

namespace examples::gemm {

// a (M, K) @ b (K, N): two floating-point matrices of one dtype on one device.
inline void check_inputs(const at::Tensor& a, const at::Tensor& b) {
  opgen::check_floating(a, "a");
  opgen::check_floating(b, "b");
  opgen::check_dim(a, "a", 2);
  opgen::check_dim(b, "b", 2);
  opgen::check_same_dtype(a, "a", b, "b");
  opgen::check_same_device(a, "a", b, "b");
  TORCH_CHECK(a.size(1) == b.size(0), "a's columns and b's rows must match (a @ b), got a ", a.sizes(), " and b ",
              b.sizes());
}

}  // namespace examples::gemm
