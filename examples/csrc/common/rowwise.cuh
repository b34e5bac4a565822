// The row-wise kind on CUDA (the functor's interface is in rowwise.h), by row length. Rows on
// 16-byte boundaries (every tensor's) are held in registers, each thread 2 (or 8) 16-byte vectors
// of every row tensor, loaded and stored 16 bytes at a time (register_rows), as far as the functor's
// loops and its outputs reach (a gated activation's second half, read by plain index, is not held).
// A functor that reduces nothing across a row (a gated activation, a rotation: probe_row_use runs it
// on the host to see) has its rows longer than 16 vectors split over blocks of up to 128 threads, 2
// vectors a thread, any length. Others:
// - up to 16 vectors (128 elements of 2 bytes): 1, 4 or 8 threads per row;
// - 128 to 256 vectors (1024 to 2048 elements of 2 bytes): a block of 64 or 128 threads per row (to
//   128 vectors where the functor has two broadcast inputs: a LayerNorm);
// - 256 to 2048 vectors (to 16384 elements of 2 bytes): a block of 64 to 256 threads per row, 8
//   vectors a thread;
// - up to 16384 vectors (131072 elements of 2 bytes, 65536 of 4), on devices with clusters (compute
//   capability 9.0): a cluster of 2 to 16 blocks of 128 threads per row (of 256 where those do not
//   hold it; past 8 blocks where the device allows), the next row prefetched, the blocks' totals
//   exchanged through mailboxes (st.async and an mbarrier: no cluster barrier) and combined by a
//   warp;
// - where 8 vectors a thread (or a cluster's 4) would spill (a backward): 4 vectors a thread, and the
//   next row copied into shared memory ahead (cp.async) instead of registers;
// - on devices with more memory bandwidth a multiprocessor than an H100's (an H200), blocks of 2
//   vectors a thread prefetch the next row, and 4 vectors a thread staging it replace 8 (two rows
//   ahead where a block of 512 threads stages one input: alone on its SM), and forwards' whole rows
//   past 32768 elements of 2 bytes run in clusters of 8 vectors a thread where those do not spill;
// - a forward's whole rows in clusters, 2-byte types: a twin whose loops each reread the row's
//   elements from its vectors, where that spills less or takes fewer registers
//   (RegisterRow::next_pass);
// - a LayerNorm-like forward (two broadcast inputs) reads them where used in clusters of up to 4
//   blocks, and stages its rows in longer ones;
// - whole rows (every row tensor as wide, a whole number of each thread's vectors) run a twin of the
//   kernel without bounds checks, with as many warps or cluster blocks as hold the row, the threads
//   past it idle (RegisterKernel).
// Other rows, and functors that would spill registers there:
// - up to 256 elements: part of a warp per row, read in place;
// - longer rows: a block of 64 to 512 threads per row that stages the row's inputs in shared memory,
//   fetching the next row with asynchronous 16-byte copies (cp.async) while the functor works on
//   this one, so memory stays busy during the reductions and the stores; rows too long for shared
//   memory are read in place.
// row.sum, row.max, row.exp_sum and row.softmax reduce across the row's threads (row.softmax keeping
// each element's exp where the row is in registers), row.for_each strides over them
// (neighbouring threads own neighbouring elements); broadcast inputs (a weight) are read where they
// are, from L1/L2 (in registers, once per block). 64-bit indices. Torch-free.
#pragma once

#include <cooperative_groups.h>
#include <cuda_pipeline.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "common/cuda_utils.cuh"
#include "common/row_probe.h"
#include "common/row_stats.h"

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
constexpr int kRowUnroll = 4;  // 16-byte vectors of a row a thread moves: sets the block size

// A number, or a struct of them (row_stats.h's), passed through a warp shuffle: shuffle(v) shuffles a
// number, here each 4-byte word of a struct in turn.
template <typename T, typename Shuffle>
__device__ __forceinline__ T shuffled(const T& value, const Shuffle& shuffle) {
  if constexpr (std::is_arithmetic_v<T>) {
    return shuffle(value);
  } else {
    static_assert(sizeof(T) % 4 == 0, "a struct of 4- or 8-byte numbers");
    unsigned int words[sizeof(T) / 4];
    memcpy(words, &value, sizeof(T));
#pragma unroll
    for (auto& word : words) {
      word = shuffle(word);
    }
    T result;
    memcpy(&result, words, sizeof(T));
    return result;
  }
}

template <typename T>
__device__ __forceinline__ T shuffle_xor(unsigned mask, const T& value, int offset) {
  return shuffled(value, [&](auto v) { return __shfl_xor_sync(mask, v, offset); });
}

template <typename T>
__device__ __forceinline__ T shuffle(unsigned mask, const T& value, int lane) {
  return shuffled(value, [&](auto v) { return __shfl_sync(mask, v, lane); });
}

template <typename T>
__device__ __forceinline__ T shuffle_down(unsigned mask, const T& value, int offset) {
  return shuffled(value, [&](auto v) { return __shfl_down_sync(mask, v, offset); });
}

// Reduces value over `lanes` lanes of a warp (a power of two: this lane and those it differs from in
// the low bits), a butterfly: every lane ends with the same result, the combines being symmetric.
template <typename T, typename Combine>
__device__ __forceinline__ T lanes_reduce(T value, const Combine& combine, unsigned mask, int lanes) {
#pragma unroll
  for (int offset = lanes / 2; offset > 0; offset /= 2) {
    value = combine(value, shuffle_xor(mask, value, offset));
  }
  return value;
}

// A max with its sum of exp (row.exp_sum's), in two butterflies: the max, then each lane's sum
// rescaled to it (one exp a lane) and added, where combine_exp_sums takes two exps a step. The same
// result: a lane whose max is the top keeps its sum as it is, as combine_exp_sums's exp(0) = 1 does.
template <typename T, typename Combine>
__device__ __forceinline__ RowExpSum<T> lanes_reduce(RowExpSum<T> value, const Combine&, unsigned mask, int lanes) {
  const T top = lanes_reduce(value.max, [](T a, T b) { return row_max(a, b); }, mask, lanes);
  const T sum = value.max == top ? value.sum : value.sum * row_exp(value.max - top);
  return {top, lanes_reduce(sum, [](T a, T b) { return a + b; }, mask, lanes)};
}

// Combines the values of a warp's first `count` lanes (the lanes past them hold any of those
// values), the same way in every warp: a butterfly over them where count is a power of two (it stays
// among them), else (kAnyCount) a tree into lane 0. Every lane gets lane 0's result.
template <bool kAnyCount, typename T, typename Combine>
__device__ __forceinline__ T warp_combine(T value, const Combine& combine, int count) {
  if (!kAnyCount || (count & (count - 1)) == 0) {
    value = lanes_reduce(value, combine, 0xffffffffu, count);
  } else {
    const int lane = threadIdx.x % kRowWarp;
    for (int offset = 1 << (31 - __clz(count - 1)); offset > 0; offset /= 2) {
      const T other = shuffle_down(0xffffffffu, value, offset);
      value = lane + offset < count ? combine(value, other) : value;
    }
  }
  return shuffle(0xffffffffu, value, 0);
}

// Reduces value over the block (a power of two of warps, or any number where kAnyWarps): every
// thread gets the result. (Measured on
// an H100: two buffers of partials and one barrier a reduction, each lane combining partial
// [lane % warps] so that no final shuffle is needed, were slower: rms_norm and log-softmax, bfloat16
// rows of 1024, 95-96% of a copy against 99-100%, log-softmax at 4096 88% against 94%.)
template <bool kAnyWarps = false, typename T, typename Combine>
__device__ __forceinline__ T block_reduce(T value, const Combine& combine) {
  __shared__ T partial[kRowWarp];
  value = lanes_reduce(value, combine, 0xffffffffu, kRowWarp);
  const int warps = blockDim.x / kRowWarp;
  if (warps == 1) {
    return value;
  }
  __syncthreads();  // partial may still be read by the previous reduction
  if (threadIdx.x % kRowWarp == 0) {
    partial[threadIdx.x / kRowWarp] = value;
  }
  __syncthreads();
  // Each warp combines the partials, a lane each (a whole-row twin's block, RegisterKernel, may
  // have any number of warps: only its kernels have that code, which costs others registers).
  const int lane = threadIdx.x % kRowWarp;
  return warp_combine<kAnyWarps>(partial[lane < warps ? lane : 0], combine, warps);
}

// One row's loops, shared by the threads of the row: kLanes lanes of a warp (a short row), or the
// whole block (kLanes == 0; of any number of warps where kAnyWarps). Every one of them must make
// each call. Loops are unrolled four deep so that each thread has several loads in flight.
template <int kLanes, bool kAnyWarps = false>
struct Row {
  static constexpr bool kLaneRow = kLanes > 0;  // a row is lanes of a warp (else a block)
  int lane;                                     // this thread's place among the row's threads
  int lanes;                                    // how many threads the row has
  unsigned mask;                                // the row's lanes within the warp (kLanes > 0)

  template <typename T, typename Combine>
  __device__ __forceinline__ T reduce(T value, const Combine& combine) const {
    if constexpr (kLanes == 0) {
      return block_reduce<kAnyWarps>(value, combine);
    } else {
      return lanes_reduce(value, combine, mask, kLanes);  // offsets below kLanes stay in the row
    }
  }

  template <typename F>
  __device__ __forceinline__ auto sum(int64_t n, const F& f) const {
    using T = decltype(f(int64_t(0)));
    T total(0);
#pragma unroll 4
    for (int64_t j = lane; j < n; j += lanes) {
      total += f(j);
    }
    return reduce(total, [](T a, T b) { return a + b; });
  }

  template <typename F>
  __device__ __forceinline__ auto max(int64_t n, const F& f) const {
    using T = decltype(f(int64_t(0)));
    T best = T(-INFINITY);
#pragma unroll 4
    for (int64_t j = lane; j < n; j += lanes) {
      best = row_max(best, f(j));
    }
    return reduce(best, [](T a, T b) { return row_max(a, b); });
  }

  template <typename F>
  __device__ __forceinline__ void for_each(int64_t n, const F& f) const {
#pragma unroll 4
    for (int64_t j = lane; j < n; j += lanes) {
      f(j);
    }
  }

  template <typename F>
  __device__ __forceinline__ auto mean_var(int64_t n, const F& f) const {
    if constexpr (kLanes > 0) {
      return two_sum_mean_var(*this, n, f);
    } else {
      const auto sums = reduce(partial_squares([&](const auto& g) { for_each(n, g); }, f),
                               [](const auto& a, const auto& b) { return add_squares(a, b); });
      return finish_mean_var(sums, n, [&](auto mean) { return row_deviations(*this, n, f, mean); });
    }
  }

  template <typename F>
  __device__ __forceinline__ auto exp_sum(int64_t n, const F& f) const {
    return reduce(partial_exp_sum([&](const auto& g) { for_each(n, g); }, f),
                  [](const auto& a, const auto& b) { return combine_exp_sums(a, b); });
  }

  template <typename F>
  __device__ __forceinline__ auto softmax(int64_t n, const F& f) const {
    return row_softmax(exp_sum(n, f), f);
  }

  __device__ __forceinline__ void sync() const {
    if constexpr (kLanes == 0) {
      __syncthreads();
    } else {
      __syncwarp(mask);
    }
  }
};

// Starts copying n elements from src to dst by the block: asynchronous 16-byte copies where both are
// 16-byte aligned (complete after __pipeline_wait_prior and a barrier), plain copies for the rest.
template <typename S>
__device__ __forceinline__ void stage_row(S* __restrict__ dst, const S* __restrict__ src, int64_t n) {
  constexpr int kVec = 16 / sizeof(S) > 0 ? 16 / sizeof(S) : 1;
  const bool aligned = (reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src)) % 16 == 0;
  int64_t done = 0;
  if (aligned && kVec > 1) {
    const int64_t vectors = n / kVec;
    for (int64_t v = threadIdx.x; v < vectors; v += blockDim.x) {
      __pipeline_memcpy_async(dst + v * kVec, src + v * kVec, 16);
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

// Starts staging row r's (non-broadcast) inputs at buffer.
template <typename S, int N>
__device__ __forceinline__ void stage_inputs(int64_t r, const RowTensors<const S, N>& in, S* buffer) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    if (in.row_stride[i] != 0) {  // a broadcast input stays where it is
      stage_row(buffer, in.data[i] + r * in.row_stride[i], in.cols[i]);
      buffer += staged_elements<S>(in.cols[i]);
    }
  }
  __pipeline_commit();
}

// Runs op on row r: inputs from `staged` (null: read in place), outputs straight to memory
// (neighbouring threads write neighbouring elements; a result nobody asked for stays null, and set()
// skips it).
template <typename Op, int kLanes, typename S, int N, int K, std::size_t... I, std::size_t... O>
__device__ __forceinline__ void run_row(const Op& op, const Row<kLanes>& row, int64_t r,
                                        const RowTensors<const S, N>& in, const RowTensors<S, K>& out, const S* staged,
                                        std::index_sequence<I...>, std::index_sequence<O...>) {
  const S* in_row[N > 0 ? N : 1];
  S* out_row[K];
#pragma unroll
  for (int i = 0; i < N; ++i) {
    in_row[i] = in.data[i] + r * in.row_stride[i];
    if (staged != nullptr && in.row_stride[i] != 0) {
      in_row[i] = staged;
      staged += staged_elements<S>(in.cols[i]);
    }
  }
#pragma unroll
  for (int k = 0; k < K; ++k) {
    out_row[k] = out.data[k] == nullptr ? nullptr : out.data[k] + r * out.row_stride[k];
  }
  op(row, RowIn<S>{in_row[I], in.cols[I]}..., RowOut<S>{out_row[O], out.cols[O]}...);
}

