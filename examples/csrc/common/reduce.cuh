// Warp and block sums for CUDA reduction kernels.
#pragma once

#include <cstdint>

namespace examples::opgen::cuda {

constexpr int kWarpSize = 32;

template <typename T>
__device__ __forceinline__ T warp_sum(T value) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  }
  return value;
}

// Sum over the block; every thread gets the result. blockDim.x must be a multiple of 32, at most 1024.
template <typename T>
__device__ __forceinline__ T block_sum(T value) {
  __shared__ T warp_totals[kWarpSize];
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  value = warp_sum(value);
  __syncthreads();  // warp_totals may still be read from a previous call
  if (lane == 0) {
    warp_totals[warp] = value;
  }
  __syncthreads();
  const int warps = blockDim.x / kWarpSize;
  value = lane < warps ? warp_totals[lane] : T(0);
  return warp_sum(value);
}

}  // namespace examples::opgen::cuda
