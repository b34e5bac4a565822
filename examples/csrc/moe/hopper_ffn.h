// moe: the expert FFN as two CUTLASS GEMMs on Hopper tensor cores (hopper_ffn.cu), each M tile of
// rows multiplied by its own expert's weights, the GELU in the first one's epilogue. ATen-free:
// moe_cuda.cu allocates and calls.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace examples::moe {

// The GEMMs' M tile: rows come in tiles of one expert each, every expert's slice of the sorted rows
// starting at a multiple of it (its last tile padded).
constexpr int kExpertTileRows = 64;

// How many rows `pairs` sorted rows take at most, each of `experts` slices padded to whole tiles:
// the GEMMs' M, known on the host without the routing (the tiles past the last expert's are
// computed and never read).
constexpr int64_t expert_tile_rows(int64_t pairs, int experts) {
  const int64_t rows = pairs + int64_t(experts) * (kExpertTileRows - 1);
  return (rows + kExpertTileRows - 1) / kExpertTileRows * kExpertTileRows;
}

// bfloat16 (or, `half`, float16) operands, all contiguous with 16-byte aligned rows (hidden and ffn
// multiples of 8).
struct HopperFfn {
  const void* rows;            // (row_count, hidden): x's rows by expert, in tiles (kExpertTileRows)
  const void* w1;              // (experts, ffn, hidden)
  const void* w2;              // (experts, hidden, ffn)
  const int32_t* tile_expert;  // (row_count / kExpertTileRows + 1), on the device: each tile's expert (-1 for
                               // none), then how many tiles hold rows
  int64_t row_count;           // expert_tile_rows(pairs, experts)
  int experts;
  int hidden;
  int ffn;
  void* hidden_rows;  // (row_count, ffn), written: gelu_tanh(rows @ w1[e]^T)
  void* out_rows;     // (row_count, hidden), written: hidden_rows @ w2[e]^T
  bool half;          // float16 operands, else bfloat16
};

// Whether this build runs these GEMMs on the current device: CUTLASS's headers were found when it
// was built, it carries sm_90a code (TORCH_CUDA_ARCH_LIST with "9.0a": wgmma needs it) and the
// device has compute capability 9.0.
bool hopper_ffn_available();

// Whether hopper_ffn takes these sizes (CUTLASS's problem sizes are ints; it checks the rest).
bool hopper_ffn_takes(int64_t row_count, int64_t hidden, int64_t ffn, bool half);

// Device scratch bytes for hopper_ffn: CUTLASS's workspace.
size_t hopper_ffn_scratch_bytes(int64_t row_count, int experts, int hidden, int ffn, bool half);

// Runs both GEMMs on `stream`, reading each tile's expert on the device (no host sync). Throws
// where hopper_ffn_takes would have said no.
void hopper_ffn(const HopperFfn& ffn, void* scratch, size_t scratch_bytes, cudaStream_t stream);

}  // namespace examples::moe
