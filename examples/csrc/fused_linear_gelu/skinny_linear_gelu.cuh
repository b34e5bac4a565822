// fused_linear_gelu for a small batch (at most kSkinnyMaxBatch rows): y = gelu(x @ weight^T + bias)
// in one kernel that streams the weight once.
//
// Why: at batch 32 the op reads a 9.4 MB float32 weight (768 x 3072), about 3 us at copy bandwidth,
// while cuBLAS's GEMM for that shape took 28 us on an H100 and the GELU is a second launch.
//
// A block owns kTileCols output features for kTileRows batch rows; its kWarps warps split the
// reduction (k-steps w, w + kWarps, ..), each holding a 4 x 4 register tile per lane, and the
// partial sums meet in shared memory, where the bias and GELU are applied before the one store.
// Loads are scalar and coalesced (a warp reads 32 consecutive k of one row), so any alignment and
// any row stride work; the next k-step's tile is loaded into registers while this one is used.
// Accumulation is in float, whatever the dtype (as cuBLAS does), with 64-bit row offsets.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/cuda/CUDAContextLight.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>

#include <cstdint>

#include "gelu_approx/gelu_approx.h"

namespace examples::fused_linear_gelu::skinny {

constexpr int64_t kSkinnyMaxBatch = 32;
constexpr int kTileRows = 32;  // batch rows per block
constexpr int kTileCols = 16;  // output features per block
constexpr int kTileK = 32;     // reduction step: one k per lane
constexpr int kWarps = 4;      // warps splitting the reduction
constexpr int kThreads = kWarps * 32;
// Lane layout of the 32 x 16 output tile: 8 row groups x 4 column groups, 4 x 4 outputs each.
constexpr int kRowsPerLane = 4;
constexpr int kColsPerLane = 4;
constexpr int kLaneColGroups = kTileCols / kColsPerLane;
static_assert(kTileRows * kTileCols == 32 * kRowsPerLane * kColsPerLane, "each lane owns one 4 x 4 output tile");
static_assert(kTileK == 32, "a k-step is one k per lane");

struct TileRegisters {
  float x[kTileRows];  // x[row][k0 + lane]
  float w[kTileCols];  // weight[col][k0 + lane]
};

// Loads rows [row0, row0 + kTileRows) x columns k0 + lane of x, and the same k of the block's
// weight rows, zero outside the matrices.
template <typename scalar_t>
__device__ __forceinline__ void load_tile(TileRegisters& r, const scalar_t* __restrict__ x,
                                          const scalar_t* __restrict__ weight, int64_t x_row_stride,
                                          int64_t weight_row_stride, int64_t batch, int64_t in_features,
                                          int64_t out_features, int64_t row0, int64_t col0, int64_t k0, int lane) {
  const int64_t k = k0 + lane;
  const bool k_in = k < in_features;
#pragma unroll
  for (int i = 0; i < kTileRows; ++i) {
    r.x[i] = (k_in && row0 + i < batch) ? static_cast<float>(x[(row0 + i) * x_row_stride + k]) : 0.f;
  }
#pragma unroll
  for (int j = 0; j < kTileCols; ++j) {
    r.w[j] = (k_in && col0 + j < out_features) ? static_cast<float>(weight[(col0 + j) * weight_row_stride + k]) : 0.f;
  }
}

template <typename scalar_t>
__global__ void __launch_bounds__(kThreads)
    skinny_linear_gelu_kernel(const scalar_t* __restrict__ x, const scalar_t* __restrict__ weight,
                              const scalar_t* __restrict__ bias, scalar_t* __restrict__ y, int64_t x_row_stride,
                              int64_t weight_row_stride, int64_t bias_stride, int64_t batch, int64_t in_features,
                              int64_t out_features) {
  // The +1 column keeps a warp's reads of one k from 8 (or 4) different rows in different banks.
  __shared__ float x_tile[kWarps][kTileRows][kTileK + 1];
  __shared__ float w_tile[kWarps][kTileCols][kTileK + 1];
  __shared__ float partial[kWarps][kTileRows * kTileCols];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t row0 = int64_t(blockIdx.y) * kTileRows;
  const int64_t col0 = int64_t(blockIdx.x) * kTileCols;
  const int64_t steps = (in_features + kTileK - 1) / kTileK;
  const int row_group = lane / kLaneColGroups, col_group = lane % kLaneColGroups;

  float acc[kRowsPerLane][kColsPerLane] = {};
  TileRegisters next;
  if (warp < steps) {
    load_tile(next, x, weight, x_row_stride, weight_row_stride, batch, in_features, out_features, row0, col0,
              int64_t(warp) * kTileK, lane);
  }
  for (int64_t step = warp; step < steps; step += kWarps) {
    __syncwarp();  // the previous step's reads of this warp's tiles are done
#pragma unroll
    for (int i = 0; i < kTileRows; ++i) {
      x_tile[warp][i][lane] = next.x[i];
    }
#pragma unroll
    for (int j = 0; j < kTileCols; ++j) {
      w_tile[warp][j][lane] = next.w[j];
    }
    __syncwarp();
    if (step + kWarps < steps) {  // in flight while this step computes
      load_tile(next, x, weight, x_row_stride, weight_row_stride, batch, in_features, out_features, row0, col0,
                (step + kWarps) * kTileK, lane);
    }
#pragma unroll 8
    for (int kk = 0; kk < kTileK; ++kk) {
      float a[kRowsPerLane], b[kColsPerLane];
#pragma unroll
      for (int i = 0; i < kRowsPerLane; ++i) {
        a[i] = x_tile[warp][row_group * kRowsPerLane + i][kk];
      }
#pragma unroll
      for (int j = 0; j < kColsPerLane; ++j) {
        b[j] = w_tile[warp][col_group * kColsPerLane + j][kk];
      }
#pragma unroll
      for (int i = 0; i < kRowsPerLane; ++i) {
#pragma unroll
        for (int j = 0; j < kColsPerLane; ++j) {
          acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
      }
    }
  }

#pragma unroll
  for (int i = 0; i < kRowsPerLane; ++i) {
#pragma unroll
    for (int j = 0; j < kColsPerLane; ++j) {
      partial[warp][(i * kColsPerLane + j) * 32 + lane] = acc[i][j];
    }
  }
  __syncthreads();

  // Slot p of `partial` holds element p / 32 of lane p % 32 (a layout without bank conflicts).
  for (int p = threadIdx.x; p < kTileRows * kTileCols; p += kThreads) {
    const int owner = p % 32, element = p / 32;
    const int64_t row = row0 + (owner / kLaneColGroups) * kRowsPerLane + element / kColsPerLane;
    const int64_t col = col0 + (owner % kLaneColGroups) * kColsPerLane + element % kColsPerLane;
    if (row < batch && col < out_features) {
      float z = static_cast<float>(bias[col * bias_stride]);
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        z += partial[w][p];
      }
      y[row * out_features + col] = static_cast<scalar_t>(gelu_approx::Forward<float>{}(z));
    }
  }
}

// y (batch, out_features), fresh and contiguous; x2d and weight with unit stride along in_features.
template <typename scalar_t>
void launch(const at::Tensor& x2d, const at::Tensor& weight, const at::Tensor& bias, at::Tensor& y) {
  const int64_t batch = x2d.size(0), out_features = weight.size(0);
  const dim3 grid(static_cast<unsigned int>((out_features + kTileCols - 1) / kTileCols),
                  static_cast<unsigned int>((batch + kTileRows - 1) / kTileRows));
  skinny_linear_gelu_kernel<scalar_t><<<grid, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x2d.const_data_ptr<scalar_t>(), weight.const_data_ptr<scalar_t>(), bias.const_data_ptr<scalar_t>(),
      y.mutable_data_ptr<scalar_t>(), x2d.stride(0), weight.stride(0), bias.stride(0), batch, x2d.size(1),
      out_features);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace examples::fused_linear_gelu::skinny
