// A fast element-wise CUDA map, shared by the ops: out[i] = op(in[i]...), or for a functor with K
// results (opgen::Array, e.g. one gradient per input) out_k[i] = op(in[i]...)[k].
//
// Each thread moves a few vectors per tensor (vectors_per_thread), 16 bytes for the widest, all
// loaded before any math (several loads in flight), with 64-bit indices throughout. Vectors follow
// the outputs' alignment: the elements before the outputs' first vector boundary (the head, fewer
// than a vector) are done one by one, so every store after them is an aligned vector. An input that
// sits elsewhere in its vectors (a view such as x[1:] beside a fresh output) is read with aligned
// loads shifted into place in registers (load_vector on an Input). Only outputs misaligned
// differently from each other, or a pointer not aligned to its own element, make the kernel go one
// element at a time. The partial tile at the end is done element by element. Inputs are converted
// to their op-math type (float for 16-bit floats) before op sees them. Torch-free: see
// kernel_types.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "common/cuda_utils.cuh"

namespace examples::opgen::cuda {

template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

constexpr int kBlockThreads = 256;
constexpr int kVectorsPerThread = 4;

// Vectors per thread and tensor in a kernel: a misaligned input takes two loads a vector, so such a
// kernel moves half as many (the same loads in flight, half the registers: more threads fit).
template <bool kMisalignedInputs>
constexpr int vectors_per_thread() {
  return kMisalignedInputs ? kVectorsPerThread / 2 : kVectorsPerThread;
}

// Elements per vector: the widest tensor moves 16 bytes.
template <typename... Ts>
constexpr int vector_width() {
  return static_cast<int>(16 / std::max({sizeof(Ts)...}));
}

// Bytes from the last kVec-element vector boundary to p.
template <int kVec, typename T>
int misalignment(const T* p) {
  return static_cast<int>(reinterpret_cast<std::uintptr_t>(p) % (sizeof(T) * kVec));
}

template <int kVec, typename T>
bool is_vector_aligned(const T* p) {
  return misalignment<kVec>(p) == 0;
}

template <int kVec, typename T>
__device__ __forceinline__ Vec<T, kVec> load_vector(const T* __restrict__ p, int64_t i) {
  return *reinterpret_cast<const Vec<T, kVec>*>(p + i);
}

// The kOut words that start `offset` bytes (0 <= offset < 16, known at run time only) into the words
// w: what one unaligned load there would read, built from aligned ones. The whole words to skip are
// picked with selects and the rest is a funnel shift: indexing w with a run-time value would put it
// in local memory.
template <int kOut, int kIn>
OPGEN_HOST_DEVICE inline void shift_words(const uint32_t (&w)[kIn], int offset, uint32_t (&out)[kOut]) {
  static_assert(kIn > kOut, "a shifted word needs the word after it");
  const int skip = offset / 4;
  const int bits = 8 * (offset % 4);
  uint32_t picked[kOut + 1];
#pragma unroll
  for (int k = 0; k <= kOut; ++k) {
    picked[k] = w[k];
#pragma unroll
    for (int s = 1; s < 4; ++s) {
      if (skip == s) {
        picked[k] = w[k + s < kIn ? k + s : kIn - 1];  // clamped: past the end is never needed
      }
    }
  }
#pragma unroll
  for (int k = 0; k < kOut; ++k) {
    out[k] = static_cast<uint32_t>(((uint64_t(picked[k + 1]) << 32) | picked[k]) >> bits);
  }
}

// An input as the vector path reads it: its data, and how many bytes past a vector boundary its
// vectors start (the same for all of them, 0 when aligned).
template <typename T>
struct Input {
  const T* data;
  int misalignment;
};

// The kVec elements of `in` from i on. A misaligned vector straddles two aligned ones that both hold
// some of its elements (so nothing outside the tensor's 16-byte blocks is read): load both, shift
// into place. Vectors of under 4 bytes (uint8 beside a float64) go element by element instead.
// kMayBeMisaligned = false leaves the shifting out (when every input is aligned).
template <int kVec, bool kMayBeMisaligned = true, typename T>
__device__ __forceinline__ Vec<T, kVec> load_vector(const Input<T>& in, int64_t i) {
  if (!kMayBeMisaligned || in.misalignment == 0) {
    return load_vector<kVec>(in.data, i);
  }
  constexpr int kBytes = static_cast<int>(sizeof(T)) * kVec;
  Vec<T, kVec> x;
  if constexpr (kBytes % 4 != 0) {
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      x.v[e] = in.data[i + e];
    }
  } else {
    constexpr int kWords = kBytes / 4;
    using Words = Vec<uint32_t, kWords>;
    const auto* straddled =
        reinterpret_cast<const Words*>(reinterpret_cast<const char*>(in.data + i) - in.misalignment);
    const Words first = straddled[0];
    const Words second = straddled[1];
    uint32_t both[2 * kWords];
    uint32_t words[kWords];
#pragma unroll
    for (int k = 0; k < kWords; ++k) {
      both[k] = first.v[k];
      both[kWords + k] = second.v[k];
    }
    shift_words(both, in.misalignment, words);
    memcpy(&x, words, kBytes);
  }
  return x;
}

