// moe: CUDA forward, all on the current stream. Small batches (decodes() in decode.cuh says which):
// three kernels of decode.cuh. Larger ones in five steps:
//   1-2. routing: where the logits take little arithmetic (routes_on_cores), route_logits_kernel
//      (route.cuh) computes each token's E logits in float32 (float64 for float64) and routes them
//      (a warp per token where a block per token would take more than one wave);
//      otherwise one cuBLAS GEMM with float32 output, then route_kernel: per token (one warp), top_k
//      over the E logits and a softmax over those top_k;
//   3. a stable counting sort of the T * top_k (token, slot) pairs by expert: count_kernel (an
//      expert histogram per 256-pair segment), an exclusive scan of the histograms (scan_kernel, one
//      block, which also writes each expert's slice end; at::cumsum past kScanOneBlock),
//      scatter_kernel (each pair's row in the expert-sorted order); then gather_kernel copies x's rows
//      in that order, so every expert owns one contiguous slice of rows. Where our Hopper GEMMs run,
//      each slice starts at a tile of kExpertTileRows rows (tile_layout_kernel, between the scan and
//      the scatter, pads the slices and says each tile's expert; the gather zeroes the padding);
//   4. the expert FFNs gelu_tanh(rows @ w1[e]^T) @ w2[e]^T on those slices, on tensor cores, reading
//      the routing on the device (no host sync, so the op is asynchronous):
//      - bfloat16 and float16 on Hopper: ours (hopper_ffn.cu, CUTLASS: two GEMMs over all tiles, each
//        tile with its expert's weights, the GELU in the first one's epilogue) where the build has
//        them, else at::_grouped_mm's grouped GEMMs (bfloat16 only) with a GELU pass between;
//      - otherwise: two cuBLAS GEMMs per expert (the first with cuBLASLt's GELU epilogue where ATen
//        can use it), which needs the slice ends on the host: one device-to-host copy of E ints,
//        a sync on the stream (so this path cannot be captured in a CUDA graph);
//   5. combine_kernel: y[t] = sum over slots k of p[t, k] * out[row(t, k)], a gather in slot order:
//      no atomics, so the result does not depend on scheduling.
// The host side is a dozen launches and few ATen calls: on a slow host each ATen call costs several
// microseconds, and until the GEMMs are queued the GPU waits for it. (Measured on an H200's host:
// the router's cuBLAS GEMM with float32 output took 227 us of host time a call in the profiler.)
#include "common/use_aten.h"  // on the full ATen API: see docs/index.md for why

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/core/Tensor.h>
#include <ATen/cuda/CUDAContextLight.h>
#include <ATen/ops/_addmm_activation.h>
#include <ATen/ops/_grouped_mm.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/zeros.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "common/checks.h"
#include "common/elementwise.cuh"
#include "common/reduce.cuh"
#include "moe/decode.cuh"
#include "moe/hopper_ffn.h"
#include "moe/moe.h"
#include "moe/route.cuh"

