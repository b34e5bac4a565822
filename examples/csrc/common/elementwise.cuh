// A fast element-wise CUDA map, shared by the ops: out[i] = op(in[i]...), or for a functor with K
// results (opgen::Array, e.g. one gradient per input) out_k[i] = op(in[i]...)[k].
//
// Each thread moves kVectorsPerThread 16-byte vectors per tensor (several loads in flight), with
// 64-bit indices throughout. The vector path needs every pointer aligned to its vector size;
// otherwise (a misaligned view such as x[1:]) the same kernel runs one element at a time. The
// partial tile at the end is done element by element. Inputs are converted to their op-math type
// (float for 16-bit floats) before op sees them. Torch-free: see kernel_types.h.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/cuda_utils.cuh"

namespace examples::opgen::cuda {

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

template <typename Op, typename... in_t>
__device__ __forceinline__ auto apply(const Op& op, in_t... x) {
  return as_array(op(cuda::convert<opmath_t<in_t>>(x)...));  // qualified: no argument-dependent lookup of c10::convert
}

// A null out[k] is a result nobody asked for (a gradient not needed): computed, not stored.
template <int kVec, int K, typename Op, typename out_t, typename... in_t>
__device__ __forceinline__ void map_vector(const Op& op, const Array<out_t*, K>& out, int64_t i,
                                           const Vec<in_t, kVec>&... x) {
  Vec<out_t, kVec> y[K];
#pragma unroll
  for (int e = 0; e < kVec; ++e) {
    const auto results = apply(op, x.v[e]...);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      y[k].v[e] = cuda::convert<out_t>(results[k]);
    }
  }
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (out[k] != nullptr) {
      *reinterpret_cast<Vec<out_t, kVec>*>(out[k] + i) = y[k];
    }
  }
}

template <int kVec>
constexpr int64_t tile_elements() {
  return int64_t(kBlockThreads) * kVectorsPerThread * kVec;
}

template <int kVec, int K, typename Op, typename out_t, typename... in_t>
__global__ void __launch_bounds__(kBlockThreads)
    map_kernel(Op op, int64_t n, Array<out_t*, K> out, const in_t* __restrict__... in) {
  const int64_t tile_start = int64_t(blockIdx.x) * tile_elements<kVec>();
  if (tile_start + tile_elements<kVec>() <= n) {
#pragma unroll
    for (int u = 0; u < kVectorsPerThread; ++u) {
      const int64_t i = tile_start + (int64_t(u) * kBlockThreads + threadIdx.x) * kVec;
      map_vector<kVec>(op, out, i, load_vector<kVec>(in, i)...);
    }
  } else {
    for (int64_t i = tile_start + threadIdx.x; i < n; i += kBlockThreads) {
      const auto results = apply(op, in[i]...);
#pragma unroll
      for (int k = 0; k < K; ++k) {
        if (out[k] != nullptr) {
          out[k][i] = cuda::convert<out_t>(results[k]);
        }
      }
    }
  }
}

// Launches out_k[i] = op(in[i]...)[k] for i < n on `stream` and checks the launch. The caller has
// made the tensors contiguous and chosen the device (the op's .cpp does both).
template <typename Op, typename out_t, int K, typename... in_t>
void launch_map(cudaStream_t stream, const Op& op, int64_t n, Array<out_t*, K> out, const in_t*... in) {
  if (n == 0) {
    return;
  }
  constexpr int kVec = vector_width<out_t, in_t...>();
  bool aligned = (is_vector_aligned<kVec>(in) && ...);
  for (int k = 0; k < K; ++k) {
    aligned = aligned && is_vector_aligned<kVec>(out[k]);  // null counts as aligned
  }
  if (aligned) {
    map_kernel<kVec><<<grid_size(n, tile_elements<kVec>()), kBlockThreads, 0, stream>>>(op, n, out, in...);
  } else {
    map_kernel<1><<<grid_size(n, tile_elements<1>()), kBlockThreads, 0, stream>>>(op, n, out, in...);
  }
  OPGEN_CUDA_LAUNCH_CHECK();
}

// One output: out[i] = op(in[i]...).
template <typename Op, typename out_t, typename... in_t>
void launch_map(cudaStream_t stream, const Op& op, int64_t n, out_t* out, const in_t*... in) {
  launch_map(stream, op, n, Array<out_t*, 1>{out}, in...);
}

}  // namespace examples::opgen::cuda
