// moe's routing on CUDA, shared by its two paths (moe_cuda.cu, decode.cuh): the ranking of logits
// and one warp's top_k and softmax for one token.
#pragma once

#include <cmath>
#include <cstdint>

#include "common/reduce.cuh"

namespace examples::moe {

using opgen::cuda::kWarpSize;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / kWarpSize;
constexpr int kMaxExperts = 256;  // route_token keeps E / 32 logits per lane
constexpr int kLogitsPerLane = kMaxExperts / kWarpSize;
constexpr unsigned kFullMask = 0xffffffffu;

// (a, ia) ranks above (b, ib) in the top-k order: larger logit first, NaN above everything (as
// torch.topk), the lower expert on ties; expert -1 is "none" and ranks below all.
template <typename acc_t>
__device__ __forceinline__ bool ranks_above(acc_t a, int ia, acc_t b, int ib) {
  if (ia < 0 || ib < 0) {
    return ib < 0 && ia >= 0;
  }
  const bool a_nan = a != a;
  const bool b_nan = b != b;
  if (a_nan != b_nan) {
    return a_nan;
  }
  return (a_nan || a == b) ? ia < ib : a > b;
}

// One warp routes one token: top_k rounds of a warp argmax over its E logits (lane l holds experts
// l, l + 32, ...), then p = softmax over the chosen logits. Round r's lane r % 32 writes slot r.
template <typename acc_t>
__device__ __forceinline__ void route_token(const acc_t* logits, int experts, int top_k, int lane,
                                            int32_t* __restrict__ chosen, acc_t* __restrict__ weight) {
  acc_t logit[kLogitsPerLane];
  unsigned taken = 0;  // bit j: expert j * 32 + lane is chosen already, or does not exist
#pragma unroll
  for (int j = 0; j < kLogitsPerLane; ++j) {
    const int e = j * kWarpSize + lane;
    logit[j] = e < experts ? logits[e] : acc_t(0);
    taken |= e < experts ? 0u : 1u << j;
  }
  acc_t top = 0;       // the largest logit: the softmax's shift
  acc_t lane_sum = 0;  // this lane's share of the softmax denominator
  for (int r = 0; r < top_k; ++r) {
    acc_t best = 0;
    int best_e = -1;
#pragma unroll
    for (int j = 0; j < kLogitsPerLane; ++j) {
      const int e = j * kWarpSize + lane;
      if (!((taken >> j) & 1u) && ranks_above(logit[j], e, best, best_e)) {
        best = logit[j];
        best_e = e;
      }
    }
    // A butterfly under a strict total order: every lane ends with the same winner.
#pragma unroll
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
      const acc_t other = __shfl_xor_sync(kFullMask, best, offset);
      const int other_e = __shfl_xor_sync(kFullMask, best_e, offset);
      if (ranks_above(other, other_e, best, best_e)) {
        best = other;
        best_e = other_e;
      }
    }
    if (best_e % kWarpSize == lane) {
      taken |= 1u << (best_e / kWarpSize);
    }
    if (r == 0) {
      top = best;
    }
    if (r % kWarpSize == lane) {
      const acc_t w = std::exp(best - top);
      chosen[r] = best_e;
      weight[r] = w;
      lane_sum += w;
    }
  }
  const acc_t inverse_sum = acc_t(1) / opgen::cuda::warp_sum(lane_sum);
  for (int r = lane; r < top_k; r += kWarpSize) {
    weight[r] *= inverse_sum;  // this lane wrote slot r above
  }
}

}  // namespace examples::moe
