// The row-wise kind on CUDA (the functor's interface is in rowwise.h): one block of threads per row,
// 64 to 512 threads by row length. The block copies each input row into shared memory with 16-byte
// loads (four a thread in flight together) and runs the functor there (row.sum and row.max reduce
// across the block, row.for_each strides over it, so neighbouring threads write neighbouring
// results); broadcast inputs (a weight) are read where they are, from L1/L2. Rows too long for
// shared memory are read in place. 64-bit indices. Torch-free.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "common/cuda_utils.cuh"

namespace examples::opgen::cuda {

template <typename S>
struct RowIn {
  using storage_t = S;
  using math_t = opmath_t<S>;
  const S* data;
  int64_t cols;

  // v rounded to the tensor's dtype and back, as a kernel computing in the dtype would round it.
  __device__ __forceinline__ math_t round(math_t v) const {
    return rounded<S>(v);
  }

  __device__ __forceinline__ math_t operator[](int64_t j) const {
    return convert<math_t>(data[j]);
  }
};

template <typename S>
struct RowOut {
  using storage_t = S;
  using math_t = opmath_t<S>;
  S* data;
  int64_t cols;

  __device__ __forceinline__ void set(int64_t j, math_t value) const {
    if (data != nullptr) {  // null: a result nobody asked for (a gradient not needed)
      data[j] = convert<S>(value);
    }
  }
};

constexpr int kRowWarp = 32;
constexpr int kRowUnroll = 4;  // 16-byte vectors a thread moves at once

template <typename T>
__device__ __forceinline__ T row_max(T a, T b) {
  return (a > b || a != a) ? a : b;  // NaN wins, as torch's max
}

// One row's loops, shared by the block's threads. Every thread must make each call.
struct Row {
  template <typename T, typename Combine>
  __device__ __forceinline__ T reduce(T value, const Combine& combine) const {
    __shared__ T partial[kRowWarp];
#pragma unroll
    for (int offset = kRowWarp / 2; offset > 0; offset /= 2) {
      value = combine(value, __shfl_xor_sync(0xffffffffu, value, offset));
    }
    const int warps = blockDim.x / kRowWarp;
    if (warps == 1) {
      return value;
    }
    __syncthreads();  // partial may still be read by the previous reduction
    if (threadIdx.x % kRowWarp == 0) {
      partial[threadIdx.x / kRowWarp] = value;
    }
    __syncthreads();
    value = partial[0];
    for (int w = 1; w < warps; ++w) {
      value = combine(value, partial[w]);
    }
    return value;
  }

  template <typename F>
  __device__ __forceinline__ auto sum(int64_t n, const F& f) const {
    using T = decltype(f(int64_t(0)));
    T total(0);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      total += f(j);
    }
    return reduce(total, [](T a, T b) { return a + b; });
  }

  template <typename F>
  __device__ __forceinline__ auto max(int64_t n, const F& f) const {
    using T = decltype(f(int64_t(0)));
    T best = T(-INFINITY);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      best = row_max(best, f(j));
    }
    return reduce(best, [](T a, T b) { return row_max(a, b); });
  }

  template <typename F>
  __device__ __forceinline__ void for_each(int64_t n, const F& f) const {
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      f(j);
    }
  }

  __device__ __forceinline__ void sync() const {
    __syncthreads();
  }
};

// n elements from src to dst by the block: 16 bytes at a time where both are 16-byte aligned.
template <typename S>
__device__ __forceinline__ void copy_row(S* __restrict__ dst, const S* __restrict__ src, int64_t n) {
  constexpr int kVec = 16 / sizeof(S) > 0 ? 16 / sizeof(S) : 1;
  const bool aligned = (reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src)) % 16 == 0;
  int64_t done = 0;
  if (aligned && kVec > 1) {
    // kRowUnroll vectors a thread loaded before any is stored: all in flight together.
    const int64_t vectors = n / kVec;
    const auto* from = reinterpret_cast<const uint4*>(src);
    auto* to = reinterpret_cast<uint4*>(dst);
    for (int64_t first = threadIdx.x; first < vectors; first += int64_t(blockDim.x) * kRowUnroll) {
      uint4 part[kRowUnroll];
#pragma unroll
      for (int u = 0; u < kRowUnroll; ++u) {
        const int64_t v = first + int64_t(u) * blockDim.x;
        if (v < vectors) {
          part[u] = from[v];
        }
      }
#pragma unroll
      for (int u = 0; u < kRowUnroll; ++u) {
        const int64_t v = first + int64_t(u) * blockDim.x;
        if (v < vectors) {
          to[v] = part[u];
        }
      }
    }
    done = vectors * kVec;
  }
  for (int64_t j = done + threadIdx.x; j < n; j += blockDim.x) {
    dst[j] = src[j];
  }
}

