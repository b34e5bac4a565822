// bitonic_sort: CUDA entry points, and the bitonic network that sorts rows in shared memory.
//
// Which path sorts a row of n elements:
// - n == 1: a copy (values = x, indices = 0).
// - n <= network_max_row(), as long as one block holds (16384 elements of 16-bit floats, 8192 of
//   the other dtypes): the network below, one kernel, one block's shared memory holding one row or
//   several.
// - longer rows: the radix sort of bitonic_sort_radix.cu.
// The network and the radix sort order by the same (key, index) (bitonic_sort.h), so they agree.
//
// The network sorts (key, index) items: 32-bit ones (16-bit key, 16-bit index) for 16-bit floats,
// 64-bit ones (32-bit key, 32-bit index) for the others, 64-bit keys in two passes (low half, then
// high half: see sort_rows_kernel). A row is padded with sentinels to `size`, a power of two, and
// sorted by size / E threads, thread t holding items t*E .. t*E+E-1 in registers (E = kPerThread,
// or size for rows shorter than that: one thread a row). The network is the "flip" form of bitonic
// sort, where every compare-exchange puts the minimum at the lower index: phase k (k = 2, 4, ..,
// size) compares i with i ^ (k-1), then i with i ^ j for j = k/4 .. 1. A thread first sorts its E
// items (a 60-comparator network for each 16), strides below E run inside a thread (unrolled),
// strides below 32*E are warp shuffles, and larger ones go through the row's slice of shared memory.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "bitonic_sort/bitonic_sort_cuda.cuh"
#include "common/elementwise.cuh"

