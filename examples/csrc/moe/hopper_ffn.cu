// moe's expert FFN on Hopper, bfloat16 or float16: gelu_tanh(rows @ w1[e]^T) @ w2[e]^T for every expert
// e at once, as two CUTLASS grouped GEMMs (ptr-array: one launch each, TMA loads, warp-specialized wgmma, ping-pong:
// each of two consumer warpgroups takes a 64x256x64 tile while the other runs its epilogue), the GELU
// in the first one's epilogue: the hidden rows are written once, already activated. Each expert's
// problem is filled in on the device from the slice ends (host_problem_shapes = nullptr), so the op
// stays asynchronous.
//
// (Measured on an H200, bfloat16, T=4096 d=1024, random top-k routing, L2 flushed, medians of 25:
// E=8 top-2 F=4096 107.9 + 101.3 us, E=64 top-8 F=512 77.0 + 81.6 us, against 125.2 + 130.5 and
// 79.9 + 88.9 us for the cooperative 128x256x64 tiles in clusters of 2 used before (whose K=1024
// epilogues wait for the mainloop). Of 10 tile, cluster and schedule choices in both raster orders
// none was faster for both GEMMs of both layers; clusters of 2 were slower with ping-pong tiles.)
//
// CUTLASS comes from the nvidia-cutlass package (headers only; the build finds them where it is
// installed). Without it, or without sm_90a code, hopper_ffn_available() is false and moe uses
// torch's grouped GEMMs.
#ifndef NDEBUG
#define NDEBUG  // CUTLASS's asserts are calls, and a call in the mainloop serializes wgmma (ptxas C7510)
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "common/cuda_utils.cuh"
#include "moe/hopper_ffn.h"

#if __has_include(<cutlass/cutlass.h>)
#define OPGEN_MOE_CUTLASS 1
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/thread/activation.h>
#include <cutlass/gemm/device/gemm_universal_adapter.h>

#include <cute/tensor.hpp>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/gemm/group_array_problem_shape.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/util/packed_stride.hpp>
#else
#define OPGEN_MOE_CUTLASS 0
#endif

namespace examples::moe {

// Static shared memory only in code compiled for sm_90a: cudaFuncGetAttributes then says which code
// the driver picked for this device, without a launch.
constexpr int kProbeWords = 32;
__global__ void sm90a_probe(int* out) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ int words[kProbeWords];
  words[threadIdx.x % kProbeWords] = int(threadIdx.x);
  __syncthreads();
  if (out != nullptr) {
    out[threadIdx.x] = words[(threadIdx.x + 1) % kProbeWords];
  }
#endif
}

#if OPGEN_MOE_CUTLASS

namespace {

using namespace cute;
using ProblemShape = cutlass::gemm::GroupProblemShape<Shape<int, int, int>>;
using Problem = ProblemShape::UnderlyingProblemShape;
using LayoutA = cutlass::layout::RowMajor;     // rows: M x K
using LayoutB = cutlass::layout::ColumnMajor;  // a weight, N x K with K contiguous: B^T as stored
using LayoutD = cutlass::layout::RowMajor;     // M x N
using TileShape = Shape<_64, _256, _64>;
using ClusterShape = Shape<_1, _1, _1>;

// Both GEMMs for one element type (cutlass::bfloat16_t or cutlass::half_t), accumulating in float.
template <typename Element>
struct Kernels {
  static constexpr int kAlign = 16 / sizeof(Element);

  template <typename Fusion>
  struct Grouped {
    using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
        cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, LayoutD*, kAlign, Element, LayoutD*,
        kAlign, cutlass::epilogue::PtrArrayTmaWarpSpecializedPingpong, Fusion>::CollectiveOp;
    using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, LayoutA*, kAlign, Element, LayoutB*, kAlign,
        float, TileShape, ClusterShape,
        cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
        cutlass::gemm::KernelPtrArrayTmaWarpSpecializedPingpong>::CollectiveOp;
    using Gemm = cutlass::gemm::device::GemmUniversalAdapter<
        cutlass::gemm::kernel::GemmUniversal<ProblemShape, Mainloop, Epilogue>>;
  };
  // No C operand (void): D = act(acc). GELU_taylor is the tanh form, as moe's gelu_tanh.
  using GeluGemm = typename Grouped<cutlass::epilogue::fusion::LinCombEltAct<cutlass::epilogue::thread::GELU_taylor,
                                                                             Element, float, void, float>>::Gemm;
  using PlainGemm = typename Grouped<cutlass::epilogue::fusion::LinearCombination<Element, float, void, float>>::Gemm;
  using StrideA = typename GeluGemm::GemmKernel::InternalStrideA;
  using StrideB = typename GeluGemm::GemmKernel::InternalStrideB;
  using StrideD = typename GeluGemm::GemmKernel::InternalStrideD;
  static_assert(std::is_same_v<StrideA, typename PlainGemm::GemmKernel::InternalStrideA> &&
                    std::is_same_v<StrideD, typename PlainGemm::GemmKernel::InternalStrideD>,
                "both GEMMs take the same strides");

