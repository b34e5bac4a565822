// A fast element-wise CUDA map, shared by the ops: out[i] = op(in[i]...), or for a functor with K
// results (opgen::Array, e.g. one gradient per input) out_k[i] = op(in[i]...)[k].
//
// Each thread moves one or two vectors per tensor, 16 bytes for the widest, all loaded before any
// math (several loads in flight), with 64-bit indices throughout; small inputs get small blocks, so
// that they spread over the SMs (launch_shape). Vectors follow the outputs' alignment: the elements
// before the outputs' first vector boundary (the head, fewer than a vector) are done one by one, so
// every store after them is an aligned vector. An input that sits elsewhere in its vectors (a view
// such as x[1:] beside a fresh output) is read with aligned loads shifted into place in registers
// (load_vector on an Input). Only outputs misaligned differently from each other, or a pointer not
// aligned to its own element, make the kernel go one element at a time. The partial tile at the end
// moves whole vectors too; only the elements after the last whole vector go one by one. Inputs are
// converted to their op-math type (float for 16-bit floats) before op sees them. Torch-free: see
// kernel_types.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/cuda_utils.cuh"

namespace examples::opgen::cuda {

template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

// The largest launch shape: blocks of kBlockThreads, each thread moving up to kVectorsPerThread
// vectors of each tensor. Smaller inputs get smaller blocks (LaunchShape).
constexpr int kBlockThreads = 256;
constexpr int kVectorsPerThread = 2;

// Vectors per thread and tensor at most: a misaligned input takes two loads a vector, so such a
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

  __device__ __forceinline__ const T& operator[](int64_t i) const {
    return data[i];
  }
};

// What launch_map takes as an input: a pointer to contiguous elements, or a Broadcast (kernel_types.h).
template <typename In>
struct InputTraits;
template <typename T>
struct InputTraits<T*> {
  using value_type = std::remove_cv_t<T>;
  static bool element_aligned(const T* p) {
    return is_vector_aligned<1>(p);
  }
  template <int kVec>
  static bool vector_aligned(const T* p, int64_t head) {
    return is_vector_aligned<kVec>(p + head);
  }
  // The kernel's view of it: past the head, with its misalignment when kMisaligned.
  template <int kVec, bool kMisaligned>
  static Input<value_type> kernel_input(const T* p, int64_t head) {
    return {p + head, kMisaligned ? misalignment<kVec>(p + head) : 0};
  }
};
// A broadcast input is read element by element (its elements repeat): its alignment never matters.
template <typename T>
struct InputTraits<Broadcast<T>> {
  using value_type = T;
  static bool element_aligned(const Broadcast<T>&) {
    return true;
  }
  template <int kVec>
  static bool vector_aligned(const Broadcast<T>&, int64_t) {
    return true;
  }
  template <int kVec, bool kMisaligned>
  static Broadcast<T> kernel_input(Broadcast<T> b, int64_t head) {
    b.offset += head;
    return b;
  }
};
// An input as a kernel holds it.
template <typename T>
struct InputTraits<Input<T>> {
  using value_type = T;
};
template <typename In>
using input_value_t = typename InputTraits<std::decay_t<In>>::value_type;

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

// The kVec elements of a broadcast input for outputs i, i + 1, ...: one division for the vector, then
// its index steps along (and wraps around) the repeating elements.
// (a / b, a % b) for a >= 0, b > 0; in 32 bits where both fit (a 64-bit division costs several times more).
__device__ __forceinline__ void divide(int64_t a, int64_t b, int64_t& quotient, int64_t& remainder) {
  if (((a | b) >> 32) == 0) {
    const auto a32 = static_cast<uint32_t>(a), b32 = static_cast<uint32_t>(b);
    quotient = a32 / b32;
    remainder = a32 - static_cast<uint32_t>(quotient) * b32;
  } else {
    quotient = a / b;
    remainder = a - quotient * b;
  }
}

template <int kVec, bool kMayBeMisaligned = true, typename T>
__device__ __forceinline__ Vec<T, kVec> load_vector(const Broadcast<T>& in, int64_t i) {
  int64_t row = i + in.offset, within = 0, rows, index;
  if (in.inner != 1) {  // 1: a bias over the last dimensions
    divide(i + in.offset, in.inner, row, within);
  }
  divide(row, in.period, rows, index);
  Vec<T, kVec> x;
#pragma unroll
  for (int e = 0; e < kVec; ++e) {
    x.v[e] = in.data[index];
    if (++within == in.inner) {
      within = 0;
      index = index + 1 == in.period ? 0 : index + 1;
    }
  }
  return x;
}