template <typename Op, typename... in_t>
__device__ __forceinline__ auto apply(const Op& op, in_t... x) {
  return as_array(op(cuda::convert<opmath_t<in_t>>(x)...));  // qualified: no argument-dependent lookup of c10::convert
}

// A null out[k] is a result nobody asked for (a gradient not needed): computed, not stored.
template <int K, typename Op, typename out_t, typename... in_t>
__device__ __forceinline__ void map_element(const Op& op, const Array<out_t*, K>& out, int64_t i, const in_t*... in) {
  const auto results = apply(op, in[i]...);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (out[k] != nullptr) {
      out[k][i] = cuda::convert<out_t>(results[k]);
    }
  }
}

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

// One thread's vectors of one input: elements first, first + kBlockThreads * kVec, ...
template <int kVec, int kPerThread, typename T>
struct ThreadVectors {
  Vec<T, kVec> v[kPerThread];
};

template <int kVec, bool kMayBeMisaligned, typename T>
__device__ __forceinline__ auto load_thread_vectors(const Input<T>& in, int64_t first) {
  ThreadVectors<kVec, vectors_per_thread<kMayBeMisaligned>(), T> x;
#pragma unroll
  for (int u = 0; u < vectors_per_thread<kMayBeMisaligned>(); ++u) {
    x.v[u] = load_vector<kVec, kMayBeMisaligned>(in, first + int64_t(u) * kBlockThreads * kVec);
  }
  return x;
}

// Called with every input already loaded (arguments are evaluated first): all loads are in flight
// together, before the first store.
template <int kVec, int kPerThread, int K, typename Op, typename out_t, typename... in_t>
__device__ __forceinline__ void map_thread_vectors(const Op& op, const Array<out_t*, K>& out, int64_t first,
                                                   const ThreadVectors<kVec, kPerThread, in_t>&... x) {
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    map_vector<kVec>(op, out, first + int64_t(u) * kBlockThreads * kVec, x.v[u]...);
  }
}

template <int kVec, bool kMisalignedInputs = false>
constexpr int64_t tile_elements() {
  return int64_t(kBlockThreads) * vectors_per_thread<kMisalignedInputs>() * kVec;
}