// A block per row. kBuffers 2: the block stages its rows' inputs in shared memory, fetching the next
// row while it works on this one; 1: it stages each row before working on it; 0: it reads them in
// place.
template <int kBuffers, typename Op, typename S, int N, int K>
__global__ void block_rows_kernel(Op op, int64_t rows, RowTensors<const S, N> in, RowTensors<S, K> out,
                                  int64_t buffer_elements) {
  extern __shared__ uint4 shared_words[];  // uint4: 16-byte aligned
  S* buffer[2] = {reinterpret_cast<S*>(shared_words), reinterpret_cast<S*>(shared_words) + buffer_elements};
  const Row<0> row{int(threadIdx.x), int(blockDim.x), 0xffffffffu};
  const auto inputs = std::make_index_sequence<N>{};
  const auto outputs = std::make_index_sequence<K>{};
  if (kBuffers == 2 && blockIdx.x < rows) {
    stage_inputs(int64_t(blockIdx.x), in, buffer[0]);
  }
  int current = 0;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x, current ^= 1) {
    if (kBuffers == 0) {
      run_row(op, row, r, in, out, static_cast<const S*>(nullptr), inputs, outputs);
      continue;
    }
    if (kBuffers == 1) {
      stage_inputs(r, in, buffer[0]);
      __pipeline_wait_prior(0);
    } else {
      // The other buffer was last read by the previous row, which every thread has finished.
      if (r + gridDim.x < rows) {
        stage_inputs(r + gridDim.x, in, buffer[current ^ 1]);
      } else {
        __pipeline_commit();  // an empty group keeps the count of groups in flight at two
      }
      __pipeline_wait_prior(1);  // this row's copies (all but the newest group) have landed
    }
    __syncthreads();  // ... every thread's
    run_row(op, row, r, in, out, buffer[kBuffers == 2 ? current : 0], inputs, outputs);
    __syncthreads();  // the buffer is refilled only after every thread is done with it
  }
}

// The lanes of this thread's row within its warp, for a row of kLanes lanes (this one `lane`).
template <int kLanes>
__device__ __forceinline__ unsigned lanes_mask(int lane) {
  return kLanes == kRowWarp ? 0xffffffffu : ((1u << (kLanes % kRowWarp)) - 1u) << (threadIdx.x % kRowWarp - lane);
}

// kLanes threads of a warp per row (short rows), reading the inputs in place: the functor's second
// pass over a row finds it in L1.
template <int kLanes, typename Op, typename S, int N, int K>
__global__ void lane_rows_kernel(Op op, int64_t rows, RowTensors<const S, N> in, RowTensors<S, K> out) {
  const int per_block = blockDim.x / kLanes;
  const int lane = threadIdx.x % kLanes;
  const Row<kLanes> row{lane, kLanes, lanes_mask<kLanes>(lane)};
  for (int64_t r = int64_t(blockIdx.x) * per_block + threadIdx.x / kLanes; r < rows;
       r += int64_t(gridDim.x) * per_block) {
    run_row(op, row, r, in, out, static_cast<const S*>(nullptr), std::make_index_sequence<N>{},
            std::make_index_sequence<K>{});
  }
}

// Whether rows of a tensor at data, row_stride elements apart, start on 16-byte boundaries (what the
// register kernel needs of every tensor).
template <typename S>
bool vector_aligned(const void* data, int64_t row_stride) {
  return reinterpret_cast<std::uintptr_t>(data) % 16 == 0 && row_stride * int64_t(sizeof(S)) % 16 == 0;
}

// Which elements of a row a thread of the register kernel holds: the row's threads each hold kVecs
// 16-byte vectors of kVec elements; vector k of the row's thread t holds elements
// t * kVec + k * stride + [0, kVec), stride being the row's threads times kVec. The register of an
// element (its slot: k * kVec + e) is known at compile time, so that x[j] picks it there.
template <typename S, int kVecs>
struct RowLayout {
  static_assert(sizeof(S) <= 16 && 16 % sizeof(S) == 0, "whole elements in a 16-byte vector");
  static constexpr int kVec = 16 / sizeof(S);
  static constexpr int kVectors = kVecs;
};

// A vector is kept as the 16 bytes it was loaded as, and an element taken out where it is used: a
// vector unpacked where it was loaded would wait there for its load, one load in flight at a time.
__device__ __forceinline__ uint4 load_vector(const void* address) {
  return *reinterpret_cast<const uint4*>(address);
}

__device__ __forceinline__ void store_vector(void* address, const uint4& bits) {
  // One st.global.v4: a plain uint4 assignment may be split into four 4-byte stores where the
  // compiler cannot prove the address's alignment.
  asm volatile("st.global.v4.b32 [%0], { %1, %2, %3, %4 };" ::"l"(address), "r"(bits.x), "r"(bits.y), "r"(bits.z),
               "r"(bits.w)
               : "memory");
}

// A 16-byte copy from global memory into shared memory at `shared` (a shared-space address) without
// waiting (cp.async, complete after __pipeline_wait_prior; before compute capability 8.0 a plain
// copy), and a 16-byte load from shared memory: the staging kernels work out their addresses once, where
// a generic pointer to shared memory cost its conversion (5 instructions) at every copy and every load.
// (Measured on an H200, bfloat16 rows of 2048 to 16384 elements staged by blocks, % of a copy, same-run
// A/B, two rounds: LayerNorm 92.7-92.9, 89.5-90.1, 90.5-90.6, 84.1-84.4 against 89.4-90.0, 87.5-87.7,
// 86.1-86.2, 79.5-79.9; softmax and log-softmax 1-2 points better from 4096.)
__device__ __forceinline__ void copy_async_16(unsigned int shared, const void* global) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared), "l"(global) : "memory");
#else
  const uint4 bits = *reinterpret_cast<const uint4*>(global);
  asm volatile("st.shared.v4.u32 [%0], { %1, %2, %3, %4 };" ::"r"(shared), "r"(bits.x), "r"(bits.y), "r"(bits.z),
               "r"(bits.w)
               : "memory");
#endif
}

__device__ __forceinline__ uint4 load_shared_16(unsigned int shared) {
  uint4 bits;
  asm volatile("ld.shared.v4.u32 { %0, %1, %2, %3 }, [%4];"
               : "=r"(bits.x), "=r"(bits.y), "=r"(bits.z), "=r"(bits.w)
               : "r"(shared));
  return bits;
}

// Element e of a vector (e a constant once unrolled), and its replacement.
template <typename S>
__device__ __forceinline__ S vector_element(const uint4& bits, int e) {
  S element;
  memcpy(&element, reinterpret_cast<const char*>(&bits) + e * sizeof(S), sizeof(S));
  return element;
}

// Element e of a vector in the math type, under `pass` (RegisterRow::next_pass: zero when the kernel
// runs, which the compiler cannot know). A bfloat16 is the high half of its float: one shift or
// one mask of the 32-bit word holding it (extracting the 2 bytes, then widening, takes two for
// the high half), the pass added in the same instruction. With visit_every's check-free path,
// measured on an H200 (bfloat16, 2^26 elements, A/B in one run, % of a copy at rows of 1024 to
// 65536): softmax 92.5, 92.7, 86.6, 88.8, 79.4, 77.1, 69.7 against 89.1, 87.6, 84.8, 85.8, 77.3,
// 75.7, 66.4; LayerNorm 82.1, 77.9, 74.3, 73.3, 68.8, 59.5, 54.4 against 77.3, 73.0, 69.7, 69.2,
// 66.1, 54.7, 50.5 (softmax at 65536: 16% fewer instructions executed).
template <typename S>
__device__ __forceinline__ opmath_t<S> vector_math_element(const uint4& bits, int e, unsigned int pass = 0) {
  if constexpr (std::is_same_v<S, __nv_bfloat16> && std::is_same_v<opmath_t<S>, float>) {
    const unsigned int word = (&bits.x)[e / 2];
    return __uint_as_float(e % 2 == 0 ? (word << 16) + pass : (word & 0xffff0000u) ^ pass);
  } else if constexpr (sizeof(S) == 2) {
    uint4 keyed = bits;
    (&keyed.x)[e / 2] ^= pass;
    return convert<opmath_t<S>>(vector_element<S>(keyed, e));
  } else {  // (a 4-byte element is its own register: nothing to convert again)
    return convert<opmath_t<S>>(vector_element<S>(bits, e));
  }
}

template <typename S>
__device__ __forceinline__ void set_vector_element(uint4& bits, int e, S element) {
  memcpy(reinterpret_cast<char*>(&bits) + e * sizeof(S), &element, sizeof(S));
}

// The index the register kernel's row loops pass: element j of the row, held in this thread's
// register kSlot. A functor whose loops take `auto j` gets it, and x[j] / y.set(j, v) use the
// register; arithmetic on j (x[j + h]) makes a plain index, and reads or writes memory.
template <int kSlot_>
struct RowSlot {
  static constexpr int kSlot = kSlot_;
  int64_t j;
  unsigned int pass = 0;  // RegisterRow::next_pass's
  __device__ __forceinline__ operator int64_t() const {
    return j;
  }
};

// A broadcast input read where it is used (register_rows' kAtUse): its vectors loaded one at a time
// from L1, not held in registers for every row. A volatile load: the compiler would hoist a plain
// one out of the row loop and keep every vector live again.
struct ReadAtUse {
  bool at_use = false;
  int cached = -1;  // which vector `cache` holds
  uint4 cache;
};
struct HeldInRegisters {};

// kWhole (a whole-row twin of a kernel, register_rows): every vector of this thread is wholly in the
// row (an idle thread's too: it holds another's), so its loads, copies and stores go unchecked.
template <typename S, int kVecs, bool kAtUse = false, bool kWhole = false>
struct RegisterIn {
  using storage_t = S;
  using math_t = opmath_t<S>;
  static constexpr int kVec = RowLayout<S, kVecs>::kVec;
  const S* data;
  int64_t cols;
  int64_t base;    // this thread's first element
  int64_t stride;  // from one of its vectors to the next
  uint4 vectors[kVecs];

  __device__ __forceinline__ math_t round(math_t v) const {
    return rounded<S>(v);
  }

  // (Only in kAtUse kernels: a member, even one never used, changes every other kernel's registers.)
  [[no_unique_address]] mutable std::conditional_t<kAtUse, ReadAtUse, HeldInRegisters> use;

  template <int kSlot>
  __device__ __forceinline__ math_t operator[](RowSlot<kSlot> slot) const {
    if constexpr (kAtUse) {
      if (use.at_use) {
        constexpr int v = kSlot / kVec;
        if (use.cached != v) {  // (whole vectors: named_broadcasts_broadcast)
          const S* address = data + base + v * stride;
          asm volatile("ld.global.nc.v4.u32 { %0, %1, %2, %3 }, [%4];"
                       : "=r"(use.cache.x), "=r"(use.cache.y), "=r"(use.cache.z), "=r"(use.cache.w)
                       : "l"(address));
          use.cached = v;
        }
        return vector_math_element<S>(use.cache, kSlot % kVec);
      }
    }
    return vector_math_element<S>(vectors[kSlot / kVec], kSlot % kVec, slot.pass);
  }

  __device__ __forceinline__ math_t operator[](int64_t j) const {
    return convert<math_t>(data[j]);
  }

  // Loads this thread's vectors of the row at `row` (zeros past its end), 16 bytes at a time.
  __device__ __forceinline__ void load(const S* row) {
    data = row;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int64_t j = base + k * stride;
      if (kWhole || j + kVec <= cols) {
        vectors[k] = load_vector(row + j);
      } else {
        load_partial(k, row);
      }
    }
  }

  // Starts copying this thread's whole vectors of the row at `row` into shared memory, 16 bytes at a
  // time without waiting (cp.async): vector k to the 16 bytes at slots + 16 k blockDim.x (shared-space
  // addresses). Each thread reads back only what it copied, so no barrier is needed, only
  // __pipeline_wait_prior.
  __device__ __forceinline__ void stage(const S* row, unsigned int slots) const {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int64_t j = base + k * stride;
      if (kWhole || j + kVec <= cols) {
        copy_async_16(slots + 16u * unsigned(k) * blockDim.x, row + j);
      }
    }
  }

  // Takes the row at `row` from what stage() copied to slots (its partial vector from memory).
  __device__ __forceinline__ void load_staged(const S* row, unsigned int slots) {
    data = row;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int64_t j = base + k * stride;
      if (kWhole || j + kVec <= cols) {
        vectors[k] = load_shared_16(slots + 16u * unsigned(k) * blockDim.x);
      } else {
        load_partial(k, row);
      }
    }
  }

 private:
  // Vector k where it is not wholly in the row: its elements in the row, zeros past the end.
  __device__ __forceinline__ void load_partial(int k, const S* row) {
    const int64_t j = base + k * stride;
    vectors[k] = make_uint4(0, 0, 0, 0);  // zero in every floating type
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      if (j + e < cols) {
        set_vector_element(vectors[k], e, row[j + e]);
      }
    }
  }
};

template <typename S, int kVecs, bool kWhole = false>
struct RegisterOut {
  using storage_t = S;
  using math_t = opmath_t<S>;
  static constexpr int kVec = RowLayout<S, kVecs>::kVec;
  S* data;  // null: a result nobody asked for (a gradient not needed)
  int64_t cols;
  int64_t base;
  int64_t stride;
  mutable uint4 vectors[kVecs];
  mutable bool in_registers;  // set(RowSlot) was called: store() writes the vectors