// One store of v's bytes at p (aligned to them), through the __stwb intrinsic (a plain write-back
// store): as a struct assignment, a vector of results whose math may branch (IEEE division) was
// seen split into one store per element, which made normalize_volume 1.45x slower on an H100.
template <int kVec, typename T>
__device__ __forceinline__ void store_vector(T* p, const Vec<T, kVec>& v) {
  constexpr int kBytes = static_cast<int>(sizeof(T)) * kVec;
  if constexpr (kBytes == 16) {
    uint4 bits;
    memcpy(&bits, &v, kBytes);
    __stwb(reinterpret_cast<uint4*>(p), bits);
  } else if constexpr (kBytes == 8) {
    uint2 bits;
    memcpy(&bits, &v, kBytes);
    __stwb(reinterpret_cast<uint2*>(p), bits);
  } else {
    *reinterpret_cast<Vec<T, kVec>*>(p) = v;
  }
}

template <typename Op, typename... in_t>
__device__ __forceinline__ auto apply(const Op& op, in_t... x) {
  return as_array(op(cuda::convert<opmath_t<in_t>>(x)...));  // qualified: no argument-dependent lookup of c10::convert
}

// A null out[k] is a result nobody asked for (a gradient not needed): computed, not stored.
template <int K, typename Op, typename out_t, typename... In>
__device__ __forceinline__ void map_element(const Op& op, const Array<out_t*, K>& out, int64_t i, const In&... in) {
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
      store_vector(out[k] + i, y[k]);
    }
  }
}

// One thread's vectors of one input: elements first, first + stride, ... (stride: the block's
// threads * kVec), the first `count` of them used.
template <int kVec, int kPerThread, typename T>
struct ThreadVectors {
  Vec<T, kVec> v[kPerThread];
};

// Where a thread's vectors are: the first one's element, the stride between them, how many.
struct ThreadTile {
  int64_t first;
  int64_t stride;
  int count;
};

// Only whole vectors below n are loaded (and later stored): the partial tile at the end takes the
// same path as the others, its vectors still 16 bytes and all in flight together.
template <int kVec, bool kMayBeMisaligned, typename In>
__device__ __forceinline__ auto load_thread_vectors(const In& in, const ThreadTile& tile, int64_t n) {
  ThreadVectors<kVec, vectors_per_thread<kMayBeMisaligned>(), input_value_t<In>> x;
#pragma unroll
  for (int u = 0; u < vectors_per_thread<kMayBeMisaligned>(); ++u) {
    const int64_t i = tile.first + u * tile.stride;
    if (u < tile.count && i + kVec <= n) {
      x.v[u] = load_vector<kVec, kMayBeMisaligned>(in, i);
    }
  }
  return x;
}

// Called with every input already loaded (arguments are evaluated first): all loads are in flight
// together, before the first store.
template <int kVec, int kPerThread, int K, typename Op, typename out_t, typename... in_t>
__device__ __forceinline__ void map_thread_vectors(const Op& op, const Array<out_t*, K>& out, const ThreadTile& tile,
                                                   int64_t n, const ThreadVectors<kVec, kPerThread, in_t>&... x) {
#pragma unroll
  for (int u = 0; u < kPerThread; ++u) {
    const int64_t i = tile.first + u * tile.stride;
    if (u < tile.count && i + kVec <= n) {
      map_vector<kVec>(op, out, i, x.v[u]...);
    }
  }
}

// Block size and vectors per thread of one launch. Small inputs are spread over many small blocks:
// an SM's memory requests queue, so after an L2 flush an H100 added 16 KB to 16 KB in 3.3 us in two
// blocks of 256 threads and in 3.0 us in the 16 blocks of 128 threads torch.compile's kernel used.
// Each SM gets at least two blocks while a block can shrink, down to 64 threads of one vector each.
struct LaunchShape {
  int threads;
  int vectors_per_thread;
  unsigned int blocks;
};

template <int kVec, bool kMisalignedInputs>
LaunchShape launch_shape(int64_t n) {
  constexpr int kMinThreads = 64;
  const int64_t wanted_blocks = 2 * int64_t(multiprocessor_count());
  LaunchShape shape{kBlockThreads, vectors_per_thread<kMisalignedInputs>(), 0};
  const auto blocks_for = [&](const LaunchShape& s) {
    return grid_size(n, int64_t(s.threads) * s.vectors_per_thread * kVec);
  };
  while (blocks_for(shape) < wanted_blocks && (shape.vectors_per_thread > 1 || shape.threads > kMinThreads)) {
    if (shape.vectors_per_thread > 1) {
      shape.vectors_per_thread /= 2;
    } else {
      shape.threads /= 2;
    }
  }
  shape.blocks = blocks_for(shape);
  return shape;
}

