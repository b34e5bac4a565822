// gemm: the float32 CUDA kernel, C = A @ B with plain FMA (no tensor cores, no TF32), fed by cp.async.
//
//   - each block computes a BM x BN tile of C, walking K in steps of BK through a ring of kStages
//     shared-memory stages: the asynchronous copies (cp.async, global to shared memory without
//     registers) of the next kStages - 1 steps are in flight while one step is computed, with one
//     barrier per K step;
//   - small blocks, several per SM: a barrier stalls only the few warps of one block while the
//     other blocks' warps keep the FMA units busy;
//   - the block's warps each own a WM x WN tile of C, each thread a TM x TN sub-tile in registers
//     made of 4x4 pieces, so that a warp's shared-memory reads are a few broadcast float4s (A) and
//     128 contiguous bytes (B);
//   - the A tile is stored transposed (As[k][m]) by 4-byte copies (any alignment of A), so both
//     operands are read as float4 along the dimension a thread needs; B is copied as 16-byte
//     vectors (its rows must start on 16 bytes: gemm.cpp pads them when they do not);
//   - blocks inside the matrix copy without checks; blocks on an edge (any M, N, K) predicate each
//     copy, and a copy past the edge fills zeros (cp.async's source size 0);
//   - tiles are visited in groups of kGroupM tile rows, so blocks running together share A and B
//     tiles in L2.
// docs/gemm.md explains the design step by step.
#pragma once

#include <cstdint>

#include "gemm/gemm_kernel.cuh"

namespace examples::gemm {

template <int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_, int kStages_, int kMinBlocks_>
struct AsyncShape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, TM = TM_, TN = TN_;
  static constexpr int kStages = kStages_;
  static constexpr int kMinBlocks = kMinBlocks_;  // blocks per SM the register budget must allow
  static constexpr int kThreads = 32 * (BM / WM) * (BN / WN);
  static constexpr int kLanesN = WN / TN;  // a warp's threads along a row of its tile
  static constexpr int kLanesM = WM / TM;
  static constexpr int kStrideA = BM + 4;  // As rows padded by one float4: the transposing copies hit distinct banks
  static constexpr int kStageFloats = BK * kStrideA + BK * BN;
  static constexpr int kSmemBytes = kStages * kStageFloats * 4;
  static constexpr int kCopiesA = BM * BK / kThreads;      // 4-byte copies per thread per K step
  static constexpr int kCopiesB = BK * BN / 4 / kThreads;  // 16-byte copies
  static_assert(BM % WM == 0 && BN % WN == 0 && kLanesM * kLanesN == 32, "warps tile the block, lanes the warp");
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 8 == 0, "4x4 pieces; A copied in 8-wide runs of k");
  static_assert(kCopiesA * kThreads == BM * BK && kCopiesB * 4 * kThreads == BK * BN && kStages >= 2,
                "every thread copies the same number of elements");
};

// cp.async: `bytes` (0 to size) bytes from global src to shared dst, the rest of size zero-filled.
template <int kSize>
__device__ __forceinline__ void cp_async(uint32_t dst, const float* src, int bytes) {
  if constexpr (kSize == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
  }
}

