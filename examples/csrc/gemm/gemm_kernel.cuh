// gemm: the register-staged tiled CUDA kernel, C = A @ B with plain FMA (no tensor cores, no TF32),
// for float16, bfloat16 (accumulated in float) and float64. float32 runs gemm_async_kernel.cuh.
//
//   - each block computes a BM x BN tile of C, walking K in steps of BK;
//   - each thread owns a TM x TN sub-tile of C in registers, made of 4x4 pieces spread across the
//     block tile, so that a warp's shared-memory reads are broadcasts (A) or contiguous (B);
//   - the A tile is stored transposed in shared memory (As[k][m]), so both operands are read as
//     4-wide vectors along the dimension a thread needs;
//   - global loads are 4-element vectors (16 bytes for float32) staged in registers: the next
//     K step is loaded while the current one is computed, then stored into the other of two
//     shared buffers, so one barrier per K step suffices;
//   - tiles are visited in groups of kGroupM tile rows, so blocks running together share A and B
//     tiles in L2.
// Edges (any M, N, K) are predicated loads that read zeros and predicated stores; inputs whose
// rows are not 4-element aligned run the same kernel with scalar loads (kVec = false).
// docs/gemm.md explains the design step by step.
#pragma once

#include <cstdint>

#include "common/elementwise.cuh"

namespace examples::gemm {

template <int BM_, int BN_, int BK_, int TM_, int TN_, int kMinBlocks_>
struct TileShape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_;
  static constexpr int kMinBlocks = kMinBlocks_;  // blocks per SM the register budget must allow
  static constexpr int kThreadsN = BN / TN;       // threads along a row of the C tile
  static constexpr int kThreadsM = BM / TM;
  static constexpr int kThreads = kThreadsM * kThreadsN;
  static constexpr int kLoadsA = BM * BK / 4 / kThreads;  // 4-element global loads per thread per K step
  static constexpr int kLoadsB = BK * BN / 4 / kThreads;
  static constexpr int kPadA = 4;  // As rows padded by one vector: the transposing stores hit distinct banks
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "sub-tiles are built from 4-wide vectors");
  static_assert(kLoadsA * 4 * kThreads == BM * BK && kLoadsB * 4 * kThreads == BK * BN,
                "every thread loads the same number of vectors");
};

constexpr int64_t kGroupM = 8;

struct TileCorner {
  int64_t m0, n0;  // first row and column of the block's C tile
};

// The C tile of block `block` in grouped order: kGroupM tile rows are swept together, column by
// column, so blocks running together share A and B tiles in L2.
__device__ __forceinline__ TileCorner grouped_tile_corner(int64_t block, int64_t tiles_m, int64_t tiles_n, int BM,
                                                          int BN) {
  const int64_t tiles_per_group = kGroupM * tiles_n;
  const int64_t group = block / tiles_per_group;
  const int64_t first_tile_m = group * kGroupM;
  const int64_t group_rows = min(tiles_m - first_tile_m, kGroupM);
  const int64_t in_group = block - group * tiles_per_group;
  return {(first_tile_m + in_group % group_rows) * BM, (in_group / group_rows) * BN};
}

// Four consecutive elements p[0..3] of a row as acc_t; elements at or past `valid` read as zero.
// kVec: one vector load (the caller guarantees alignment and that valid is <= 0 or >= 4).
template <bool kVec, typename T, typename acc_t>
__device__ __forceinline__ void load4(const T* __restrict__ p, int64_t valid, acc_t (&out)[4]) {
  if constexpr (kVec) {
    if (valid > 0) {
      const auto v = *reinterpret_cast<const opgen::cuda::Vec<T, 4>*>(p);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        out[j] = opgen::cuda::convert<acc_t>(v.v[j]);
      }
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        out[j] = acc_t(0);
      }
    }
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      out[j] = j < valid ? opgen::cuda::convert<acc_t>(p[j]) : acc_t(0);
    }
  }
}

