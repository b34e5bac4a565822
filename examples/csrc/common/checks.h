// Argument checks shared by the ops: each failure is a RuntimeError in Python that names the
// argument, never a crash. Written once for both torch APIs (see torch_api.h).
#pragma once

#include "common/torch_api.h"

namespace opgen {

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
  OPGEN_CHECK(sizes(a) == sizes(b), a_name, " and ", b_name, " must have the same shape, got ", shape_name(a),
              " and ", shape_name(b));
}

inline void check_dim(const Tensor& t, const char* name, int64_t dim) {
  OPGEN_CHECK(t.dim() == dim, name, " must have ", dim, " dimension(s), got shape ", shape_name(t));
}

}  // namespace opgen
