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
// OPGEN_KERNEL), a tensor's memory for a kernel (buffer) and, in CUDA builds (OPGEN_WITH_CUDA, set
// by the build, or a .cu that includes this), the device guard and the current stream.
//
// An op's .cu files need not include this: they get Buffers and a CudaStream from the op's .cpp and
// include only the torch-free common/cuda_utils.cuh, which compiles several times faster.
#pragma once

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "common/kernel_types.h"

#if (defined(__CUDACC__) || defined(OPGEN_WITH_CUDA)) && !defined(OPGEN_CUDA_HOST)
#define OPGEN_CUDA_HOST  // the device guard and the current stream are available
#endif

#ifdef OPGEN_STABLE_API
#if defined(OPGEN_CUDA_HOST) && !defined(USE_CUDA)
#define USE_CUDA  // declares the CUDA part of torch's stable C shim (the current stream)
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

#include <optional>

#if defined(OPGEN_CUDA_HOST) && !defined(OPGEN_STABLE_API)
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif
#ifdef __CUDACC__
#include "common/cuda_utils.cuh"  // OPGEN_CUDA_CHECK, OPGEN_CUDA_LAUNCH_CHECK
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
#define OPGEN_DISPATCH_CASE_FLOATING(...)                    \
  OPGEN_DISPATCH_CASE(OPGEN_NAMESPACE::kFloat, __VA_ARGS__)  \
  OPGEN_DISPATCH_CASE(OPGEN_NAMESPACE::kDouble, __VA_ARGS__) \
  OPGEN_DISPATCH_CASE(OPGEN_NAMESPACE::kHalf, __VA_ARGS__)   \
  OPGEN_DISPATCH_CASE(OPGEN_NAMESPACE::kBFloat16, __VA_ARGS__)
#define OPGEN_DISPATCH_FLOATING(TYPE, NAME, ...) \
  OPGEN_DISPATCH_SWITCH(TYPE, NAME, OPGEN_DISPATCH_CASE_FLOATING(__VA_ARGS__))

namespace examples::opgen {

#ifdef OPGEN_STABLE_API
using Tensor = torch::stable::Tensor;
using ScalarType = torch::headeronly::ScalarType;
using IntArrayRef = torch::headeronly::IntHeaderOnlyArrayRef;  // a view of sizes: a vector or {a, b}
#else
using Tensor = at::Tensor;
using ScalarType = c10::ScalarType;
using IntArrayRef = c10::IntArrayRef;
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

// torch's 16-bit floats compute in float (see OpMath in kernel_types.h).
template <>
struct OpMath<c10::Half> {
  using type = float;
};
template <>
struct OpMath<c10::BFloat16> {
  using type = float;
};

static_assert(static_cast<int>(DType::Half) == static_cast<int>(kHalf) &&
                  static_cast<int>(DType::Float) == static_cast<int>(kFloat) &&
                  static_cast<int>(DType::Double) == static_cast<int>(kDouble) &&
                  static_cast<int>(DType::BFloat16) == static_cast<int>(kBFloat16) &&
                  static_cast<int>(DType::Long) == static_cast<int>(kLong) &&
                  static_cast<int>(DType::UInt16) == static_cast<int>(kUInt16),
              "opgen::DType must number dtypes as torch does");

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
inline Tensor empty(const Tensor& like, IntArrayRef shape, ScalarType dtype) {
#ifdef OPGEN_STABLE_API
  // One C call into libtorch rather than a boxed dispatcher call (torch::stable::new_empty): an op
  // allocates its output on every call, and at small sizes the host time is the op's time.
  // Strides on the stack up to 8 dimensions: no heap allocation besides the tensor's own.
  constexpr size_t kInlineDims = 8;
  int64_t inline_strides[kInlineDims];
  std::vector<int64_t> heap_strides(shape.size() > kInlineDims ? shape.size() : 0);
  int64_t* const strides = shape.size() > kInlineDims ? heap_strides.data() : inline_strides;
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= std::max<int64_t>(shape[d], 1);
  }
  int32_t device_type = 0;
  const int32_t shim_dtype = torch::stable::detail::to<int32_t>(torch::stable::detail::from(dtype));
  AtenTensorHandle handle = nullptr;
  OPGEN_CHECK(aoti_torch_get_device_type(like.get(), &device_type) == AOTI_TORCH_SUCCESS &&
                  aoti_torch_empty_strided(static_cast<int64_t>(shape.size()), shape.data(), strides, shim_dtype,
                                           device_type, like.get_device_index(), &handle) == AOTI_TORCH_SUCCESS,
              "could not allocate an output tensor on ", device_name(like), " (out of memory?)");
  return Tensor(handle);
#else
  return at::empty(shape, like.options().dtype(dtype));
#endif
}

