// The one header that knows which torch C++ API the project is built against. Op sources use only
// the names below, so each op is written once and builds either way:
//
//   OPGEN_STABLE_API defined (torch_api = "stable", set by the build): the LibTorch stable ABI
//     (torch/csrc/stable + torch/headeronly). One binary runs on every torch from the target version
//     (TORCH_TARGET_VERSION) on, and the sources compile several times faster.
//   otherwise (torch_api = "aten"): the full ATen C++ API. The binary fits only the torch it was
//     built with.
//
// What it maps: Tensor and ScalarType, checks (OPGEN_CHECK), allocation (empty, empty_like),
// contiguous copies, dtype dispatch (OPGEN_DISPATCH*), op registration (OPGEN_LIBRARY_*,
// OPGEN_KERNEL) and, in CUDA sources, the device guard, the current stream and the CUDA error checks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#ifdef OPGEN_STABLE_API
#if defined(__CUDACC__) && !defined(USE_CUDA)
#define USE_CUDA  // declares the CUDA part of torch's stable C shim (streams, launch checks)
#endif
#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/Dispatch.h>
#include <torch/headeronly/core/ScalarType.h>
#include <torch/headeronly/macros/Macros.h>
#include <torch/headeronly/util/BFloat16.h>
#include <torch/headeronly/util/Exception.h>
#include <torch/headeronly/util/Half.h>
#else
#include <ATen/Dispatch.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/macros/Macros.h>
#include <torch/library.h>
#endif

#ifdef __CUDACC__
#include <cuda_runtime.h>
#ifndef OPGEN_STABLE_API
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif
#endif

#ifdef OPGEN_STABLE_API
// Raises a RuntimeError in Python whose message is the remaining arguments, streamed.
#define OPGEN_CHECK(cond, ...) STD_TORCH_CHECK(cond, __VA_ARGS__)
// Schema blocks (one per op source) and kernels for a dispatch key; OPGEN_KERNEL(fn) registers fn.
#define OPGEN_LIBRARY_FRAGMENT(ns, m) STABLE_TORCH_LIBRARY_FRAGMENT(ns, m)
#define OPGEN_LIBRARY_IMPL(ns, key, m) STABLE_TORCH_LIBRARY_IMPL(ns, key, m)
#define OPGEN_KERNEL(fn) TORCH_BOX(&fn)
// OPGEN_DISPATCH_SWITCH(type, "name", OPGEN_DISPATCH_CASE(opgen::kFloat, [&] { ... scalar_t ... }) ...)
// runs the lambda of the case that matches, with scalar_t the C++ type; other types raise.
#define OPGEN_DISPATCH_SWITCH(TYPE, NAME, ...) THO_DISPATCH_SWITCH(TYPE, NAME, __VA_ARGS__)
#define OPGEN_DISPATCH_CASE(ENUM, ...) THO_DISPATCH_CASE(ENUM, __VA_ARGS__)
#else
#define OPGEN_CHECK(cond, ...) TORCH_CHECK(cond, __VA_ARGS__)
#define OPGEN_LIBRARY_FRAGMENT(ns, m) TORCH_LIBRARY_FRAGMENT(ns, m)
#define OPGEN_LIBRARY_IMPL(ns, key, m) TORCH_LIBRARY_IMPL(ns, key, m)
#define OPGEN_KERNEL(fn) &fn
#define OPGEN_DISPATCH_SWITCH(TYPE, NAME, ...) AT_DISPATCH_SWITCH(TYPE, NAME, __VA_ARGS__)
#define OPGEN_DISPATCH_CASE(ENUM, ...) AT_DISPATCH_CASE(ENUM, __VA_ARGS__)
#endif

// float32, float64, float16 and bfloat16: the dtypes of the generated floating-point ops.
#define OPGEN_DISPATCH_CASE_FLOATING(...)                                                      \
  OPGEN_DISPATCH_CASE(opgen::kFloat, __VA_ARGS__) OPGEN_DISPATCH_CASE(opgen::kDouble, __VA_ARGS__) \
  OPGEN_DISPATCH_CASE(opgen::kHalf, __VA_ARGS__) OPGEN_DISPATCH_CASE(opgen::kBFloat16, __VA_ARGS__)
#define OPGEN_DISPATCH_FLOATING(TYPE, NAME, ...) \
  OPGEN_DISPATCH_SWITCH(TYPE, NAME, OPGEN_DISPATCH_CASE_FLOATING(__VA_ARGS__))

