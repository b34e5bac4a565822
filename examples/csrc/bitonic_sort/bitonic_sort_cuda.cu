// bitonic_sort: CUDA kernels. A bitonic network sorts (key, index) items (bitonic_sort.h) per row.
//
// A row is padded with sentinels to `size`, a power of two of at least kPerThread items, and
// sorted by size / kPerThread threads, thread t holding items t*E .. t*E+E-1 (E = kPerThread)
// in registers. The network is the "flip" form of bitonic sort, where every compare-exchange
// puts the minimum at the lower index: phase k (k = 2, 4, .., size) compares i with i ^ (k-1),
// then i with i ^ j for j = k/4 .. 1. Strides below E run inside a thread (unrolled), strides
// below 32*E are warp shuffles, and larger ones go through the row's slice of shared memory.
//
// Rows that fit in shared memory are sorted by one kernel (several short rows per block). Longer
// rows are padded into a global work buffer: chunks of the largest shared-memory size are sorted,
// then each merge phase runs its strides of a chunk or more as one global compare-exchange
// launch each, and the rest as one shared-memory pass per chunk.
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <tuple>

#include "bitonic_sort/bitonic_sort.h"
#include "common/elementwise.cuh"

namespace examples::bitonic_sort {

template <>
struct KeyOf<__half> : HalfKey {};
template <>
struct KeyOf<__nv_bfloat16> : BFloat16Key {};

namespace {

using opgen::Buffer;

constexpr int kWarpSize = 32;
// Threads per block at most: 512 leaves each thread up to 128 registers (1024 would leave 64 and spill).
constexpr int kMaxThreads = 512;
// Block size for rows of fewer threads: several rows share a block.
constexpr int kRowBlockThreads = 256;

// Items per thread (E). For 8-byte items an H100 sorted 16384 rows of 1024 in 0.33 ms with 16
// and 0.39 ms with 32 (a 1024-item row in one warp, no shared-memory step; 128 registers and
// spills), both before the loads were batched. 16-byte items take 8 (16 spill).
template <typename Item>
constexpr int kPerThread = sizeof(Item) == 8 ? 16 : 8;
// Global loads each thread issues before it waits for the first.
constexpr int kLoadsInFlight = 8;

// Shared-memory position of item i: one empty slot after every E items, so that the threads'
// E-item runs start in different banks.
template <int E>
__device__ __forceinline__ int padded(int i) {
  return i + i / E;
}
template <int E>
constexpr int64_t padded_size(int64_t size) {
  return size + size / E;
}

__device__ __forceinline__ NarrowItem shfl_xor(NarrowItem v, int mask) {
  return {__shfl_xor_sync(0xffffffffu, v.bits, mask)};
}
__device__ __forceinline__ WideItem shfl_xor(WideItem v, int mask) {
  return {__shfl_xor_sync(0xffffffffu, v.key_bits, mask), __shfl_xor_sync(0xffffffffu, v.idx, mask)};
}

// lo, hi = min, max.
template <typename Item>
__device__ __forceinline__ void order(Item& lo, Item& hi) {
  const bool swap = hi < lo;
  const Item a = lo;
  lo = swap ? hi : a;
  hi = swap ? a : hi;
}

template <typename Item>
__device__ __forceinline__ void order_in_memory(Item* lo, Item* hi) {
  const Item a = *lo, b = *hi;
  if (b < a) {
    *lo = b;
    *hi = a;
  }
}

// Phases 2 .. E, inside the thread: its E items end ascending.
template <int E, typename Item>
__device__ __forceinline__ void sort_in_thread(Item (&r)[E]) {
#pragma unroll
  for (int log_k = 1; (1 << log_k) <= E; ++log_k) {
    const int k = 1 << log_k;
#pragma unroll
    for (int s = 0; s < E; ++s) {
      if (s < (s ^ (k - 1))) {
        order(r[s], r[s ^ (k - 1)]);
      }
    }
#pragma unroll
    for (int log_j = log_k - 2; log_j >= 0; --log_j) {
#pragma unroll
      for (int s = 0; s < E; ++s) {
        if (!(s & (1 << log_j))) {
          order(r[s], r[s | (1 << log_j)]);
        }
      }
    }
  }
}

// Strides E/2 .. 1, inside the thread.
template <int E, typename Item>
__device__ __forceinline__ void merge_in_thread(Item (&r)[E]) {
#pragma unroll
  for (int j = E / 2; j >= 1; j /= 2) {
#pragma unroll
    for (int s = 0; s < E; ++s) {
      if (!(s & j)) {
        order(r[s], r[s | j]);
      }
    }
  }
}

// Keeps the smaller (keep_min) or the larger of mine and theirs.
template <typename Item>
__device__ __forceinline__ Item pick(const Item& mine, const Item& theirs, bool keep_min) {
  return (theirs < mine) == keep_min ? theirs : mine;
}

// Flip step of phase k = (mask + 1) * E: item s of thread t meets item E-1-s of thread t ^ mask.
template <int E, typename Item>
__device__ __forceinline__ void flip_shuffle(Item (&r)[E], int mask, int t) {
  const bool keep_min = (t & ((mask + 1) >> 1)) == 0;
#pragma unroll
  for (int s = 0; s < E / 2; ++s) {
    const Item theirs_for_s = shfl_xor(r[E - 1 - s], mask);
    const Item theirs_for_mirror = shfl_xor(r[s], mask);
    r[s] = pick(r[s], theirs_for_s, keep_min);
    r[E - 1 - s] = pick(r[E - 1 - s], theirs_for_mirror, keep_min);
  }
}

// Stride mask * E: item s of thread t meets item s of thread t ^ mask.
template <int E, typename Item>
__device__ __forceinline__ void half_clean_shuffle(Item (&r)[E], int mask, int t) {
  const bool keep_min = (t & mask) == 0;
#pragma unroll
  for (int s = 0; s < E; ++s) {
    r[s] = pick(r[s], shfl_xor(r[s], mask), keep_min);
  }
}

// One compare-exchange step over a shared-memory row: pairs (lo, lo ^ mask) where lo has bit
// `low` clear; each of the `threads` threads takes E/2 pairs.
template <int E, typename Item>
__device__ __forceinline__ void step_in_shared(Item* row, int low, int mask, int t, int threads) {
#pragma unroll
  for (int q = 0; q < E / 2; ++q) {
    const int p = t + q * threads;
    const int lo = ((p & ~(low - 1)) << 1) | (p & (low - 1));
    order_in_memory(&row[padded<E>(lo)], &row[padded<E>(lo ^ mask)]);
  }
}

template <int E, typename Item>
__device__ __forceinline__ void load_registers(Item (&r)[E], const Item* row, int t) {
#pragma unroll
  for (int s = 0; s < E; ++s) {
    r[s] = row[padded<E>(t * E + s)];
  }
}

template <int E, typename Item>
__device__ __forceinline__ void store_registers(const Item (&r)[E], Item* row, int t) {
#pragma unroll
  for (int s = 0; s < E; ++s) {
    row[padded<E>(t * E + s)] = r[s];
  }
}

// Sorts the shared-memory row of `size` items (a power of two >= E) with size / E threads, or with
// merge_only finishes a merge whose strides size/2 .. 1 remain. Every thread of the block calls it
// with the same size (it has barriers); the row must be loaded and the block synchronized.
// Returns with the row sorted in shared memory and the block synchronized.
template <int E, typename Item>
__device__ void sort_row(Item* row, int size, int t, bool merge_only) {
  const int threads = size / E;
  Item r[E];
  if (merge_only) {
    int j = size / 2;
    for (; j >= kWarpSize * E; j /= 2) {
      step_in_shared<E>(row, j, j, t, threads);
      __syncthreads();
    }
    load_registers(r, row, t);
    for (; j >= E; j /= 2) {
      half_clean_shuffle(r, j / E, t);
    }
    merge_in_thread(r);
  } else {
    load_registers(r, row, t);
    sort_in_thread(r);
    for (int k = 2 * E; k <= size; k *= 2) {
      int j = k / 4;  // the next stride after the flip
      if (k / E <= kWarpSize) {
        flip_shuffle(r, k / E - 1, t);
      } else {
        // Each thread reads and writes only its own slots between barriers, so a barrier is
        // needed only around the steps that cross threads.
        store_registers(r, row, t);
        __syncthreads();
        step_in_shared<E>(row, k / 2, k - 1, t, threads);
        __syncthreads();
        for (; j >= kWarpSize * E; j /= 2) {
          step_in_shared<E>(row, j, j, t, threads);
          __syncthreads();
        }
        load_registers(r, row, t);
      }
      for (; j >= E; j /= 2) {
        half_clean_shuffle(r, j / E, t);
      }
      merge_in_thread(r);
    }
  }
  store_registers(r, row, t);
  __syncthreads();
}

// n / d and n % d by a multiply and a shift, the magic number computed once on the host: PyTorch's
// IntDivider<unsigned int> (IntegerDivider.cuh, not on the stable API). 1 <= d <= INT32_MAX.
struct RowDivider {
  unsigned int divisor, m1, shift;
  struct DivMod {
    unsigned int div, mod;
  };

