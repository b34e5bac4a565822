// moe: CUDA forward, all on the current stream. Small batches (decodes() in decode.cuh says which):
// three kernels of decode.cuh. Larger ones in five steps:
//   1. router logits x @ gate_weight^T: one cuBLAS GEMM with float32 output (float64 for float64);
//   2. route_kernel: per token (one warp), top_k over the E logits and a softmax over those top_k;
//   3. a stable counting sort of the T * top_k (token, slot) pairs by expert: count_kernel (an
//      expert histogram per 256-pair segment), an exclusive scan of the histograms (at::cumsum),
//      scatter_kernel (each pair's row in the expert-sorted order); then x's rows are gathered in
//      that order, so every expert owns one contiguous slice of rows;
//   4. the expert FFNs gelu_tanh(rows @ w1[e]^T) @ w2[e]^T on those slices, on tensor cores:
//      - bfloat16 on Hopper: two grouped GEMMs reading the slice ends on the device (no host sync,
//        so the op is asynchronous): ours (hopper_ffn.cu, CUTLASS, the GELU in the first one's
//        epilogue) where the build has them, else at::_grouped_mm's with a GELU pass between;
//      - otherwise: two cuBLAS GEMMs per expert (the first with cuBLASLt's GELU epilogue where ATen
//        can use it), which needs the slice ends on the host: one device-to-host copy of E ints,
//        a sync on the stream (so this path cannot be captured in a CUDA graph);
//   5. combine_kernel: y[t] = sum over slots k of p[t, k] * out[row(t, k)], a gather in slot order:
//      no atomics, so the result does not depend on scheduling.
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
#include <ATen/ops/zeros.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
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

// Places each pair at starts[e][s] + (pairs of segment s before it with the same expert e): a stable
// sort by expert. starts is the exclusive scan of counts in (expert, segment) order.
__global__ void __launch_bounds__(kThreads)
    scatter_kernel(const int32_t* __restrict__ expert_of_pair, int64_t pairs, int experts, int64_t segments, int top_k,
                   const int32_t* __restrict__ starts, int32_t* __restrict__ token_of_row,
                   int32_t* __restrict__ row_of_pair) {
  __shared__ int32_t warp_cursors[kWarps][kMaxExperts];
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const int64_t segment = int64_t(blockIdx.x) * kWarps + warp;
  if (segment >= segments) {
    return;
  }
  int32_t* cursor = warp_cursors[warp];
  for (int e = lane; e < experts; e += kWarpSize) {
    cursor[e] = starts[e * segments + segment];
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

// y[t, c:c+kVec] = sum over slots k of p[t, k] * rows[row_of_pair[t, k], c:c+kVec], in acc_t.
template <int kVec, typename scalar_t, typename acc_t>
__global__ void __launch_bounds__(kThreads)
    combine_kernel(const scalar_t* __restrict__ rows, const int32_t* __restrict__ row_of_pair,
                   const acc_t* __restrict__ weight_of_pair, int64_t tokens, int64_t hidden, int top_k,
                   scalar_t* __restrict__ y) {
  const int64_t vectors_per_token = hidden / kVec;
  const int64_t n = tokens * vectors_per_token;
  const int64_t stride = int64_t(gridDim.x) * kThreads;
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    const int64_t token = i / vectors_per_token;
    const int64_t column = (i - token * vectors_per_token) * kVec;
    acc_t sum[kVec] = {};
    for (int slot = 0; slot < top_k; ++slot) {
      const int64_t pair = token * top_k + slot;
      const acc_t w = weight_of_pair[pair];
      const auto v = opgen::cuda::load_vector<kVec>(rows, int64_t(row_of_pair[pair]) * hidden + column);
#pragma unroll
      for (int u = 0; u < kVec; ++u) {
        sum[u] += w * static_cast<acc_t>(v.v[u]);
      }
    }
    opgen::cuda::Vec<scalar_t, kVec> out;
#pragma unroll
    for (int u = 0; u < kVec; ++u) {
      out.v[u] = static_cast<scalar_t>(sum[u]);
    }
    *reinterpret_cast<opgen::cuda::Vec<scalar_t, kVec>*>(y + token * hidden + column) = out;
  }
}

// Grid-stride launches: enough blocks to fill the GPU, capped so huge inputs loop instead.
unsigned int capped_grid(int64_t n) {
  return static_cast<unsigned int>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 1 << 16));
}