namespace examples::bitonic_sort {

namespace {

using opgen::Buffer;

// A (key, index) item for 16-bit keys: one 32-bit integer, key in the high half; rows of at most
// 2^16 elements. The 16-bit floats' keys stay below 0xffc1 (bitonic_sort.h: NaN becomes one NaN),
// so no real item equals the sentinel.
struct PackedItem {
  uint32_t bits;
  __device__ static PackedItem make(uint32_t key, uint32_t index) {
    return {(key << 16) | index};
  }
  __device__ static PackedItem sentinel() {
    return {~0u};
  }
  __device__ uint32_t key() const {
    return bits >> 16;
  }
  __device__ uint32_t index() const {
    return bits & 0xffffu;
  }
  __device__ bool operator<(const PackedItem& other) const {
    return bits < other.bits;
  }
};

// The network's items: 32-bit for 16-bit keys, 64-bit for the others (64-bit keys in two passes of
// their 32-bit halves, see sort_rows_kernel).
template <typename scalar_t>
using NetworkItem = std::conditional_t<sizeof(typename KeyOf<scalar_t>::key_t) == 2, PackedItem, NarrowItem>;
template <typename scalar_t>
constexpr bool kTwoPasses = sizeof(typename KeyOf<scalar_t>::key_t) == 8;

constexpr int kWarpSize = 32;
// Threads per block at most: 512 leaves each thread up to 128 registers (1024 would leave 64 and spill).
constexpr int kMaxThreads = 512;
// Block size for rows of fewer threads: several rows share a block.
constexpr int kRowBlockThreads = 256;

// Items per thread (E), 32 registers of items. For 8-byte items an H100 sorted 16384 rows of 1024
// in 0.33 ms with 16 and 0.39 ms with 32 (a 1024-item row in one warp, no shared-memory step; 128
// registers and spills), both before the loads were batched.
template <typename Item>
constexpr int kPerThread = sizeof(Item) == 4 ? 32 : 16;
// The longest row the network sorts: as long as one block holds (kMaxThreads * E). On an H100 it
// beat the radix sort at every length up to there (float32: 0.59 against 1.10 ms for 2048 rows of
// 8192; float16: 0.33 against 0.76 ms for 1024 rows of 16384).
template <typename Item>
constexpr int64_t kNetworkMaxRow = int64_t(kMaxThreads) * kPerThread<Item>;
// Global loads each thread issues before it waits for the first.
constexpr int kLoadsInFlight = 8;
// Elements a thread reads or writes with one vector access, where rows and x allow it.
constexpr int kGroup = 4;

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

__device__ __forceinline__ PackedItem shfl_xor(PackedItem v, int mask) {
  return {__shfl_xor_sync(0xffffffffu, v.bits, mask)};
}
__device__ __forceinline__ NarrowItem shfl_xor(NarrowItem v, int mask) {
  return {__shfl_xor_sync(0xffffffffu, v.bits, mask)};
}

// lo, hi = min, max.
template <typename Item>
__device__ __forceinline__ void order(Item& lo, Item& hi) {
  const bool swap = hi < lo;
  const Item a = lo;
  lo = swap ? hi : a;
  hi = swap ? a : hi;
}
__device__ __forceinline__ void order(PackedItem& lo, PackedItem& hi) {
  const uint32_t a = lo.bits;
  lo.bits = min(a, hi.bits);
  hi.bits = max(a, hi.bits);
}

template <typename Item>
__device__ __forceinline__ void order_in_memory(Item* lo, Item* hi) {
  const Item a = *lo, b = *hi;
  if (b < a) {
    *lo = b;
    *hi = a;
  }
}

// Sorts r[first .. first+15]: a 60-comparator network (ten layers; bitonic sort takes 80), checked
// on every 0/1 input (which suffices for a comparator network).
template <int E, typename Item>
__device__ __forceinline__ void sort16_in_thread(Item (&r)[E], int first) {
  constexpr unsigned char kLayers[][2] = {
      {0, 13},  {1, 12},  {2, 15},  {3, 14},  {4, 8},   {5, 6},   {7, 11}, {9, 10},  {0, 5},   {1, 7},
      {2, 9},   {3, 4},   {6, 13},  {8, 14},  {10, 15}, {11, 12}, {0, 1},  {2, 3},   {4, 5},   {6, 8},
      {7, 9},   {10, 11}, {12, 13}, {14, 15}, {0, 2},   {1, 3},   {4, 10}, {5, 11},  {6, 7},   {8, 9},
      {12, 14}, {13, 15}, {1, 2},   {3, 12},  {4, 6},   {5, 7},   {8, 10}, {9, 11},  {13, 14}, {1, 4},
      {2, 6},   {5, 8},   {7, 10},  {9, 13},  {11, 14}, {2, 4},   {3, 6},  {9, 12},  {11, 13}, {3, 5},
      {6, 8},   {7, 9},   {10, 12}, {3, 4},   {5, 6},   {7, 8},   {9, 10}, {11, 12}, {6, 7},   {8, 9}};
#pragma unroll
  for (int c = 0; c < 60; ++c) {
    order(r[first + kLayers[c][0]], r[first + kLayers[c][1]]);
  }
}

// Phases 2 .. E, inside the thread: its E items end ascending.
template <int E, typename Item>
__device__ __forceinline__ void sort_in_thread(Item (&r)[E]) {
  int first_phase = 1;  // log2 of the first phase k still to run
  if constexpr (E >= 16) {
#pragma unroll
    for (int first = 0; first < E; first += 16) {
      sort16_in_thread(r, first);
    }
    first_phase = 5;
  }
#pragma unroll
  for (int log_k = first_phase; (1 << log_k) <= E; ++log_k) {
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
__device__ __forceinline__ PackedItem pick(const PackedItem& mine, const PackedItem& theirs, bool keep_min) {
  return {keep_min ? min(mine.bits, theirs.bits) : max(mine.bits, theirs.bits)};
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

// Sorts the shared-memory row of `size` items (a power of two >= E) with size / E threads. Every
// thread of the block calls it with the same size (it has barriers); the row must be loaded and the
// block synchronized. Returns with the row sorted in shared memory and the block synchronized.
template <int E, typename Item>
__device__ void sort_row(Item* row, int size, int t) {
  const int threads = size / E;
  Item r[E];
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
  store_registers(r, row, t);
  __syncthreads();
}

// Shared memory for one row of `size` items: the items, and for 64-bit keys the keys themselves and
// the first pass's order.
template <typename scalar_t, int E>
constexpr int64_t shared_bytes_per_row(int64_t size) {
  using key_t = typename KeyOf<scalar_t>::key_t;
  const int64_t items = padded_size<E>(size) * int64_t(sizeof(NetworkItem<scalar_t>));
  return kTwoPasses<scalar_t> ? items + size * int64_t(sizeof(key_t) + sizeof(uint16_t)) : items;
}

// Rows of n <= size elements, rows_per_block rows per block, each row sorted by size / E threads.
// row_length divides a block's element number into (row, position); n == row_length's divisor.
// grouped: n is a multiple of kGroup and x aligned to kGroup elements, so x, values and indices are
// read and written kGroup elements at a time.
//
// 64-bit keys take two passes of 64-bit (32-bit key, index) items, least significant half first: the
// items of the keys' low halves are sorted, then item i of that order becomes (high half, i) and the
// items are sorted again. Both sorts break ties by index, so the result is the (key, index) order.
template <typename scalar_t, int E>
__global__ void __launch_bounds__(kMaxThreads)
    sort_rows_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ values, int64_t* __restrict__ indices,
                     int64_t rows, int n, RowDivider row_length, int size, int rows_per_block, bool grouped,
                     bool descending) {
  using Item = NetworkItem<scalar_t>;
  using key_t = typename KeyOf<scalar_t>::key_t;
  using Group = opgen::cuda::Vec<scalar_t, kGroup>;
  using IndexPair = opgen::cuda::Vec<int64_t, 2>;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const int slice = static_cast<int>(padded_size<E>(size));
  Item* items = reinterpret_cast<Item*>(shared_bytes);
  // 64-bit keys only: each row's keys, and the first pass's order (position -> index).
  key_t* wide_keys = reinterpret_cast<key_t*>(items + rows_per_block * slice);
  uint16_t* first_order = reinterpret_cast<uint16_t*>(wide_keys + rows_per_block * size);
  const int threads = size / E;
  const int t = threadIdx.x % threads;
  const int slot = threadIdx.x / threads;  // the block's row this thread sorts
  Item* row = items + slot * slice;

  const int64_t first_row = int64_t(blockIdx.x) * rows_per_block;
  const int block_rows = static_cast<int>(min(int64_t(rows_per_block), rows - first_row));
  const int block_elements = block_rows * n;
  const scalar_t* in = x + first_row * n;
  const int groups = block_elements / kGroup;

  // Element `position` of the block's row `r`, value v, becomes its item.
  auto put = [&](int r, int position, scalar_t v) {
    const key_t key = key_of(v, descending);
    if constexpr (kTwoPasses<scalar_t>) {
      wide_keys[r * size + position] = key;
      items[r * slice + padded<E>(position)] = Item::make(static_cast<uint32_t>(key), position);
    } else {
      items[r * slice + padded<E>(position)] = Item::make(key, position);
    }
  };
  // The block's rows are contiguous in x: read them coalesced, several loads in flight.
  if (grouped) {
    constexpr int kGroupsInFlight = kLoadsInFlight / 2;
    for (int first = threadIdx.x; first < groups; first += kGroupsInFlight * blockDim.x) {
      Group v[kGroupsInFlight];
#pragma unroll
      for (int u = 0; u < kGroupsInFlight; ++u) {
        const int g = first + u * blockDim.x;
        if (g < groups) {
          v[u] = reinterpret_cast<const Group*>(in)[g];
        }
      }
#pragma unroll
      for (int u = 0; u < kGroupsInFlight; ++u) {
        const int g = first + u * blockDim.x;
        if (g < groups) {
          const auto rc = row_length.divmod(g * kGroup);  // a group lies in one row
#pragma unroll
          for (int k = 0; k < kGroup; ++k) {
            put(rc.div, rc.mod + k, v[u].v[k]);
          }
        }
      }
    }
  } else {
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
          put(rc.div, rc.mod, v[u]);
        }
      }
    }
  }
  for (int i = n + t; i < size; i += threads) {
    row[padded<E>(i)] = Item::sentinel();
  }
  __syncthreads();

