// A fast element-wise CUDA map, shared by the ops: out[i] = op(in[i]...).
//
// Each thread moves kVectorsPerThread 16-byte vectors per tensor (several loads in flight), with
// 64-bit indices throughout. The vector path needs every pointer aligned to its vector size;
// otherwise (a misaligned view such as x[1:]) the same kernel runs one element at a time.
// The partial tile at the end is done element by element.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "common/torch_api.h"

namespace opgen::cuda {

template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

constexpr int kBlockThreads = 256;
constexpr int kVectorsPerThread = 4;

// Elements per vector: the widest tensor moves 16 bytes.
template <typename... Ts>
constexpr int vector_width() {
  return static_cast<int>(16 / std::max({sizeof(Ts)...}));
}

template <int kVec, typename T>
bool is_vector_aligned(const T* p) {
  return reinterpret_cast<std::uintptr_t>(p) % (sizeof(T) * kVec) == 0;
}

template <int kVec, typename T>
__device__ __forceinline__ Vec<T, kVec> load_vector(const T* __restrict__ p, int64_t i) {
  return *reinterpret_cast<const Vec<T, kVec>*>(p + i);
}

template <int kVec, typename Op, typename out_t, typename... in_t>
__device__ __forceinline__ void map_vector(const Op& op, out_t* __restrict__ out, int64_t i,
                                           const Vec<in_t, kVec>&... x) {
  Vec<out_t, kVec> y;
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    y.v[k] = static_cast<out_t>(op(static_cast<opmath_t<in_t>>(x.v[k])...));
  }
  *reinterpret_cast<Vec<out_t, kVec>*>(out + i) = y;
}

template <int kVec>
constexpr int64_t tile_elements() {
  return int64_t(kBlockThreads) * kVectorsPerThread * kVec;
}

template <int kVec, typename Op, typename out_t, typename... in_t>
__global__ void __launch_bounds__(kBlockThreads)
    map_kernel(Op op, int64_t n, out_t* __restrict__ out, const in_t* __restrict__... in) {
  const int64_t tile_start = int64_t(blockIdx.x) * tile_elements<kVec>();
  if (tile_start + tile_elements<kVec>() <= n) {
#pragma unroll
    for (int u = 0; u < kVectorsPerThread; ++u) {
      const int64_t i = tile_start + (int64_t(u) * kBlockThreads + threadIdx.x) * kVec;
      map_vector<kVec>(op, out, i, load_vector<kVec>(in, i)...);
    }
  } else {
    for (int64_t i = tile_start + threadIdx.x; i < n; i += kBlockThreads) {
      out[i] = static_cast<out_t>(op(static_cast<opmath_t<in_t>>(in[i])...));
    }
  }
}

// Blocks needed to cover n elements, `per_block` at a time.
inline unsigned int grid_size(int64_t n, int64_t per_block) {
  const int64_t blocks = (n + per_block - 1) / per_block;
  OPGEN_CHECK(blocks <= std::numeric_limits<int32_t>::max(), "tensor too large: ", n, " elements need ", blocks,
              " blocks");
  return static_cast<unsigned int>(blocks);
}

// Launches out[i] = op(in[i]...) for i < n on the current stream and checks the launch.
// The caller has set the device guard (opgen::DeviceGuard) and made the tensors contiguous.
template <typename Op, typename out_t, typename... in_t>
void launch_map(const Op& op, int64_t n, out_t* out, const in_t*... in) {
  if (n == 0) {
    return;
  }
  constexpr int kVec = vector_width<out_t, in_t...>();
  const cudaStream_t stream = current_stream();
  const bool aligned = is_vector_aligned<kVec>(out) && (is_vector_aligned<kVec>(in) && ...);
  if (aligned) {
    map_kernel<kVec><<<grid_size(n, tile_elements<kVec>()), kBlockThreads, 0, stream>>>(op, n, out, in...);
  } else {
    map_kernel<1><<<grid_size(n, tile_elements<1>()), kBlockThreads, 0, stream>>>(op, n, out, in...);
  }
  OPGEN_CUDA_LAUNCH_CHECK();
}

}  // namespace opgen::cuda