namespace examples::moe {

constexpr int kSegmentSteps = 8;  // a warp sorts its segment 32 pairs at a time
constexpr int64_t kSegment = int64_t(kSegmentSteps) * kWarpSize;

// A warp per token, routing the logits of the router GEMM.
template <typename acc_t>
__global__ void __launch_bounds__(kThreads)
    route_kernel(const acc_t* __restrict__ logits, int64_t tokens, int experts, int top_k,
                 int32_t* __restrict__ expert_of_pair, acc_t* __restrict__ weight_of_pair) {
  const int64_t token = int64_t(blockIdx.x) * kWarps + threadIdx.x / kWarpSize;
  if (token >= tokens) {
    return;  // the whole warp leaves together
  }
  route_token(logits + token * experts, experts, top_k, int(threadIdx.x % kWarpSize), expert_of_pair + token * top_k,
              weight_of_pair + token * top_k);
}

// The expert of each of the 32 pairs of one step of a warp's segment (-1 past the end), and the
// lanes whose pair has the same expert.
struct StepPairs {
  int64_t pair;
  int expert;
  unsigned peers;
};

__device__ __forceinline__ StepPairs load_step(const int32_t* __restrict__ expert_of_pair, int64_t pairs,
                                               int64_t segment, int step, int lane) {
  const int64_t pair = segment * kSegment + step * kWarpSize + lane;
  const int expert = pair < pairs ? expert_of_pair[pair] : -1;
  return {pair, expert, __match_any_sync(kFullMask, expert)};
}

// counts[e][s]: how many pairs of segment s (kSegment consecutive pairs, one warp) chose expert e.
__global__ void __launch_bounds__(kThreads) count_kernel(const int32_t* __restrict__ expert_of_pair, int64_t pairs,
                                                         int experts, int64_t segments, int32_t* __restrict__ counts) {
  __shared__ int32_t warp_counts[kWarps][kMaxExperts];
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int64_t segment = int64_t(blockIdx.x) * kWarps + warp;
  if (segment >= segments) {
    return;  // only warp-level barriers below
  }
  int32_t* count = warp_counts[warp];
  for (int e = lane; e < experts; e += kWarpSize) {
    count[e] = 0;
  }
  __syncwarp();
  for (int step = 0; step < kSegmentSteps; ++step) {
    const StepPairs s = load_step(expert_of_pair, pairs, segment, step, lane);
    if (s.expert >= 0 && lane == __ffs(s.peers) - 1) {  // one lane per expert adds the step's count
      count[s.expert] += __popc(s.peers);
    }
    __syncwarp();
  }
  for (int e = lane; e < experts; e += kWarpSize) {
    counts[e * segments + segment] = count[e];
  }
}

// Places each pair at starts[e][s] + (pairs of segment s before it with the same expert e), plus
// row_offset[e] where the slices are padded to tiles (else null): a stable sort by expert. starts is
// the exclusive scan of counts in (expert, segment) order.
__global__ void __launch_bounds__(kThreads)
    scatter_kernel(const int32_t* __restrict__ expert_of_pair, int64_t pairs, int experts, int64_t segments, int top_k,
                   const int32_t* __restrict__ starts, const int32_t* __restrict__ row_offset,
                   int32_t* __restrict__ token_of_row, int32_t* __restrict__ row_of_pair) {
  __shared__ int32_t warp_cursors[kWarps][kMaxExperts];
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int64_t segment = int64_t(blockIdx.x) * kWarps + warp;
  if (segment >= segments) {
    return;
  }
  int32_t* cursor = warp_cursors[warp];
  for (int e = lane; e < experts; e += kWarpSize) {
    cursor[e] = starts[e * segments + segment] + (row_offset != nullptr ? row_offset[e] : 0);
  }
  __syncwarp();
  const unsigned lanes_before = (1u << lane) - 1u;
  for (int step = 0; step < kSegmentSteps; ++step) {
    const StepPairs s = load_step(expert_of_pair, pairs, segment, step, lane);
    if (s.expert >= 0) {
      const int32_t row = cursor[s.expert] + __popc(s.peers & lanes_before);
      token_of_row[row] = static_cast<int32_t>(s.pair / top_k);
      row_of_pair[s.pair] = row;
    }
    __syncwarp();  // every lane has read its cursor before the leaders advance them
    if (s.expert >= 0 && lane == __ffs(s.peers) - 1) {
      cursor[s.expert] += __popc(s.peers);
    }
    __syncwarp();
  }
}

// The sum of v over this warp's lanes up to and including this one.
__device__ __forceinline__ int32_t warp_inclusive_sum(int32_t v, int lane) {
#pragma unroll
  for (int offset = 1; offset < kWarpSize; offset *= 2) {
    const int32_t before = __shfl_up_sync(kFullMask, v, offset);
    v += lane >= offset ? before : 0;
  }
  return v;
}

// The exclusive scan of counts (n of them, in (expert, segment) order) into starts, and each expert's
// slice end (its last segment's inclusive sum) into expert_ends, by one block: kScanItems consecutive
// counts a thread, a pass of kScanThreads * kScanItems at a time.
constexpr int kScanThreads = 1024;
constexpr int kScanItems = 8;
constexpr int64_t kScanOneBlock = int64_t(1) << 18;  // beyond: at::cumsum (one block would take too long)

__global__ void __launch_bounds__(kScanThreads)
    scan_kernel(const int32_t* __restrict__ counts, int64_t n, int64_t segments, int32_t* __restrict__ starts,
                int32_t* __restrict__ expert_ends) {
  __shared__ int32_t warp_totals[kScanThreads / kWarpSize];
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  int32_t carry = 0;  // the counts of the passes before
  for (int64_t pass = 0; pass < n; pass += int64_t(kScanThreads) * kScanItems) {
    const int64_t first = pass + int64_t(threadIdx.x) * kScanItems;
    int32_t item[kScanItems];
    int32_t total = 0;
#pragma unroll
    for (int u = 0; u < kScanItems; ++u) {
      item[u] = first + u < n ? counts[first + u] : 0;
      total += item[u];
    }
    const int32_t inclusive = warp_inclusive_sum(total, lane);  // over this warp's lanes up to this one
    if (lane == kWarpSize - 1) {
      warp_totals[warp] = inclusive;
    }
    __syncthreads();
    if (warp == 0) {
      warp_totals[lane] = warp_inclusive_sum(warp_totals[lane], lane);
    }
    __syncthreads();
    int32_t running = carry + (warp > 0 ? warp_totals[warp - 1] : 0) + inclusive - total;
    // Item i is (expert i / segments, segment i % segments): one division a thread, then counted on
    // (64-bit divisions an item made this kernel 9.4 us at E=64, T=4096 top-8 on an H200).
    int64_t expert = first / segments;
    int64_t segment = first - expert * segments;
#pragma unroll
    for (int u = 0; u < kScanItems; ++u) {
      const int64_t i = first + u;
      const bool last = segment == segments - 1;  // of its expert
      if (i < n) {
        starts[i] = running;
        running += item[u];
        if (last) {
          expert_ends[expert] = running;
        }
      }
      segment = last ? 0 : segment + 1;
      expert += last ? 1 : 0;
    }
    carry += warp_totals[kScanThreads / kWarpSize - 1];
    __syncthreads();  // every thread has read warp_totals before the next pass writes it
  }
}

// What token_of_row holds on rows that carry no pair in hopper_ffn's layout: the rest of an expert's
// last tile (the gather writes zeros there) and the tiles past the last expert's (never read: the
// GEMMs load zeros for a tile of no expert).
constexpr int32_t kPaddingRow = -1;
constexpr int32_t kNoRow = -2;

// hopper_ffn's layout (hopper_ffn.h): each expert's slice of the sorted rows padded to whole tiles of
// kExpertTileRows. Every block scans the E padded slice sizes (E <= kThreads), then a thread takes a
// tile: tile_expert[t] (-1 past the last expert's tiles) and token_of_row on the tile's rows that
// hold no pair. Block 0 writes row_offset[e], how far expert e's slice moves from its packed start,
// and tile_expert[tiles], how many tiles hold rows.
__global__ void __launch_bounds__(kThreads)
    tile_layout_kernel(const int32_t* __restrict__ expert_ends, int experts, int64_t tiles,
                       int32_t* __restrict__ row_offset, int32_t* __restrict__ tile_expert,
                       int32_t* __restrict__ token_of_row) {
  static_assert(kMaxExperts <= kThreads, "a thread an expert");
  __shared__ int32_t padded_end[kThreads];  // where each expert's padded slice ends
  __shared__ int32_t rows_end[kThreads];    // where its rows end in it
  __shared__ int32_t warp_totals[kWarps];
  const int e = threadIdx.x;
  const int lane = e % kWarpSize;
  const int warp = e / kWarpSize;
  const int32_t start = e == 0 || e > experts ? 0 : expert_ends[e - 1];
  const int32_t count = e < experts ? expert_ends[e] - start : 0;
  const int32_t padded = (count + kExpertTileRows - 1) / kExpertTileRows * kExpertTileRows;
  int32_t inclusive = warp_inclusive_sum(padded, lane);  // over this warp's experts up to this one
  if (lane == kWarpSize - 1) {
    warp_totals[warp] = inclusive;
  }
  __syncthreads();
  for (int w = 0; w < warp; ++w) {
    inclusive += warp_totals[w];
  }
  padded_end[e] = inclusive;
  rows_end[e] = inclusive - padded + count;
  if (blockIdx.x == 0 && e < experts) {
    row_offset[e] = inclusive - padded - start;
  }
  if (blockIdx.x == 0 && e == kThreads - 1) {
    tile_expert[tiles] = inclusive / kExpertTileRows;  // the tiles that hold rows
  }
  __syncthreads();
  const int64_t tile = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (tile >= tiles) {
    return;
  }
  const int64_t first_row = tile * kExpertTileRows;
  int lo = 0;  // the first expert whose padded slice ends past first_row (experts: none)
  int hi = experts;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (padded_end[mid] > first_row) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  const bool some_expert = lo < experts;
  tile_expert[tile] = some_expert ? lo : -1;
  const int64_t first_empty = some_expert ? std::max<int64_t>(first_row, rows_end[lo]) : first_row;
  for (int64_t row = first_empty; row < first_row + kExpertTileRows; ++row) {
    token_of_row[row] = some_expert ? kPaddingRow : kNoRow;
  }
}

// A warp per row (grid-stride), its lanes along the row: f(row) for each row this warp takes. (A flat
// index over all vectors cost a 64-bit division a vector: the gather of 32768 rows of 1024 bfloat16
// took 33.5 us on an H200, where moving its bytes takes about 17.)
template <typename F>
__device__ __forceinline__ void for_each_warp_row(int64_t rows, const F& f) {
  const int64_t warps = int64_t(gridDim.x) * kWarps;
  for (int64_t row = (int64_t(blockIdx.x) * kThreads + threadIdx.x) / kWarpSize; row < rows; row += warps) {
    f(row);
  }
}

// sorted[row] = x[token_of_row[row]] (zeros on a kPaddingRow, nothing on a kNoRow), kVec elements a
// lane at a time, kInFlight loads a lane in flight before their stores.
template <int kVec, typename scalar_t>
__global__ void __launch_bounds__(kThreads)
    gather_kernel(const scalar_t* __restrict__ x, const int32_t* __restrict__ token_of_row, int64_t rows,
                  int64_t hidden, scalar_t* __restrict__ sorted) {
  constexpr int kInFlight = 4;
  constexpr int64_t kStep = int64_t(kWarpSize) * kVec;
  using Vector = opgen::cuda::Vec<scalar_t, kVec>;
  const int64_t lane_first = int64_t(threadIdx.x % kWarpSize) * kVec;
  for_each_warp_row(rows, [&](int64_t row) {
    const int32_t token = token_of_row[row];
    if (token == kNoRow) {
      return;
    }
    const scalar_t* from = x + int64_t(token) * hidden;
    scalar_t* to = sorted + row * hidden;
    for (int64_t first = lane_first; first < hidden; first += kStep * kInFlight) {
      Vector v[kInFlight] = {};
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) {
        if (token != kPaddingRow && first + u * kStep < hidden) {
          v[u] = opgen::cuda::load_vector<kVec>(from, first + u * kStep);
        }
      }
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) {
        if (first + u * kStep < hidden) {
          *reinterpret_cast<Vector*>(to + first + u * kStep) = v[u];
        }
      }
    }
  });
}