  sort_row<E>(row, size, t);

  if constexpr (kTwoPasses<scalar_t>) {
    // Sentinels sort last, so positions below n hold the row's items (slots past the block's rows
    // hold no row and are skipped).
    if (slot < block_rows) {
      const key_t* row_keys = wide_keys + slot * size;
      uint16_t* row_order = first_order + slot * size;
      for (int i = t; i < n; i += threads) {
        const uint32_t index = row[padded<E>(i)].index();
        row_order[i] = static_cast<uint16_t>(index);
        row[padded<E>(i)] = Item::make(static_cast<uint32_t>(row_keys[index] >> 32), i);
      }
    }
    __syncthreads();
    sort_row<E>(row, size, t);
  }

  // The sorted element at `position` of the block's row `r`: its index, and its value in `value`.
  auto sorted = [&](int r, int position, scalar_t& value) -> int64_t {
    const Item item = items[r * slice + padded<E>(position)];
    int index;
    key_t key;
    if constexpr (kTwoPasses<scalar_t>) {
      index = first_order[r * size + item.index()];
      key = wide_keys[r * size + index];
    } else {
      index = static_cast<int>(item.index());
      key = static_cast<key_t>(item.key());
    }
    if (!value_of_key(key, descending, &value)) {
      value = in[r * n + index];  // NaN payloads and signed zeros come from x
    }
    return index;
  };
  if (grouped) {
    Group* out_values = reinterpret_cast<Group*>(values + first_row * n);
    IndexPair* out_indices = reinterpret_cast<IndexPair*>(indices + first_row * n);
    for (int g = threadIdx.x; g < groups; g += blockDim.x) {
      const auto rc = row_length.divmod(g * kGroup);
      Group v;
      int64_t index[kGroup];
#pragma unroll
      for (int k = 0; k < kGroup; ++k) {
        index[k] = sorted(rc.div, rc.mod + k, v.v[k]);
      }
      out_values[g] = v;
#pragma unroll
      for (int k = 0; k < kGroup; k += 2) {
        out_indices[(g * kGroup + k) / 2] = IndexPair{{index[k], index[k + 1]}};
      }
    }
  } else {
    for (int f = threadIdx.x; f < block_elements; f += blockDim.x) {
      const auto rc = row_length.divmod(f);
      scalar_t value;
      indices[first_row * n + f] = sorted(rc.div, rc.mod, value);
      values[first_row * n + f] = value;
    }
  }
}

template <typename Kernel>
void allow_shared_memory(Kernel kernel, int64_t bytes) {
  if (bytes > 48 * 1024) {
    OPGEN_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  }
}

// The longest row (a power of two) one block sorts in shared memory on this device.
template <typename scalar_t>
int64_t max_shared_row() {
  constexpr int E = kPerThread<NetworkItem<scalar_t>>;
  int device = 0, limit = 0;
  OPGEN_CUDA_CHECK(cudaGetDevice(&device));
  OPGEN_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  int64_t size = int64_t(kMaxThreads) * E;
  while (size > E && shared_bytes_per_row<scalar_t, E>(size) > limit) {
    size /= 2;
  }
  return size;
}

// The longest row the network sorts on this device.
template <typename scalar_t>
int64_t network_max_row() {
  return std::min(kNetworkMaxRow<NetworkItem<scalar_t>>, max_shared_row<scalar_t>());
}

// Sorts rows of n <= size elements (size a power of two) with E items a thread: E = kPerThread,
// or E = size for rows shorter than that (one thread a row, no padding beyond the next power of two).
template <typename scalar_t, int E>
void sort_rows(cudaStream_t stream, const scalar_t* x, scalar_t* values, int64_t* indices, int64_t rows, int64_t n,
               int64_t size, bool descending) {
  if constexpr (E > 1) {
    if (size < E) {
      sort_rows<scalar_t, E / 2>(stream, x, values, indices, rows, n, size, descending);
      return;
    }
  }
  const int threads = static_cast<int>(size / E);
  const int rows_per_block = std::max(1, kRowBlockThreads / threads);
  const int64_t shared = rows_per_block * shared_bytes_per_row<scalar_t, E>(size);
  const bool grouped = n % kGroup == 0 && opgen::cuda::is_vector_aligned<kGroup>(x);
  auto kernel = sort_rows_kernel<scalar_t, E>;
  allow_shared_memory(kernel, shared);
  const unsigned int blocks = opgen::cuda::grid_size(rows, rows_per_block);
  kernel<<<blocks, rows_per_block * threads, shared, stream>>>(
      x, values, indices, rows, static_cast<int>(n), RowDivider(static_cast<unsigned int>(n)), static_cast<int>(size),
      rows_per_block, grouped, descending);
  OPGEN_CUDA_LAUNCH_CHECK();
}

template <typename scalar_t>
bool uses_network(int64_t n) {
  return n <= network_max_row<scalar_t>();
}

}  // namespace

