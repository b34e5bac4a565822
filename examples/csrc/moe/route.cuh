// moe's routing on CUDA, shared by its two paths (moe_cuda.cu, decode.cuh): the ranking of logits,
// one warp's top_k and softmax for one token, and the kernel that computes a token's logits first.
#pragma once

#include <c10/util/BFloat16.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "common/elementwise.cuh"
#include "common/reduce.cuh"

namespace examples::moe {

using opgen::cuda::kWarpSize;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / kWarpSize;
constexpr int kMaxExperts = 256;  // route_token keeps E / 32 logits per lane
constexpr int kLogitsPerLane = kMaxExperts / kWarpSize;
constexpr unsigned kFullMask = 0xffffffffu;

// A logit's rank as an unsigned integer: a larger logit has a larger key, every NaN the largest (as
// torch.topk ranks NaN first), -0 the key of +0, and no logit the key 0, which stands for "none".
__device__ __forceinline__ uint32_t rank_key(float v) {
  const uint32_t u = __float_as_uint(v);
  return v != v ? 0xffffffffu : v == 0.0f ? 0x80000000u : (u >> 31) ? ~u : u | 0x80000000u;
}
__device__ __forceinline__ uint64_t rank_key(double v) {
  const uint64_t u = static_cast<uint64_t>(__double_as_longlong(v));
  constexpr uint64_t kSign = uint64_t(1) << 63;
  return v != v ? ~uint64_t(0) : v == 0.0 ? kSign : (u >> 63) ? ~u : u | kSign;
}
// The logit of a key (a NaN's comes back as a NaN).
__device__ __forceinline__ float logit_of(uint32_t key) {
  return __uint_as_float((key >> 31) ? key & 0x7fffffffu : ~key);
}
__device__ __forceinline__ double logit_of(uint64_t key) {
  return __longlong_as_double(static_cast<long long>((key >> 63) ? key & ~(uint64_t(1) << 63) : ~key));
}

// (key a, expert ia) ranks above (key b, expert ib): the larger key, the lower expert on ties.
template <typename Key>
__device__ __forceinline__ bool ranks_above(Key a, int ia, Key b, int ib) {
  return a > b || (a == b && ia < ib);
}

// One warp routes one token: top_k rounds of a warp argmax over its E logits' rank keys (lane l holds
// experts l, l + 32, ...; a chosen expert's key becomes 0), then p = softmax over the chosen logits.
// Round r's lane r % 32 writes slot r. The keys make each comparison two integer compares, with no
// NaN cases: a round is a few instructions a slot and a five-step butterfly.
template <typename acc_t>
__device__ __forceinline__ void route_token(const acc_t* logits, int experts, int top_k, int lane,
                                            int32_t* __restrict__ chosen, acc_t* __restrict__ weight) {
  using Key = decltype(rank_key(acc_t(0)));
  Key key[kLogitsPerLane];
#pragma unroll
  for (int j = 0; j < kLogitsPerLane; ++j) {
    const int e = j * kWarpSize + lane;
    key[j] = e < experts ? rank_key(logits[e]) : Key(0);
  }
  acc_t top = 0;       // the largest logit: the softmax's shift
  acc_t lane_sum = 0;  // this lane's share of the softmax denominator
  for (int r = 0; r < top_k; ++r) {
    Key best = 0;
    int best_e = kMaxExperts;
#pragma unroll
    for (int j = 0; j < kLogitsPerLane; ++j) {
      if (j * kWarpSize >= experts) {
        break;  // the same for every lane
      }
      if (key[j] > best) {  // strictly: this lane's lower expert keeps a tie
        best = key[j];
        best_e = j * kWarpSize + lane;
      }
    }
    // A butterfly under a strict total order: every lane ends with the same winner.
#pragma unroll
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
      const Key other = __shfl_xor_sync(kFullMask, best, offset);
      const int other_e = __shfl_xor_sync(kFullMask, best_e, offset);
      if (ranks_above(other, other_e, best, best_e)) {
        best = other;
        best_e = other_e;
      }
    }
#pragma unroll
    for (int j = 0; j < kLogitsPerLane; ++j) {
      key[j] = j * kWarpSize + lane == best_e ? Key(0) : key[j];
    }
    const acc_t logit = logit_of(best);
    if (r == 0) {
      top = logit;
    }
    if (r % kWarpSize == lane) {
      const acc_t w = std::exp(logit - top);
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

// v in acc_t; a bfloat16 is the high half of its float (c10's conversion spilled registers in
// warp_dot under route_logits_kernel's bound of 64).
template <typename acc_t, typename T>
__device__ __forceinline__ acc_t widen(T v) {
  if constexpr (std::is_same_v<T, c10::BFloat16> && std::is_same_v<acc_t, float>) {
    return __uint_as_float(uint32_t(v.x) << 16);
  } else {
    return static_cast<acc_t>(v);
  }
}

// a . b over n elements, by one warp (every lane gets the sum), in acc_t: kVec elements a lane at a
// time (both rows 16-byte aligned, n a multiple of kVec), or one. Each lane has kInFlight loads of
// each row in flight before its first multiply: a dot waits for memory about once, not n / 32 times.
template <int kVec, typename acc_t, typename A, typename B>
__device__ __forceinline__ acc_t warp_dot(const A* __restrict__ a, const B* __restrict__ b, int64_t n, int lane) {
  constexpr int kInFlight = 4;
  constexpr int64_t kStep = int64_t(kWarpSize) * kVec;
  acc_t sum = 0;
#pragma unroll 1
  for (int64_t first = int64_t(lane) * kVec; first < n; first += kStep * kInFlight) {
    opgen::cuda::Vec<A, kVec> va[kInFlight];
    opgen::cuda::Vec<B, kVec> vb[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      if (first + u * kStep < n) {
        va[u] = opgen::cuda::load_vector<kVec>(a, first + u * kStep);
        vb[u] = opgen::cuda::load_vector<kVec>(b, first + u * kStep);
      }
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      if (first + u * kStep < n) {
#pragma unroll
        for (int i = 0; i < kVec; ++i) {
          sum += widen<acc_t>(va[u].v[i]) * widen<acc_t>(vb[u].v[i]);
        }
      }
    }
  }
  return opgen::cuda::warp_sum(sum);
}

// rows[g] . x over n elements for each g < count (count <= kGroup; row g at rows + g * row_stride),
// by one warp (every lane gets each sum), in acc_t, kVec elements a lane at a time (every row 16-byte
// aligned, n a multiple of kVec) or one: each of x's vectors is loaded and widened once for all of
// them, and the count rows' vectors are in flight together. The same sums, in the same order, as
// warp_dot on each row. (An H200 profile of warp_dot a row: about 9 instructions a multiply-add,
// x's row widened again for each expert.)
template <int kVec, int kGroup, typename acc_t, typename T>
__device__ __forceinline__ void warp_dots(const T* __restrict__ rows, int64_t row_stride, int count,
                                          const T* __restrict__ x, int64_t n, int lane, acc_t (&sums)[kGroup]) {
  constexpr int64_t kStep = int64_t(kWarpSize) * kVec;
#pragma unroll
  for (int g = 0; g < kGroup; ++g) {
    sums[g] = 0;
  }
#pragma unroll 1
  for (int64_t first = int64_t(lane) * kVec; first < n; first += kStep) {
    const auto vx = opgen::cuda::load_vector<kVec>(x, first);
    opgen::cuda::Vec<T, kVec> vrow[kGroup];
#pragma unroll
    for (int g = 0; g < kGroup; ++g) {
      if (g < count) {
        vrow[g] = opgen::cuda::load_vector<kVec>(rows + g * row_stride, first);
      }
    }
    acc_t wide_x[kVec];
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      wide_x[i] = widen<acc_t>(vx.v[i]);
    }
#pragma unroll
    for (int g = 0; g < kGroup; ++g) {
      if (g < count) {
#pragma unroll
        for (int i = 0; i < kVec; ++i) {
          sums[g] += widen<acc_t>(vrow[g].v[i]) * wide_x[i];
        }
      }
    }
  }
#pragma unroll
  for (int g = 0; g < kGroup; ++g) {
    if (g < count) {
      sums[g] = opgen::cuda::warp_sum(sums[g]);
    }
  }
}

// warps_per_token warps (kWarps or 1) compute a token's E router logits in acc_t (a warp per expert
// at a time, lanes along d), then the first of them routes them (route_token). Both of moe's paths
// route with it where the logits take little arithmetic (routes_on_cores in moe_cuda.cu): no library
// call, one launch. A block per token spreads a token's experts over its warps, for few tokens; a
// warp per token holds 8x the tokens in one wave of resident blocks, for many.
constexpr int kRouteBlocksPerSM = 4;  // (at most 64 registers a thread: x's and a gate row's loads in flight)

template <int kVec, typename scalar_t, typename acc_t>
__global__ void __launch_bounds__(kThreads, kRouteBlocksPerSM)
    route_logits_kernel(const scalar_t* __restrict__ x, const scalar_t* __restrict__ gate_weight, int64_t tokens,
                        int64_t hidden, int experts, int top_k, int warps_per_token,
                        int32_t* __restrict__ expert_of_pair, acc_t* __restrict__ weight_of_pair) {
  __shared__ acc_t logits[kWarps][kMaxExperts];  // a token's logits: the row of its group
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int group = warp / warps_per_token;  // which of the block's tokens this warp works on
  const int member = warp % warps_per_token;
  const int64_t token = int64_t(blockIdx.x) * (kWarps / warps_per_token) + group;
  if (token < tokens && warps_per_token == 1) {  // a warp a token: kGroup experts a pass over x's row
    constexpr int kGroup = 4;
    for (int first = 0; first < experts; first += kGroup) {
      acc_t sums[kGroup];
      const int count = experts - first < kGroup ? experts - first : kGroup;
      warp_dots<kVec>(gate_weight + first * hidden, hidden, count, x + token * hidden, hidden, lane, sums);
#pragma unroll
      for (int g = 0; g < kGroup; ++g) {
        if (lane == 0 && g < count) {
          logits[group][first + g] = sums[g];
        }
      }
    }
  } else if (token < tokens) {
    for (int e = member; e < experts; e += warps_per_token) {
      const acc_t logit = warp_dot<kVec, acc_t>(gate_weight + e * hidden, x + token * hidden, hidden, lane);
      if (lane == 0) {
        logits[group][e] = logit;
      }
    }
  }
  __syncthreads();
  if (token < tokens && member == 0) {
    route_token(logits[group], experts, top_k, lane, expert_of_pair + token * top_k, weight_of_pair + token * top_k);
  }
}

// Routes `tokens` tokens with route_logits_kernel: a block per token while those blocks fit in one
// wave on `sms` multiprocessors, else a warp per token; 16-byte loads where x's and gate_weight's
// rows allow. (The caller checks the launch.)
template <typename scalar_t, typename acc_t>
void route_tokens(const scalar_t* x, const scalar_t* gate_weight, int64_t tokens, int64_t hidden, int experts,
                  int top_k, int sms, int32_t* expert_of_pair, acc_t* weight_of_pair, cudaStream_t stream) {
  constexpr int kVec = 16 / sizeof(scalar_t);
  const int warps_per_token = tokens <= int64_t(sms) * kRouteBlocksPerSM ? kWarps : 1;
  const unsigned int blocks = opgen::cuda::grid_size(tokens * warps_per_token, kWarps);
  if (hidden % kVec == 0 && opgen::cuda::is_vector_aligned<kVec>(x) &&
      opgen::cuda::is_vector_aligned<kVec>(gate_weight)) {
    route_logits_kernel<kVec, scalar_t, acc_t><<<blocks, kThreads, 0, stream>>>(
        x, gate_weight, tokens, hidden, experts, top_k, warps_per_token, expert_of_pair, weight_of_pair);
  } else {
    route_logits_kernel<1, scalar_t, acc_t><<<blocks, kThreads, 0, stream>>>(
        x, gate_weight, tokens, hidden, experts, top_k, warps_per_token, expert_of_pair, weight_of_pair);
  }
}

}  // namespace examples::moe