  template <int kSlot>
  __device__ __forceinline__ void set(RowSlot<kSlot>, math_t value) const {
    set_vector_element(vectors[kSlot / kVec], kSlot % kVec, convert<S>(value));
    in_registers = true;
  }

  __device__ __forceinline__ void set(int64_t j, math_t value) const {
    if (data != nullptr) {
      data[j] = convert<S>(value);
    }
  }

  // Writes the row from the registers, if set(RowSlot) put it there (a functor sets every element
  // of an output row), 16 bytes at a time.
  __device__ __forceinline__ void store(S* row) const {
    if (row == nullptr || !in_registers) {
      return;
    }
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int64_t j = base + k * stride;
      if (kWhole || j + kVec <= cols) {
        store_vector(row + j, vectors[k]);
      } else {
#pragma unroll
        for (int e = 0; e < kVec; ++e) {
          if (j + e < cols) {
            row[j + e] = vector_element<S>(vectors[k], e);
          }
        }
      }
    }
  }
};

// row.softmax in the register kernel: p[j] is the exp kept for element j's slot times the thread's
// scale; a plain index (arithmetic on j) works it out from f(j) as RowSoftmax does.
template <typename T, typename F, int kSlots>
struct RegisterSoftmax : RowSoftmax<T, F> {
  T exps[kSlots];
  T scale;

  template <int kSlot>
  __device__ __forceinline__ T operator[](RowSlot<kSlot>) const {
    return exps[kSlot] * scale;
  }

  __device__ __forceinline__ T operator[](int64_t j) const {
    return RowSoftmax<T, F>::operator[](j);
  }
};

// The register kernel's row loops: this thread's elements j < n of the widest row, each as the
// RowSlot of its register (a loop past the widest row would index past every tensor).
// Reductions across the row's threads: Group is a Row (lanes of a warp, or the block) or a
// ClusterRow. kWhole: every loop reaches past this thread's last slot (RowUse::shortest), so none
// checks its elements against the row's end. A thread past the row's threads (the idle tail of its
// last warp, !holds) runs every loop over another thread's elements (no branch around them: a
// branch cost a softmax's staging block 92 registers against 64), and its part of each reduction is
// the reduction's identity, what visiting nothing gives; its outputs are not stored (register_rows: a
// plain-index write, y.set(j + h, v), repeats the other thread's, the same value).
template <typename Layout, typename Group, bool kWhole = false>
struct RegisterRow {
  int64_t base;
  int64_t stride;
  Group group;
  bool holds = true;      // (kWhole) this thread's elements are its own, not another's
  unsigned int zero = 0;  // zero, from a kernel argument: the compiler cannot know it (next_pass)
  mutable unsigned int pass = 0;

  // Reduces this thread's part across the row's threads; `nothing` stands for an idle thread's.
  template <typename T, typename Combine>
  __device__ __forceinline__ T reduce(const T& part, const T& nothing, const Combine& combine) const {
    return group.reduce(kWhole && !holds ? nothing : part, combine);
  }

  // A pack, not a loop: each slot's offset is a constant whatever the compiler unrolls. One bounds
  // check per vector where the whole vector is in the row (every vector but a row's last).
  template <int kVector, typename F, int... kElement>
  __device__ __forceinline__ void visit_vector(int64_t left, const F& f,
                                               std::integer_sequence<int, kElement...>) const {
    const int64_t first = kVector * stride;
    if (kWhole || first + Layout::kVec <= left) {
      (f(RowSlot<kVector * Layout::kVec + kElement>{base + first + kElement, pass}), ...);
    } else {
      ((first + kElement < left ? f(RowSlot<kVector * Layout::kVec + kElement>{base + first + kElement, pass})
                                : void()),
       ...);
    }
  }

  template <typename F, int... kVector>
  __device__ __forceinline__ void visit_slots(int64_t left, const F& f, std::integer_sequence<int, kVector...>) const {
    (visit_vector<kVector>(left, f, std::make_integer_sequence<int, Layout::kVec>{}), ...);
  }

  // In a kernel that rereads (kRereads in register_rows: `zero` unknown to the compiler), each loop
  // over the row (visit, visit_every) takes its elements out of their 16-byte vectors again, under a
  // pass of its own that the compiler cannot tell from the last: it would otherwise keep every
  // element converted (a float each, where the vectors hold two 2-byte elements a register) from the
  // first loop to the last, across the row's reductions. (Cluster twins of 8 16-byte bfloat16
  // vectors a thread: log-softmax 128 registers, no spill, against 60 bytes spilled; of 4, 80
  // registers against 95.) Elsewhere `zero` is a constant 0, and so is every pass.
  __device__ __forceinline__ void next_pass() const {
    pass = pass * 3u + zero;
  }

  template <typename F>
  __device__ __forceinline__ void visit(int64_t n, const F& f) const {
    next_pass();
    visit_slots(n - base, f, std::make_integer_sequence<int, Layout::kVectors>{});
  }

  // Every slot of this thread, with whether its element is in a row of n (f(j, inside)), with no
  // branch: for a loop that computes a value a slot (row.softmax's exps), which the compiler can then
  // select instead of branching around, each branch keeping registers of its own.
  // (Offsets in 32 bits: a register row's thread spans at most 16 blocks of 512 threads' vectors.)
  template <typename F, int... kSlot>
  __device__ __forceinline__ void visit_every_slot(int left, const F& f, std::integer_sequence<int, kSlot...>) const {
    (f(RowSlot<kSlot>{base + offset(kSlot), pass}, offset(kSlot) < left), ...);
  }

  // Where every slot is in the row (all threads but those of a ragged row's end), with no check an
  // element: f(j, true).
  template <typename F, int... kSlot>
  __device__ __forceinline__ void visit_inside_slot(const F& f, std::integer_sequence<int, kSlot...>) const {
    (f(RowSlot<kSlot>{base + offset(kSlot), pass}, true), ...);
  }

  template <typename F>
  __device__ __forceinline__ void visit_every(int64_t n, const F& f) const {
    constexpr int kSlots = Layout::kVectors * Layout::kVec;
    const int left = int(std::min<int64_t>(n - base, INT32_MAX));
    next_pass();
    if (kWhole || left > offset(kSlots - 1)) {
      visit_inside_slot(f, std::make_integer_sequence<int, kSlots>{});
    } else {
      visit_every_slot(left, f, std::make_integer_sequence<int, kSlots>{});
    }
  }

  __device__ __forceinline__ int offset(int slot) const {
    return slot / Layout::kVec * int(stride) + slot % Layout::kVec;
  }

  template <typename F>
  __device__ __forceinline__ auto sum(int64_t n, const F& f) const {
    using T = decltype(f(int64_t(0)));
    T total(0);
    visit(n, [&](auto j) { total += f(j); });
    return reduce(total, T(0), [](T a, T b) { return a + b; });
  }

  template <typename F>
  __device__ __forceinline__ auto max(int64_t n, const F& f) const {
    using T = decltype(f(int64_t(0)));
    T best = T(-INFINITY);
    visit(n, [&](auto j) { best = row_max(best, f(j)); });
    return reduce(best, T(-INFINITY), [](T a, T b) { return row_max(a, b); });
  }

  template <typename F>
  __device__ __forceinline__ void for_each(int64_t n, const F& f) const {
    visit(n, f);
  }

  template <typename F>
  __device__ __forceinline__ auto mean_var(int64_t n, const F& f) const {
    if constexpr (Group::kLaneRow) {
      return two_sum_mean_var(*this, n, f);
    } else {
      const auto sums =
          reduce(partial_squares([&](const auto& g) { visit(n, g); }, f), partial_squares([](const auto&) {}, f),
                 [](const auto& a, const auto& b) { return add_squares(a, b); });
      return finish_mean_var(sums, n, [&](auto mean) { return row_deviations(*this, n, f, mean); });
    }
  }

  template <typename F>
  __device__ __forceinline__ auto exp_sum(int64_t n, const F& f) const {
    return reduce(partial_exp_sum([&](const auto& g) { visit(n, g); }, f), partial_exp_sum([](const auto&) {}, f),
                  [](const auto& a, const auto& b) { return combine_exp_sums(a, b); });
  }

  // One exp an element: each of this thread's exp(f(j) - its own largest), kept by slot, times one
  // scale, exp(its largest - the row's) / sum. (Measured on an H100, bfloat16, the benchmark sweep,
  // % of a copy: softmax 95.7-97.1% at 4096 elements, 92.3-93.1% at 16384 and 90.3-90.8% at 65536
  // in two sweeps, against 91.3%, 89.1% and 82.5% for row.exp_sum and an exp2 an element after it;
  // a third, run right after the CUDA conformance suite, 91.1%, 87.1% and 79.0%. Its backward, in a
  // same-run A/B, 90.6-94.7% from 4096 to 32768 against 78.6-85.2%, the staging kernel taking it
  // where 8 vectors a thread of x, grad and the exps would spill.)
  template <typename F>
  __device__ __forceinline__ auto softmax(int64_t n, const F& f) const {
    using T = decltype(f(int64_t(0)));
    RegisterSoftmax<T, F, Layout::kVectors * Layout::kVec> p{RowSoftmax<T, F>{T(0), T(0), T(0), f}};
    T top = T(-INFINITY);
    visit_every(n, [&](auto j, bool inside) { top = inside ? row_max(top, f(j)) : top; });
    const T shift = top == T(-INFINITY) ? T(0) : top;  // no elements, or all -inf: every exp is 0
    T sum(0);
    const ShiftedExp<T> power(shift);  // its correction goes into the sum and the scale
    const auto keep_exps = [&](const auto& term) {
      visit_every(n, [&](auto j, bool inside) {
        p.exps[decltype(j)::kSlot] = inside ? term(f(j)) : T(0);
        sum += p.exps[decltype(j)::kSlot];
      });
    };
    if (power.fused) {
      keep_exps(power);
      sum *= power.correction;
    } else {
      keep_exps([&](T v) { return row_exp(v - shift); });
    }
    const auto terms = reduce(RowExpSum<T>{top, sum}, RowExpSum<T>{T(-INFINITY), T(0)},
                              [](const auto& a, const auto& b) { return combine_exp_sums(a, b); });
    p.max = terms.max;
    p.sum = terms.sum;
    p.log2_sum = std::log2(terms.sum);
    // This thread's elements all -inf (masked) where others are not: its probabilities are 0 (the
    // scale would be exp(0 - max), which overflows for a max below -88). A row all -inf: NaN.
    p.scale = top == T(-INFINITY) && terms.max != T(-INFINITY)
                  ? T(0)
                  : power.correction * row_exp(shift - terms.max) / terms.sum;
    return p;
  }

  __device__ __forceinline__ void sync() const {
    group.sync();
  }
};

