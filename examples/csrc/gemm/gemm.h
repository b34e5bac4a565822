// gemm: argument checks shared by the CPU (gemm.cpp) and CUDA (gemm_cuda.cu) kernels.
#pragma once

#include "common/checks.h"
#include "common/torch_api.h"

namespace examples::gemm {

// a (M, K) @ b (K, N): two floating-point matrices of one dtype on one device.
inline void check_inputs(const opgen::Tensor& a, const opgen::Tensor& b) {
  opgen::check_floating(a, "a");
  opgen::check_floating(b, "b");
  opgen::check_dim(a, "a", 2);
  opgen::check_dim(b, "b", 2);
  opgen::check_same_dtype(a, "a", b, "b");
  opgen::check_same_device(a, "a", b, "b");
  OPGEN_CHECK(a.size(1) == b.size(0), "a's columns and b's rows must match (a @ b), got a ", opgen::shape_name(a),
              " and b ", opgen::shape_name(b));
}

}  // namespace examples::gemm
