// moe's expert FFN on Hopper, bfloat16 or float16: gelu_tanh(rows @ w1[e]^T) @ w2[e]^T for every expert
// e at once, as two CUTLASS GEMMs over all of the rows (one launch each, TMA loads, warp-specialized
// wgmma, ping-pong: each of two consumer warpgroups takes a 64x256x64 tile while the other runs its
// epilogue), each 64-row tile multiplied by its own expert's weights (the layout of DeepGEMM's
// "contiguous" grouped GEMMs: every expert's slice of the rows starts at a tile), the GELU in the
// first one's epilogue: the hidden rows are written once, already activated. Each tile's expert is
// read on the device, so the op stays asynchronous.
//
// Against CUTLASS's grouped (ptr-array) GEMMs used before, a problem per expert: no TMA descriptor
// rewritten when a multiprocessor moves to another expert's tile, one problem for the tile
// scheduler. Measured on an H200 (T=4096 d=1024 bfloat16, the two builds side by side, profiler, two
// runs each): E=64 top-8 F=512 131.1-131.8 us against 155.5-155.8 for both GEMMs; E=8 top-2 F=4096
// 208-237 against 215-218 (the down GEMM takes 4 waves of 132 tiles at 132 tile rows or fewer,
// 91.6-98.3 us, and a fifth for the few tiles of a 133rd, 111.9-117.1 us: which the routing decides).
// (The tiles: of 10 tile, cluster and schedule choices for the grouped GEMMs, ping-pong 64x256x64
// tiles without clusters were the fastest for both GEMMs of both layers; over the expert tiles too,
// against clusters of 2 tile rows sharing B's loads, cooperative 128x256 tiles and 64x128 tiles in
// clusters, each with the slices padded to 128 rows: results/h200/README.md.)
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
#include <limits>
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
#include <cutlass/gemm/kernel/gemm_universal.hpp>
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
using ProblemShape = Shape<int, int, int, int>;  // (M, N, K, L = 1): all rows, one problem
using LayoutA = cutlass::layout::RowMajor;       // rows: M x K
using LayoutB = cutlass::layout::ColumnMajor;    // a weight, N x K with K contiguous: B^T as stored
using LayoutD = cutlass::layout::RowMajor;       // M x N
constexpr int kTileN = 256;
using TileShape = Shape<Int<kExpertTileRows>, Int<kTileN>, _64>;
using ClusterShape = Shape<_1, _1, _1>;

// CUTLASS's TMA warp-specialized mainloop (Base, from its collective builder) with B chosen per M
// tile: B holds every expert's weights, (N, K, experts), and tile m takes expert tile_expert[m]'s.
// A tile of no expert (-1: past the last expert's rows, computed where its band holds rows) loads A
// from past M, which TMA fills with zeros without reading memory. Pipeline and MMA are Base's.
template <typename Base>
struct ExpertTileMainloop : Base {
  struct Arguments : Base::Arguments {
    int experts = 1;
    const int32_t* tile_expert = nullptr;
  };
  struct Params : Base::Params {
    int experts = 1;
    const int32_t* tile_expert = nullptr;
  };

  // Base's TMA descriptors for a problem of `experts` batches: B's batch stride (in args) steps from
  // one expert's weights to the next; A is only ever read at batch 0.
  template <class Shape>
  static Params to_underlying_arguments(const Shape& problem_shape, const Arguments& args, void* workspace) {
    const auto [m, n, k, l] = append<4>(problem_shape, 1);
    return {Base::to_underlying_arguments(make_shape(m, n, k, args.experts), args, workspace), args.experts,
            args.tile_expert};
  }

  template <class Shape>
  CUTLASS_DEVICE auto load_init(const Shape& problem_shape, const Params& params) const {
    const auto [m, n, k, l] = problem_shape;
    return Base::load_init(make_shape(m, n, k, params.experts), params);
  }