// c (M x N, contiguous) = a (M x K, row stride lda) @ b (K x N, row stride ldb), accumulated in acc_t.
// One block per C tile; blockIdx.x numbers the tiles in grouped order. kVec: a, b, lda, ldb, K and N
// are all multiples of 4 elements (and the pointers aligned to 4 elements).
template <typename Shape, bool kVec, typename T, typename acc_t>
__global__ void __launch_bounds__(Shape::kThreads, Shape::kMinBlocks)
    gemm_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int64_t M, int64_t N, int64_t K,
                int64_t lda, int64_t ldb, int64_t tiles_m, int64_t tiles_n) {
  constexpr int BM = Shape::BM, BN = Shape::BN, BK = Shape::BK, TM = Shape::TM, TN = Shape::TN;
  constexpr int kThreads = Shape::kThreads, kThreadsM = Shape::kThreadsM, kThreadsN = Shape::kThreadsN;
  constexpr int kLoadsA = Shape::kLoadsA, kLoadsB = Shape::kLoadsB;
  using Vec4 = opgen::cuda::Vec<acc_t, 4>;
  __shared__ alignas(sizeof(Vec4)) acc_t As[2][BK][BM + Shape::kPadA];  // transposed A tile: As[buf][k][m]
  __shared__ alignas(sizeof(Vec4)) acc_t Bs[2][BK][BN];                 // Bs[buf][k][n]

  const TileCorner tile = grouped_tile_corner(blockIdx.x, tiles_m, tiles_n, BM, BN);
  const int64_t m0 = tile.m0, n0 = tile.n0;
  const int tid = threadIdx.x;

  // This thread's global loads: fixed rows of A and columns of B, K advancing. The row/column
  // bounds are checked once here; only the K bound is checked per step.
  int a_m[kLoadsA], a_k[kLoadsA], b_k[kLoadsB], b_n[kLoadsB];
  const T* a_src[kLoadsA];
  const T* b_src[kLoadsB];
  bool a_row_in[kLoadsA];
  int b_cols_in[kLoadsB];  // columns of this 4-wide piece inside N: 0..4
#pragma unroll
  for (int l = 0; l < kLoadsA; ++l) {
    const int piece = tid + l * kThreads;
    a_m[l] = piece / (BK / 4);
    a_k[l] = piece % (BK / 4) * 4;
    a_row_in[l] = m0 + a_m[l] < M;
    a_src[l] = a + (m0 + a_m[l]) * lda + a_k[l];
  }
#pragma unroll
  for (int l = 0; l < kLoadsB; ++l) {
    const int piece = tid + l * kThreads;
    b_k[l] = piece / (BN / 4);
    b_n[l] = piece % (BN / 4) * 4;
    b_cols_in[l] = static_cast<int>(max(min(N - (n0 + b_n[l]), int64_t(4)), int64_t(0)));
    b_src[l] = b + b_k[l] * ldb + n0 + b_n[l];
  }

  acc_t staged_a[kLoadsA][4];
  acc_t staged_b[kLoadsB][4];
  auto load_tiles = [&](int64_t k0) {
#pragma unroll
    for (int l = 0; l < kLoadsA; ++l) {
      load4<kVec>(a_src[l] + k0, a_row_in[l] ? K - (k0 + a_k[l]) : 0, staged_a[l]);
    }
#pragma unroll
    for (int l = 0; l < kLoadsB; ++l) {
      load4<kVec>(b_src[l] + k0 * ldb, k0 + b_k[l] < K ? b_cols_in[l] : 0, staged_b[l]);
    }
  };
  auto store_tiles = [&](int buf) {
#pragma unroll
    for (int l = 0; l < kLoadsA; ++l) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        As[buf][a_k[l] + j][a_m[l]] = staged_a[l][j];
      }
    }
#pragma unroll
    for (int l = 0; l < kLoadsB; ++l) {
      *reinterpret_cast<Vec4*>(&Bs[buf][b_k[l]][b_n[l]]) =
          Vec4{{staged_b[l][0], staged_b[l][1], staged_b[l][2], staged_b[l][3]}};
    }
  };

  const int tx = tid % kThreadsN;
  const int ty = tid / kThreadsN;
  acc_t acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      acc[i][j] = acc_t(0);
    }
  }

  load_tiles(0);
  store_tiles(0);
  __syncthreads();
  int buf = 0;
  for (int64_t k0 = 0; k0 < K; k0 += BK) {
    const bool has_next = k0 + BK < K;
    if (has_next) {
      load_tiles(k0 + BK);  // in flight while this step computes
    }
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      acc_t ra[TM], rb[TN];
#pragma unroll
      for (int g = 0; g < TM / 4; ++g) {
        const Vec4 v = *reinterpret_cast<const Vec4*>(&As[buf][kk][g * kThreadsM * 4 + ty * 4]);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          ra[g * 4 + j] = v.v[j];
        }
      }
#pragma unroll
      for (int g = 0; g < TN / 4; ++g) {
        const Vec4 v = *reinterpret_cast<const Vec4*>(&Bs[buf][kk][g * kThreadsN * 4 + tx * 4]);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          rb[g * 4 + j] = v.v[j];
        }
      }
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          acc[i][j] = fma(ra[i], rb[j], acc[i][j]);
        }
      }
    }
    if (has_next) {
      store_tiles(buf ^ 1);  // buf ^ 1 was last read before the previous barrier
    }
    __syncthreads();
    buf ^= 1;
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t row = m0 + (i / 4) * kThreadsM * 4 + ty * 4 + i % 4;
    if (row >= M) {
      continue;
    }
#pragma unroll
    for (int g = 0; g < TN / 4; ++g) {
      const int64_t col = n0 + g * kThreadsN * 4 + tx * 4;
      T* out = c + row * N + col;
      if constexpr (kVec) {
        if (col < N) {  // N % 4 == 0: the whole vector is in range
          opgen::cuda::Vec<T, 4> v;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            v.v[j] = opgen::cuda::convert<T>(acc[i][g * 4 + j]);
          }
          *reinterpret_cast<opgen::cuda::Vec<T, 4>*>(out) = v;
        }
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (col + j < N) {
            out[j] = opgen::cuda::convert<T>(acc[i][g * 4 + j]);
          }
        }
      }
    }
  }
}

}  // namespace examples::gemm