// The pointers start where every output is vector aligned: elements [0, n) are done in tiles, the
// head before them, [-head, 0), one by one by block 0. kMisalignedInputs: some input's vectors start
// mid-vector (a separate kernel, so that the shifting costs the aligned case nothing).
template <int kVec, bool kMisalignedInputs, int K, typename Op, typename out_t, typename... in_t>
__global__ void __launch_bounds__(kBlockThreads)
    map_kernel(Op op, int64_t n, int head, Array<out_t*, K> out, Input<in_t>... in) {
  if (blockIdx.x == 0 && int(threadIdx.x) < head) {
    map_element(op, out, int64_t(threadIdx.x) - head, in.data...);
  }
  constexpr int64_t kTile = tile_elements<kVec, kMisalignedInputs>();
  const int64_t tile_start = int64_t(blockIdx.x) * kTile;
  if (tile_start + kTile <= n) {
    const int64_t first = tile_start + int64_t(threadIdx.x) * kVec;
    map_thread_vectors<kVec>(op, out, first, load_thread_vectors<kVec, kMisalignedInputs>(in, first)...);
  } else {
    for (int64_t i = tile_start + threadIdx.x; i < n; i += kBlockThreads) {
      map_element(op, out, i, in.data...);
    }
  }
}

// Elements from p to its first kVec-element vector boundary (p aligned to its element).
template <int kVec, typename T>
int elements_to_vector_boundary(const T* p) {
  constexpr int kBytes = static_cast<int>(sizeof(T)) * kVec;
  return (kBytes - misalignment<kVec>(p)) % kBytes / static_cast<int>(sizeof(T));
}

// Launches out_k[i] = op(in[i]...)[k] for i < n on `stream` and checks the launch. The caller has
// made the tensors contiguous and chosen the device (the op's .cpp does both).
template <typename Op, typename out_t, int K, typename... in_t>
void launch_map(cudaStream_t stream, const Op& op, int64_t n, Array<out_t*, K> out, const in_t*... in) {
  if (n == 0) {
    return;
  }
  constexpr int kVec = vector_width<out_t, in_t...>();
  // The head: the elements before the first output's first vector boundary.
  int head = 0;
  for (int k = 0; k < K; ++k) {
    if (out[k] != nullptr) {
      head = static_cast<int>(std::min<int64_t>(elements_to_vector_boundary<kVec>(out[k]), n));
      break;
    }
  }
  bool vectorizable = (is_vector_aligned<1>(in) && ...);
  for (int k = 0; k < K; ++k) {
    vectorizable =
        vectorizable && (out[k] == nullptr || (is_vector_aligned<1>(out[k]) && is_vector_aligned<kVec>(out[k] + head)));
  }
  if (vectorizable) {
    // The kernel's pointers start after the head, where every output is vector aligned.
    const int64_t body = n - head;
    Array<out_t*, K> body_out = out;
    for (int k = 0; k < K; ++k) {
      body_out[k] = out[k] == nullptr ? nullptr : out[k] + head;
    }
    const int64_t body_or_one = std::max<int64_t>(body, 1);  // at least one block: block 0 does the head
    if ((is_vector_aligned<kVec>(in + head) && ...)) {
      map_kernel<kVec, false><<<grid_size(body_or_one, tile_elements<kVec, false>()), kBlockThreads, 0, stream>>>(
          op, body, head, body_out, Input<in_t>{in + head, 0}...);
    } else {
      map_kernel<kVec, true><<<grid_size(body_or_one, tile_elements<kVec, true>()), kBlockThreads, 0, stream>>>(
          op, body, head, body_out, Input<in_t>{in + head, misalignment<kVec>(in + head)}...);
    }
  } else {
    map_kernel<1, false>
        <<<grid_size(n, tile_elements<1>()), kBlockThreads, 0, stream>>>(op, n, 0, out, Input<in_t>{in, 0}...);
  }
  OPGEN_CUDA_LAUNCH_CHECK();
}

// One output: out[i] = op(in[i]...).
template <typename Op, typename out_t, typename... in_t>
void launch_map(cudaStream_t stream, const Op& op, int64_t n, out_t* out, const in_t*... in) {
  launch_map(stream, op, n, Array<out_t*, 1>{out}, in...);
}

}  // namespace examples::opgen::cuda