int64_t work_bytes_cuda(opgen::DType dtype, int64_t rows, int64_t n) {
  return dispatch(dtype, [&](auto zero) {
    return uses_network<decltype(zero)>(n) ? int64_t(0) : radix_work_bytes(dtype, rows, n);
  });
}

// values, indices (int64) = x sorted along rows of n; work: work_bytes_cuda bytes (null if none).
void forward_cuda(opgen::CudaStream stream, const Buffer& values, const Buffer& indices, const Buffer& x,
                  const Buffer& work, int64_t rows, int64_t n, bool descending) {
  dispatch(x.dtype, [&](auto zero) {
    using scalar_t = decltype(zero);
    if (n == 1) {  // already sorted: values = x, indices = 0
      OPGEN_CUDA_CHECK(cudaMemcpyAsync(values.data, x.data, rows * sizeof(scalar_t), cudaMemcpyDeviceToDevice, stream));
      OPGEN_CUDA_CHECK(cudaMemsetAsync(indices.data, 0, rows * sizeof(int64_t), stream));
    } else if (uses_network<scalar_t>(n)) {
      constexpr int E = kPerThread<NetworkItem<scalar_t>>;
      const int64_t size = int64_t(1) << log2_ceil(n);
      sort_rows<scalar_t, E>(stream, x.as<const scalar_t>(), values.as<scalar_t>(), indices.as<int64_t>(), rows, n,
                             size, descending);
    } else {
      radix_sort(stream, values, indices, x, work, rows, n, descending);
    }
    return 0;
  });
}

}  // namespace examples::bitonic_sort