  // One grouped GEMM's per-expert arguments, in the scratch buffer.
  struct GroupArrays {
    Problem* problems;
    const Element** a;
    const Element** b;
    Element** d;
    StrideA* stride_a;
    StrideB* stride_b;
    StrideD* stride_d;
  };
};

constexpr size_t kAlignBytes = 256;
constexpr size_t round_up(size_t bytes) {
  return (bytes + kAlignBytes - 1) / kAlignBytes * kAlignBytes;
}

// One grouped GEMM's arrays for `experts` groups, laid out from base + used on (used grows by their
// bytes). A null base lays nothing out and only counts: group_arrays_bytes.
template <typename Element>
typename Kernels<Element>::GroupArrays carve(char* base, size_t& used, int experts) {
  using K = Kernels<Element>;
  const size_t n = size_t(experts);
  const auto take = [&](size_t bytes) {
    char* p = base == nullptr ? nullptr : base + used;
    used += round_up(bytes);
    return p;
  };
  typename K::GroupArrays g;
  g.problems = reinterpret_cast<Problem*>(take(n * sizeof(Problem)));
  g.a = reinterpret_cast<const Element**>(take(n * sizeof(void*)));
  g.b = reinterpret_cast<const Element**>(take(n * sizeof(void*)));
  g.d = reinterpret_cast<Element**>(take(n * sizeof(void*)));
  g.stride_a = reinterpret_cast<typename K::StrideA*>(take(n * sizeof(typename K::StrideA)));
  g.stride_b = reinterpret_cast<typename K::StrideB*>(take(n * sizeof(typename K::StrideB)));
  g.stride_d = reinterpret_cast<typename K::StrideD*>(take(n * sizeof(typename K::StrideD)));
  return g;
}

template <typename Element>
size_t group_arrays_bytes(int experts) {
  size_t used = 0;
  carve<Element>(nullptr, used, experts);
  return used;
}

// Group e of a grouped GEMM: (m x k) @ (n x k)^T -> (m x n), every operand packed.
template <typename Element>
__device__ void fill_group(const typename Kernels<Element>::GroupArrays& g, int e, int m, int n, int k,
                           const Element* a, const Element* b, Element* d) {
  using K = Kernels<Element>;
  g.problems[e] = Problem{m, n, k};
  g.a[e] = a;
  g.b[e] = b;
  g.d[e] = d;
  g.stride_a[e] = cutlass::make_cute_packed_stride(typename K::StrideA{}, {m, k, 1});
  g.stride_b[e] = cutlass::make_cute_packed_stride(typename K::StrideB{}, {n, k, 1});
  g.stride_d[e] = cutlass::make_cute_packed_stride(typename K::StrideD{}, {m, n, 1});
}

// Expert e's problem in each GEMM: rows [start, end) of the sorted rows, m = end - start.
template <typename Element>
__global__ void fill_groups(const int32_t* __restrict__ expert_ends, int experts, int hidden, int ffn,
                            const Element* rows, const Element* w1, const Element* w2, Element* hidden_rows,
                            Element* out_rows, typename Kernels<Element>::GroupArrays up,
                            typename Kernels<Element>::GroupArrays down) {
  const int e = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (e >= experts) {
    return;
  }
  const int64_t start = e == 0 ? 0 : expert_ends[e - 1];
  const int m = int(expert_ends[e] - start);
  // Up: (m x hidden) @ w1[e]^T -> (m x ffn). Down: (m x ffn) @ w2[e]^T -> (m x hidden).
  fill_group<Element>(up, e, m, ffn, hidden, rows + start * hidden, w1 + int64_t(e) * ffn * hidden,
                      hidden_rows + start * ffn);
  fill_group<Element>(down, e, m, hidden, ffn, hidden_rows + start * ffn, w2 + int64_t(e) * hidden * ffn,
                      out_rows + start * hidden);
}

int current_device() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    throw std::runtime_error("moe: cudaGetDevice failed");
  }
  return device;
}

template <typename Gemm, typename GroupArrays>
typename Gemm::Arguments arguments(const GroupArrays& g, int experts, int device) {
  cutlass::KernelHardwareInfo hardware;
  hardware.device_id = device;
  hardware.sm_count = opgen::cuda::multiprocessor_count();  // the current device's, asked once
  typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGrouped,
                                {experts, g.problems, nullptr},
                                {g.a, g.stride_a, g.b, g.stride_b},
                                {{}, nullptr, g.stride_d, g.d, g.stride_d},
                                hardware};
  args.epilogue.thread.alpha = 1.0f;
  args.epilogue.thread.beta = 0.0f;
  return args;
}