// Threads of a block in the register kernel: kRegisterBlock where threads share a row in groups
// of lanes; where a block (or a cluster of blocks) is a row, up to register_row_block(kVecs) a block
// (launched with as many as the row needs).
constexpr int kRegisterBlock = 128;
// 16-byte vectors of each row tensor a thread holds where a block is a row longer than
// kShortBlockRow vectors: more a thread keep more loads in flight, and leave fewer warps waiting at
// each of the row's reductions, at the cost of registers. Where a cluster of blocks is a row,
// kClusterVectors a thread, loading the next row while this one reduces (kPrefetch in
// register_rows): each reduction waits for every block of the row. (A build may set them, and
// kClusterThreads, to compare: OPGEN_NVCC_FLAGS="-DOPGEN_ROW_VECTORS=4 -DOPGEN_CLUSTER_THREADS=512".)
// Shorter rows a block holds 2 vectors a thread.
#ifndef OPGEN_ROW_VECTORS
#define OPGEN_ROW_VECTORS 8
#endif
constexpr int kRowVectors = OPGEN_ROW_VECTORS;
#ifndef OPGEN_CLUSTER_VECTORS
#define OPGEN_CLUSTER_VECTORS 4
#endif
constexpr int kClusterVectors = OPGEN_CLUSTER_VECTORS;
// Where a functor would spill registers there (a backward: more row tensors), blocks and clusters of
// kStagedVectors a thread that copy the next kStagedAhead rows into shared memory while working on
// this one (kAhead in register_rows): the loads in flight cost no registers. (Measured on an H100,
// rms_norm backward, bfloat16, rows x length: 4096 x 16384 0.270 ms against 0.329 for the
// shared-memory kernel below, 8192 x 8192 0.272 against 0.283 for 2 vectors a thread, 1024 x 65536 in
// clusters 0.388 against 0.407 (0.23 since clusters reduce through mailboxes). Forwards were no
// faster staged, with 8 vectors a thread or 4, one to three rows ahead: 79-84% of a copy at 16384
// and 65536 elements against 84-87%, with mailboxes.)
constexpr int kStagedVectors = 4;
constexpr int kStagedAhead = 1;
// A staging block of register_row_block(kStagedVectors) threads is alone on its SM (128 registers a
// thread): where it stages one input, kLoneStagedAhead rows ahead keep more bytes in flight. (Measured
// on an H200, bfloat16 rows of 16384, % of a copy, A/B in one run, two rounds: LayerNorm 87.4-87.8
// against 84.8-84.9, softmax 84.0-85.0 against 82.3-82.8, log-softmax 77.3-77.8 against 76.1-76.7.
// Every staging kernel two rows ahead, in another run: a LayerNorm's backward, two staged inputs, 222
// us against 218; blocks of 128 and 256 threads (4096 and 8192), several an SM, 2-4 points lower;
// three rows ahead no better at 16384.)
constexpr int kLoneStagedAhead = 2;
// Memory a multiprocessor's share of bandwidth keeps busy only with more bytes in flight (Little's
// law: bandwidth times latency). Past kDeepBandwidthPerSM bytes a second a multiprocessor (an H200:
// 37 GB/s; an H100: 25), blocks a row prefetch the next row (2 vectors a thread) or stage it (instead
// of 8 vectors a thread in registers). (Measured on an H200, bfloat16, 2^26 elements, A/B: rms_norm,
// log-softmax and softmax at 1024 90.8-91.6%, 89.9-90.3%, 89.7-89.8% of a copy against 88.0%, 82.7%,
// 83.8-84.3%; at 8192 89.8-90.1%, 85.4-86.0%, 85.7-85.9% against 75.7-75.8%, 75.5-75.7%, 79.4-79.5%;
// LayerNorm at 1024 77.2-77.3% against 74.2-74.3%. Staging clusters instead of prefetching lost:
// 62-80% against 67-86% at 32768 and 65536; two rows ahead no better. On an H100 staging lost to 8
// vectors a thread (see kStagedVectors) and the short blocks reached 99% of a copy without
// prefetching; prefetching them there was not measured.)
#ifndef OPGEN_DEEP_BANDWIDTH_PER_SM
#define OPGEN_DEEP_BANDWIDTH_PER_SM 30e9
#endif
constexpr double kDeepBandwidthPerSM = OPGEN_DEEP_BANDWIDTH_PER_SM;
// How long a load takes to return under full load, for Little's law: a multiprocessor keeps its share
// of bandwidth busy with that share times kLoadLatency bytes in flight. On deep devices a forward's
// whole rows (one staged input) run in blocks of kRowVectors a thread, a grid of every row, where
// the rows resident an SM hold that much, and are shorter than the widest such block. (Measured on
// an H200, 37 GB/s an SM, bfloat16, % of a copy, A/B in one run, two rounds. Where the blocks an SM
// held 61-80 KB of rows: softmax at 3072 98.5 against 95.3 staged or prefetched, 4096 96.9 against
// 89.8-90.1, 8192 96.7-96.8 against 92.2-92.9, 12288 95.8-95.9 against 85.0-85.7; log-softmax at
// 4096 97.5 against 88.4-88.9, 6144 92.9-93.6 against 89.3, 8192 95.5 against 91.2-91.6; rms_norm
// at 4096 98.0-98.1 against 91.6-92.1, 8192 98.1-98.4 against 94.1-94.5. Where they held 46-51 KB
// (log-softmax's blocks have 128 registers a thread, softmax's 96), lost: log-softmax at 3072 88.0
// against 94.2-94.6, 4608 82.1 against 90.0-91.5, 12288 78.0-78.4 against 85.2-85.7. Rows of 16384,
// whose widest blocks run two an SM, lost to the staging block alone on its SM: softmax 91.1-91.9
// against 93.8-94.5, though rms_norm would gain there: 93.4 against 89.2-89.3.)
constexpr double kLoadLatency = 1.5e-6;
// A functor with wide broadcasts (a LayerNorm's forward, whose 8-vector blocks spill holding weight
// and bias) takes those blocks reading them where used, for rows of up to kAtUseBlockVectors.
// (Measured on an H200, bfloat16 LayerNorm, % of a copy, A/B in one run, two rounds: 4096 94.6-95.3
// against 90.7-91.3 staged, 6144 92.2-92.6 against 91.5-92.0, 8192 92.7-92.8 against 89.1-89.3;
// 10240, whose blocks also hold enough in flight, lost: 90.3-90.5 against 94.7-95.0.)
constexpr int64_t kAtUseBlockVectors = 1024;
static_assert(kRowVectors == 2 || kRowVectors == 4 || kRowVectors == 8, "2, 4 or 8 vectors a thread");
static_assert(kClusterVectors == 2 || kClusterVectors == 4, "2 or 4 vectors a thread of a cluster");
constexpr int64_t kShortBlockRow = 256;
// A split row's blocks (kSplitRow: a functor that reduces nothing): kSplitThreads threads (fewer for
// a shorter row) of kSplitVectors vectors a thread, gridDim.y blocks a row, as many rows at once as
// stay resident. (Measured on an H100, bfloat16 rows of 1024 to 131072 elements, against a copy of
// the same bytes: silu_and_mul 90-94% and a rotation with broadcast cos and sin 89-90%, against 61-74%
// and 70% at 8192 and up in blocks or clusters per row with 8 or 4 vectors a thread. 64 or 256
// threads no better, 4 vectors a thread worse (58-66% for the rotation); a grid of every row's blocks
// as fast for silu_and_mul, 77-85% for the rotation, which then loads cos and sin once a row. Reading
// the partner element x[j + h] as the 16-byte vector holding it, not 2 bytes at a time, was slower:
// 67% against 88%; loading the next row while working on this one (kPrefetch) gave gelu_and_mul
// (an erf an element) 85% against 82%, but silu_and_mul 89% against 92% and the rotation 40%.)
#ifndef OPGEN_SPLIT_VECTORS
#define OPGEN_SPLIT_VECTORS 2
#endif
constexpr int kSplitVectors = OPGEN_SPLIT_VECTORS;
#ifndef OPGEN_SPLIT_THREADS
#define OPGEN_SPLIT_THREADS 128
#endif
constexpr int kSplitThreads = OPGEN_SPLIT_THREADS;
// Threads of each block of a cluster row, two blocks an SM (128 registers a thread): two rows
// reducing at once on an SM. (Measured on an H100, rms_norm forward, bfloat16: 87-88% of a copy at
// 32768 elements against 84% with blocks of 512, one an SM; at 65536 the same, 85-88%.)
#ifndef OPGEN_CLUSTER_THREADS
#define OPGEN_CLUSTER_THREADS 256
#endif
constexpr int kClusterThreads = OPGEN_CLUSTER_THREADS;
static_assert(kClusterThreads == 256 || kClusterThreads == 512, "blocks of 256 or 512 threads in a cluster");
// Rows that up to kMostClusterBlocks blocks of kSmallClusterThreads hold run in such blocks instead:
// at 96 registers a thread five fit an SM where two of 256 do, so more rows are resident, and a
// whole row's last block leaves fewer threads idle. (Measured on an H200, bfloat16, % of a copy,
// A/B in one run, two rounds, with the mailboxes of 0.6.23, softmax / log-softmax / LayerNorm /
// rms_norm: rows of 40960 (10 blocks of 128) 90.4-91.2 / 86.7-86.8 / 83.1-83.4 / 89.3-89.9 against
// 92.2-92.4 / 77.2-77.5 / 81.7-82.1 / 90.0-90.1 in blocks of 256, 49152 (12) 93.0-93.2 / 81.8-82.2 /
// 84.4-84.6 / 90.5-90.7 against 89.8-91.2 / 76.2-76.6 / 80.6-81.0 / 89.6-90.1, 65536 (16) 91.5-91.8
// / 87.3-87.7 / 84.8-84.9 / 89.6-90.0 against 92.0-92.2 / 82.9-83.3 / 84.2-84.3 / 90.9-91.3. With
// the mailboxes of 0.6.22, which sent to each block in turn, up to 9 blocks:
// softmax / log-softmax / LayerNorm: rows of 20480 (5 blocks of 128) 93.8 / 91.9-92.1 / 86.6-87.0
// against 80.3-81.0 / 73.1-73.3 / 82.1, 24576 (6) 93.1-93.3 / 91.9-92.0 / 89.0-89.2 against
// 88.7-89.1 / 85.8-86.0 / 88.9-89.1, 32768 (8) 92.8-92.9 / 90.0-90.3 / 88.5-88.6 against 88.4-88.6 /
// 86.2-86.3 / 88.5-88.6, 36864 (9) 88.6 / 83.3-83.5 / 83.5-83.9 against 82.1 / 75.1-75.2 / 77.5-77.6;
// the LayerNorm backward 194-204 us against 201-230. Mixed at 40960 (10 blocks): forwards 90.6-91.3 /
// 86.0-86.1 / 81.7 against 87.8-87.9 / 83.0-83.1 / 82.7-83.1, log-softmax's backward 144 us against
// 136. Lower from 49152 (12): 65536 (16) 83.4-83.7 / 76.4-76.5 / 80.0-80.3 against 85.0-85.3 /
// 80.3-80.5 / 80.3-80.7.)
constexpr int kSmallClusterThreads = 128;
// On deep devices (kDeepBandwidthPerSM), a forward's whole rows that clusters of kClusterVectors a
// thread would hold only in more than kPortableClusterBlocks blocks of kSmallClusterThreads (past
// 32768 2-byte elements) run in clusters of kDeepClusterVectors a thread, prefetching: twice the
// bytes in flight a thread, half the blocks to reduce over. Only where that twin keeps its rows in
// registers without spilling (softmax's has 117 registers; log-softmax's spills 60 bytes, rms_norm's
// 544 holding its weight too) and fills its blocks (no idle threads). (Measured on an H200,
// bfloat16 softmax, % of a copy, blocks of 128, A/B in one run, two rounds, against 4-vector
// clusters of 128: rows of 40960 91.9-92.0 against 90.7-90.9, 49152 93.6-94.4 against 93.0-93.3,
// 65536 96.6-96.9 against 91.0-91.7; in another run against 4-vector clusters of 256, 65536 94.6-95.1
// against 92.0-92.2, and in blocks of 256, 89.5-91.8. Lost: at 36864, whose 4.5 blocks leave threads
// idle, 88.9-89.5 against 91.4-91.8; at 32768 (8 blocks of 128) 92.8-93.1 against 95.0-95.2;
// log-softmax's, spilling, 75.3-81.1 against 76.2-92.6 from 32768 to 65536.)
constexpr int kDeepClusterVectors = 8;
// Such rows that no whole number of blocks of kSmallClusterThreads (nor kClusterThreads) hold run in
// blocks of kLeastClusterThreads, where those do. (Measured on an H200, bfloat16, % of a copy, A/B
// in one run, two rounds: rows of 36864, 9 blocks of 64, log-softmax 89.6-89.8 against 86.0-86.4 in
// 4-vector clusters of 9 blocks of 128, softmax 91.4-91.7 against 91.1-91.6; at 40960, 10 blocks of
// 64 against 5 of 128, log-softmax 91.0-91.5 against 91.2-91.5, softmax 92.5-92.6 against
// 93.0-93.1.)
constexpr int kLeastClusterThreads = 64;
// (A portable cluster must hold a row of 8192 vectors: 65536 2-byte elements.)
static_assert(kClusterVectors * kClusterThreads >= 1024 && kStagedVectors * kClusterThreads >= 1024,
              "8 blocks of a cluster hold 8192 vectors");
// The most threads of a block per row holding kVecs vectors a thread (512 up to 4 vectors, 256 for
// 8), and the fewest such blocks an SM must fit, which sets the registers a thread may have: two
// blocks an SM for 2 vectors (64 registers: one block reduces while the other loads) and for 8
// (128); one block for 4 (128 registers). (A cluster's blocks: kClusterThreads.)
constexpr int register_row_block(int kVecs) {
  return kVecs <= 4 ? 512 : 256;
}
constexpr int register_row_min_blocks(int kVecs) {
  return kVecs == 4 ? 1 : 2;
}
// The inputs a functor may have broadcast (the bits of kBroadcast).
constexpr int broadcast_count(unsigned broadcast) {
  int inputs = 0;
  for (; broadcast != 0; broadcast &= broadcast - 1) {
    ++inputs;
  }
  return inputs;
}
// Whether a functor has two broadcast inputs or more (a LayerNorm's weight and bias), which it holds
// in registers beside its rows.
constexpr bool wide_broadcast(unsigned broadcast) {
  return broadcast_count(broadcast) >= 2;
}
// The most threads of a short block that prefetches (rows of up to kShortBlockRow vectors, 2 a
// thread), and for such blocks of a functor with wide broadcasts, the fewest resident an SM: 128
// registers a thread, where 64 spill. (Measured on an H200, bfloat16 rows of 1024: the LayerNorm
// backward 55.6-55.9% of a copy of its row tensors against 25.8-25.9% staged; its forward 71.9-72.5%
// of a copy against 82.8-83.5% staged, which it keeps: see launch_rows.)
constexpr int kShortPrefetchThreads = 128;
constexpr int kWidePrefetchMinBlocks = 4;

// The register kernel's rows other than lanes of a warp: a block each, a cluster of blocks each, or
// (a functor that reduces nothing) blocks that each take a part of a row, gridDim.y parts a row.
constexpr int kBlockRow = 0;
constexpr int kClusterRow = -1;
constexpr int kSplitRow = -2;
// Blocks of a cluster: up to 8 on any device with clusters (the portable size), up to 16 where the
// device allows (an H100 does: non-portable clusters).
constexpr int kPortableClusterBlocks = 8;
constexpr int kMostClusterBlocks = 16;
static_assert(kMostClusterBlocks <= 32, "a lane of a warp for each block's total (ClusterRow)");
// The most blocks of a cluster that reads a wide broadcast where used (a LayerNorm forward's
// kAtUse cluster); longer rows stage theirs. (Measured on an H200, bfloat16 LayerNorm, % of a copy,
// three runs: rows of 65536, 8 blocks, staged 69.7-70.2 against 65.5-66.9 read at use; of 32768, 4
// blocks, 75.3 against 79.6-80.4 (76.0-76.6 staging two rows ahead). Softmax, which holds no
// weights, prefetches at both.)
constexpr int kAtUseClusterBlocks = 4;