  explicit RowDivider(unsigned int d) : divisor(d) {
    assert(d >= 1 && d <= INT32_MAX);
    for (shift = 0; shift < 32; shift++) {
      if ((1U << shift) >= divisor) {
        break;
      }
    }
    const uint64_t one = 1;
    const uint64_t magic = ((one << 32) * ((one << shift) - divisor)) / divisor + 1;
    m1 = static_cast<unsigned int>(magic);
    assert(m1 > 0 && m1 == magic);  // m1 must fit in 32 bits
  }

  __device__ __forceinline__ DivMod divmod(unsigned int n) const {
    const unsigned int q = (__umulhi(n, m1) + n) >> shift;
    return {q, n - q * divisor};
  }
};

// Rows of n <= size elements, rows_per_block rows per block, each row sorted by size / E threads.
// row_length divides a block's element number into (row, position); n == row_length's divisor.
template <typename scalar_t, int E>
__global__ void __launch_bounds__(kMaxThreads)
    sort_rows_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ values, int64_t* __restrict__ indices,
                     int64_t rows, int n, RowDivider row_length, int size, int rows_per_block, bool descending) {
  using Item = ItemOf<scalar_t>;
  using key_t = typename KeyOf<scalar_t>::key_t;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  Item* shared = reinterpret_cast<Item*>(shared_bytes);
  const int slice = static_cast<int>(padded_size<E>(size));
  const int threads = size / E;
  const int t = threadIdx.x % threads;
  Item* row = shared + (threadIdx.x / threads) * slice;

  const int64_t first_row = int64_t(blockIdx.x) * rows_per_block;
  const int block_elements = static_cast<int>(min(int64_t(rows_per_block), rows - first_row)) * n;
  const scalar_t* in = x + first_row * n;
  // The block's rows are contiguous in x: read them coalesced, kLoadsInFlight at a time.
  for (int first = threadIdx.x; first < block_elements; first += kLoadsInFlight * blockDim.x) {
    scalar_t v[kLoadsInFlight];
#pragma unroll
    for (int u = 0; u < kLoadsInFlight; ++u) {
      const int f = first + u * blockDim.x;
      if (f < block_elements) {
        v[u] = in[f];
      }
    }
#pragma unroll
    for (int u = 0; u < kLoadsInFlight; ++u) {
      const int f = first + u * blockDim.x;
      if (f < block_elements) {
        const auto rc = row_length.divmod(f);
        shared[rc.div * slice + padded<E>(rc.mod)] = Item::make(key_of(v[u], descending), rc.mod);
      }
    }
  }
  for (int i = n + t; i < size; i += threads) {
    row[padded<E>(i)] = Item::sentinel();
  }
  __syncthreads();

  sort_row<E>(row, size, t, /*merge_only=*/false);

  for (int f = threadIdx.x; f < block_elements; f += blockDim.x) {
    const auto rc = row_length.divmod(f);
    const Item item = shared[rc.div * slice + padded<E>(rc.mod)];
    const int index = static_cast<int>(item.index());
    scalar_t value;
    if (!value_of_key(static_cast<key_t>(item.key()), descending, &value)) {
      value = in[rc.div * n + index];  // NaN payloads and signed zeros come from x
    }
    values[first_row * n + f] = value;
    indices[first_row * n + f] = index;
  }
}

// Long rows: work holds each row padded to `size` items.
template <typename scalar_t>
__global__ void make_items_kernel(const scalar_t* __restrict__ x, ItemOf<scalar_t>* __restrict__ work,
                                  int64_t total, int64_t n, int log_size, bool descending) {
  using Item = ItemOf<scalar_t>;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t row = e >> log_size, i = e & ((int64_t(1) << log_size) - 1);
    work[e] = i < n ? Item::make(key_of(x[row * n + i], descending), static_cast<uint32_t>(i)) : Item::sentinel();
  }
}

