// moe's routing on CUDA, shared by its two paths (moe_cuda.cu, decode.cuh): the ranking of logits,
// one warp's top_k and softmax for one token, and the kernel that computes a token's logits first.
#pragma once

#include <cmath>
#include <cstdint>

#include "common/elementwise.cuh"
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

// a . b over n elements, by one warp (every lane gets the sum), in acc_t: kVec elements a lane at a
// time (both rows 16-byte aligned, n a multiple of kVec), or one.
template <int kVec, typename acc_t, typename A, typename B>
__device__ __forceinline__ acc_t warp_dot(const A* __restrict__ a, const B* __restrict__ b, int64_t n, int lane) {
  acc_t sum = 0;
#pragma unroll 4
  for (int64_t j = int64_t(lane) * kVec; j < n; j += int64_t(kWarpSize) * kVec) {
    const auto va = opgen::cuda::load_vector<kVec>(a, j);
    const auto vb = opgen::cuda::load_vector<kVec>(b, j);
#pragma unroll
    for (int u = 0; u < kVec; ++u) {
      sum += static_cast<acc_t>(va.v[u]) * static_cast<acc_t>(vb.v[u]);
    }
  }
  return opgen::cuda::warp_sum(sum);
}

// A block per token: its E router logits in acc_t (a warp per expert at a time, lanes along d), then
// its first warp routes them (route_token). Both of moe's paths route with it where the logits take
// little arithmetic (routes_on_cores in moe_cuda.cu): no library call, one launch.
template <int kVec, typename scalar_t, typename acc_t>
__global__ void __launch_bounds__(kThreads)
    route_logits_kernel(const scalar_t* __restrict__ x, const scalar_t* __restrict__ gate_weight, int64_t hidden,
                        int experts, int top_k, int32_t* __restrict__ expert_of_pair,
                        acc_t* __restrict__ weight_of_pair) {
  __shared__ acc_t logits[kMaxExperts];
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int64_t token = blockIdx.x;
  for (int e = warp; e < experts; e += kWarps) {
    const acc_t logit = warp_dot<kVec, acc_t>(gate_weight + e * hidden, x + token * hidden, hidden, lane);
    if (lane == 0) {
      logits[e] = logit;
    }
  }
  __syncthreads();
  if (warp == 0) {
    route_token(logits, experts, top_k, lane, expert_of_pair + token * top_k, weight_of_pair + token * top_k);
  }
}

// Routes `tokens` tokens with route_logits_kernel: 16-byte loads where x's and gate_weight's rows
// allow. (The caller checks the launch.)
template <typename scalar_t, typename acc_t>
void route_tokens(const scalar_t* x, const scalar_t* gate_weight, int64_t tokens, int64_t hidden, int experts,
                  int top_k, int32_t* expert_of_pair, acc_t* weight_of_pair, cudaStream_t stream) {
  constexpr int kVec = 16 / sizeof(scalar_t);
  if (hidden % kVec == 0 && opgen::cuda::is_vector_aligned<kVec>(x) &&
      opgen::cuda::is_vector_aligned<kVec>(gate_weight)) {
    route_logits_kernel<kVec, scalar_t, acc_t><<<unsigned(tokens), kThreads, 0, stream>>>(
        x, gate_weight, hidden, experts, top_k, expert_of_pair, weight_of_pair);
  } else {
    route_logits_kernel<1, scalar_t, acc_t><<<unsigned(tokens), kThreads, 0, stream>>>(
        x, gate_weight, hidden, experts, top_k, expert_of_pair, weight_of_pair);
  }
}

}  // namespace examples::moe