// A row spread over the blocks of a thread block cluster (compute capability 9.0 and up): a
// reduction combines the blocks' totals in the same order in every block. Each block sends its total
// into every block's mailbox with st.async (thread r to block r), which counts the bytes on that
// block's mbarrier; a block waits on its own mbarrier, then each warp combines its mailbox, a lane a
// block (warp_combine: log2(blocks) steps, not blocks - 1 in turn). No cluster barrier: its
// release semantics would wait for the row's stores to reach L2 at every reduction. The mailboxes
// alternate between two slots: another block writes this block's slot s again two reductions later,
// once it has this block's total of the reduction between, which this block sends only after its
// threads have read slot s (the block reduction's barrier). (start() must run before the first
// reduction: a block's mailbox is written by the others once its mbarriers are initialized.)
// (Measured on an H200, bfloat16, % of a copy, A/B in one run, two rounds, against 0.6.22's thread 0
// sending to each block in turn and each thread combining the mailbox in turn: softmax 92.0-92.2
// against 85.8-86.7 at 65536, 92.2-92.4 against 86.7-86.9 at 40960; LayerNorm 84.2-84.3 against
// 81.8 at 65536, its backward 207-209 us against 215-221. Softmax's cluster twin has 80 registers
// against 96: 45 clusters of 8 blocks of 256 resident against 30. Log-softmax in blocks of 256 lost
// at 40960, 77.2-77.5 against 81.9-82.3; in the blocks of 128 it now takes, 86.0-86.8.)
struct ClusterMailbox {
  alignas(16) unsigned int words[2][kMostClusterBlocks][4];  // 16 bytes a block's total at most
  alignas(8) unsigned long long arrived[2];                  // an mbarrier a slot
};

__device__ __forceinline__ ClusterMailbox& cluster_mailbox() {
  __shared__ ClusterMailbox mailbox;
  return mailbox;
}

__device__ __forceinline__ unsigned int shared_address(const void* pointer) {
  return static_cast<unsigned int>(__cvta_generic_to_shared(pointer));
}

struct ClusterRow {
  static constexpr bool kLaneRow = false;
  mutable unsigned int reductions = 0;

  __device__ __forceinline__ void start() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (threadIdx.x == 0) {
      for (int s = 0; s < 2; ++s) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(&cluster_mailbox().arrived[s]))
                     : "memory");
      }
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    // Every block's mbarriers are ready before any send: this arrival, and the wait before the first
    // send (so that the first row's loads are in flight meanwhile). Relaxed: a release would wait
    // for those loads.
    asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
    started = true;
#endif
  }

  template <typename T, typename Combine>
  __device__ __forceinline__ T reduce(T value, const Combine& combine) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const T total = block_reduce(value, combine);
    auto cluster = cooperative_groups::this_cluster();
    static_assert(sizeof(T) <= 16, "a total of at most 16 bytes");
    constexpr int kWords = (sizeof(T) + 3) / 4;
    ClusterMailbox& mailbox = cluster_mailbox();
    const unsigned int slot = reductions % 2, parity = (reductions / 2) % 2;
    ++reductions;
    const unsigned int blocks = cluster.num_blocks();
    const unsigned int arrived = shared_address(&mailbox.arrived[slot]);
    ready();
    if (threadIdx.x == 0) {
      asm volatile("{ .reg .b64 state; mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1; }" ::"r"(arrived),
                   "r"(blocks * unsigned(4 * kWords))
                   : "memory");
    }
    if (threadIdx.x < blocks) {  // (every thread has the block's total)
      unsigned int words[kWords] = {};
      memcpy(words, &total, sizeof(T));
      const unsigned int box = shared_address(mailbox.words[slot][cluster.block_rank()]);
      unsigned int their_box, their_arrived;
      asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(their_box) : "r"(box), "r"(threadIdx.x));
      asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(their_arrived) : "r"(arrived), "r"(threadIdx.x));
#pragma unroll
      for (int w = 0; w < kWords; ++w) {
        asm volatile(
            "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(their_box + 4 * w),
            "r"(words[w]), "r"(their_arrived)
            : "memory");
      }
    }
    asm volatile(
        "{ .reg .pred done;\n"
        "wait: mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra wait; }" ::"r"(arrived),
        "r"(parity)
        : "memory");
    const unsigned int lane = threadIdx.x % kRowWarp;
    T theirs;
    memcpy(&theirs, mailbox.words[slot][lane < blocks ? lane : 0], sizeof(T));
    return warp_combine<true>(theirs, combine, int(blocks));
#else
    __trap();  // launched only on devices with clusters
    return value;
#endif
  }

  // Orders the row's stores before later reads of them, across the cluster (a full cluster barrier).
  __device__ __forceinline__ void sync() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    ready();
    cooperative_groups::this_cluster().sync();
#endif
  }

  // Before a block exits: start()'s arrival is waited on even if the functor never reduced. (No
  // cluster barrier: every send into a block's mailbox lands before that block's wait for it returns,
  // so none is in flight once its last reduction is done.)
  __device__ __forceinline__ void finish() const {
    ready();
  }

 private:
  mutable bool started = false;  // start() arrived, and no wait on it yet

  __device__ __forceinline__ void ready() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (started) {
      asm volatile("barrier.cluster.wait;" ::: "memory");  // start()'s arrival, in every block
      started = false;
    }
#endif
  }
};

// The threads of a row split over blocks (kSplitRow): launched only for functors that never reduce
// or sync (probe_row_use says which), so these are never reached.
struct IndependentRow {
  static constexpr bool kLaneRow = false;

  template <typename T, typename Combine>
  __device__ __forceinline__ T reduce(T value, const Combine&) const {
    __trap();
    return value;
  }

  __device__ __forceinline__ void sync() const {
    __trap();
  }
};

// Whether input i is one every row shares (a broadcast weight), held across rows: its row_stride is
// 0, and kBroadcast (kernel_types.h) says it may be.
template <unsigned kBroadcast, typename S, int N>
__host__ __device__ __forceinline__ bool broadcast_input(const RowTensors<const S, N>& in, int i) {
  return ((kBroadcast >> i) & 1u) != 0 && in.row_stride[i] == 0;
}

// Whether every input kBroadcast names is broadcast in this call, in whole 16-byte vectors (a kernel
// may then know it when compiled, and read them a vector at a time: kAtUse in register_rows).
template <unsigned kBroadcast, typename S, int N>
bool named_broadcasts_broadcast(const RowTensors<const S, N>& in) {
  for (int i = 0; i < N; ++i) {
    const bool named = ((kBroadcast >> i) & 1u) != 0;
    if (named && (!broadcast_input<kBroadcast>(in, i) || in.cols[i] * int64_t(sizeof(S)) % 16 != 0)) {
      return false;
    }
  }
  return true;
}

// Input i is broadcast: known when compiled where kKnown (named_broadcasts_broadcast held at the
// launch), else asked of its row stride.
template <unsigned kBroadcast, bool kKnown, typename S, int N>
__device__ __forceinline__ bool held_broadcast(const RowTensors<const S, N>& in, int i) {
  if constexpr (kKnown) {
    return ((kBroadcast >> i) & 1u) != 0;
  } else {
    return broadcast_input<kBroadcast>(in, i);
  }
}

// The inputs a kernel copies row by row (not broadcast ones, which every row shares).
template <unsigned kBroadcast, typename S, int N>
__host__ __device__ __forceinline__ int staged_row_inputs(const RowTensors<const S, N>& in) {
  int staged = 0;
  for (int i = 0; i < N; ++i) {
    staged += broadcast_input<kBroadcast>(in, i) ? 0 : 1;
  }
  return staged;
}

// The next row's inputs, where register_rows prefetches them into registers.
template <typename S, int kVecs, int N, bool kAtUse, bool kWhole>
struct PrefetchedInputs {
  RegisterIn<S, kVecs, kAtUse, kWhole> in[N > 0 ? N : 1];
};
struct NoPrefetch {};

// The rows of a register kernel and the threads of each: kThreads lanes of a warp per row (several
// rows a block), a block per row (kBlockRow), or a cluster of blocks per row (kClusterRow). Each
// thread holds kVecs 16-byte vectors of each of the row's tensors in registers (every tensor's rows
// start on 16-byte boundaries). Tensors are indexed by the packs I and O, never by a loop variable,
// so that they stay in registers.
template <unsigned kBroadcast, int kThreads, int kVecs, bool kPrefetch, int kAhead, bool kAtUse, bool kWhole,
          bool kRereads, typename Op, typename S, int N, int K, std::size_t... I, std::size_t... O>
__device__ __forceinline__ void register_rows(const Op& op, int64_t rows, const RowTensors<const S, N>& in,
                                              const RowTensors<S, K>& out, std::index_sequence<I...>,
                                              std::index_sequence<O...>) {
  static_assert(kRowWarp % (kThreads > 0 ? kThreads : 1) == 0, "a row's threads are lanes of one warp, or blocks");
  static_assert(kAhead == 0 || (kThreads <= 0 && !kPrefetch), "blocks and clusters stage rows ahead, or prefetch");
  constexpr int kVec = RowLayout<S, kVecs>::kVec;
  int lanes = kThreads > 0 ? kThreads : int(blockDim.x), lane = int(threadIdx.x) % lanes;
  int64_t first_row = 0, row_step = 0;
  // A whole row's threads (kWhole): as many as hold it, kVecs vectors each; the rest of its last warp
  // or block idle.
  const int whole_row_lanes = kWhole ? int((N > 0 ? in.cols[0] : out.cols[0]) / (kVecs * kVec)) : 0;
  if constexpr (kThreads == kSplitRow) {
    lane += int(blockIdx.y) * lanes;
    lanes *= int(gridDim.y);
    first_row = blockIdx.x;
    row_step = gridDim.x;
  } else if constexpr (kThreads == kClusterRow) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const auto cluster = cooperative_groups::this_cluster();
    lane += int(cluster.block_rank()) * lanes;
    lanes = kWhole ? whole_row_lanes : lanes * int(cluster.num_blocks());
    first_row = blockIdx.x / cluster.num_blocks();
    row_step = gridDim.x / cluster.num_blocks();
#endif
  } else {
    const int rows_per_block = kThreads > 0 ? kRegisterBlock / kThreads : 1;
    first_row = int64_t(blockIdx.x) * rows_per_block + threadIdx.x / lanes;
    row_step = int64_t(gridDim.x) * rows_per_block;
    if constexpr (kWhole && kThreads == kBlockRow) {
      lanes = whole_row_lanes;
    }
  }
  // An idle thread holds the elements of another (of lane % lanes): its loads and any plain-index
  // reads stay in the row, with no branch (RegisterRow).
  const bool holds = !kWhole || lane < lanes;
  if (!holds) {
    lane %= lanes;
  }
  const int64_t base = int64_t(lane) * kVec, stride = int64_t(lanes) * kVec;
  const auto group = [&] {
    if constexpr (kThreads == kClusterRow) {
      return ClusterRow{};
    } else if constexpr (kThreads == kSplitRow) {
      return IndependentRow{};
    } else if constexpr (kThreads == kBlockRow) {
      return Row<0, kWhole>{lane, lanes, 0u};
    } else {
      return Row<kThreads>{lane, lanes, lanes_mask<kThreads>(lane)};
    }
  }();
  // kRereads: each loop rereads the row's elements from its vectors (RegisterRow::next_pass, whose
  // zero is rows' sign bit: rows > 0); else the compiler sees a zero and may keep them converted.
  const RegisterRow<RowLayout<S, kVecs>, std::remove_const_t<decltype(group)>, kWhole> row{
      base, stride, group, holds, kRereads ? unsigned(uint64_t(rows) >> 63) : 0u};
  if constexpr (kThreads == kClusterRow) {
    group.start();
  }
  RegisterIn<S, kVecs, kAtUse, kWhole> ins[] = {
      RegisterIn<S, kVecs, kAtUse, kWhole>{in.data[I], in.cols[I], base, stride}...};
  RegisterOut<S, kVecs, kWhole> outs[] = {RegisterOut<S, kVecs, kWhole>{out.data[O], out.cols[O], base, stride}...};
  // A broadcast input (a weight) has the same vectors for every row. (Read from L1 where used
  // instead, to free registers, LayerNorm ran at 33-53% of a copy against 54-82%, on an H200.)
  // kAtUse: read where used instead (RegisterIn::use), a vector at a time, which frees their
  // registers for prefetching. (Measured on an H200, a LayerNorm of bfloat16 rows in clusters, %
  // of a copy, two runs: 62.6-62.7 against 56.7-56.9 at 32768 elements, 54.1-54.3 against 52.8-52.9
  // at 65536, where it would spill prefetching and staged its rows instead. In the block kernels
  // it was mixed: 2.5-3.5 points better at 2048 and 4096, 1-3 worse at 8192 and 16384: clusters
  // only, so far.)
  if constexpr (kAtUse) {
    ((ins[I].use.at_use = held_broadcast<kBroadcast, kAtUse>(in, I)), ...);
  } else {
    ((broadcast_input<kBroadcast>(in, I) ? ins[I].load(in.data[I]) : void()), ...);
  }
  const auto row_of = [&](auto i, int64_t r) { return in.data[i] + r * in.row_stride[i]; };
  // kAhead: the next kAhead rows' inputs are being copied into shared memory (into one of kAhead + 1
  // stages, each holding this thread's vectors of each row input in slots of its own) while this row
  // is worked on, so their loads are in flight through its reductions and stores, at no register cost.
  // kPrefetch: the next row's inputs are loaded into a second set of registers instead.
  extern __shared__ uint4 staged_vectors[];
  constexpr unsigned int kNoSlot = ~0u;
  // The shared-space address of this thread's first vector of each staged input in the first stage
  // (kNoSlot: a broadcast input, not staged), and the bytes from one stage to the next.
  unsigned int slot[N > 0 ? N : 1] = {};
  unsigned int stage_bytes = 0;
  if constexpr (kAhead > 0) {
    const unsigned int first = shared_address(staged_vectors) + 16u * threadIdx.x;
    unsigned int staged = 0;
    ((slot[I] = broadcast_input<kBroadcast>(in, I) ? kNoSlot : first + 16u * (staged++) * kVecs * blockDim.x), ...);
    stage_bytes = 16u * staged * kVecs * blockDim.x;
  }
  const auto stage_row = [&](int64_t r, int stage) {
    if (r < rows) {
      ((slot[I] != kNoSlot ? ins[I].stage(row_of(I, r), slot[I] + unsigned(stage) * stage_bytes) : void()), ...);
    }
    __pipeline_commit();  // (empty past the last row: the count of groups in flight stays kAhead)
  };
  if constexpr (kAhead > 0) {
    for (int a = 0; a < kAhead; ++a) {
      stage_row(first_row + a * row_step, a);
    }
  }
  std::conditional_t<kPrefetch, PrefetchedInputs<S, kVecs, N, kAtUse, kWhole>, NoPrefetch> next;
  if constexpr (kPrefetch) {
    ((next.in[I] = ins[I]), ...);
    ((!held_broadcast<kBroadcast, kAtUse>(in, I) && first_row < rows ? next.in[I].load(row_of(I, first_row)) : void()),
     ...);
  }
  int stage = 0;
  for (int64_t r = first_row; r < rows; r += row_step) {
    if constexpr (kAhead > 0) {
      // The stage refilled is the one the previous row was taken from (this thread's own reads).
      stage_row(r + kAhead * row_step, stage == 0 ? kAhead : stage - 1);
      __pipeline_wait_prior(kAhead);  // this row's copies landed
      ((slot[I] != kNoSlot ? ins[I].load_staged(row_of(I, r), slot[I] + unsigned(stage) * stage_bytes) : void()), ...);
      stage = stage == kAhead ? 0 : stage + 1;
    } else if constexpr (kPrefetch) {
      ((!held_broadcast<kBroadcast, kAtUse>(in, I) ? (ins[I] = next.in[I], void()) : void()), ...);
      if (r + row_step < rows) {
        ((!held_broadcast<kBroadcast, kAtUse>(in, I) ? next.in[I].load(row_of(I, r + row_step)) : void()), ...);
      }
    } else {
      ((!held_broadcast<kBroadcast, kAtUse>(in, I) ? ins[I].load(row_of(I, r)) : void()), ...);
    }
    ((outs[O].data = out.data[O] == nullptr ? nullptr : out.data[O] + r * out.row_stride[O],
      outs[O].in_registers = false),
     ...);
    if constexpr (kAtUse) {
      ((ins[I].use.cached = -1), ...);  // a constant again: the compiler folds which vector each read needs
    }
    op(row, ins[I]..., outs[O]...);
    (outs[O].store(holds ? outs[O].data : nullptr), ...);  // (an idle thread's are another's)
  }
  if constexpr (kThreads == kClusterRow) {
    group.finish();
  }
}

