// Argument checks shared by the ops: each failure is a c10::Error (RuntimeError in Python)
// that names the argument, never a crash.
#pragma once

#include <ATen/core/Tensor.h>

namespace opgen {

inline void check_floating(const at::Tensor& t, const char* name) {
  TORCH_CHECK(at::isFloatingType(t.scalar_type()), name,
              " must be a floating-point tensor (float32, float16, bfloat16 or float64), got ",
              t.scalar_type());
}

inline void check_dtype(const at::Tensor& t, const char* name, at::ScalarType expected) {
  TORCH_CHECK(t.scalar_type() == expected, name, " must be ", expected, ", got ", t.scalar_type());
}

inline void check_device_type(const at::Tensor& t, const char* name, c10::DeviceType expected) {
  TORCH_CHECK(t.device().type() == expected, name, " must be a ", c10::DeviceTypeName(expected, true),
              " tensor, got one on ", t.device());
}

inline void check_same_device(const at::Tensor& a, const char* a_name, const at::Tensor& b, const char* b_name) {
  TORCH_CHECK(a.device() == b.device(), a_name, " and ", b_name, " must be on the same device, got ",
              a.device(), " and ", b.device());
}

inline void check_same_dtype(const at::Tensor& a, const char* a_name, const at::Tensor& b, const char* b_name) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), a_name, " and ", b_name, " must have the same dtype, got ",
              a.scalar_type(), " and ", b.scalar_type());
}

inline void check_same_shape(const at::Tensor& a, const char* a_name, const at::Tensor& b, const char* b_name) {
  TORCH_CHECK(a.sizes() == b.sizes(), a_name, " and ", b_name, " must have the same shape, got ", a.sizes(),
              " and ", b.sizes());
}

inline void check_dim(const at::Tensor& t, const char* name, int64_t dim) {
  TORCH_CHECK(t.dim() == dim, name, " must have ", dim, " dimension(s), got shape ", t.sizes());
}

}  // namespace opgen