template <typename scalar_t>
void combine(const at::Tensor& rows, const at::Tensor& row_of_pair, const at::Tensor& weight_of_pair, int top_k,
             at::Tensor& y, cudaStream_t stream) {
  using acc_t = at::opmath_type<scalar_t>;
  constexpr int kVec = 16 / sizeof(scalar_t);
  const int64_t tokens = y.size(0);
  const int64_t hidden = y.size(1);
  // rows and y are fresh allocations: rows of a multiple of kVec elements keep 16-byte alignment.
  if (hidden % kVec == 0) {
    combine_kernel<kVec, scalar_t, acc_t><<<capped_grid(tokens * hidden / kVec), kThreads, 0, stream>>>(
        rows.const_data_ptr<scalar_t>(), row_of_pair.const_data_ptr<int32_t>(), weight_of_pair.const_data_ptr<acc_t>(),
        tokens, hidden, top_k, y.mutable_data_ptr<scalar_t>());
  } else {
    combine_kernel<1, scalar_t, acc_t><<<capped_grid(tokens * hidden), kThreads, 0, stream>>>(
        rows.const_data_ptr<scalar_t>(), row_of_pair.const_data_ptr<int32_t>(), weight_of_pair.const_data_ptr<acc_t>(),
        tokens, hidden, top_k, y.mutable_data_ptr<scalar_t>());
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// at::_grouped_mm (CUTLASS grouped GEMM, bfloat16 on Hopper) runs all experts in one launch with
// the group ends read on the device: no host sync. Its operands need 16-byte aligned rows (w1 and
// w2 are contiguous here, sorted_x is a fresh tensor).
bool can_use_grouped_mm(const at::Tensor& sorted_x, const at::Tensor& w1, const at::Tensor& w2) {
  constexpr int kAlign = 8;  // bfloat16 elements in 16 bytes
  const auto aligned = [](const at::Tensor& t) { return reinterpret_cast<std::uintptr_t>(t.data_ptr()) % 16 == 0; };
  return sorted_x.scalar_type() == at::kBFloat16 && at::cuda::getCurrentDeviceProperties()->major == 9 &&
         w1.size(1) > 0 && w1.size(1) % kAlign == 0 && w1.size(2) % kAlign == 0 && aligned(w1) && aligned(w2);
}

at::Tensor expert_ffn_grouped(const at::Tensor& sorted_x, const at::Tensor& w1, const at::Tensor& w2,
                              const at::Tensor& expert_ends, cudaStream_t stream) {
  if (hopper_ffn_available() && w1.size(1) <= std::numeric_limits<int>::max() &&
      w1.size(2) <= std::numeric_limits<int>::max()) {  // ours: the GELU in the first GEMM's epilogue (hopper_ffn.cu)
    const int64_t pairs = sorted_x.size(0);
    at::Tensor hidden_rows = at::empty({pairs, w1.size(1)}, sorted_x.options());
    at::Tensor out_rows = at::empty({pairs, w1.size(2)}, sorted_x.options());
    const int experts = static_cast<int>(w1.size(0));
    at::Tensor scratch =
        at::empty({static_cast<int64_t>(hopper_ffn_scratch_bytes(experts))}, sorted_x.options().dtype(at::kByte));
    const HopperFfn ffn{sorted_x.const_data_ptr(),
                        w1.const_data_ptr(),
                        w2.const_data_ptr(),
                        expert_ends.const_data_ptr<int32_t>(),
                        experts,
                        static_cast<int>(w1.size(2)),
                        static_cast<int>(w1.size(1)),
                        hidden_rows.mutable_data_ptr(),
                        out_rows.mutable_data_ptr()};
    if (hopper_ffn(ffn, scratch.mutable_data_ptr(), static_cast<size_t>(scratch.numel()), stream)) {
      return out_rows;
    }
  }
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
  const auto int_options = x.options().dtype(at::kInt);

  // 1-2. Route: float32 logits straight from cuBLAS (mm with out_dtype), top_k, softmax.
  const at::Tensor logits =
      (acc == x.scalar_type() ? at::mm(x, gate_weight.t()) : at::mm(x, gate_weight.t(), acc)).contiguous();
  at::Tensor expert_of_pair = at::empty({pairs}, int_options);
  at::Tensor weight_of_pair = at::empty({pairs}, x.options().dtype(acc));
  AT_DISPATCH_FLOATING_TYPES(acc, "moe_route_cuda", [&] {
    route_kernel<scalar_t><<<opgen::cuda::grid_size(s.tokens, kWarps), kThreads, 0, stream>>>(
        logits.const_data_ptr<scalar_t>(), s.tokens, experts, k, expert_of_pair.mutable_data_ptr<int32_t>(),
        weight_of_pair.mutable_data_ptr<scalar_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });

  // 3. Stable counting sort of the pairs by expert, then x's rows in that order.
  const int64_t segments = (pairs + kSegment - 1) / kSegment;
  const unsigned int sort_blocks = opgen::cuda::grid_size(segments, kWarps);
  at::Tensor counts = at::empty({s.experts, segments}, int_options);
  count_kernel<<<sort_blocks, kThreads, 0, stream>>>(expert_of_pair.const_data_ptr<int32_t>(), pairs, experts, segments,
                                                     counts.mutable_data_ptr<int32_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  const at::Tensor ends = at::cumsum(counts.view(-1), 0, at::kInt).view({s.experts, segments});
  const at::Tensor starts = ends.sub(counts);
  at::Tensor token_of_row = at::empty({pairs}, int_options);
  at::Tensor row_of_pair = at::empty({pairs}, int_options);
  scatter_kernel<<<sort_blocks, kThreads, 0, stream>>>(
      expert_of_pair.const_data_ptr<int32_t>(), pairs, experts, segments, k, starts.const_data_ptr<int32_t>(),
      token_of_row.mutable_data_ptr<int32_t>(), row_of_pair.mutable_data_ptr<int32_t>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  const at::Tensor sorted_x = x.index_select(0, token_of_row);

  // 4. The expert FFNs on the expert-sorted rows.
  const at::Tensor expert_ends = ends.select(1, segments - 1).contiguous();
  const at::Tensor w1_c = w1.contiguous();
  const at::Tensor w2_c = w2.contiguous();
  const at::Tensor out_rows = can_use_grouped_mm(sorted_x, w1_c, w2_c)
                                  ? expert_ffn_grouped(sorted_x, w1_c, w2_c, expert_ends, stream)
                                  : expert_ffn_per_expert(sorted_x, w1_c, w2_c, expert_ends);

  // 5. Weighted sum of each token's top_k expert outputs.
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "moe_combine_cuda",
                                  [&] { combine<scalar_t>(out_rows, row_of_pair, weight_of_pair, k, y, stream); });
  return y;
}

}  // namespace examples::moe