// (A block per row: register_row_block and register_row_min_blocks set its register budget; a cluster
// per row: kClusterThreads, 128 registers a thread.)
template <unsigned kBroadcast, int kThreads, int kVecs, typename Op, typename S, int N, int K, bool kPrefetch = false,
          int kAhead = 0, bool kAtUse = false, bool kWhole = false, bool kRereads = false>
__global__ void __launch_bounds__(kThreads == kClusterRow ? kClusterThreads
                                  : kThreads == kSplitRow ? kSplitThreads
                                  : kThreads == kBlockRow && kPrefetch && wide_broadcast(kBroadcast)
                                      ? kShortPrefetchThreads
                                  : kThreads == kBlockRow ? register_row_block(kVecs)
                                                          : kRegisterBlock,
                                  kThreads == kClusterRow ? 512 / kClusterThreads
                                  : kThreads == kSplitRow ? 1024 / kSplitThreads
                                  : kThreads == kBlockRow && kPrefetch && wide_broadcast(kBroadcast)
                                      ? kWidePrefetchMinBlocks
                                  : kThreads == kBlockRow ? register_row_min_blocks(kVecs)
                                                          : 1)
    register_rows_kernel(Op op, int64_t rows, RowTensors<const S, N> in, RowTensors<S, K> out) {
  register_rows<kBroadcast, kThreads, kVecs, kPrefetch, kAhead, kAtUse, kWhole, kRereads>(
      op, rows, in, out, std::make_index_sequence<N>{}, std::make_index_sequence<K>{});
}

// A register kernel and its twin for whole rows (kWhole: no bounds checks, nor the code and registers
// that ragged rows' ends take: a softmax's staging block 888 instructions and 64 registers against
// 2312 and 90), both compiled (for float, half and bfloat16: softmax's CUDA file then compiles in 53 s
// against 31 s, sm_90a on two cores): launch_rows runs the twin where it may.
template <unsigned kBroadcast, int kThreads, int kVecs, typename Op, typename S, int N, int K, bool kPrefetch = false,
          int kAhead = 0, bool kAtUse = false>
struct RegisterKernel {
  // Whether the twin exists (not for double, for compile time): launch_rows runs it only where it
  // does, and kWholeRows is then the kernel itself (taking a twin's address here would compile it).
  static constexpr bool kTwinned = sizeof(S) < 8;
  static constexpr auto kRagged =
      register_rows_kernel<kBroadcast, kThreads, kVecs, Op, S, N, K, kPrefetch, kAhead, kAtUse, false>;
  static constexpr auto kWholeRows =
      register_rows_kernel<kBroadcast, kThreads, kVecs, Op, S, N, K, kPrefetch, kAhead, kAtUse, kTwinned>;
};

// A register kernel's twin alone, for a launch that only whole rows take (nothing else compiled);
// kRereads: its loops reread the row's elements (RegisterRow::next_pass).
template <unsigned kBroadcast, int kThreads, int kVecs, typename Op, typename S, int N, int K, bool kPrefetch = false,
          bool kRereads = false>
struct TwinOnly {
  static constexpr bool kTwinned = true;
  static constexpr auto kWholeRows =
      register_rows_kernel<kBroadcast, kThreads, kVecs, Op, S, N, K, kPrefetch, 0, false, true, kRereads>;
};

// Blocks of `threads` that a multiprocessor holds at once (registers, shared memory, threads).
template <typename Kernel>
int blocks_per_multiprocessor(Kernel kernel, int threads, int64_t shared_bytes) {
  int per_sm = 0;
  OPGEN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, size_t(shared_bytes)));
  return per_sm;
}

// Blocks to launch: as many as stay resident together (each loops over rows), for `rows_per_block`
// rows each at most. A block that waited for a slot would start only when another had finished.
template <typename Kernel>
unsigned int resident_blocks(Kernel kernel, int threads, int64_t shared_bytes, int64_t rows, int64_t rows_per_block) {
  const int per_sm = blocks_per_multiprocessor(kernel, threads, shared_bytes);
  const int64_t needed = (rows + rows_per_block - 1) / rows_per_block;
  return static_cast<unsigned int>(std::min<int64_t>(needed, int64_t(std::max(per_sm, 1)) * multiprocessor_count()));
}

// What CUDA says of a kernel (its registers, its spills, what it was compiled for), asked once.
template <auto kKernel>
const cudaFuncAttributes& kernel_attributes() {
  static const cudaFuncAttributes attributes = [] {
    cudaFuncAttributes found{};
    OPGEN_CUDA_CHECK(cudaFuncGetAttributes(&found, kKernel));
    return found;
  }();
  return attributes;
}

// Whether a register kernel keeps its rows in registers: at most a few spilled words (ptxas spills
// what a functor with many inputs, outputs or temporaries cannot fit in the registers a thread of
// that block size may have).
inline bool fits_in_registers(const cudaFuncAttributes& attributes) {
  return attributes.localSizeBytes <= 64;
}

template <auto kKernel>
bool fits_in_registers() {
  return fits_in_registers(kernel_attributes<kKernel>());
}

// Whether the code running a cluster kernel was compiled for clusters (compute capability 9.0): a
// build for older GPUs only runs on a newer one from its PTX, where ClusterRow traps.
template <auto kKernel>
bool built_for_clusters() {
  return kernel_attributes<kKernel>().ptxVersion >= 90;
}

// Lets kernel have `bytes` of dynamic shared memory: past 48 KB with its static shared memory (at
// most 1 KB here: the reductions'), a kernel must ask.
template <typename Kernel>
void allow_shared_bytes(Kernel kernel, int64_t bytes) {
  if (bytes > 47 * 1024) {
    OPGEN_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  }
}

// Launches a cluster kernel: blocks_per_row blocks of `threads` a cluster, as many clusters as stay
// resident (each loops over rows). False, launching nothing, where no such cluster fits the device.
template <typename Kernel, typename Op, typename S, int N, int K>
bool launch_clusters(Kernel kernel, cudaStream_t stream, int threads, int blocks_per_row, int64_t shared_bytes,
                     const Op& op, int64_t rows, const RowTensors<const S, N>& in, const RowTensors<S, K>& out) {
  allow_shared_bytes(kernel, shared_bytes);
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = unsigned(blocks_per_row);
  cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(unsigned(blocks_per_row));
  config.blockDim = dim3(unsigned(threads));
  config.dynamicSmemBytes = size_t(shared_bytes);
  config.stream = stream;
  config.attrs = &cluster;
  config.numAttrs = 1;
  if (blocks_per_row > kPortableClusterBlocks) {
    OPGEN_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  }
  int resident = 0;
  OPGEN_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&resident, kernel, &config));
  if (resident == 0) {
    return false;  // no such cluster fits on this device (a non-portable size it does not allow)
  }
  config.gridDim = dim3(unsigned(std::min<int64_t>(rows, resident) * blocks_per_row));
  OPGEN_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, op, rows, in, out));
  return true;
}

// The fewest of `fewest`, twice that, ... up to `most` parts of `each` that cover `needed` (threads of
// a block, blocks of a cluster).
inline int64_t power_of_two_covering(int64_t needed, int64_t each, int64_t fewest, int64_t most) {
  int64_t count = fewest;
  while (count < most && count * each < needed) {
    count *= 2;
  }
  return count;
}

