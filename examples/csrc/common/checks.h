// Argument checks shared by the ops: each failure is a RuntimeError in Python that names the
// argument, never a crash. Written once for both torch APIs (see torch_api.h).
#pragma once

#include <cstdint>
#include <utility>

#include "common/torch_api.h"

namespace examples::opgen {

inline void check_floating(const Tensor& t, const char* name) {
  OPGEN_CHECK(is_floating(t.scalar_type()), name,
              " must be a floating-point tensor (float32, float16, bfloat16 or float64), got ", t.scalar_type());
}

inline void check_dtype(const Tensor& t, const char* name, ScalarType expected) {
  OPGEN_CHECK(t.scalar_type() == expected, name, " must be ", expected, ", got ", t.scalar_type());
}

inline void check_cpu(const Tensor& t, const char* name) {
  OPGEN_CHECK(t.is_cpu(), name, " must be a CPU tensor, got one on ", device_name(t));
}

inline void check_cuda(const Tensor& t, const char* name) {
  OPGEN_CHECK(t.is_cuda(), name, " must be a CUDA tensor, got one on ", device_name(t));
}

inline void check_same_device(const Tensor& a, const char* a_name, const Tensor& b, const char* b_name) {
  OPGEN_CHECK(device_name(a) == device_name(b), a_name, " and ", b_name, " must be on the same device, got ",
              device_name(a), " and ", device_name(b));
}

inline void check_same_dtype(const Tensor& a, const char* a_name, const Tensor& b, const char* b_name) {
  OPGEN_CHECK(a.scalar_type() == b.scalar_type(), a_name, " and ", b_name, " must have the same dtype, got ",
              a.scalar_type(), " and ", b.scalar_type());
}

inline void check_same_shape(const Tensor& a, const char* a_name, const Tensor& b, const char* b_name) {
  OPGEN_CHECK(sizes(a) == sizes(b), a_name, " and ", b_name, " must have the same shape, got ", shape_name(a), " and ",
              shape_name(b));
}

// b is on a's device, with a's dtype and shape: the element-wise ops' rule for all their tensors.
inline void check_like(const Tensor& b, const char* b_name, const Tensor& a, const char* a_name) {
  check_same_device(b, b_name, a, a_name);
  check_same_dtype(b, b_name, a, a_name);
  check_same_shape(b, b_name, a, a_name);
}

// [first, last) bytes of memory a tensor's elements may touch.
inline std::pair<uintptr_t, uintptr_t> memory_span(const Tensor& t) {
  const auto first = reinterpret_cast<uintptr_t>(t.const_data_ptr());
  if (t.numel() == 0) {
    return {first, first};
  }
  int64_t last_element = 0;
  for (int64_t d = 0; d < t.dim(); ++d) {
    last_element += (t.size(d) - 1) * t.stride(d);
  }
  return {first, first + static_cast<uintptr_t>((last_element + 1) * t.element_size())};
}

// An output written in place must not share memory with an input (the kernel would read what it
// has already written) nor with itself (an expanded view: several elements at one address).
inline void check_output_memory(const Tensor& out, const char* out_name, const Tensor& input, const char* name) {
  const auto [out_first, out_last] = memory_span(out);
  const auto [in_first, in_last] = memory_span(input);
  OPGEN_CHECK(out_last <= in_first || in_last <= out_first, out_name, " overlaps ", name,
              " in memory: pass a separate output tensor");
}

inline void check_no_internal_overlap(const Tensor& out, const char* out_name) {
  if (out.numel() == 0) {
    return;  // no elements to share (an empty tensor's strides may well be 0)
  }
  for (int64_t d = 0; d < out.dim(); ++d) {
    OPGEN_CHECK(out.stride(d) != 0 || out.size(d) <= 1, out_name,
                " has elements that share memory (an expanded view): pass a tensor with its own storage");
  }
}

// dim in [-ndim, ndim) as an index in [0, ndim), or a RuntimeError naming the argument.
inline int64_t wrap_dim(int64_t dim, int64_t ndim, const char* name) {
  OPGEN_CHECK(dim >= -ndim && dim < ndim, name, " must be in [", -ndim, ", ", ndim - 1, "] for a tensor of ", ndim,
              " dimension(s), got ", dim);
  return dim < 0 ? dim + ndim : dim;
}

inline void check_dim(const Tensor& t, const char* name, int64_t dim) {
  OPGEN_CHECK(t.dim() == dim, name, " must have ", dim, " dimension(s), got shape ", shape_name(t));
}

}  // namespace examples::opgen