// The pointers start where every output is vector aligned: the whole vectors in [0, n) are done in
// tiles, the head before them, [-head, 0), and the tail after them (fewer than kVec elements) one by
// one, by the first and the last block. One short path for every tile keeps the kernel small: after
// an L2 flush even its instructions come from memory, which shows at small sizes.
// kMisalignedInputs: some input's vectors start mid-vector (a separate kernel, so that the shifting
// costs the aligned case nothing).
template <int kVec, bool kMisalignedInputs, int K, typename Op, typename out_t, typename... In>
__global__ void __launch_bounds__(kBlockThreads)
    map_kernel(Op op, int64_t n, int head, int per_thread, Array<out_t*, K> out, In... in) {
  if (blockIdx.x == 0 && int(threadIdx.x) < head) {
    map_element(op, out, int64_t(threadIdx.x) - head, in...);
  }
  const int64_t stride = int64_t(blockDim.x) * kVec;
  const ThreadTile tile{int64_t(blockIdx.x) * per_thread * stride + int64_t(threadIdx.x) * kVec, stride, per_thread};
  map_thread_vectors<kVec>(op, out, tile, n, load_thread_vectors<kVec, kMisalignedInputs>(in, tile, n)...);
  const int tail = static_cast<int>(n % kVec);
  if (blockIdx.x == gridDim.x - 1 && int(threadIdx.x) < tail) {
    map_element(op, out, n - tail + threadIdx.x, in...);
  }
}

// Elements from p to its first kVec-element vector boundary (p aligned to its element).
template <int kVec, typename T>
int elements_to_vector_boundary(const T* p) {
  constexpr int kBytes = static_cast<int>(sizeof(T)) * kVec;
  return (kBytes - misalignment<kVec>(p)) % kBytes / static_cast<int>(sizeof(T));
}

// Launches out_k[i] = op(in[i]...)[k] for i < n on `stream` and checks the launch. The caller has
// made the tensors contiguous and chosen the device (the op's .cpp does both). An input is a pointer
// or a Broadcast (its elements repeating over the output, kernel_types.h).
template <typename Op, typename out_t, int K, typename... In>
void launch_map(cudaStream_t stream, const Op& op, int64_t n, Array<out_t*, K> out, const In&... in) {
  if (n == 0) {
    return;
  }
  constexpr int kVec = vector_width<out_t, input_value_t<In>...>();
  // The head: the elements before the first output's first vector boundary.
  int head = 0;
  for (int k = 0; k < K; ++k) {
    if (out[k] != nullptr) {
      head = static_cast<int>(std::min<int64_t>(elements_to_vector_boundary<kVec>(out[k]), n));
      break;
    }
  }
  bool vectorizable = (InputTraits<std::decay_t<In>>::element_aligned(in) && ...);
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
    if ((InputTraits<std::decay_t<In>>::template vector_aligned<kVec>(in, head) && ...)) {
      const LaunchShape shape = launch_shape<kVec, false>(body_or_one);
      map_kernel<kVec, false><<<shape.blocks, shape.threads, 0, stream>>>(
          op, body, head, shape.vectors_per_thread, body_out,
          InputTraits<std::decay_t<In>>::template kernel_input<kVec, false>(in, head)...);
    } else {
      const LaunchShape shape = launch_shape<kVec, true>(body_or_one);
      map_kernel<kVec, true><<<shape.blocks, shape.threads, 0, stream>>>(
          op, body, head, shape.vectors_per_thread, body_out,
          InputTraits<std::decay_t<In>>::template kernel_input<kVec, true>(in, head)...);
    }
  } else {
    const LaunchShape shape = launch_shape<1, false>(n);
    map_kernel<1, false><<<shape.blocks, shape.threads, 0, stream>>>(
        op, n, 0, shape.vectors_per_thread, out,
        InputTraits<std::decay_t<In>>::template kernel_input<1, false>(in, 0)...);
  }
  OPGEN_CUDA_LAUNCH_CHECK();
}

// One output: out[i] = op(in[i]...).
template <typename Op, typename out_t, typename... In>
void launch_map(cudaStream_t stream, const Op& op, int64_t n, out_t* out, const In&... in) {
  launch_map(stream, op, n, Array<out_t*, 1>{out}, in...);
}

}  // namespace examples::opgen::cuda