  // Base's producer loop for one tile, its B taken at the tile's expert. (No clusters: no multicast.)
  template <class TensorA, class TensorB, class KTileIterator, class BlockCoord>
  CUTLASS_DEVICE void load(const Params& params, typename Base::MainloopPipeline pipeline,
                           typename Base::PipelineState smem_pipe_write,
                           const cute::tuple<TensorA, TensorB>& load_inputs, const BlockCoord& blk_coord,
                           KTileIterator k_tile_iter, int k_tile_count, int /*thread_idx*/,
                           uint32_t /*block_rank_in_cluster*/, typename Base::TensorStorage& shared_tensors) {
    static_assert(size(ClusterShape{}) == 1, "multicast loads would need Base's cluster masks");
    if (!cute::elect_one_sync()) {
      return;
    }
    Tensor sA = make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), typename Base::SmemLayoutA{});
    Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), typename Base::SmemLayoutB{});
    const auto [m_coord, n_coord, k_coord, l_coord] = blk_coord;
    const int tiles = int(size<2>(get<0>(load_inputs)));
    const int expert = int(m_coord) < tiles ? params.tile_expert[m_coord] : -1;   // (past M in the last band)
    const int a_tile = expert >= 0 ? int(m_coord) : tiles;                        // past M: zeros
    Tensor gA = get<0>(load_inputs)(_, _, a_tile, _, l_coord);                    // (BLK_M, BLK_K, k)
    Tensor gB = get<1>(load_inputs)(_, _, n_coord, _, expert >= 0 ? expert : 0);  // (BLK_N, BLK_K, k)
    auto block_tma_a = params.tma_load_a.get_slice(0);
    auto block_tma_b = params.tma_load_b.get_slice(0);
    Tensor tAgA = block_tma_a.partition_S(gA);
    Tensor tAsA = block_tma_a.partition_D(sA);
    Tensor tBgB = block_tma_b.partition_S(gB);
    Tensor tBsB = block_tma_b.partition_D(sB);
    CUTLASS_PRAGMA_NO_UNROLL
    for (; k_tile_count > 0; --k_tile_count) {
      pipeline.producer_acquire(smem_pipe_write);
      auto* barrier = pipeline.producer_get_barrier(smem_pipe_write);
      const int stage = smem_pipe_write.index();
      copy(params.tma_load_a.with(*barrier, 0), tAgA(_, _, _, *k_tile_iter), tAsA(_, _, _, stage));
      copy(params.tma_load_b.with(*barrier, 0), tBgB(_, _, _, *k_tile_iter), tBsB(_, _, _, stage));
      ++k_tile_iter;
      ++smem_pipe_write;
    }
  }
};

// CUTLASS's persistent tile scheduler over the output tiles in bands of `swizzle` tile rows (a band's
// tiles, then the next band's), stopping at the first band past the last expert's tile row
// (tile_expert[tiles], on the device): the GEMMs' M is the most rows the routing can take, and the
// rows past what it took are not computed.
struct ExpertTileScheduler : cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90 {
  using Base = cutlass::gemm::kernel::detail::PersistentTileSchedulerSm90;
  struct Arguments : Base::Arguments {
    const int32_t* used_tiles = nullptr;
  };
  struct Params : Base::Params {
    const int32_t* used_tiles = nullptr;
    int swizzle = 1;
  };

  template <class ProblemShapeMNKL, class Tile, class Cluster>
  static Params to_underlying_arguments(ProblemShapeMNKL problem, Tile tile, Cluster cluster,
                                        const cutlass::KernelHardwareInfo& hardware, const Arguments& args,
                                        void* workspace = nullptr, const uint32_t epilogue_subtile = 1,
                                        uint32_t ktile_start_alignment_count = 1u) {
    Base::Arguments bands = args;  // along N: a band's tile rows, then the next band's
    bands.raster_order = Base::RasterOrderOptions::AlongN;
    const Base::Params base = Base::to_underlying_arguments(problem, tile, cluster, hardware, bands, workspace,
                                                            epilogue_subtile, ktile_start_alignment_count);
    return {base, args.used_tiles, 1 << base.log_swizzle_size_};
  }

  CUTLASS_DEVICE explicit ExpertTileScheduler(const Params& params)
      : Base(params), used_bands_end_((*params.used_tiles + params.swizzle - 1) / params.swizzle * params.swizzle) {}

  CUTLASS_DEVICE WorkTileInfo get_current_work() const {
    const WorkTileInfo work = Base::get_current_work();
    return work.is_valid() && work.M_idx < used_bands_end_ ? work : WorkTileInfo::invalid_work_tile();
  }
  template <class Cluster>
  CUTLASS_DEVICE WorkTileInfo initial_work_tile_info(Cluster) {
    return get_current_work();
  }

 private:
  int used_bands_end_;
};
struct ExpertTileSchedulerTag {};

}  // namespace
}  // namespace examples::moe

template <class ArchTag, class Tile, class Cluster, uint32_t Stages>
struct cutlass::gemm::kernel::detail::TileSchedulerSelector<examples::moe::ExpertTileSchedulerTag, ArchTag, Tile,
                                                            Cluster, Stages> {
  using Scheduler = examples::moe::ExpertTileScheduler;
};