// Shared memory of a staged row: each staged row starts on a 16-byte boundary.
template <typename S>
constexpr int64_t staged_elements(int64_t cols) {
  return (cols * int64_t(sizeof(S)) + 15) / 16 * 16 / int64_t(sizeof(S));
}

template <bool kStaged, typename Op, typename S, int N, int K, std::size_t... I, std::size_t... O>
__device__ __forceinline__ void run_row(const Op& op, int64_t r, const RowTensors<const S, N>& in,
                                        const RowTensors<S, K>& out, S* shared, std::index_sequence<I...>,
                                        std::index_sequence<O...>) {
  const S* in_row[N > 0 ? N : 1];
  S* out_row[K];
  S* next = shared;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    in_row[i] = in.data[i] + r * in.row_stride[i];
    if (kStaged && in.row_stride[i] != 0) {  // a broadcast input stays where it is
      copy_row(next, in_row[i], in.cols[i]);
      in_row[i] = next;
      next += staged_elements<S>(in.cols[i]);
    }
  }
  // Results go straight to memory (neighbouring threads write neighbouring elements); a result
  // nobody asked for stays null, and set() skips it.
#pragma unroll
  for (int k = 0; k < K; ++k) {
    out_row[k] = out.data[k] == nullptr ? nullptr : out.data[k] + r * out.row_stride[k];
  }
  if (kStaged) {
    __syncthreads();
  }
  op(Row{}, RowIn<S>{in_row[I], in.cols[I]}..., RowOut<S>{out_row[O], out.cols[O]}...);
  if (kStaged) {
    __syncthreads();  // the next row reuses the shared memory
  }
}

template <bool kStaged, typename Op, typename S, int N, int K>
__global__ void rows_kernel(Op op, int64_t rows, RowTensors<const S, N> in, RowTensors<S, K> out) {
  extern __shared__ uint4 shared_words[];  // uint4: 16-byte aligned
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    run_row<kStaged>(op, r, in, out, reinterpret_cast<S*>(shared_words), std::make_index_sequence<N>{},
                     std::make_index_sequence<K>{});
  }
}

// Launches op over `rows` rows on `stream` and checks the launch. Unstaged, op writes its outputs
// in place: an output nobody asked for must then be given a buffer (the host code does).
template <typename Op, typename S, int N, int K>
void launch_rows(cudaStream_t stream, const Op& op, int64_t rows, const RowTensors<const S, N>& in,
                 const RowTensors<S, K>& out) {
  if (rows == 0) {
    return;
  }
  int64_t widest = 1, shared = 0;
  for (int i = 0; i < N; ++i) {
    widest = std::max(widest, in.cols[i]);
    shared += in.row_stride[i] != 0 ? staged_elements<S>(in.cols[i]) : 0;
  }
  for (int k = 0; k < K; ++k) {
    widest = std::max(widest, out.cols[k]);
  }
  shared *= int64_t(sizeof(S));
  // Threads: kRowUnroll 16-byte vectors each of the widest row (a warp for rows up to 2 KB), 512 at most.
  const int64_t vectors = (widest * int64_t(sizeof(S)) + 15) / 16;
  int threads = 2 * kRowWarp;  // 32 blocks (the most an SM holds) of two warps fill it
  while (threads < 512 && int64_t(threads) * kRowUnroll < vectors) {
    threads *= 2;
  }
  constexpr int64_t kMaxShared = 96 * 1024;  // per block: several blocks still fit on an SM
  const int64_t per_sm = std::min(32, 2048 / threads);
  const auto blocks = static_cast<unsigned int>(std::min<int64_t>(rows, per_sm * multiprocessor_count()));
  if (shared <= kMaxShared) {
    if (shared > 48 * 1024) {
      OPGEN_CUDA_CHECK(cudaFuncSetAttribute(rows_kernel<true, Op, S, N, K>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            int(kMaxShared)));
    }
    rows_kernel<true><<<blocks, threads, size_t(shared), stream>>>(op, rows, in, out);
  } else {
    rows_kernel<false><<<blocks, threads, 0, stream>>>(op, rows, in, out);
  }
  OPGEN_CUDA_LAUNCH_CHECK();
}

}  // namespace examples::opgen::cuda
