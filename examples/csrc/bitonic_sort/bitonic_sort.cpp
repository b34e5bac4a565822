// bitonic_sort: schema and CPU kernel. The CUDA kernels are in bitonic_sort_cuda.cu.
//
// The CPU kernel sorts the same (key, index) pairs as the CUDA bitonic network (bitonic_sort.h)
// with std::sort, so both devices return the same values and the same indices.
#include <algorithm>
#include <tuple>
#include <vector>

#include "bitonic_sort/bitonic_sort.h"
#include "common/cpu_loops.h"
#include "common/torch_api.h"

namespace examples::bitonic_sort {

using opgen::Tensor;

template <typename scalar_t>
void sort_rows_cpu(const scalar_t* in, scalar_t* values, int64_t* indices, int64_t rows, int64_t n,
                   bool descending) {
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

std::tuple<Tensor, Tensor> forward_cpu(const Tensor& x, bool descending) {
  check_input(x);
  const Tensor input = opgen::contiguous(x);
  Tensor values = opgen::empty_like(input);
  Tensor indices = opgen::empty(input, opgen::sizes(input), opgen::kLong);
  const int64_t n = row_length(input);
  const int64_t rows = n == 0 ? 0 : input.numel() / n;
  if (rows == 0) {
    return {values, indices};
  }
  OPGEN_DISPATCH_SWITCH(input.scalar_type(), "bitonic_sort_cpu", BITONIC_SORT_DISPATCH_CASES([&] {
                          sort_rows_cpu<scalar_t>(input.const_data_ptr<scalar_t>(),
                                                  values.mutable_data_ptr<scalar_t>(),
                                                  indices.mutable_data_ptr<int64_t>(), rows, n, descending);
                        }));
  return {values, indices};
}

OPGEN_LIBRARY_FRAGMENT(examples, m) {
  m.def("bitonic_sort(Tensor x, bool descending=False) -> (Tensor values, Tensor indices)");
}

OPGEN_LIBRARY_IMPL(examples, CPU, m) {
  m.impl("bitonic_sort", OPGEN_KERNEL(forward_cpu));
}

}  // namespace examples::bitonic_sort