// y[t, c:c+kVec] = sum over slots k of p[t, k] * rows[row_of_pair[t, k], c:c+kVec], in acc_t: a
// warp per token, up to kInFlight of its rows' loads in flight together.
template <int kVec, typename scalar_t, typename acc_t>
__global__ void __launch_bounds__(kThreads)
    combine_kernel(const scalar_t* __restrict__ rows, const int32_t* __restrict__ row_of_pair,
                   const acc_t* __restrict__ weight_of_pair, int64_t tokens, int64_t hidden, int top_k,
                   scalar_t* __restrict__ y) {
  constexpr int kInFlight = 4;
  constexpr int64_t kStep = int64_t(kWarpSize) * kVec;
  const int64_t lane_first = int64_t(threadIdx.x % kWarpSize) * kVec;
  for_each_warp_row(tokens, [&](int64_t token) {
    for (int64_t column = lane_first; column < hidden; column += kStep) {
      acc_t sum[kVec] = {};
      for (int first_slot = 0; first_slot < top_k; first_slot += kInFlight) {
        opgen::cuda::Vec<scalar_t, kVec> v[kInFlight];
        acc_t w[kInFlight];
#pragma unroll
        for (int i = 0; i < kInFlight; ++i) {
          const int64_t pair = token * top_k + first_slot + i;
          if (first_slot + i < top_k) {
            w[i] = weight_of_pair[pair];
            v[i] = opgen::cuda::load_vector<kVec>(rows, int64_t(row_of_pair[pair]) * hidden + column);
          }
        }
#pragma unroll
        for (int i = 0; i < kInFlight; ++i) {  // in slot order: the same sum every run
          if (first_slot + i < top_k) {
#pragma unroll
            for (int u = 0; u < kVec; ++u) {
              sum[u] += w[i] * static_cast<acc_t>(v[i].v[u]);
            }
          }
        }
      }
      opgen::cuda::Vec<scalar_t, kVec> out;
#pragma unroll
      for (int u = 0; u < kVec; ++u) {
        out.v[u] = static_cast<scalar_t>(sum[u]);
      }
      *reinterpret_cast<opgen::cuda::Vec<scalar_t, kVec>*>(y + token * hidden + column) = out;
    }
  });
}