namespace examples::moe {
namespace {

// Both GEMMs for one element type (cutlass::bfloat16_t or cutlass::half_t), accumulating in float.
template <typename Element>
struct Kernels {
  static constexpr int kAlign = 16 / sizeof(Element);

  template <typename Fusion>
  struct ExpertTiles {
    using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
        cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, LayoutD, kAlign, Element, LayoutD, kAlign,
        cutlass::epilogue::TmaWarpSpecialized, Fusion>::CollectiveOp;
    using Mainloop = ExpertTileMainloop<typename cutlass::gemm::collective::CollectiveBuilder<
        cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, LayoutA, kAlign, Element, LayoutB, kAlign, float,
        TileShape, ClusterShape,
        cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
        cutlass::gemm::KernelTmaWarpSpecializedPingpong>::CollectiveOp>;
    using Gemm = cutlass::gemm::device::GemmUniversalAdapter<
        cutlass::gemm::kernel::GemmUniversal<ProblemShape, Mainloop, Epilogue, ExpertTileSchedulerTag>>;
  };
  // No C operand (void): D = act(acc). GELU_taylor is the tanh form, as moe's gelu_tanh.
  using GeluGemm = typename ExpertTiles<cutlass::epilogue::fusion::LinCombEltAct<cutlass::epilogue::thread::GELU_taylor,
                                                                                 Element, float, void, float>>::Gemm;
  using PlainGemm =
      typename ExpertTiles<cutlass::epilogue::fusion::LinearCombination<Element, float, void, float>>::Gemm;
};

int current_device() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    throw std::runtime_error("moe: cudaGetDevice failed");
  }
  return device;
}

// (rows x k) @ (n x k)^T of tile_expert's expert -> (rows x n), every operand packed; b holds every
// expert's (n x k) weight, one after another.
template <typename Gemm, typename Element>
typename Gemm::Arguments arguments(int64_t rows, int n, int k, int experts, const int32_t* tile_expert, const void* a,
                                   const void* b, void* d) {
  using Kernel = typename Gemm::GemmKernel;
  typename Kernel::StrideA stride_a{};
  get<0>(stride_a) = k;
  get<2>(stride_a) = rows * k;  // (a batch stride TMA accepts; A is read at batch 0 only)
  typename Kernel::StrideB stride_b{};
  get<0>(stride_b) = k;
  get<2>(stride_b) = int64_t(n) * k;
  typename Kernel::StrideD stride_d{};
  get<0>(stride_d) = n;
  get<2>(stride_d) = rows * n;
  cutlass::KernelHardwareInfo hardware;
  hardware.device_id = current_device();
  hardware.sm_count = opgen::cuda::multiprocessor_count();  // the current device's, asked once
  typename Kernel::CollectiveMainloop::Arguments mainloop{};
  mainloop.ptr_A = static_cast<const Element*>(a);
  mainloop.dA = stride_a;
  mainloop.ptr_B = static_cast<const Element*>(b);
  mainloop.dB = stride_b;
  mainloop.experts = experts;
  mainloop.tile_expert = tile_expert;
  typename Gemm::Arguments args{cutlass::gemm::GemmUniversalMode::kGemm,
                                {int(rows), n, k, 1},
                                mainloop,
                                {{}, nullptr, stride_d, static_cast<Element*>(d), stride_d},
                                hardware};
  args.epilogue.thread.alpha = 1.0f;
  args.epilogue.thread.beta = 0.0f;
  args.scheduler.used_tiles = tile_expert + rows / kExpertTileRows;
  // Bands of 2 tile rows where N has 8 tiles or more, else 1 (H200, T=4096 d=1024, bfloat16: E=8's
  // up GEMM, N=4096, 112.5-119.4 us in bands of 2 against 146.9-151.1 in bands of 1; E=64's GEMMs,
  // N=512 and 1024, 63-67 us in bands of 1 against 66-69 in bands of 2 to 8; E=8's down GEMM, N=1024,
  // no difference beyond the wave step its routing decides).
  args.scheduler.max_swizzle_size = n / kTileN >= 8 ? 2 : 1;
  return args;
}

template <typename Element>
struct Problems {
  typename Kernels<Element>::GeluGemm::Arguments up;
  typename Kernels<Element>::PlainGemm::Arguments down;
};