__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// c (M x N, contiguous) = a (M x K, row stride lda) @ b (K x N, row stride ldb), float32. One block
// per C tile; blockIdx.x numbers the tiles in grouped order. b must be 16-byte aligned and ldb a
// multiple of 4.
template <typename Shape>
__global__ void __launch_bounds__(Shape::kThreads, Shape::kMinBlocks)
    gemm_async_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int64_t M,
                      int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t tiles_m, int64_t tiles_n) {
  constexpr int BM = Shape::BM, BN = Shape::BN, BK = Shape::BK, TM = Shape::TM, TN = Shape::TN;
  constexpr int kThreads = Shape::kThreads, kStages = Shape::kStages, kStrideA = Shape::kStrideA;
  constexpr int kLanesM = Shape::kLanesM, kLanesN = Shape::kLanesN;
  using Vec4 = opgen::cuda::Vec<float, 4>;
  extern __shared__ Vec4 smem[];  // kStages x {As[BK][kStrideA], Bs[BK][BN]}
  float* const stages = reinterpret_cast<float*>(smem);

  const TileCorner tile = grouped_tile_corner(blockIdx.x, tiles_m, tiles_n, BM, BN);
  const int64_t m0 = tile.m0, n0 = tile.n0;
  const int tid = threadIdx.x;

  // Copies of A: a warp takes 4 rows x 8 consecutive k (4 full 32-byte sectors), and its
  // transposed stores As[k][m] land in 32 distinct banks (row stride kStrideA = 4 mod 32).
  // Copy l of this thread is row a_m + (l % kPassesPerRun) * kRowsPerPass of the tile, column
  // a_k + (l / kPassesPerRun) * kRunsPerPass * 8.
  constexpr int kRowsPerPass = kThreads / 8 < BM ? kThreads / 8 : BM;
  constexpr int kPassesPerRun = BM / kRowsPerPass;  // copies that cover one 8-wide run of k
  const int a_m = (tid / 8) % kRowsPerPass;
  const int a_k = tid % 8 + tid / 8 / kRowsPerPass * 8;
  constexpr int kRunsPerPass = kThreads / 8 / kRowsPerPass;  // 8-wide runs of k one pass covers
  // Copies of B: row b_k + l * kRowsB of the tile, 4 consecutive floats at column b_n.
  constexpr int kCopiesB = Shape::kCopiesB;
  constexpr int kRowsB = kThreads * 4 / BN;
  const int b_k = tid * 4 / BN;
  const int b_n = tid * 4 % BN;

  // The next K step to copy, and where its tiles start for this thread.
  int copy_step = 0;
  const float* a_next = a + (m0 + a_m) * lda + a_k;
  const float* b_next = b + b_k * ldb + n0 + b_n;
  const int64_t a_pass = kRowsPerPass * lda;  // between copies kRowsPerPass rows apart
  const int64_t b_pass = kRowsB * ldb;
  const uint32_t smem_base = static_cast<uint32_t>(__cvta_generic_to_shared(stages));
  const uint32_t a_dst = smem_base + (a_k * kStrideA + a_m) * 4;
  const uint32_t b_dst = smem_base + (BK * kStrideA + b_k * BN + b_n) * 4;
  const int k_steps = static_cast<int>((K + BK - 1) / BK);
  // Steps whose tiles lie wholly inside both matrices: every step of an interior block but a partial last one.
  const int full_steps = m0 + BM <= M && n0 + BN <= N ? static_cast<int>(K / BK) : 0;
  const int rows_left = static_cast<int>(min(M - (m0 + a_m), int64_t(BM)));  // copy rows below this are inside M
  const int cols_left = static_cast<int>(min(N - (n0 + b_n), int64_t(BN)));  // B columns from b_n inside N

  auto copy_next = [&](int stage) {
    const uint32_t a_stage = a_dst + stage * Shape::kStageFloats * 4;
    const uint32_t b_stage = b_dst + stage * Shape::kStageFloats * 4;
    if (copy_step < full_steps) {
      const float* as = a_next;
#pragma unroll
      for (int pass = 0; pass < kPassesPerRun; ++pass) {
#pragma unroll
        for (int run = 0; run < Shape::kCopiesA / kPassesPerRun; ++run) {
          const int row = pass * kRowsPerPass, col = run * kRunsPerPass * 8;
          cp_async<4>(a_stage + (col * kStrideA + row) * 4, as + col, 4);
        }
        as += a_pass;
      }
      const float* bs = b_next;
#pragma unroll
      for (int l = 0; l < kCopiesB; ++l) {
        cp_async<16>(b_stage + l * kRowsB * BN * 4, bs, 16);
        bs += b_pass;
      }
    } else {
      // An edge: a copy past the matrix reads nothing and zero-fills (its source stays a valid address).
      const int k_left = static_cast<int>(min(K - int64_t(copy_step) * BK, int64_t(BK)));
#pragma unroll
      for (int l = 0; l < Shape::kCopiesA; ++l) {
        const int row = l % kPassesPerRun * kRowsPerPass, col = l / kPassesPerRun * kRunsPerPass * 8;
        const bool in = row < rows_left && a_k + col < k_left;
        cp_async<4>(a_stage + (col * kStrideA + row) * 4, in ? a_next + (l % kPassesPerRun) * a_pass + col : a,
                    in ? 4 : 0);
      }
#pragma unroll
      for (int l = 0; l < kCopiesB; ++l) {
        const int bytes = b_k + l * kRowsB < k_left ? max(min(cols_left, 4), 0) * 4 : 0;
        cp_async<16>(b_stage + l * kRowsB * BN * 4, bytes > 0 ? b_next + l * b_pass : b, bytes);
      }
    }
    ++copy_step;
    a_next += BK;
    b_next += BK * ldb;
  };

  const int warp = tid / 32, lane = tid % 32;
  const int warp_m = warp % (BM / Shape::WM), warp_n = warp / (BM / Shape::WM);
  const int lane_m = lane / kLanesN, lane_n = lane % kLanesN;
  // This thread's pieces: rows tm0 + p * kLanesM * 4 + (0..3), columns tn0 + q * kLanesN * 4 + (0..3).
  const int tm0 = warp_m * Shape::WM + lane_m * 4;
  const int tn0 = warp_n * Shape::WN + lane_n * 4;

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      acc[i][j] = 0.0f;
    }
  }

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_steps) {
      copy_next(s);
    }
    cp_async_commit();  // an empty group past the end keeps the count of groups per step fixed
  }

  int read_stage = 0, write_stage = kStages - 1;
  for (int step = 0; step < k_steps; ++step) {
    cp_async_wait<kStages - 2>();  // this thread's copies of `step` have landed
    __syncthreads();               // everyone's have, and everyone is done with step - 1's stage
    if (step + kStages - 1 < k_steps) {
      copy_next(write_stage);  // step + kStages - 1, into the stage step - 1 used
    }
    cp_async_commit();
    const float* As = stages + read_stage * Shape::kStageFloats;
    const float* Bs = As + BK * kStrideA;
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float ra[TM], rb[TN];
#pragma unroll
      for (int p = 0; p < TM / 4; ++p) {
        const Vec4 v = *reinterpret_cast<const Vec4*>(&As[kk * kStrideA + tm0 + p * kLanesM * 4]);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          ra[p * 4 + j] = v.v[j];
        }
      }
#pragma unroll
      for (int q = 0; q < TN / 4; ++q) {
        const Vec4 v = *reinterpret_cast<const Vec4*>(&Bs[kk * BN + tn0 + q * kLanesN * 4]);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          rb[q * 4 + j] = v.v[j];
        }
      }
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
        }
      }
    }
    read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
    write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;
  }
  cp_async_wait<0>();  // no copy may outlive the block (only empty groups are left)

  const bool vec_c = N % 4 == 0;  // c is freshly allocated: its rows are then 16-byte aligned
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t row = m0 + tm0 + (i / 4) * kLanesM * 4 + i % 4;
    if (row >= M) {
      continue;
    }
#pragma unroll
    for (int q = 0; q < TN / 4; ++q) {
      const int64_t col = n0 + tn0 + q * kLanesN * 4;
      float* out = c + row * N + col;
      if (vec_c) {
        if (col < N) {
          *reinterpret_cast<Vec4*>(out) =
              Vec4{{acc[i][q * 4], acc[i][q * 4 + 1], acc[i][q * 4 + 2], acc[i][q * 4 + 3]}};
        }
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (col + j < N) {
            out[j] = acc[i][q * 4 + j];
          }
        }
      }
    }
  }
}

}  // namespace examples::gemm
