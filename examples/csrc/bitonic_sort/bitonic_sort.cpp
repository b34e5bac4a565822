// bitonic_sort: host code for CPU and CUDA (checks, allocation, device guard, stream) and the CPU
// kernel; the declaration in opgen_examples/ops/bitonic_sort.py registers it. The CUDA kernels are in
// bitonic_sort_cuda.cu (a bitonic network in shared memory) and bitonic_sort_radix.cu (a radix sort
// for longer rows).
//
// The CPU kernel sorts the same (key, index) pairs as the CUDA kernels (bitonic_sort.h) with
// std::sort, so both devices return the same values and the same indices.
#include <algorithm>
#include <tuple>
#include <vector>

#include "bitonic_sort/bitonic_sort.h"
#include "common/checks.h"
#include "common/cpu_loops.h"
#include "common/torch_api.h"

namespace examples::bitonic_sort {

template <>
struct KeyOf<c10::Half> : HalfKey {};
template <>
struct KeyOf<c10::BFloat16> : BFloat16Key {};

using opgen::Buffer;
using opgen::Tensor;

#ifdef OPGEN_WITH_CUDA
// In bitonic_sort_cuda.cu (compiled by nvcc without torch's headers). Rows of n elements, contiguous.
// Rows too long for the shared-memory network (radix-sorted) need a work buffer: its size, then the
// sort.
int64_t work_bytes_cuda(opgen::DType dtype, int64_t rows, int64_t n);
void forward_cuda(opgen::CudaStream stream, const Buffer& values, const Buffer& indices, const Buffer& x,
                  const Buffer& work, int64_t rows, int64_t n, bool descending);
#endif

namespace {

// The dtypes sorted: OPGEN_DISPATCH_SWITCH(dtype, name, BITONIC_SORT_DISPATCH_CASES([&] { ... })).
#define BITONIC_SORT_DISPATCH_CASES(...)        \
  OPGEN_DISPATCH_CASE_FLOATING(__VA_ARGS__)     \
  OPGEN_DISPATCH_CASE(opgen::kInt, __VA_ARGS__) \
  OPGEN_DISPATCH_CASE(opgen::kLong, __VA_ARGS__)

// Length of the dimension sorted (the last; a scalar is one element).
int64_t row_length(const Tensor& x) {
  return x.dim() == 0 ? 1 : x.size(-1);
}

void check_input(const Tensor& x) {
  const opgen::ScalarType dtype = x.scalar_type();
  OPGEN_CHECK(opgen::is_floating(dtype) || dtype == opgen::kInt || dtype == opgen::kLong,
              "x must be a float32, float16, bfloat16, float64, int32 or int64 tensor, got ", dtype);
  OPGEN_CHECK(row_length(x) <= kMaxRowLength, "x's last dimension must have at most ", kMaxRowLength, " elements, got ",
              row_length(x));
}

template <typename scalar_t>
void sort_rows_cpu(const scalar_t* in, scalar_t* values, int64_t* indices, int64_t rows, int64_t n, bool descending) {
  using Item = ItemOf<scalar_t>;
  opgen::cpu::parallel_for(rows, std::max<int64_t>(1, 32768 / n), [&](int64_t begin, int64_t end) {
    std::vector<Item> items(n);
    for (int64_t r = begin; r < end; ++r) {
      const scalar_t* row = in + r * n;
      for (int64_t i = 0; i < n; ++i) {
        items[i] = Item::make(key_of(row[i], descending), static_cast<uint32_t>(i));
      }
      std::sort(items.begin(), items.end());
      for (int64_t i = 0; i < n; ++i) {
        const int64_t index = items[i].index();
        values[r * n + i] = row[index];
        indices[r * n + i] = index;
      }
    }
  });
}

}  // namespace

std::tuple<Tensor, Tensor> forward(const Tensor& x, bool descending) {
  check_input(x);
#ifdef OPGEN_WITH_CUDA
  const opgen::DeviceGuard device_guard(x);
#endif
  const Tensor input = opgen::contiguous(x);
  Tensor values = opgen::empty_like(input);
  Tensor indices = opgen::empty(input, opgen::sizes(input), opgen::kLong);
  const int64_t n = row_length(input);
  const int64_t rows = n == 0 ? 0 : input.numel() / n;
  if (rows == 0) {
    return {values, indices};
  }
#ifdef OPGEN_WITH_CUDA
  if (input.is_cuda()) {
    const auto dtype = static_cast<opgen::DType>(input.scalar_type());
    const int64_t bytes = work_bytes_cuda(dtype, rows, n);
    const Tensor work = opgen::empty(input, {bytes}, opgen::kByte);
    forward_cuda(opgen::current_stream(), opgen::output(values), opgen::output(indices), opgen::input(input),
                 bytes > 0 ? opgen::output(work) : Buffer{}, rows, n, descending);
    return {values, indices};
  }
#endif
  OPGEN_DISPATCH_SWITCH(input.scalar_type(), "bitonic_sort_cpu", BITONIC_SORT_DISPATCH_CASES([&] {
                          sort_rows_cpu<scalar_t>(input.const_data_ptr<scalar_t>(), values.mutable_data_ptr<scalar_t>(),
                                                  indices.mutable_data_ptr<int64_t>(), rows, n, descending);
                        }));
  return {values, indices};
}

}  // namespace examples::bitonic_sort