template <typename Element>
Problems<Element> problems(const HopperFfn& ffn) {
  using K = Kernels<Element>;
  // Up: (rows x hidden) @ w1[e]^T -> (rows x ffn). Down: (rows x ffn) @ w2[e]^T -> (rows x hidden).
  return {arguments<typename K::GeluGemm, Element>(ffn.row_count, ffn.ffn, ffn.hidden, ffn.experts, ffn.tile_expert,
                                                   ffn.rows, ffn.w1, ffn.hidden_rows),
          arguments<typename K::PlainGemm, Element>(ffn.row_count, ffn.hidden, ffn.ffn, ffn.experts, ffn.tile_expert,
                                                    ffn.hidden_rows, ffn.w2, ffn.out_rows)};
}

template <typename Gemm>
void run(Gemm& gemm, const typename Gemm::Arguments& args, void* workspace, cudaStream_t stream) {
  const cutlass::Status status = gemm.run(args, workspace, stream);
  if (status != cutlass::Status::kSuccess) {
    throw std::runtime_error(std::string("moe: CUTLASS GEMM failed: ") + cutlassGetStatusString(status));
  }
}

template <typename Element>
size_t scratch_bytes(const Problems<Element>& p) {
  using K = Kernels<Element>;
  return std::max(K::GeluGemm::get_workspace_size(p.up), K::PlainGemm::get_workspace_size(p.down));
}

template <typename Element>
bool implementable(const Problems<Element>& p) {
  using K = Kernels<Element>;
  return K::GeluGemm::can_implement(p.up) == cutlass::Status::kSuccess &&
         K::PlainGemm::can_implement(p.down) == cutlass::Status::kSuccess;
}

// Both GEMMs' arguments built once: checked, then run.
template <typename Element>
void run_ffn(const HopperFfn& ffn, void* scratch, size_t scratch_size, cudaStream_t stream) {
  using K = Kernels<Element>;
  const Problems<Element> p = problems<Element>(ffn);
  if (!implementable(p)) {
    throw std::runtime_error("moe: hopper_ffn cannot take these sizes");
  }
  if (scratch_size < scratch_bytes(p)) {
    throw std::runtime_error("moe: hopper_ffn scratch too small");
  }
  typename K::GeluGemm up_gemm;
  typename K::PlainGemm down_gemm;
  run(up_gemm, p.up, scratch, stream);
  run(down_gemm, p.down, scratch, stream);
}

// CUTLASS's problem sizes are ints.
bool fits_int(int64_t row_count, int64_t hidden, int64_t ffn) {
  constexpr int64_t kMost = std::numeric_limits<int>::max();
  return row_count <= kMost && hidden <= kMost && ffn <= kMost;
}

// The sizes alone (no pointers): what the host-side questions need.
HopperFfn sizes(int64_t row_count, int experts, int hidden, int ffn, bool half) {
  HopperFfn f{};
  f.row_count = row_count;
  f.experts = experts;
  f.hidden = hidden;
  f.ffn = ffn;
  f.half = half;
  return f;
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

bool hopper_ffn_takes(int64_t row_count, int64_t hidden, int64_t ffn, bool half) {
  if (!fits_int(row_count, hidden, ffn)) {
    return false;
  }
  const HopperFfn f = sizes(row_count, 1, int(hidden), int(ffn), half);
  return half ? implementable(problems<cutlass::half_t>(f)) : implementable(problems<cutlass::bfloat16_t>(f));
}

size_t hopper_ffn_scratch_bytes(int64_t row_count, int experts, int hidden, int ffn, bool half) {
  const HopperFfn f = sizes(row_count, experts, hidden, ffn, half);
  return half ? scratch_bytes(problems<cutlass::half_t>(f)) : scratch_bytes(problems<cutlass::bfloat16_t>(f));
}

void hopper_ffn(const HopperFfn& ffn, void* scratch, size_t scratch_bytes, cudaStream_t stream) {
  if (!fits_int(ffn.row_count, ffn.hidden, ffn.ffn)) {
    throw std::runtime_error("moe: hopper_ffn cannot take these sizes");
  }
  if (ffn.half) {
    run_ffn<cutlass::half_t>(ffn, scratch, scratch_bytes, stream);
  } else {
    run_ffn<cutlass::bfloat16_t>(ffn, scratch, scratch_bytes, stream);
  }
}

#else  // no CUTLASS headers in this build

bool hopper_ffn_available() {
  return false;
}
bool hopper_ffn_takes(int64_t, int64_t, int64_t, bool) {
  return false;
}
size_t hopper_ffn_scratch_bytes(int64_t, int, int, int, bool) {
  return 0;
}
void hopper_ffn(const HopperFfn&, void*, size_t, cudaStream_t) {
  throw std::runtime_error("moe: this build has no CUTLASS GEMMs");
}

#endif

}  // namespace examples::moe
