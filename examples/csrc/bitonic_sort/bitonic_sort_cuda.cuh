// bitonic_sort: what the two CUDA paths share (bitonic_sort_cuda.cu, the shared-memory network;
// bitonic_sort_radix.cu, the radix sort of long rows): the keys of CUDA's 16-bit floats, a fast
// row divider and the dtype dispatch. Torch-free, like the .cu files.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>

#include "bitonic_sort/bitonic_sort.h"
#include "common/cuda_utils.cuh"

namespace examples::bitonic_sort {

template <>
struct KeyOf<__half> : HalfKey {};
template <>
struct KeyOf<__nv_bfloat16> : BFloat16Key {};

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

// The smallest log such that 2^log >= n.
inline int log2_ceil(int64_t n) {
  int log = 0;
  while ((int64_t(1) << log) < n) {
    ++log;
  }
  return log;
}

// Runs f(scalar_t{}) for the CUDA type of dtype.
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

// The radix-sort path (bitonic_sort_radix.cu) for rows of n contiguous elements: the bytes of work
// buffer it needs, and the sort. values, indices (int64) and x as in forward_cuda.
int64_t radix_work_bytes(opgen::DType dtype, int64_t rows, int64_t n);
void radix_sort(cudaStream_t stream, const opgen::Buffer& values, const opgen::Buffer& indices, const opgen::Buffer& x,
                const opgen::Buffer& work, int64_t rows, int64_t n, bool descending);

}  // namespace examples::bitonic_sort
