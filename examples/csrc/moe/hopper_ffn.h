// moe: the expert FFN as two CUTLASS grouped GEMMs on Hopper tensor cores (hopper_ffn.cu), with the
// GELU in the first one's epilogue. ATen-free: moe_cuda.cu allocates and calls.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace examples::moe {

// bfloat16 (or, `half`, float16) operands, all contiguous with 16-byte aligned rows (hidden and ffn
// multiples of 8).
struct HopperFfn {
  const void* rows;            // (pairs, hidden): x's rows sorted by expert
  const void* w1;              // (experts, ffn, hidden)
  const void* w2;              // (experts, hidden, ffn)
  const int32_t* expert_ends;  // (experts): where each expert's slice of rows ends (on the device)
  int experts;
  int hidden;
  int ffn;
  void* hidden_rows;  // (pairs, ffn), written: gelu_tanh(rows @ w1[e]^T)
  void* out_rows;     // (pairs, hidden), written: hidden_rows @ w2[e]^T
  bool half;          // float16 operands, else bfloat16
};

// Whether this build runs the grouped GEMMs on the current device: CUTLASS's headers were found
// when it was built, it carries sm_90a code (TORCH_CUDA_ARCH_LIST with "9.0a": wgmma needs it) and
// the device has compute capability 9.0.
bool hopper_ffn_available();

// Device scratch bytes for hopper_ffn: each expert's problem, pointers and strides, and CUTLASS's
// workspace.
size_t hopper_ffn_scratch_bytes(int experts, bool half);

// Runs both GEMMs on `stream`, reading the slice ends on the device (no host sync). False, running
// nothing, where CUTLASS cannot take these sizes.
bool hopper_ffn(const HopperFfn& ffn, void* scratch, size_t scratch_bytes, cudaStream_t stream);

}  // namespace examples::moe