// Sorts (or with merge_only, finishes merging) each `chunk`-item piece of work in shared memory.
template <typename Item, int E>
__global__ void __launch_bounds__(kMaxThreads) sort_chunks_kernel(Item* __restrict__ work, int chunk, bool merge_only) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  Item* row = reinterpret_cast<Item*>(shared_bytes);
  Item* piece = work + int64_t(blockIdx.x) * chunk;
#pragma unroll 4
  for (int i = threadIdx.x; i < chunk; i += blockDim.x) {
    row[padded<E>(i)] = piece[i];
  }
  __syncthreads();
  sort_row<E>(row, chunk, threadIdx.x, merge_only);
  for (int i = threadIdx.x; i < chunk; i += blockDim.x) {
    piece[i] = row[padded<E>(i)];
  }
}

// One network step across whole rows of work: pairs (lo, lo ^ mask), lo with bit `low` clear.
template <typename Item>
__global__ void global_step_kernel(Item* __restrict__ work, int64_t pairs, int log_size, int64_t low, int64_t mask) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t half_size = int64_t(1) << (log_size - 1);
  for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < pairs; p += stride) {
    const int64_t q = p & (half_size - 1);
    const int64_t lo = ((q & ~(low - 1)) << 1) | (q & (low - 1));
    Item* row = work + ((p >> (log_size - 1)) << log_size);
    order_in_memory(&row[lo], &row[lo ^ mask]);
  }
}