// The same, with like's dtype.
inline Tensor empty(const Tensor& like, IntArrayRef shape) {
  return empty(like, shape, like.scalar_type());
}

// Uninitialized and contiguous, with t's shape, dtype and device.
inline Tensor empty_like(const Tensor& t) {
  return empty(t, t.sizes());
}

// A contiguous tensor's memory, for a kernel in a .cu file (which sees no torch types): input()
// for one the kernel reads, output() for one it writes.
inline Buffer input(const Tensor& t) {
  OPGEN_CHECK(t.is_contiguous(), "internal error: a kernel input must be contiguous");
  return Buffer{const_cast<void*>(t.const_data_ptr()), t.numel(), static_cast<DType>(t.scalar_type())};
}

inline Buffer output(const Tensor& t) {
  OPGEN_CHECK(t.is_contiguous(), "internal error: a kernel output must be contiguous");
  return Buffer{t.mutable_data_ptr(), t.numel(), static_cast<DType>(t.scalar_type())};
}

inline Tensor swap_dims(const Tensor& t, int64_t dim0, int64_t dim1) {
#ifdef OPGEN_STABLE_API
  return torch::stable::transpose(t, dim0, dim1);
#else
  return t.transpose(dim0, dim1);
#endif
}

// A view of t with dimension `dim` moved to the end, the others in their order. (Adjacent swaps:
// torch::stable::permute is missing from the headers of some torch releases the build supports.)
inline Tensor move_dim_last(const Tensor& t, int64_t dim) {
  Tensor moved = t;
  for (int64_t d = dim; d + 1 < t.dim(); ++d) {
    moved = swap_dims(moved, d, d + 1);
  }
  return moved;
}

// The inverse: a view of t with its last dimension moved to position `dim`.
inline Tensor move_last_dim_to(const Tensor& t, int64_t dim) {
  Tensor moved = t;
  for (int64_t d = t.dim() - 1; d > dim; --d) {
    moved = swap_dims(moved, d - 1, d);
  }
  return moved;
}

// dst[...] = src[...], any strides (dst keeps its own).
inline void copy_(const Tensor& dst, const Tensor& src) {
#ifdef OPGEN_STABLE_API
  Tensor target = dst;
  torch::stable::copy_(target, src);
#else
  const_cast<Tensor&>(dst).copy_(src);
#endif
}

inline void zero_(Tensor& t) {
#ifdef OPGEN_STABLE_API
  torch::stable::zero_(t);
#else
  t.zero_();
#endif
}

#ifdef OPGEN_CUDA_HOST

// torch's stable types have hidden visibility (each library keeps its own copy of their inline
// code); a class holding one is hidden too, else GCC warns at every file that includes this one.
#if defined(OPGEN_STABLE_API) && defined(__GNUC__) && !defined(_WIN32)
#define OPGEN_HOLDS_STABLE_TYPES __attribute__((visibility("hidden")))
#else
#define OPGEN_HOLDS_STABLE_TYPES
#endif

// Makes t's GPU the current device until the end of the scope; does nothing for a CPU tensor.
class OPGEN_HOLDS_STABLE_TYPES DeviceGuard {
 public:
  explicit DeviceGuard(const Tensor& t) {
    if (t.is_cuda()) {
#ifdef OPGEN_STABLE_API
      // Through the C shim a guard is a heap object and a device exchange each way: made only where
      // t's GPU is not the current one already (most calls).
      const int32_t index = static_cast<int32_t>(device_index(t));
      if (torch::stable::accelerator::getCurrentDeviceIndex() != index) {
        guard_.emplace(index);
      }
#else
      guard_.emplace(device_index(t));
#endif
    }
  }

 private:
#ifdef OPGEN_STABLE_API
  std::optional<torch::stable::accelerator::DeviceGuard> guard_;
#else
  std::optional<c10::cuda::CUDAGuard> guard_;
#endif
};

// The stream torch runs work on for the current GPU (not always the default stream): call it
// under a DeviceGuard.
inline CudaStream current_stream() {
#ifdef OPGEN_STABLE_API
  // accelerator::Stream::id() is a c10 stream id, not a cudaStream_t: ask libtorch_cuda instead.
  const int32_t device = torch::stable::accelerator::getCurrentDeviceIndex();
  void* stream = nullptr;
  OPGEN_CHECK(aoti_torch_get_current_cuda_stream(device, &stream) == AOTI_TORCH_SUCCESS,
              "could not get the current CUDA stream of cuda:", device);
  return CudaStream{stream};
#else
  return CudaStream{c10::cuda::getCurrentCUDAStream().stream()};
#endif
}

#else  // CPU-only build: nothing to guard

class DeviceGuard {
 public:
  explicit DeviceGuard(const Tensor&) {}
};

#endif  // OPGEN_CUDA_HOST

}  // namespace examples::opgen