namespace opgen {

#ifdef OPGEN_STABLE_API
using Tensor = torch::stable::Tensor;
using ScalarType = torch::headeronly::ScalarType;
#else
using Tensor = at::Tensor;
using ScalarType = c10::ScalarType;
#endif

constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kByte = ScalarType::Byte;
constexpr ScalarType kShort = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kUInt16 = ScalarType::UInt16;

// The type arithmetic runs in: float for float16 and bfloat16, the type itself otherwise.
template <typename T>
using opmath_t =
    std::conditional_t<std::is_same_v<T, c10::Half> || std::is_same_v<T, c10::BFloat16>, float, T>;

inline bool is_floating(ScalarType type) {
  return type == kFloat || type == kDouble || type == kHalf || type == kBFloat16;
}

inline int device_index(const Tensor& t) {
#ifdef OPGEN_STABLE_API
  return t.get_device_index();
#else
  return t.get_device();
#endif
}

// "cpu", "cuda:1", ...: for error messages.
inline std::string device_name(const Tensor& t) {
  if (t.is_cpu()) {
    return "cpu";
  }
  return (t.is_cuda() ? "cuda:" : "device:") + std::to_string(device_index(t));
}

inline std::vector<int64_t> sizes(const Tensor& t) {
  const auto s = t.sizes();
  return std::vector<int64_t>(s.begin(), s.end());
}

// "[2, 3]": for error messages.
inline std::string shape_name(const Tensor& t) {
  std::ostringstream out;
  out << "[";
  const auto s = t.sizes();
  for (size_t i = 0; i < s.size(); ++i) {
    out << (i ? ", " : "") << s[i];
  }
  out << "]";
  return out.str();
}

// t itself when already contiguous (no dispatcher call), else a contiguous copy.
inline Tensor contiguous(const Tensor& t) {
  if (t.is_contiguous()) {
    return t;
  }
#ifdef OPGEN_STABLE_API
  return torch::stable::contiguous(t);
#else
  return t.contiguous();
#endif
}

// Uninitialized and contiguous, with the given shape and dtype, on like's device.
inline Tensor empty(const Tensor& like, const std::vector<int64_t>& shape, ScalarType dtype) {
#ifdef OPGEN_STABLE_API
  // One C call into libtorch rather than a boxed dispatcher call (torch::stable::new_empty): an op
  // allocates its output on every call, and at small sizes the host time is the op's time.
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= std::max<int64_t>(shape[d], 1);
  }
  int32_t device_type = 0;
  const int32_t shim_dtype = torch::stable::detail::to<int32_t>(torch::stable::detail::from(dtype));
  AtenTensorHandle handle = nullptr;
  OPGEN_CHECK(aoti_torch_get_device_type(like.get(), &device_type) == AOTI_TORCH_SUCCESS &&
                  aoti_torch_empty_strided(static_cast<int64_t>(shape.size()), shape.data(), strides.data(),
                                           shim_dtype, device_type, like.get_device_index(),
                                           &handle) == AOTI_TORCH_SUCCESS,
              "could not allocate an output tensor on ", device_name(like), " (out of memory?)");
  return Tensor(handle);
#else
  return at::empty(shape, like.options().dtype(dtype));
#endif
}

// The same, with like's dtype.
inline Tensor empty(const Tensor& like, const std::vector<int64_t>& shape) {
  return empty(like, shape, like.scalar_type());
}

// Uninitialized and contiguous, with t's shape, dtype and device.
inline Tensor empty_like(const Tensor& t) {
  return empty(t, sizes(t));
}

inline void zero_(Tensor& t) {
#ifdef OPGEN_STABLE_API
  torch::stable::zero_(t);
#else
  t.zero_();
#endif
}

#ifdef __CUDACC__

// Makes t's GPU the current device until the end of the scope.
class DeviceGuard {
 public:
  explicit DeviceGuard(const Tensor& t) : guard_(device_index(t)) {}

 private:
#ifdef OPGEN_STABLE_API
  torch::stable::accelerator::DeviceGuard guard_;
#else
  c10::cuda::CUDAGuard guard_;
#endif
};

// The stream torch runs work on for the current GPU (not always the default stream): call it
// under a DeviceGuard.
inline cudaStream_t current_stream() {
#ifdef OPGEN_STABLE_API
  // accelerator::Stream::id() is a c10 stream id, not a cudaStream_t: ask libtorch_cuda instead.
  const int32_t device = torch::stable::accelerator::getCurrentDeviceIndex();
  void* stream = nullptr;
  OPGEN_CHECK(aoti_torch_get_current_cuda_stream(device, &stream) == AOTI_TORCH_SUCCESS,
              "could not get the current CUDA stream of cuda:", device);
  return static_cast<cudaStream_t>(stream);
#else
  return c10::cuda::getCurrentCUDAStream().stream();
#endif
}

// OPGEN_CUDA_CHECK(cudaFoo(...)) raises a RuntimeError naming the CUDA error unless it returns cudaSuccess.
#ifdef OPGEN_STABLE_API
#ifdef STD_CUDA_CHECK
#define OPGEN_CUDA_CHECK(EXPR) STD_CUDA_CHECK(EXPR)
#else
// Headers of torch < 2.12 have no STD_CUDA_CHECK: the same check, without torch's device-side
// assertion details.
inline void cuda_check(cudaError_t error, const char* file, int line) {
  OPGEN_CHECK(error == cudaSuccess, "CUDA error: ", cudaGetErrorString(error), " at ", file, ":", line);
}
#define OPGEN_CUDA_CHECK(EXPR) opgen::cuda_check((EXPR), __FILE__, __LINE__)
#endif
#define OPGEN_CUDA_LAUNCH_CHECK() OPGEN_CUDA_CHECK(cudaGetLastError())
#else
#define OPGEN_CUDA_CHECK(EXPR) C10_CUDA_CHECK(EXPR)
#define OPGEN_CUDA_LAUNCH_CHECK() C10_CUDA_KERNEL_LAUNCH_CHECK()
#endif
#endif  // __CUDACC__

}  // namespace opgen
