// moe: the argument checks and sizes shared by the CPU kernel (moe.cpp) and the CUDA kernel
// (moe_cuda.cu), so both reject the same inputs with the same messages.
#pragma once

#include <ATen/core/Tensor.h>

namespace examples::moe {

struct Sizes {
  int64_t tokens;   // T: rows of x
  int64_t hidden;   // d: columns of x
  int64_t experts;  // E
  int64_t ffn;      // F: hidden size of each expert's FFN
};

// x (T, d), gate_weight (E, d), w1 (E, F, d), w2 (E, d, F), 1 <= top_k <= E; one dtype, one device.
// Defined once, in moe.cpp, for both kernels.
Sizes check_inputs(const at::Tensor& x, const at::Tensor& gate_weight, const at::Tensor& w1, const at::Tensor& w2,
                   int64_t top_k);

// The router runs in float32 (float64 for float64 inputs): rounding the logits to bfloat16 would
// make near-ties pick experts at random.
inline at::ScalarType router_dtype(at::ScalarType dtype) {
  return dtype == at::kDouble ? at::kDouble : at::kFloat;
}

}  // namespace examples::moe
