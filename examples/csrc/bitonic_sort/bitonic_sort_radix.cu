// bitonic_sort: the radix-sort path, for rows too long for the shared-memory network
// (bitonic_sort_cuda.cu). CUB's DeviceRadixSort is stable, so equal keys keep their input order.
//
// Each element becomes its order key (bitonic_sort.h: the network's key, NaN, -0.0 and descending
// included) and a 32-bit payload, (row << col_bits) | column. One radix sort of all the rows'
// (key, payload) pairs by key puts every row in key order; with several rows a second stable sort,
// of the payloads by their row bits alone, brings each row's elements together again, still in key
// order. Together the two are one sort by (row, key), least significant digits first, over the
// bits actually used (a sort of composite 64-bit keys would run more passes over wider items).
// A last pass writes the int64 indices and the values: decoded from the sorted keys for one row (NaN
// and zero read from x), gathered from x for several (a row at a time, mostly from L2).
//
// Rows go in batches of about kBatchElements elements whose payloads fit 32 bits, and rows of
// kRowByRowLength or more one at a time; the work buffer (from the caller, sized by
// radix_work_bytes) holds one batch: two key and two payload arrays for the sorts' passes, and
// CUB's temporary storage.
#include <cub/device/device_radix_sort.cuh>

#include "bitonic_sort/bitonic_sort_cuda.cuh"

