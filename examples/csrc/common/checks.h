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
  OPGEN_CHECK(a.device() == b.device(), a_name, " and ", b_name, " must be on the same device, got ", device_name(a),
              " and ", device_name(b));
}

inline void check_same_dtype(const Tensor& a, const char* a_name, const Tensor& b, const char* b_name) {
  OPGEN_CHECK(a.scalar_type() == b.scalar_type(), a_name, " and ", b_name, " must have the same dtype, got ",
              a.scalar_type(), " and ", b.scalar_type());
}

inline void check_same_shape(const Tensor& a, const char* a_name, const Tensor& b, const char* b_name) {
  OPGEN_CHECK(a.sizes().equals(b.sizes()), a_name, " and ", b_name, " must have the same shape, got ", shape_name(a),
              " and ", shape_name(b));
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

// Where b's elements repeat over a's (b broadcast over a, as torch broadcasts it): b's element for
// a's element i is (i / inner) % period. b's dimensions, aligned to a's last ones, must be 1 or a's
// size, and those that are not 1 one block of a's dimensions (a bias over the last ones; a scale of
// shape [C, 1, 1] over [N, C, H, W]); else an error naming both.
inline std::pair<int64_t, int64_t> broadcast_repeats(const Tensor& b, const char* b_name, const Tensor& a,
                                                     const char* a_name) {
  const int64_t skipped = a.dim() - b.dim();
  int64_t first = -1, last = -1;  // the block of a's dimensions that b spans (where b's size is not 1)
  bool fits = skipped >= 0;
  for (int64_t d = 0; fits && d < b.dim(); ++d) {
    if (b.size(d) != 1) {
      fits = b.size(d) == a.size(skipped + d) && (first < 0 || last == skipped + d - 1);
      first = first < 0 ? skipped + d : first;
      last = skipped + d;
    }
  }
  OPGEN_CHECK(fits, b_name, " must broadcast over ", a_name, " along one block of its dimensions (a bias ",
              "over the last ones, a per-channel scale of shape [C, 1, 1]), got ", b_name, " ", shape_name(b), " and ",
              a_name, " ", shape_name(a));
  int64_t inner = 1;
  for (int64_t d = last + 1; first >= 0 && d < a.dim(); ++d) {
    inner *= a.size(d);
  }
  return {inner, b.numel() > 0 ? b.numel() : 1};
}

// b (contiguous) as a kernel reads it when broadcast over a: its buffer and where its elements repeat.
inline BroadcastBuffer broadcast_input(const Tensor& b, const char* b_name, const Tensor& a, const char* a_name) {
  const auto [inner, period] = broadcast_repeats(b, b_name, a, a_name);
  return BroadcastBuffer{input(b), inner, period};
}

}  // namespace examples::opgen