template <typename scalar_t>
__global__ void write_output_kernel(const ItemOf<scalar_t>* __restrict__ work, const scalar_t* __restrict__ x,
                                    scalar_t* __restrict__ values, int64_t* __restrict__ indices, int64_t total,
                                    int64_t n, int log_size, bool descending) {
  using key_t = typename KeyOf<scalar_t>::key_t;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const int64_t row = e / n, i = e - row * n;
    const auto item = work[(row << log_size) + i];
    const int64_t index = item.index();
    scalar_t value;
    if (!value_of_key(static_cast<key_t>(item.key()), descending, &value)) {
      value = x[row * n + index];
    }
    values[e] = value;
    indices[e] = index;
  }
}

int log2_ceil(int64_t n) {
  int log = 0;
  while ((int64_t(1) << log) < n) {
    ++log;
  }
  return log;
}

template <typename Kernel>
void allow_shared_memory(Kernel kernel, int64_t bytes) {
  if (bytes > 48 * 1024) {
    OPGEN_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  }
}

// The longest row (a power of two) one block sorts in shared memory on this device.
template <typename Item, int E>
int64_t max_shared_row() {
  int device = 0, limit = 0;
  OPGEN_CUDA_CHECK(cudaGetDevice(&device));
  OPGEN_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  int64_t size = int64_t(kMaxThreads) * E;
  while (size > E && padded_size<E>(size) * int64_t(sizeof(Item)) > limit) {
    size /= 2;
  }
  return size;
}

// A grid-stride launch over `work_items` items.
unsigned int stride_grid(int64_t work_items) {
  return static_cast<unsigned int>(std::min<int64_t>((work_items + 255) / 256, 65536));
}

// Bytes of work buffer the sort of rows x n needs: none when one block sorts a row in shared memory.
template <typename scalar_t>
int64_t work_bytes(int64_t rows, int64_t n) {
  using Item = ItemOf<scalar_t>;
  constexpr int E = kPerThread<Item>;
  const int log_size = std::max(log2_ceil(n), log2_ceil(E));
  const int64_t size = int64_t(1) << log_size;
  return size <= max_shared_row<Item, E>() ? 0 : rows * size * int64_t(sizeof(Item));
}