namespace examples::bitonic_sort {

namespace {

using opgen::Buffer;

// Enough elements to fill the GPU; more would only grow the work buffer.
constexpr int64_t kBatchElements = int64_t(1) << 25;
// Rows at least this long are sorted one at a time (one sort by key, values decoded from the keys)
// rather than batched (a second sort, by row, and a gather). A sort costs much more than its data
// when short (about a dozen kernels: 16 rows of 2^20 float32 took 1.62 ms one at a time against
// 1.00 ms batched), so this pays only for the longest rows. H100, float32: 2 rows of 2^23 took
// 0.88 ms one at a time against 1.13 batched, 4 rows of 2^22 1.06 against 1.02; float16, whose sort
// by row weighs more beside its two passes by key: 4 rows of 2^22 0.58 against 0.64.
template <typename key_t>
constexpr int64_t kRowByRowLength = int64_t(1) << (sizeof(key_t) == 2 ? 22 : 23);
constexpr int64_t kAlignment = 256;

int64_t aligned(int64_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

// How rows x n are cut into batches of rows.
struct Batches {
  int col_bits;        // bits of a column, ceil(log2(n)): at most 32
  int64_t batch_rows;  // rows a batch: their elements fit 32 bits, their payloads too
  int64_t rows, n;

  Batches(int64_t rows_, int64_t n_, int64_t row_by_row_length) : col_bits(log2_ceil(n_)), rows(rows_), n(n_) {
    batch_rows = n >= row_by_row_length ? 1 : std::max<int64_t>(1, kBatchElements / n);
    if (col_bits < 32) {
      batch_rows = std::min(batch_rows, int64_t(1) << (32 - col_bits));
    }
    batch_rows = std::min(batch_rows, rows);
  }
  int64_t batch_elements() const {
    return batch_rows * n;
  }
};

// Where the parts of the work buffer start, for a batch of `elements` (key_t keys).
template <typename key_t>
struct WorkLayout {
  int64_t keys_bytes, payload_bytes;
  explicit WorkLayout(int64_t elements)
      : keys_bytes(aligned(elements * int64_t(sizeof(key_t)))), payload_bytes(aligned(elements * 4)) {}
  int64_t temp_offset() const {
    return 2 * keys_bytes + 2 * payload_bytes;
  }
};

// CUB's temporary storage for sorting `elements` pairs by key, then, with several rows, the payloads
// by their row bits.
template <typename key_t>
size_t cub_temp_bytes(uint32_t elements, int col_bits, int row_bits) {
  size_t by_key = 0, by_row = 0;
  cub::DoubleBuffer<key_t> keys;
  cub::DoubleBuffer<uint32_t> payloads;
  OPGEN_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(nullptr, by_key, keys, payloads, elements, 0, int(sizeof(key_t) * 8)));
  if (row_bits > 0) {
    OPGEN_CUDA_CHECK(
        cub::DeviceRadixSort::SortKeys(nullptr, by_row, payloads, elements, col_bits, col_bits + row_bits));
  }
  return std::max(by_key, by_row);
}

// The element kernels: each thread keeps kUnroll elements in flight (one a thread cannot cover the
// memory latency, least of all for 2-byte elements), element e = base + u * kThreads.
constexpr int kThreads = 256;
constexpr int kUnroll = 8;

unsigned int unrolled_grid(int64_t elements) {
  const int64_t per_block = int64_t(kThreads) * kUnroll;
  return static_cast<unsigned int>(std::min<int64_t>((elements + per_block - 1) / per_block, 65536));
}

// keys[e], payloads[e] of element e of a batch (rows of n; one row: n may pass 2^31).
template <typename scalar_t>
__global__ void __launch_bounds__(kThreads)
    make_keys_kernel(const scalar_t* __restrict__ x, typename KeyOf<scalar_t>::key_t* __restrict__ keys,
                     uint32_t* __restrict__ payloads, int64_t elements, RowDivider row_of, int col_bits, bool one_row,
                     bool descending) {
  const int64_t step = int64_t(gridDim.x) * kThreads * kUnroll;
  for (int64_t base = int64_t(blockIdx.x) * kThreads * kUnroll + threadIdx.x; base < elements; base += step) {
    scalar_t v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t e = base + u * kThreads;
      if (e < elements) {
        v[u] = x[e];
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t e = base + u * kThreads;
      if (e < elements) {
        keys[e] = key_of(v[u], descending);
        if (one_row) {
          payloads[e] = static_cast<uint32_t>(e);
        } else {  // elements < 2^32 and col_bits <= 31
          const auto rc = row_of.divmod(static_cast<unsigned int>(e));
          payloads[e] = (rc.div << col_bits) | rc.mod;
        }
      }
    }
  }
}

// values, indices of the sorted batch. sorted_keys: the keys in sorted order for one row, else null.
template <typename scalar_t>
__global__ void __launch_bounds__(kThreads)
    write_sorted_kernel(const typename KeyOf<scalar_t>::key_t* __restrict__ sorted_keys,
                        const uint32_t* __restrict__ payloads, const scalar_t* __restrict__ x,
                        scalar_t* __restrict__ values, int64_t* __restrict__ indices, int64_t elements, int64_t n,
                        int col_bits, bool descending) {
  using key_t = typename KeyOf<scalar_t>::key_t;
  const bool one_row = sorted_keys != nullptr;
  const uint32_t col_mask = one_row ? ~0u : (1u << col_bits) - 1;  // several rows: col_bits <= 31
  const int64_t step = int64_t(gridDim.x) * kThreads * kUnroll;
  for (int64_t base = int64_t(blockIdx.x) * kThreads * kUnroll + threadIdx.x; base < elements; base += step) {
    uint32_t payload[kUnroll];
    key_t key[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t e = base + u * kThreads;
      if (e < elements) {
        payload[u] = payloads[e];
        if (one_row) {
          key[u] = sorted_keys[e];
        }
      }
    }
    scalar_t value[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t e = base + u * kThreads;
      if (e < elements) {
        if (one_row) {
          if (!value_of_key(key[u], descending, &value[u])) {
            value[u] = x[payload[u]];  // NaN payloads and signed zeros come from x
          }
        } else {
          value[u] = x[int64_t(payload[u] >> col_bits) * n + (payload[u] & col_mask)];
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t e = base + u * kThreads;
      if (e < elements) {
        values[e] = value[u];
        indices[e] = payload[u] & col_mask;
      }
    }
  }
}

template <typename scalar_t>
int64_t work_bytes(int64_t rows, int64_t n) {
  using key_t = typename KeyOf<scalar_t>::key_t;
  const Batches batches(rows, n, kRowByRowLength<key_t>);
  const int64_t elements = batches.batch_elements();
  const WorkLayout<key_t> layout(elements);
  return layout.temp_offset() + static_cast<int64_t>(cub_temp_bytes<key_t>(
                                    static_cast<uint32_t>(elements), batches.col_bits, log2_ceil(batches.batch_rows)));
}

template <typename scalar_t>
void sort(cudaStream_t stream, const scalar_t* x, scalar_t* values, int64_t* indices, const Buffer& work, int64_t rows,
          int64_t n, bool descending) {
  using key_t = typename KeyOf<scalar_t>::key_t;
  const Batches batches(rows, n, kRowByRowLength<key_t>);
  const WorkLayout<key_t> layout(batches.batch_elements());
  unsigned char* base = work.as<unsigned char>();
  key_t* keys[2] = {reinterpret_cast<key_t*>(base), reinterpret_cast<key_t*>(base + layout.keys_bytes)};
  uint32_t* payloads[2] = {reinterpret_cast<uint32_t*>(base + 2 * layout.keys_bytes),
                           reinterpret_cast<uint32_t*>(base + 2 * layout.keys_bytes + layout.payload_bytes)};
  void* temp = base + layout.temp_offset();
  const size_t temp_bytes = static_cast<size_t>(work.numel - layout.temp_offset());

  for (int64_t first = 0; first < rows; first += batches.batch_rows) {
    const int64_t batch_rows = std::min(batches.batch_rows, rows - first);
    const int64_t elements = batch_rows * n;
    const int row_bits = log2_ceil(batch_rows);
    const int64_t offset = first * n;
    const bool one_row = batch_rows == 1;
    make_keys_kernel<scalar_t><<<unrolled_grid(elements), kThreads, 0, stream>>>(
        x + offset, keys[0], payloads[0], elements, RowDivider(one_row ? 1u : static_cast<unsigned int>(n)),
        batches.col_bits, one_row, descending);
    OPGEN_CUDA_LAUNCH_CHECK();

    cub::DoubleBuffer<key_t> sorted_keys(keys[0], keys[1]);
    cub::DoubleBuffer<uint32_t> sorted_payloads(payloads[0], payloads[1]);
    size_t bytes = temp_bytes;
    OPGEN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        temp, bytes, sorted_keys, sorted_payloads, static_cast<uint32_t>(elements), 0, int(sizeof(key_t) * 8), stream));
    if (!one_row) {
      bytes = temp_bytes;
      OPGEN_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, bytes, sorted_payloads, static_cast<uint32_t>(elements),
                                                      batches.col_bits, batches.col_bits + row_bits, stream));
    }
    write_sorted_kernel<scalar_t><<<unrolled_grid(elements), kThreads, 0, stream>>>(
        one_row ? sorted_keys.Current() : nullptr, sorted_payloads.Current(), x + offset, values + offset,
        indices + offset, elements, n, batches.col_bits, descending);
    OPGEN_CUDA_LAUNCH_CHECK();
  }
}

}  // namespace

int64_t radix_work_bytes(opgen::DType dtype, int64_t rows, int64_t n) {
  return dispatch(dtype, [&](auto zero) { return work_bytes<decltype(zero)>(rows, n); });
}

void radix_sort(cudaStream_t stream, const Buffer& values, const Buffer& indices, const Buffer& x, const Buffer& work,
                int64_t rows, int64_t n, bool descending) {
  dispatch(x.dtype, [&](auto zero) {
    using scalar_t = decltype(zero);
    sort<scalar_t>(stream, x.as<const scalar_t>(), values.as<scalar_t>(), indices.as<int64_t>(), work, rows, n,
                   descending);
    return 0;
  });
}

}  // namespace examples::bitonic_sort