template <typename Gemm, typename Element>
size_t workspace_bytes(int experts) {
  return Gemm::get_workspace_size(arguments<Gemm>(typename Kernels<Element>::GroupArrays{}, experts, current_device()));
}

template <typename Gemm>
void run(Gemm& gemm, const typename Gemm::Arguments& args, void* workspace, cudaStream_t stream) {
  const cutlass::Status status = gemm.run(args, workspace, stream);
  if (status != cutlass::Status::kSuccess) {
    throw std::runtime_error(std::string("moe: CUTLASS grouped GEMM failed: ") + cutlassGetStatusString(status));
  }
}

template <typename Element>
size_t scratch_bytes(int experts) {
  using K = Kernels<Element>;
  return 2 * group_arrays_bytes<Element>(experts) +
         round_up(std::max(workspace_bytes<typename K::GeluGemm, Element>(experts),
                           workspace_bytes<typename K::PlainGemm, Element>(experts)));
}

template <typename Element>
bool run_ffn(const HopperFfn& ffn, void* scratch, cudaStream_t stream) {
  using K = Kernels<Element>;
  const int device = current_device();
  char* const base = static_cast<char*>(scratch);
  size_t used = 0;
  const auto up = carve<Element>(base, used, ffn.experts);
  const auto down = carve<Element>(base, used, ffn.experts);
  void* const workspace = base + used;
  const auto up_args = arguments<typename K::GeluGemm>(up, ffn.experts, device);
  const auto down_args = arguments<typename K::PlainGemm>(down, ffn.experts, device);
  typename K::GeluGemm up_gemm;
  typename K::PlainGemm down_gemm;
  if (up_gemm.can_implement(up_args) != cutlass::Status::kSuccess ||
      down_gemm.can_implement(down_args) != cutlass::Status::kSuccess) {
    return false;
  }
  constexpr int kThreads = 128;
  fill_groups<Element><<<(ffn.experts + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
      ffn.expert_ends, ffn.experts, ffn.hidden, ffn.ffn, static_cast<const Element*>(ffn.rows),
      static_cast<const Element*>(ffn.w1), static_cast<const Element*>(ffn.w2), static_cast<Element*>(ffn.hidden_rows),
      static_cast<Element*>(ffn.out_rows), up, down);
  const cudaError_t launched = cudaGetLastError();
  if (launched != cudaSuccess) {
    throw std::runtime_error(std::string("moe: fill_groups launch failed: ") + cudaGetErrorString(launched));
  }
  run(up_gemm, up_args, workspace, stream);
  run(down_gemm, down_args, workspace, stream);
  return true;
}

}  // namespace

bool hopper_ffn_available() {
  const int device = current_device();
  constexpr int kMostDevices = 64;
  static std::array<std::atomic<signed char>, kMostDevices> known{};  // 0 unknown, 1 yes, -1 no
  if (device < kMostDevices && known[device].load(std::memory_order_relaxed) != 0) {
    return known[device].load(std::memory_order_relaxed) > 0;
  }
  int major = 0;
  cudaFuncAttributes probe{};
  const bool yes = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
                   major == 9 && cudaFuncGetAttributes(&probe, sm90a_probe) == cudaSuccess &&
                   probe.sharedSizeBytes >= kProbeWords * sizeof(int);
  if (device < kMostDevices) {
    known[device].store(yes ? 1 : -1, std::memory_order_relaxed);  // threads asking at once agree
  }
  return yes;
}

size_t hopper_ffn_scratch_bytes(int experts, bool half) {
  return half ? scratch_bytes<cutlass::half_t>(experts) : scratch_bytes<cutlass::bfloat16_t>(experts);
}

bool hopper_ffn(const HopperFfn& ffn, void* scratch, size_t scratch_bytes, cudaStream_t stream) {
  if (scratch_bytes < hopper_ffn_scratch_bytes(ffn.experts, ffn.half)) {
    throw std::runtime_error("moe: hopper_ffn scratch too small");
  }
  return ffn.half ? run_ffn<cutlass::half_t>(ffn, scratch, stream) : run_ffn<cutlass::bfloat16_t>(ffn, scratch, stream);
}

#else  // no CUTLASS headers in this build

bool hopper_ffn_available() {
  return false;
}
size_t hopper_ffn_scratch_bytes(int, bool) {
  return 0;
}
bool hopper_ffn(const HopperFfn&, void*, size_t, cudaStream_t) {
  return false;
}

#endif

}  // namespace examples::moe