// Grid-stride launches of n threads: enough blocks to fill the GPU, capped so huge inputs loop instead.
unsigned int capped_grid(int64_t n) {
  return static_cast<unsigned int>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 1 << 16));
}

template <typename scalar_t>
void combine(const at::Tensor& rows, const int32_t* row_of_pair, const at::opmath_type<scalar_t>* weight_of_pair,
             int top_k, at::Tensor& y, cudaStream_t stream) {
  using acc_t = at::opmath_type<scalar_t>;
  constexpr int kVec = 16 / sizeof(scalar_t);
  const int64_t tokens = y.size(0);
  const int64_t hidden = y.size(1);
  // rows and y are fresh allocations: rows of a multiple of kVec elements keep 16-byte alignment.
  if (hidden % kVec == 0) {
    combine_kernel<kVec, scalar_t, acc_t><<<capped_grid(tokens * kWarpSize), kThreads, 0, stream>>>(
        rows.const_data_ptr<scalar_t>(), row_of_pair, weight_of_pair, tokens, hidden, top_k,
        y.mutable_data_ptr<scalar_t>());
  } else {
    combine_kernel<1, scalar_t, acc_t><<<capped_grid(tokens * kWarpSize), kThreads, 0, stream>>>(
        rows.const_data_ptr<scalar_t>(), row_of_pair, weight_of_pair, tokens, hidden, top_k,
        y.mutable_data_ptr<scalar_t>());
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <typename scalar_t>
void gather(const at::Tensor& x, const int32_t* token_of_row, at::Tensor& sorted, cudaStream_t stream) {
  constexpr int kVec = 16 / sizeof(scalar_t);
  const int64_t rows = sorted.size(0);
  const int64_t hidden = sorted.size(1);
  const scalar_t* from = x.const_data_ptr<scalar_t>();
  scalar_t* to = sorted.mutable_data_ptr<scalar_t>();
  if (hidden % kVec == 0 && opgen::cuda::is_vector_aligned<kVec>(from)) {  // sorted: a fresh allocation
    gather_kernel<kVec, scalar_t>
        <<<capped_grid(rows * kWarpSize), kThreads, 0, stream>>>(from, token_of_row, rows, hidden, to);
  } else {
    gather_kernel<1, scalar_t>
        <<<capped_grid(rows * kWarpSize), kThreads, 0, stream>>>(from, token_of_row, rows, hidden, to);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// The router on CUDA cores (route_logits_kernel), against a cuBLAS GEMM's host time (227 us a call
// on an H200's host, in the profiler), where each token's block reads at most
// kCoreRouterGateElements of gate_weight (from L1) and all tokens take at most
// kCoreRouterMultiplyAdds. (Measured on an H200, bfloat16, T = 4096, d = 1024, 200 calls back to
// back: E = 8, 138 us of host time a call against 192, the same GPU time; E = 64 (64K gate
// elements a token), 67 us more GPU time a call than cuBLAS and route_kernel.)
constexpr int64_t kCoreRouterGateElements = int64_t(1) << 14;
constexpr int64_t kCoreRouterMultiplyAdds = int64_t(1) << 29;

bool routes_on_cores(const Sizes& s) {
  return s.experts * s.hidden <= kCoreRouterGateElements && s.tokens * s.experts * s.hidden <= kCoreRouterMultiplyAdds;
}

// Grouped GEMMs run all experts in one launch with the slices read on the device: no host sync.
// Ours (hopper_ffn.cu) take bfloat16 and float16, at::_grouped_mm (CUTLASS too) bfloat16, on Hopper;
// both need 16-byte aligned rows (w1 and w2 are contiguous here, the sorted rows a fresh tensor).
bool grouped_gemm_operands(const at::Tensor& x, const at::Tensor& w1, const at::Tensor& w2) {
  constexpr int kAlign = 8;  // 2-byte elements in 16 bytes
  const auto aligned = [](const at::Tensor& t) { return reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 16 == 0; };
  const bool two_bytes = x.scalar_type() == at::kBFloat16 || x.scalar_type() == at::kHalf;
  return two_bytes && at::cuda::getCurrentDeviceProperties()->major == 9 && w1.size(1) > 0 &&
         w1.size(1) % kAlign == 0 && w1.size(2) % kAlign == 0 && aligned(w1) && aligned(w2);
}

// Whether ours run here: then the sort lays the rows out in tiles of one expert each (hopper_ffn.h).
bool expert_tiles(const at::Tensor& x, const at::Tensor& w1, const at::Tensor& w2, int64_t pairs) {
  return grouped_gemm_operands(x, w1, w2) && hopper_ffn_available() &&
         hopper_ffn_takes(expert_tile_rows(pairs, static_cast<int>(w1.size(0))), w1.size(2), w1.size(1),
                          x.scalar_type() == at::kHalf);
}

// Ours: both GEMMs over all tiles, each with its expert's weights, the GELU in the first one's epilogue.
at::Tensor expert_ffn_tiles(const at::Tensor& sorted_x, const at::Tensor& w1, const at::Tensor& w2,
                            const int32_t* tile_expert, cudaStream_t stream) {
  const int64_t rows = sorted_x.size(0);
  const bool half = sorted_x.scalar_type() == at::kHalf;
  const int experts = static_cast<int>(w1.size(0));
  const int ffn = static_cast<int>(w1.size(1));
  const int hidden = static_cast<int>(w1.size(2));
  at::Tensor hidden_rows = at::empty({rows, ffn}, sorted_x.options());
  at::Tensor out_rows = at::empty({rows, hidden}, sorted_x.options());
  at::Tensor scratch = at::empty({static_cast<int64_t>(hopper_ffn_scratch_bytes(rows, experts, hidden, ffn, half))},
                                 sorted_x.options().dtype(at::kByte));
  const HopperFfn ffn_args{sorted_x.const_data_ptr(),
                           w1.const_data_ptr(),
                           w2.const_data_ptr(),
                           tile_expert,
                           rows,
                           experts,
                           hidden,
                           ffn,
                           hidden_rows.mutable_data_ptr(),
                           out_rows.mutable_data_ptr(),
                           half};
  hopper_ffn(ffn_args, scratch.mutable_data_ptr(), static_cast<size_t>(scratch.numel()), stream);
  return out_rows;
}

// torch's grouped GEMMs (bfloat16) on the packed slices, a GELU pass between.
at::Tensor expert_ffn_torch_grouped(const at::Tensor& sorted_x, const at::Tensor& w1, const at::Tensor& w2,
                                    const at::Tensor& expert_ends) {
  // w^T of each expert is a column-major view, the layout the grouped GEMM wants for its B operand.
  at::Tensor hidden_rows = at::_grouped_mm(sorted_x, w1.transpose(1, 2), expert_ends);
  at::gelu_(hidden_rows, "tanh");
  return at::_grouped_mm(hidden_rows, w2.transpose(1, 2), expert_ends).contiguous();
}

// One pair of cuBLAS GEMMs per expert on its slice of the rows. The slice bounds are needed on the
// host: the op's one device-to-host copy (E ints), which waits for the routing and sort.
at::Tensor expert_ffn_per_expert(const at::Tensor& sorted_x, const at::Tensor& w1, const at::Tensor& w2,
                                 const at::Tensor& expert_ends) {
  const int64_t pairs = sorted_x.size(0);
  const int64_t experts = w1.size(0);
  const at::Tensor ends = expert_ends.to(at::kCPU);
  const int32_t* end = ends.const_data_ptr<int32_t>();
  // cuBLASLt's GELU epilogue saves a pass over the hidden rows, but its tanh is approximate (errors
  // near 1e-4, seen on H100): fine under float16/bfloat16 rounding, not for float32 or float64.
  const bool fused_gelu = sorted_x.scalar_type() == at::kHalf || sorted_x.scalar_type() == at::kBFloat16;
  const at::Tensor no_bias = at::zeros({w1.size(1)}, sorted_x.options());
  at::Tensor hidden_rows = at::empty({pairs, w1.size(1)}, sorted_x.options());
  at::Tensor out_rows = at::empty({pairs, w2.size(1)}, sorted_x.options());
  int64_t start = 0;
  for (int64_t e = 0; e < experts; ++e) {
    const int64_t count = end[e] - start;
    if (count > 0) {
      const at::Tensor x_e = sorted_x.narrow(0, start, count);
      at::Tensor h = hidden_rows.narrow(0, start, count);
      if (fused_gelu) {
        at::_addmm_activation_out(h, no_bias, x_e, w1[e].t(), 1, 1, /*use_gelu=*/true);
      } else {
        at::gelu_(at::mm_out(h, x_e, w1[e].t()), "tanh");
      }
      at::Tensor out = out_rows.narrow(0, start, count);
      at::mm_out(out, h, w2[e].t());
    }
    start = end[e];
  }
  return out_rows;
}

at::Tensor forward_cuda(const at::Tensor& x, const at::Tensor& gate_weight, const at::Tensor& w1, const at::Tensor& w2,
                        int64_t top_k) {
  const Sizes s = check_inputs(x, gate_weight, w1, w2, top_k);
  TORCH_CHECK(s.experts <= kMaxExperts, "moe on CUDA supports at most ", kMaxExperts,
              " experts (rows of gate_weight), got ", s.experts);
  TORCH_CHECK(s.tokens <= std::numeric_limits<int32_t>::max() / top_k, "moe on CUDA supports at most 2^31 - 1 ",
              "(token, expert) pairs, got ", s.tokens, " tokens * top_k ", top_k);
  const c10::cuda::CUDAGuard device_guard(x.device());
  at::Tensor y = at::empty({s.tokens, s.hidden}, x.options());
  if (y.numel() == 0) {
    return y;
  }
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (decodes(s, top_k, x.element_size())) {
    forward_decode(x, gate_weight, w1, w2, s, static_cast<int>(top_k), y, stream);
    return y;
  }
  const int64_t pairs = s.tokens * top_k;
  const int experts = static_cast<int>(s.experts);
  const int k = static_cast<int>(top_k);
  const at::ScalarType acc = router_dtype(x.scalar_type());
  const at::Tensor x_c = x.contiguous();
  const at::Tensor gate_c = gate_weight.contiguous();
  const at::Tensor w1_c = w1.contiguous();
  const at::Tensor w2_c = w2.contiguous();
  const int64_t segments = (pairs + kSegment - 1) / kSegment;
  const int64_t histogram = s.experts * segments;  // counts and starts: an (expert, segment) grid
  const bool tiled = expert_tiles(x_c, w1_c, w2_c, pairs);
  const int64_t rows = tiled ? expert_tile_rows(pairs, experts) : pairs;  // the sorted rows, padding included
  const int64_t tiles = tiled ? rows / kExpertTileRows : 0;

  // The small arrays the kernels pass on, in one allocation, each 256-byte aligned.
  int64_t bytes = 0;
  const auto carve = [&bytes](int64_t size) {
    const int64_t at = bytes;
    bytes += (size + 255) / 256 * 256;
    return at;
  };
  const int64_t expert_of_pair_at = carve(pairs * 4);
  const int64_t weight_of_pair_at = carve(pairs * (acc == at::kDouble ? 8 : 4));
  const int64_t counts_at = carve(histogram * 4);
  const int64_t starts_at = carve(histogram * 4);
  const int64_t ends_at = carve(s.experts * 4);
  const int64_t token_of_row_at = carve(rows * 4);
  const int64_t row_of_pair_at = carve(pairs * 4);
  const int64_t row_offset_at = carve(tiled ? s.experts * 4 : 0);
  const int64_t tile_expert_at = carve(tiled ? (tiles + 1) * 4 : 0);
  at::Tensor workspace = at::empty({bytes}, x.options().dtype(at::kByte));
  auto* const base = static_cast<std::byte*>(workspace.mutable_data_ptr());
  const auto ints = [base](int64_t at) { return reinterpret_cast<int32_t*>(base + at); };
  const auto int_tensor = [&workspace](int64_t at, int64_t count) {
    return workspace.narrow(0, at, count * 4).view(at::kInt);
  };

  // 1-2. Route: each token's top_k experts and their weights.
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "moe_route_cuda", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    auto* weight_of_pair = reinterpret_cast<acc_t*>(base + weight_of_pair_at);
    if (routes_on_cores(s)) {
      route_tokens(x_c.const_data_ptr<scalar_t>(), gate_c.const_data_ptr<scalar_t>(), s.tokens, s.hidden, experts, k,
                   at::cuda::getCurrentDeviceProperties()->multiProcessorCount, ints(expert_of_pair_at), weight_of_pair,
                   stream);
    } else {  // float32 logits straight from cuBLAS (mm with out_dtype), then top_k and softmax
      const at::Tensor logits =
          (acc == x.scalar_type() ? at::mm(x_c, gate_c.t()) : at::mm(x_c, gate_c.t(), acc)).contiguous();
      route_kernel<acc_t><<<opgen::cuda::grid_size(s.tokens, kWarps), kThreads, 0, stream>>>(
          logits.const_data_ptr<acc_t>(), s.tokens, experts, k, ints(expert_of_pair_at), weight_of_pair);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });

  // 3. Stable counting sort of the pairs by expert, then x's rows in that order.
  const unsigned int sort_blocks = opgen::cuda::grid_size(segments, kWarps);
  count_kernel<<<sort_blocks, kThreads, 0, stream>>>(ints(expert_of_pair_at), pairs, experts, segments,
                                                     ints(counts_at));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  if (histogram <= kScanOneBlock) {
    scan_kernel<<<1, kScanThreads, 0, stream>>>(ints(counts_at), histogram, segments, ints(starts_at), ints(ends_at));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  } else {
    const at::Tensor counts = int_tensor(counts_at, histogram);
    const at::Tensor inclusive = at::cumsum(counts, 0, at::kInt);
    at::Tensor starts = int_tensor(starts_at, histogram);
    at::sub_out(starts, inclusive, counts);
    int_tensor(ends_at, s.experts).copy_(inclusive.view({s.experts, segments}).select(1, segments - 1));
  }
  if (tiled) {  // each expert's slice padded to whole tiles
    tile_layout_kernel<<<opgen::cuda::grid_size(tiles, kThreads), kThreads, 0, stream>>>(
        ints(ends_at), experts, tiles, ints(row_offset_at), ints(tile_expert_at), ints(token_of_row_at));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  scatter_kernel<<<sort_blocks, kThreads, 0, stream>>>(ints(expert_of_pair_at), pairs, experts, segments, k,
                                                       ints(starts_at), tiled ? ints(row_offset_at) : nullptr,
                                                       ints(token_of_row_at), ints(row_of_pair_at));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  at::Tensor sorted_x = at::empty({rows, s.hidden}, x.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "moe_gather_cuda",
                                  [&] { gather<scalar_t>(x_c, ints(token_of_row_at), sorted_x, stream); });

  // 4. The expert FFNs on the expert-sorted rows.
  const at::Tensor expert_ends = int_tensor(ends_at, s.experts);
  at::Tensor out_rows;
  if (tiled) {
    out_rows = expert_ffn_tiles(sorted_x, w1_c, w2_c, ints(tile_expert_at), stream);
  } else if (x.scalar_type() == at::kBFloat16 && grouped_gemm_operands(x_c, w1_c, w2_c)) {
    out_rows = expert_ffn_torch_grouped(sorted_x, w1_c, w2_c, expert_ends);
  } else {
    out_rows = expert_ffn_per_expert(sorted_x, w1_c, w2_c, expert_ends);
  }

  // 5. Weighted sum of each token's top_k expert outputs.
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "moe_combine_cuda", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    combine<scalar_t>(out_rows, ints(row_of_pair_at), reinterpret_cast<const acc_t*>(base + weight_of_pair_at), k, y,
                      stream);
  });
  return y;
}

}  // namespace examples::moe
