// moe for small batches (decoding), where sorting the pairs by expert and the grouped GEMMs cost more
// than the FFNs themselves (decodes() says where). Three kernels, no library call, no host
// sync, all on the current stream:
//   1. route_logits_kernel (route.cuh): a block per token computes its E router logits (a warp per
//      expert at a time, lanes along d), then its first warp routes them (route_token);
//   2. decode_up_kernel: h[pair, f] = gelu_tanh(x[token] . w1[e][f]), a warp per (pair, f);
//   3. decode_down_kernel: y[t, i] = sum over slots k of p[t, k] * (h[t, k] . w2[e][i]), a warp per
//      (t, i), the slots in order: deterministic, no atomics.
// Every weight row a pair needs is read once for that pair, 16 bytes a lane where every row starts
// on a 16-byte boundary: memory-bound on the chosen experts' weights, as decoding is. h stays in
// the op-math type between the two products (the large-batch path rounds it to the storage type).
#pragma once

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "common/elementwise.cuh"
#include "common/reduce.cuh"
#include "moe/moe.h"
#include "moe/route.cuh"

namespace examples::moe {

// Which path: the small-batch one reads every pair's expert weights once per pair; the large-batch
// one reads each chosen expert's once, but takes about 170 us at least on an H100 (a dozen launches
// and the grouped GEMMs' set-up), in which a copy moves kLargePathFloorBytes. So up to
// kDecodeTokens tokens, this path where no expert can be read more often than there (no more pairs
// than experts) or where all pairs' weights take less than that floor. (Measured on an H100,
// bfloat16, this path against the other, T tokens: d 1024, F 4096, E 8, top 2: 25 against 213 us at
// T=1, 87 against 216 at 8; d 4096, F 14336, E 8, top 2: 177 against 269 at 1, 625 for both at 4,
// 1221 against 775 at 8; d 2048, F 1408, E 64, top 6: 67 against 125 at 1, 377 against 279 at 16.)
// (A build may set OPGEN_MOE_DECODE_TOKENS, e.g. to 0 to compare the paths.)
#ifdef OPGEN_MOE_DECODE_TOKENS
constexpr int64_t kDecodeTokens = OPGEN_MOE_DECODE_TOKENS;
#else
constexpr int64_t kDecodeTokens = 64;
#endif
constexpr int64_t kLargePathFloorBytes = int64_t(440) << 20;

inline bool decodes(const Sizes& s, int64_t top_k, int64_t element_bytes) {
  const int64_t pairs = s.tokens * top_k;
  const int64_t expert_bytes = 2 * s.ffn * s.hidden * element_bytes;  // w1[e] and w2[e]
  return s.tokens <= kDecodeTokens && (pairs <= s.experts || pairs * expert_bytes <= kLargePathFloorBytes);
}

template <typename acc_t>
__device__ __forceinline__ acc_t gelu_tanh(acc_t v) {
  const acc_t kBeta = acc_t(0.7978845608028654);  // sqrt(2 / pi)
  const acc_t kKappa = acc_t(0.044715);
  return acc_t(0.5) * v * (acc_t(1) + std::tanh(kBeta * (v + kKappa * v * v * v)));
}

template <int kVec, typename scalar_t, typename acc_t>
__global__ void __launch_bounds__(kThreads)
    decode_up_kernel(const scalar_t* __restrict__ x, const scalar_t* __restrict__ w1,
                     const int32_t* __restrict__ expert_of_pair, int64_t hidden, int64_t ffn, int top_k,
                     acc_t* __restrict__ h) {
  const int lane = threadIdx.x % kWarpSize;
  const int64_t pair = blockIdx.y;
  const int64_t f = int64_t(blockIdx.x) * kWarps + threadIdx.x / kWarpSize;
  if (f >= ffn) {
    return;  // the whole warp leaves together
  }
  const int64_t e = expert_of_pair[pair];
  const acc_t v = warp_dot<kVec, acc_t>(w1 + (e * ffn + f) * hidden, x + pair / top_k * hidden, hidden, lane);
  if (lane == 0) {
    h[pair * ffn + f] = gelu_tanh(v);
  }
}

template <int kVec, typename scalar_t, typename acc_t>
__global__ void __launch_bounds__(kThreads)
    decode_down_kernel(const acc_t* __restrict__ h, const scalar_t* __restrict__ w2,
                       const int32_t* __restrict__ expert_of_pair, const acc_t* __restrict__ weight_of_pair,
                       int64_t hidden, int64_t ffn, int top_k, scalar_t* __restrict__ y) {
  const int lane = threadIdx.x % kWarpSize;
  const int64_t token = blockIdx.y;
  const int64_t i = int64_t(blockIdx.x) * kWarps + threadIdx.x / kWarpSize;
  if (i >= hidden) {
    return;
  }
  acc_t sum = 0;
  for (int k = 0; k < top_k; ++k) {
    const int64_t pair = token * top_k + k;
    const int64_t e = expert_of_pair[pair];
    sum += weight_of_pair[pair] * warp_dot<kVec, acc_t>(w2 + (e * hidden + i) * ffn, h + pair * ffn, ffn, lane);
  }
  if (lane == 0) {
    y[token * hidden + i] = static_cast<scalar_t>(sum);
  }
}

template <int kVec, typename scalar_t, typename acc_t>
void launch_decode(const scalar_t* x, const scalar_t* gate_weight, const scalar_t* w1, const scalar_t* w2,
                   const Sizes& s, int top_k, std::byte* workspace, scalar_t* y, cudaStream_t stream) {
  const int64_t pairs = s.tokens * top_k;
  // The workspace: h (pairs x ffn), then the pairs' weights and experts, each 16-byte aligned.
  const auto aligned_bytes = [](int64_t bytes) { return (bytes + 15) / 16 * 16; };
  auto* h = reinterpret_cast<acc_t*>(workspace);
  auto* weight_of_pair = reinterpret_cast<acc_t*>(workspace + aligned_bytes(pairs * s.ffn * sizeof(acc_t)));
  auto* expert_of_pair =
      reinterpret_cast<int32_t*>(reinterpret_cast<std::byte*>(weight_of_pair) + aligned_bytes(pairs * sizeof(acc_t)));
  const int experts = static_cast<int>(s.experts);
  route_logits_kernel<kVec, scalar_t, acc_t><<<unsigned(s.tokens), kThreads, 0, stream>>>(
      x, gate_weight, s.tokens, s.hidden, experts, top_k, kWarps, expert_of_pair, weight_of_pair);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  if (s.ffn > 0) {
    const dim3 up_grid(opgen::cuda::grid_size(s.ffn, kWarps), unsigned(pairs));
    decode_up_kernel<kVec, scalar_t, acc_t>
        <<<up_grid, kThreads, 0, stream>>>(x, w1, expert_of_pair, s.hidden, s.ffn, top_k, h);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  const dim3 down_grid(opgen::cuda::grid_size(s.hidden, kWarps), unsigned(s.tokens));
  decode_down_kernel<kVec, scalar_t, acc_t>
      <<<down_grid, kThreads, 0, stream>>>(h, w2, expert_of_pair, weight_of_pair, s.hidden, s.ffn, top_k, y);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// y (tokens x hidden, fresh) = moe(x, ...) by the small-batch path.
inline void forward_decode(const at::Tensor& x, const at::Tensor& gate_weight, const at::Tensor& w1,
                           const at::Tensor& w2, const Sizes& s, int top_k, at::Tensor& y, cudaStream_t stream) {
  const at::Tensor x_c = x.contiguous();
  const at::Tensor gate_c = gate_weight.contiguous();
  const at::Tensor w1_c = w1.contiguous();
  const at::Tensor w2_c = w2.contiguous();
  const int64_t pairs = s.tokens * top_k;
  const int64_t acc_bytes = x.scalar_type() == at::kDouble ? 8 : 4;
  const int64_t workspace_bytes = (pairs * s.ffn * acc_bytes + 15) / 16 * 16 + (pairs * acc_bytes + 15) / 16 * 16 +
                                  pairs * int64_t(sizeof(int32_t));
  at::Tensor workspace = at::empty({workspace_bytes}, x.options().dtype(at::kByte));
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "moe_decode_cuda", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    constexpr int kVec = 16 / sizeof(scalar_t);
    const scalar_t* operands[] = {x_c.const_data_ptr<scalar_t>(), gate_c.const_data_ptr<scalar_t>(),
                                  w1_c.const_data_ptr<scalar_t>(), w2_c.const_data_ptr<scalar_t>()};
    bool vectors = s.hidden % kVec == 0 && s.ffn % kVec == 0;
    for (const scalar_t* operand : operands) {
      vectors = vectors && opgen::cuda::is_vector_aligned<kVec>(operand);
    }
    auto* bytes = static_cast<std::byte*>(workspace.mutable_data_ptr());
    if (vectors) {
      launch_decode<kVec, scalar_t, acc_t>(operands[0], operands[1], operands[2], operands[3], s, top_k, bytes,
                                           y.mutable_data_ptr<scalar_t>(), stream);
    } else {
      launch_decode<1, scalar_t, acc_t>(operands[0], operands[1], operands[2], operands[3], s, top_k, bytes,
                                        y.mutable_data_ptr<scalar_t>(), stream);
    }
  });
}

}  // namespace examples::moe