// Launches op over `rows` rows on `stream` and checks the launch. Unstaged, op writes its outputs
// in place: an output nobody asked for must then be given a buffer (the host code does).
// kBroadcast: the inputs that may be broadcast (broadcast_mask in kernel_types.h: the generated
// launches pass those declared so), or kAnyBroadcast. (Measured on an H100, bfloat16, same-run A/B:
// log-softmax's backward, whose x and grad the register kernels no longer keep across rows in case
// they were broadcast, 85.6-86.6% of a copy from 4096 to 16384 elements against 76.8-80.2%; the
// register room let row.softmax keep its exps.)
template <unsigned kBroadcast = kAnyBroadcast, typename Op, typename S, int N, int K>
void launch_rows(cudaStream_t stream, const Op& op, int64_t rows, const RowTensors<const S, N>& in,
                 const RowTensors<S, K>& out) {
  static_assert(N <= 32, "kBroadcast has a bit for each of up to 32 inputs");
  if (rows == 0) {
    return;
  }
  // The register kernels' threads hold the row's vectors that the functor's loops visit, and its
  // outputs: an input read past them only by plain index (a gated activation's second half, x[j + d])
  // is read where it is. (Measured on an H100, bfloat16, input rows of 2048 to 131072: gelu_and_mul
  // 92.9-93.6% of a copy, silu_and_mul 93.5-94.1%, against 79.5-81.4% and 87.7-90.0% with threads
  // holding the second half too, with nothing to do.)
  const RowUse use = probe_row_use(op, in, out, std::make_index_sequence<N>{}, std::make_index_sequence<K>{});
  int64_t widest = 1, visited = use.longest, shared = 0;
  for (int i = 0; i < N; ++i) {
    widest = std::max(widest, in.cols[i]);
    shared += in.row_stride[i] != 0 ? staged_elements<S>(in.cols[i]) : 0;
  }
  for (int k = 0; k < K; ++k) {
    widest = std::max(widest, out.cols[k]);
    visited = std::max(visited, out.cols[k]);
  }
  shared *= int64_t(sizeof(S));
  // The shortest rows (up to 16 16-byte vectors: 128 elements of 2 bytes), aligned, in registers: 1,
  // 4 or 8 threads a row, 2 vectors a thread, 16-byte loads and stores, unless the functor needs more
  // registers than that leaves (they would spill). (Measured on an H100: up to 1.9x faster than part
  // of a warp per row there; no faster from 256 elements of 2 bytes on, slower on rows not aligned.)
  const int64_t vectors = std::max<int64_t>(1, (std::min(visited, widest) * int64_t(sizeof(S)) + 15) / 16);
  // A block for every rows_per_block rows, or as many blocks as stay resident, which loop over the
  // rows: blocks of 8 warps and up holding 2 vectors a thread (they keep the weight and skip block
  // starts), blocks of 2 vectors a thread of a functor with two broadcast inputs or more (a block a
  // row would read them all from L2 with every row: a LayerNorm's weight and bias triple its reads),
  // and blocks of less than 4 KB of rows (too little work to pay for a start). (Measured on an H100:
  // otherwise a grid of all the rows' blocks keeps memory busier, finished blocks making room for new
  // ones: rms_norm and softmax, bfloat16 rows of 1024, 99% of a copy against 94% resident; LayerNorm
  // 86% against 90%, at 2048 84% against 88%; for blocks of 8 vectors a thread too, rms_norm rows of
  // 16384: 87-90% against 83-84% resident.) (A kernel staging rows ahead, in shared_bytes, loops over
  // rows: its blocks are resident.) A kernel's twin (block_rows) runs as the kernel `as` would, in
  // blocks of as_threads: resident where it would be, and with no more blocks an SM.
  const int staged_inputs = staged_row_inputs<kBroadcast>(in), broadcast_inputs = N - staged_inputs;
  using RowKernel = void (*)(Op, int64_t, RowTensors<const S, N>, RowTensors<S, K>);
  // A whole-row twin chosen at run time, and what CUDA says of it (none: the kernels' own).
  struct RowTwin {
    RowKernel kernel = nullptr;
    const cudaFuncAttributes* attributes = nullptr;
  };
  const auto registers = [&](RowKernel kernel, int threads, int64_t rows_per_block, int64_t shared_bytes = 0,
                             int vectors_a_thread = 2, bool prefetching = false, RowKernel as = nullptr,
                             int as_threads = 0) {
    const int resident_threads = as != nullptr ? as_threads : threads;
    const bool resident =
        shared_bytes > 0 || prefetching ||
        (rows_per_block == 1 ? vectors_a_thread == 2 && (resident_threads >= 8 * kRowWarp || broadcast_inputs >= 2)
                             : rows_per_block * vectors * 16 < 4096);
    allow_shared_bytes(kernel, shared_bytes);
    auto blocks =
        resident
            ? resident_blocks(kernel, threads, shared_bytes, rows, rows_per_block)
            : static_cast<unsigned int>(std::min<int64_t>((rows + rows_per_block - 1) / rows_per_block, INT32_MAX));
    if (resident && as != nullptr) {
      allow_shared_bytes(as, shared_bytes);
      blocks = std::min(blocks, resident_blocks(as, threads, shared_bytes, rows, rows_per_block));
    }
    kernel<<<blocks, threads, size_t(shared_bytes), stream>>>(op, rows, in, out);
    OPGEN_CUDA_LAUNCH_CHECK();
  };
  // The shared memory of a staging kernel of `threads` threads a block (ahead + 1 stages of
  // kStagedVectors 16-byte vectors a thread of each row input), and whether a block may have
  // `bytes` (beside its reductions' own).
  const auto staged_bytes = [&](int threads, int ahead = kStagedAhead) {
    return int64_t(ahead + 1) * staged_inputs * kStagedVectors * threads * 16;
  };
  const auto shared_fits = [](int64_t bytes) {
    return bytes <= device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>() - 1024;
  };
  // Whole rows, for a kernel's twin (RegisterKernel): every row tensor as wide, a whole number of
  // `each` elements (a thread's vectors_a_thread vectors), and every loop of the functor over all of
  // it (so nothing is checked against a row's end). The threads that hold such a row exactly, where
  // the twin fits in registers too; else 0 (the kernel runs). (Measured on an H200, bfloat16, % of a
  // copy, A/B in one run, two rounds: softmax 84.5-84.6 -> 88.0-88.6 at 16384, 77.3-77.4 -> 88.6-89.2
  // at 32768, 69.1-69.6 -> 85.0-85.6 at 65536; LayerNorm 69.4-69.6 -> 80.9 at 65536; rows of 5120,
  // 12288 and 40960, which the kernels held in 8 and 16 warps and 8 blocks, some threads ragged,
  // and the twins in 5 and 12 warps and 5 blocks: LayerNorm 51.8 -> 94.5, 61.0 -> 92.6, 36.6 -> 82.2,
  // softmax 49.3 -> 92.8, 53.0 -> 86.2, 34.5 -> 86.9. Lost: softmax at 8192, 90.0-90.4 -> 87.9-88.3,
  // also with the twin held to the kernel's blocks an SM.)
  // (twin: the attributes of the twin that runs, where not kernels' own: RowTwin.)
  const auto whole_row_threads = [&](auto kernels, int vectors_a_thread,
                                     const cudaFuncAttributes* twin = nullptr) -> int64_t {
    using Kernels = decltype(kernels);
    const int64_t cols = N > 0 ? in.cols[0] : out.cols[0], each = vectors_a_thread * (16 / int64_t(sizeof(S)));
    bool whole = cols > 0 && cols % each == 0 && use.shortest >= cols;
    for (int i = 0; i < N; ++i) {
      whole = whole && in.cols[i] == cols;
    }
    for (int k = 0; k < K; ++k) {
      whole = whole && out.cols[k] == cols;
    }
    return whole && fits_in_registers(twin != nullptr ? *twin : kernel_attributes<Kernels::kWholeRows>()) ? cols / each
                                                                                                          : 0;
  };
  // The threads a block-per-row twin launches with: the row's, in whole warps; 0 where it does not run.
  const auto twin_block_threads = [&](auto kernels, int vectors_a_thread) {
    return int((whole_row_threads(kernels, vectors_a_thread) + kRowWarp - 1) / kRowWarp * kRowWarp);
  };
  // A block per row of `threads` (a power of two), vectors_a_thread vectors a thread; whole rows run
  // the twin, with as many warps as they need (the last one's threads past the row idle; shared
  // memory staging rows in proportion), resident where the kernel's blocks would be, and then no
  // more of them an SM than the kernel's registers allow: the launches were measured so (a staging
  // block of 512 threads is alone on its SM, kLoneStagedAhead). (Measured on an H200, bfloat16, % of
  // a copy, one build, two rounds: softmax rows of 16384 91.9-92.0 held to the kernel's one block an
  // SM against 87.8-88.0 at the twin's two; the other forwards from 1024 to 65536 within a point
  // either way. Idle threads against the ragged kernel, A/B in one run, two rounds, LayerNorm /
  // softmax / log-softmax: rows of 2880 94.8 / 92.9 / 92.1 against 55.7 / 57.5 / 54.2, of 2304
  // 93.3 / 95.0 / 93.1 against 44.5 / 44.8 / 40.9, of 1152 82.7 / 88.8 / 80.3 against 41.8 / 38.9 /
  // 35.6.)
  const auto block_rows = [&](auto kernels, int threads, int64_t shared_bytes, int vectors_a_thread,
                              bool prefetching = false) {
    using Kernels = decltype(kernels);
    if constexpr (Kernels::kTwinned) {
      const int warp_threads = twin_block_threads(kernels, vectors_a_thread);
      if (warp_threads > 0 && warp_threads <= threads) {
        return registers(Kernels::kWholeRows, warp_threads, 1, shared_bytes / threads * warp_threads, vectors_a_thread,
                         prefetching, Kernels::kRagged, threads);
      }
    }
    registers(Kernels::kRagged, threads, 1, shared_bytes, vectors_a_thread, prefetching);
  };
  constexpr auto k1 = register_rows_kernel<kBroadcast, 1, 2, Op, S, N, K>;
  constexpr auto k4 = register_rows_kernel<kBroadcast, 4, 2, Op, S, N, K>;
  constexpr auto k8 = register_rows_kernel<kBroadcast, 8, 2, Op, S, N, K>;
  bool aligned = true;  // every row starts on a 16-byte boundary: the register kernels' vector accesses
  for (int i = 0; i < N; ++i) {
    aligned = aligned && vector_aligned<S>(in.data[i], in.row_stride[i]);
  }
  for (int k = 0; k < K; ++k) {
    aligned = aligned && vector_aligned<S>(out.data[k], out.row_stride[k]);
  }
  if (aligned && vectors <= 2 && fits_in_registers<k1>()) {
    return registers(k1, kRegisterBlock, kRegisterBlock);
  }
  if (aligned && vectors <= 8 && fits_in_registers<k4>()) {
    return registers(k4, kRegisterBlock, kRegisterBlock / 4);
  }
  if (aligned && vectors <= 16 && fits_in_registers<k8>()) {
    return registers(k8, kRegisterBlock, kRegisterBlock / 8);
  }
  // A functor that reduces nothing (a gated activation, a rotation): its rows split over blocks of
  // up to kSplitThreads, gridDim.y blocks a row.
  constexpr auto kSplit = register_rows_kernel<kBroadcast, kSplitRow, kSplitVectors, Op, S, N, K>;
  if (aligned && !use.across && fits_in_registers<kSplit>()) {
    const int threads = int(power_of_two_covering(vectors, kSplitVectors, kRowWarp, kSplitThreads));
    const int64_t parts = (vectors + int64_t(threads) * kSplitVectors - 1) / (int64_t(threads) * kSplitVectors);
    if (parts <= 65535) {  // gridDim.y's most
      // As many blocks as stay resident, each looping over rows: a broadcast input (a rotation's cos
      // and sin) is then loaded once a block, not once a row.
      const unsigned int row_blocks =
          std::max(1u, resident_blocks(kSplit, threads, 0, rows * parts, 1) / unsigned(parts));
      const dim3 grid(row_blocks, static_cast<unsigned int>(parts));
      kSplit<<<grid, threads, 0, stream>>>(op, rows, in, out);
      OPGEN_CUDA_LAUNCH_CHECK();
      return;
    }
  }
  // Long rows (1024 elements of 2 bytes and up), aligned: a block per row, 2 vectors a thread up to
  // kShortBlockRow vectors (64 or 128 threads; to 128 vectors for a functor with two broadcast
  // inputs or more: a LayerNorm of 2048 bfloat16 elements, staging, 91.5% of a copy against 87.3%,
  // where softmax would lose 97% for 91%), kRowVectors beyond (as many threads as that needs; where
  // that would spill, kStagedVectors staging the next row, else 2 vectors and up to 512 threads);
  // past what a block holds, for 2- and 4-byte types on devices with clusters, a cluster of 2 to 16
  // blocks (past 8 where the device allows) of kClusterThreads per row, kClusterVectors a thread
  // with the next row prefetched (else kStagedVectors staging it). (Measured on an H100, rms_norm
  // forward against a copy of the same bytes, bfloat16, 128 MB tensors, the benchmark sweep (L2
  // flushed): 2 vectors a thread 99.5% at 1024 and 97.9% at 2048 elements; 8 vectors a thread 96.1%
  // at 8192, 93.7% at 16384; clusters of 4 or 8 blocks x 256 threads x 4 vectors with prefetch
  // 93.3% at 32768 and 65536. At 4096, 8 vectors a thread (a LayerNorm, which would spill, 4
  // staging the next row) against 2: rms_norm 96.6% against 92.8%, LayerNorm 92% against 83.5%,
  // log-softmax 93.8% against 94.4%, softmax 90.1% against 93.3%. (2 vectors were kept there for
  // the gated activations, 86% against 63%, which now split their rows over blocks.) Timed
  // otherwise, each choice below lost: 4096 with the next row prefetched, or a grid of all rows, no
  // faster; a warp of 16 vectors a thread per row 83% (240 registers: too few rows an SM); clusters
  // launched for every row instead of resident 61-68%, blocks of 512 threads no faster; streaming
  // cache hints no faster; a gated activation's x[j + h] picked from this thread's registers
  // instead of read from memory: 40% against 64% through a select over its vectors, and no faster
  // (63-87%, as from memory) from the register known at compile time where the row is a power of
  // two: its limit at 8 vectors a thread is elsewhere. float32 rows of 16384 are staged, 76%.)
  using ShortBlock = RegisterKernel<kBroadcast, kBlockRow, 2, Op, S, N, K>;
  using ShortPrefetchBlock = RegisterKernel<kBroadcast, kBlockRow, 2, Op, S, N, K, true>;
  using LongBlock = RegisterKernel<kBroadcast, kBlockRow, kRowVectors, Op, S, N, K>;
  using StagedBlock = RegisterKernel<kBroadcast, kBlockRow, kStagedVectors, Op, S, N, K, false, kStagedAhead>;
  using LoneStagedBlock = RegisterKernel<kBroadcast, kBlockRow, kStagedVectors, Op, S, N, K, false, kLoneStagedAhead>;
  constexpr auto kShortBlock = ShortBlock::kRagged;
  constexpr auto kShortPrefetchBlock = ShortPrefetchBlock::kRagged;
  constexpr auto kLongBlock = LongBlock::kRagged;
  constexpr auto kStagedBlock = StagedBlock::kRagged;
  constexpr auto kLoneStagedBlock = LoneStagedBlock::kRagged;
  const auto block_threads = [&](int vectors_a_thread) {
    return int(power_of_two_covering(vectors, vectors_a_thread, kRowWarp, 1024));
  };
  const int64_t most_short = 2 * register_row_block(2);
  const int64_t short_block_row = broadcast_inputs >= 2 ? 128 : kShortBlockRow;
  // On devices whose multiprocessors each have more bandwidth than an H100's, the deeper pipelines
  // (kDeepBandwidthPerSM): the short blocks resident, prefetching the next row, and staging rather
  // than 8 vectors a thread, except for forwards whose 8-vector blocks keep enough in flight
  // (kLoadLatency); forwards' longest rows in clusters of 8-vector threads (kDeepClusterVectors).
  const double bandwidth = memory_bandwidth_per_multiprocessor();
  const bool deep = bandwidth > kDeepBandwidthPerSM;
  if (aligned && vectors >= 128) {
    // A forward's whole rows in blocks of kRowVectors a thread, where the blocks resident an SM hold
    // enough bytes in flight (kLoadLatency); a functor with wide broadcasts (a LayerNorm) reads them
    // where used, where holding them would spill.
    if constexpr (LongBlock::kTwinned) {
      const auto enough_in_flight = [&](auto kernels) {
        using Kernels = decltype(kernels);
        const int threads = twin_block_threads(kernels, kRowVectors);
        return threads > 0 &&
               double(blocks_per_multiprocessor(Kernels::kWholeRows, threads, 0)) * double(vectors * 16) >=
                   bandwidth * kLoadLatency;
      };
      if (deep && staged_inputs == 1 && vectors > short_block_row &&
          vectors < kRowVectors * register_row_block(kRowVectors)) {
        if (enough_in_flight(LongBlock{})) {
          return block_rows(LongBlock{}, block_threads(kRowVectors), 0, kRowVectors);
        }
        if constexpr (wide_broadcast(kBroadcast) && K == 1) {
          using AtUseLongBlock = RegisterKernel<kBroadcast, kBlockRow, kRowVectors, Op, S, N, K, false, 0, true>;
          if (vectors <= kAtUseBlockVectors && named_broadcasts_broadcast<kBroadcast>(in) &&
              enough_in_flight(AtUseLongBlock{})) {
            return block_rows(AtUseLongBlock{}, block_threads(kRowVectors), 0, kRowVectors);
          }
        }
      }
    }
    // A functor with wide broadcasts and one output (a LayerNorm forward) keeps more rows in flight
    // staged (32 threads a row) than prefetching at 128 registers a thread; its backward the reverse.
    const bool staged_first = wide_broadcast(kBroadcast) && K == 1;
    // Rows that fill a prefetching block of register_row_block(2) threads (1024 vectors: 8192
    // elements of 2 bytes), two an SM, prefetch too where one input is staged (a forward). (Measured
    // on an H200, bfloat16, A/B in one run, two rounds each in two runs, at 8192: softmax 91.0-91.4%
    // of a copy against 88.4-89.3 staged, log-softmax 90.3-91.0 against 86.1-86.9, rms_norm 94.2-95.4
    // against 91.4-92.0. Rows of 4608 to 7168, in such blocks with threads idle, were mixed: at 6400
    // softmax 89.5 against 91.5, log-softmax 80.5 against 89.2; blocks of 256 threads at 4096 lost
    // 0.4-0.8 points, and backwards (two staged inputs) up to 10%: log-softmax's 118.0 us against
    // 107.6 at 8192.)
    const bool widest_prefetch = staged_inputs == 1 && vectors == 2 * register_row_block(2);
    const bool short_prefetch =
        deep && (vectors <= short_block_row || widest_prefetch) && fits_in_registers<kShortPrefetchBlock>();
    if (short_prefetch && !staged_first) {
      return block_rows(ShortPrefetchBlock{}, block_threads(2), 0, 2, true);
    }
    if (!deep && vectors <= short_block_row && fits_in_registers<kShortBlock>()) {
      return block_rows(ShortBlock{}, block_threads(2), 0, 2);
    }
    if (!deep && vectors <= kRowVectors * register_row_block(kRowVectors) && fits_in_registers<kLongBlock>()) {
      return block_rows(LongBlock{}, block_threads(kRowVectors), 0, kRowVectors);
    }
    const int staged_threads = block_threads(kStagedVectors);
    const int64_t staged_block_bytes = staged_bytes(staged_threads);
    const bool staged_block = vectors <= kStagedVectors * register_row_block(kStagedVectors);
    const int64_t lone_bytes = staged_bytes(staged_threads, kLoneStagedAhead);
    if (staged_block && staged_threads == register_row_block(kStagedVectors) && staged_inputs == 1 &&
        fits_in_registers<kLoneStagedBlock>() && shared_fits(lone_bytes)) {
      return block_rows(LoneStagedBlock{}, staged_threads, lone_bytes, kStagedVectors);
    }
    if (staged_block && fits_in_registers<kStagedBlock>() && shared_fits(staged_block_bytes)) {
      return block_rows(StagedBlock{}, staged_threads, staged_block_bytes, kStagedVectors);
    }
    if (short_prefetch) {  // (staged_first: the staged block did not fit)
      return block_rows(ShortPrefetchBlock{}, block_threads(2), 0, 2, true);
    }
    if (vectors <= most_short && fits_in_registers<kShortBlock>()) {
      return block_rows(ShortBlock{}, block_threads(2), 0, 2);
    }
  }
  if constexpr (sizeof(S) <= 4) {
    using LongCluster = RegisterKernel<kBroadcast, kClusterRow, kClusterVectors, Op, S, N, K, true>;
    using StagedCluster = RegisterKernel<kBroadcast, kClusterRow, kStagedVectors, Op, S, N, K, false, kStagedAhead>;
    constexpr auto kLongCluster = LongCluster::kRagged;
    constexpr auto kStagedCluster = StagedCluster::kRagged;
    // Whole rows run the twin, in as many blocks as they need (the threads past the row idle: on an
    // H200, bfloat16 rows of 36864, 4.5 blocks' worth, 77.7 / 82.3 / 75.0% of a copy against 33.2 /
    // 32.7 / 29.4 for LayerNorm / softmax / log-softmax). Rows run in blocks of kSmallClusterThreads
    // where up to kMostClusterBlocks of them hold the row (else, or where no such cluster fits the
    // device, kClusterThreads).
    // staged: the kernel stages rows in shared memory (staged_bytes).
    // twin: the whole rows' kernel, where not kernels' own (a RowTwin).
    const auto clusters = [&](auto kernels, int vectors_a_thread, bool staged, RowTwin twin = {}) {
      using Kernels = decltype(kernels);
      const int64_t exact = whole_row_threads(kernels, vectors_a_thread, twin.attributes);
      const auto launch = [&](int threads) {
        const int64_t shared_bytes = staged ? staged_bytes(threads) : 0;
        const int64_t blocks = (exact + threads - 1) / threads;
        const int blocks_per_row =
            int(power_of_two_covering(vectors, int64_t(vectors_a_thread) * threads, 2, kMostClusterBlocks));
        if (exact > 0 && blocks <= blocks_per_row) {
          return launch_clusters(twin.kernel != nullptr ? twin.kernel : Kernels::kWholeRows, stream, threads,
                                 int(blocks), shared_bytes, op, rows, in, out);
        }
        return int64_t(blocks_per_row) * vectors_a_thread * threads >= vectors &&
               launch_clusters(Kernels::kRagged, stream, threads, blocks_per_row, shared_bytes, op, rows, in, out);
      };
      return launch(kSmallClusterThreads) || launch(kClusterThreads);
    };
    if (aligned && vectors > most_short && vectors <= most_short * kMostClusterBlocks &&
        device_attribute<cudaDevAttrClusterLaunch>() != 0 && built_for_clusters<kLongCluster>()) {
      // A forward's cluster twins (functors that may stage one input) of 2-byte types are compiled
      // twice, the second rereading its rows' elements in every loop (RegisterRow::next_pass): whole
      // rows run the one that spills less, then has fewer registers (leaner). (Measured on an H200,
      // bfloat16 log-softmax, % of a copy, A/B in one run, two rounds, every loop rereading against
      // none: 8 vectors a thread, which then no longer spill, 90.6-90.7 at 40960, 90.4-90.8 at 49152
      // and 93.7-94.6 at 65536 against 4 vectors' 86.9-87.4, 81.3-81.4 and 87.4; 4 vectors, 80
      // registers against 95, 86.4-86.7 at 36864 against 83.8. Every kernel rereading lost elsewhere:
      // softmax 1-2 points from 16384, rms_norm up to 1.5, log-softmax 5.5 at 16384, whose staging
      // block, at 64 registers, then ran two an SM.)
      const auto leaner = [](auto kernels, auto rereading) {
        using Kernels = decltype(kernels);
        const cudaFuncAttributes& own = kernel_attributes<Kernels::kWholeRows>();
        if constexpr (sizeof(S) == 2) {
          using Rereading = decltype(rereading);
          const cudaFuncAttributes& other = kernel_attributes<Rereading::kWholeRows>();
          if (other.localSizeBytes < own.localSizeBytes ||
              (other.localSizeBytes == own.localSizeBytes && other.numRegs < own.numRegs)) {
            return RowTwin{Rereading::kWholeRows, &other};
          }
        }
        return RowTwin{Kernels::kWholeRows, &own};
      };
      RowTwin long_twin;
      if constexpr (sizeof(S) < 8 && N - broadcast_count(kBroadcast) <= 1) {
        long_twin =
            leaner(LongCluster{}, TwinOnly<kBroadcast, kClusterRow, kClusterVectors, Op, S, N, K, true, true>{});
        // A forward's whole rows past kPortableClusterBlocks blocks of kSmallClusterThreads on deep
        // devices: blocks of kDeepClusterVectors a thread, prefetching, where that twin keeps its
        // rows in registers without spilling and fills its blocks.
        using DeepCluster = TwinOnly<kBroadcast, kClusterRow, kDeepClusterVectors, Op, S, N, K, true>;
        const RowTwin deep_twin =
            leaner(DeepCluster{}, TwinOnly<kBroadcast, kClusterRow, kDeepClusterVectors, Op, S, N, K, true, true>{});
        const int64_t exact =
            deep && staged_inputs == 1 &&
                    vectors > int64_t(kPortableClusterBlocks) * kClusterVectors * kSmallClusterThreads &&
                    deep_twin.attributes->localSizeBytes == 0
                ? whole_row_threads(DeepCluster{}, kDeepClusterVectors, deep_twin.attributes)
                : 0;
        for (const int threads : {kSmallClusterThreads, kClusterThreads, kLeastClusterThreads}) {
          const int64_t blocks = (exact + threads - 1) / threads;
          if (exact > 0 && exact % threads == 0 && blocks <= kMostClusterBlocks &&
              launch_clusters(deep_twin.kernel, stream, threads, int(blocks), 0, op, rows, in, out)) {
            return;
          }
        }
      }
      if (fits_in_registers<kLongCluster>() && clusters(LongCluster{}, kClusterVectors, false, long_twin)) {
        return;
      }
      const bool staged_fits = fits_in_registers<kStagedCluster>() && shared_fits(staged_bytes(kClusterThreads));
      // Where holding two broadcast inputs or more spills (a LayerNorm's weight and bias), reading
      // them where used leaves the registers to prefetch with, in clusters of up to kAtUseClusterBlocks
      // blocks; longer rows stage. (Measured for forwards, one output; a backward keeps staging.)
      if constexpr (wide_broadcast(kBroadcast) && K == 1) {
        using AtUseCluster = RegisterKernel<kBroadcast, kClusterRow, kClusterVectors, Op, S, N, K, true, 0, true>;
        constexpr auto kAtUseCluster = AtUseCluster::kRagged;
        const bool staged_first = vectors > int64_t(kAtUseClusterBlocks) * kClusterVectors * kClusterThreads;
        if (staged_first && staged_fits && clusters(StagedCluster{}, kStagedVectors, true)) {
          return;
        }
        if (named_broadcasts_broadcast<kBroadcast>(in) && fits_in_registers<kAtUseCluster>() &&
            clusters(AtUseCluster{}, kClusterVectors, false)) {
          return;
        }
      }
      if (staged_fits && clusters(StagedCluster{}, kStagedVectors, true)) {
        return;
      }
    }
  }
  // Short rows of a functor that does not fit: part of a warp each (4 lanes up to 32 elements, 8 up to 64, a warp up to
  // 256), so that a warp has several rows in flight.
  if (widest <= 8 * kRowWarp) {
    constexpr int kThreads = 256;
    const auto launch = [&](auto kernel, int lanes) {
      kernel<<<resident_blocks(kernel, kThreads, 0, rows, kThreads / lanes), kThreads, 0, stream>>>(op, rows, in, out);
    };
    if (widest <= 32) {
      launch(lane_rows_kernel<4, Op, S, N, K>, 4);
    } else if (widest <= 64) {
      launch(lane_rows_kernel<8, Op, S, N, K>, 8);
    } else {
      launch(lane_rows_kernel<kRowWarp, Op, S, N, K>, kRowWarp);
    }
    OPGEN_CUDA_LAUNCH_CHECK();
    return;
  }
  // A block per row: kRowUnroll 16-byte vectors a thread of the widest row, 64 to 512 threads.
  int threads = 2 * kRowWarp;  // 32 blocks (the most an SM holds) of two warps fill it
  while (threads < 512 && int64_t(threads) * kRowUnroll < vectors) {
    threads *= 2;
  }
  // Staged in two buffers where they fit in 160 KB, else in one where the device lets a block have
  // that much shared memory, else read in place. (Measured on an H100, rms_norm forward, float32 rows
  // of 16384 (64 KB): two buffers, one block an SM, 76% of a copy; one buffer, three blocks, 70%.
  // This kernel is the fallback: for aligned bfloat16 rows of 8192 to 65536 it measured 27-62%
  // against 64-95% for the register kernels.)
  constexpr int64_t kDoubleBuffered = 160 * 1024;
  const int buffers = shared == 0 || !shared_fits(shared) ? 0 : (2 * shared <= kDoubleBuffered ? 2 : 1);
  const int64_t bytes = buffers * shared;
  const auto launch = [&](auto kernel) {
    allow_shared_bytes(kernel, bytes);
    kernel<<<resident_blocks(kernel, threads, bytes, rows, 1), threads, size_t(bytes), stream>>>(
        op, rows, in, out, shared / int64_t(sizeof(S)));
  };
  if (buffers == 2) {
    launch(block_rows_kernel<2, Op, S, N, K>);
  } else if (buffers == 1) {
    launch(block_rows_kernel<1, Op, S, N, K>);
  } else {
    launch(block_rows_kernel<0, Op, S, N, K>);
  }
  OPGEN_CUDA_LAUNCH_CHECK();
}

}  // namespace examples::opgen::cuda