template <typename scalar_t>
void sort_cuda(cudaStream_t stream, const Buffer& input, const Buffer& values, const Buffer& indices,
               const Buffer& work_buffer, int64_t rows, int64_t n, bool descending) {
  using Item = ItemOf<scalar_t>;
  constexpr int E = kPerThread<Item>;
  const scalar_t* x = input.as<const scalar_t>();
  scalar_t* out_values = values.as<scalar_t>();
  int64_t* out_indices = indices.as<int64_t>();
  const int log_size = std::max(log2_ceil(n), log2_ceil(E));
  const int64_t size = int64_t(1) << log_size;
  const int64_t chunk = max_shared_row<Item, E>();

  if (size <= chunk) {
    const int threads = static_cast<int>(size / E);
    const int rows_per_block = std::max(1, kRowBlockThreads / threads);
    const int64_t shared = rows_per_block * padded_size<E>(size) * int64_t(sizeof(Item));
    auto kernel = sort_rows_kernel<scalar_t, E>;
    allow_shared_memory(kernel, shared);
    const unsigned int blocks = opgen::cuda::grid_size(rows, rows_per_block);
    kernel<<<blocks, rows_per_block * threads, shared, stream>>>(
        x, out_values, out_indices, rows, static_cast<int>(n), RowDivider(static_cast<unsigned int>(n)),
        static_cast<int>(size), rows_per_block, descending);
    OPGEN_CUDA_LAUNCH_CHECK();
    return;
  }

  // Long rows: a padded work buffer (work_bytes of them, from the caller), chunk sorts, then the merge phases.
  const int64_t total = rows * size;
  Item* work = work_buffer.as<Item>();
  make_items_kernel<scalar_t><<<stride_grid(total), 256, 0, stream>>>(x, work, total, n, log_size, descending);
  OPGEN_CUDA_LAUNCH_CHECK();

  const int64_t shared = padded_size<E>(chunk) * int64_t(sizeof(Item));
  auto chunk_kernel = sort_chunks_kernel<Item, E>;
  allow_shared_memory(chunk_kernel, shared);
  const unsigned int chunks = opgen::cuda::grid_size(total, chunk);
  const int chunk_threads = static_cast<int>(chunk / E);
  chunk_kernel<<<chunks, chunk_threads, shared, stream>>>(work, static_cast<int>(chunk), /*merge_only=*/false);
  OPGEN_CUDA_LAUNCH_CHECK();
  const int64_t pairs = total / 2;
  for (int64_t k = 2 * chunk; k <= size; k *= 2) {
    global_step_kernel<Item><<<stride_grid(pairs), 256, 0, stream>>>(work, pairs, log_size, k / 2, k - 1);
    OPGEN_CUDA_LAUNCH_CHECK();
    for (int64_t j = k / 4; j >= chunk; j /= 2) {
      global_step_kernel<Item><<<stride_grid(pairs), 256, 0, stream>>>(work, pairs, log_size, j, j);
      OPGEN_CUDA_LAUNCH_CHECK();
    }
    chunk_kernel<<<chunks, chunk_threads, shared, stream>>>(work, static_cast<int>(chunk), /*merge_only=*/true);
    OPGEN_CUDA_LAUNCH_CHECK();
  }
  write_output_kernel<scalar_t><<<stride_grid(rows * n), 256, 0, stream>>>(work, x, out_values, out_indices,
                                                                           rows * n, n, log_size, descending);
  OPGEN_CUDA_LAUNCH_CHECK();
}

// Runs f.template operator()<scalar_t>() for the CUDA type of dtype.
template <typename F>
auto dispatch(opgen::DType dtype, const F& f) {
  switch (dtype) {
    case opgen::DType::Float:
      return f(float{});
    case opgen::DType::Double:
      return f(double{});
    case opgen::DType::Half:
      return f(__half{});
    case opgen::DType::BFloat16:
      return f(__nv_bfloat16{});
    case opgen::DType::Int:
      return f(int32_t{});
    case opgen::DType::Long:
      return f(int64_t{});
    default:
      opgen::cuda::unsupported_dtype("bitonic_sort_cuda", dtype);
  }
}

}  // namespace

int64_t work_bytes_cuda(opgen::DType dtype, int64_t rows, int64_t n) {
  return dispatch(dtype, [&](auto zero) { return work_bytes<decltype(zero)>(rows, n); });
}

// values, indices (int64) = x sorted along rows of n; work: work_bytes_cuda bytes (null if none).
void forward_cuda(opgen::CudaStream stream, const Buffer& values, const Buffer& indices, const Buffer& x,
                  const Buffer& work, int64_t rows, int64_t n, bool descending) {
  dispatch(x.dtype, [&](auto zero) {
    sort_cuda<decltype(zero)>(stream, x, values, indices, work, rows, n, descending);
    return 0;
  });
}

}  // namespace examples::bitonic_sort
