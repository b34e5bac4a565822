// CUDA helpers for kernels, torch-free (see kernel_types.h): 16-bit float types and conversions,
// dtype dispatch, error checks, grid sizes, the multiprocessor count.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/kernel_types.h"

namespace examples::opgen {

template <>
struct OpMath<__half> {
  using type = float;
};
template <>
struct OpMath<__nv_bfloat16> {
  using type = float;
};

template <>
struct Rounding<__half> {
  template <typename T>
  __host__ __device__ static T apply(T v) {
    return static_cast<T>(__half2float(__float2half_rn(static_cast<float>(v))));
  }
};
template <>
struct Rounding<__nv_bfloat16> {
  template <typename T>
  __host__ __device__ static T apply(T v) {
    return static_cast<T>(__bfloat162float(__float2bfloat16_rn(static_cast<float>(v))));
  }
};

namespace cuda {

// static_cast, except for CUDA's 16-bit floats, whose implicit conversions torch's build turns off.
template <typename To, typename From>
__device__ __forceinline__ To convert(From value) {
  if constexpr (std::is_same_v<From, __half>) {
    return static_cast<To>(__half2float(value));
  } else if constexpr (std::is_same_v<From, __nv_bfloat16>) {
    return static_cast<To>(__bfloat162float(value));
  } else if constexpr (std::is_same_v<To, __half>) {
    return __float2half_rn(static_cast<float>(value));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(value));
  } else {
    return static_cast<To>(value);
  }
}

// Throws (a RuntimeError in Python) unless error is cudaSuccess.
inline void check(cudaError_t error, const char* what, const char* file, int line) {
  if (error != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA error: ") + cudaGetErrorString(error) + " (" + what + " at " + file +
                             ":" + std::to_string(line) + ")");
  }
}

// Blocks needed to cover n items, `per_block` at a time; refuses a grid CUDA cannot launch.
inline unsigned int grid_size(int64_t n, int64_t per_block) {
  const int64_t blocks = (n + per_block - 1) / per_block;
  if (blocks > std::numeric_limits<int32_t>::max()) {
    throw std::runtime_error("tensor too large: " + std::to_string(n) + " items need " + std::to_string(blocks) +
                             " blocks");
  }
  return static_cast<unsigned int>(blocks);
}

// An attribute of the current device, asked of CUDA once per device (of the first 64).
template <cudaDeviceAttr kAttribute>
int device_attribute() {
  constexpr int kCachedDevices = 64;
  static std::atomic<int> cached[kCachedDevices] = {};  // 0: not asked yet
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice", __FILE__, __LINE__);
  std::atomic<int>* slot = device < kCachedDevices ? &cached[device] : nullptr;
  int value = slot != nullptr ? slot->load(std::memory_order_relaxed) : 0;
  if (value == 0) {
    check(cudaDeviceGetAttribute(&value, kAttribute, device), "cudaDeviceGetAttribute", __FILE__, __LINE__);
    if (slot != nullptr) {
      slot->store(value, std::memory_order_relaxed);
    }
  }
  return value;
}

inline int multiprocessor_count() {
  return device_attribute<cudaDevAttrMultiProcessorCount>();
}

// The current device's peak memory bandwidth over its multiprocessors, in bytes a second: the memory
// clock (kHz, two transfers a cycle) times the bus width.
inline double memory_bandwidth_per_multiprocessor() {
  const double bytes_a_second = 2e3 * device_attribute<cudaDevAttrMemoryClockRate>() *
                                (device_attribute<cudaDevAttrGlobalMemoryBusWidth>() / 8.0);
  return bytes_a_second / multiprocessor_count();
}

[[noreturn]] inline void unsupported_dtype(const char* name, DType dtype) {
  throw std::runtime_error(std::string(name) + ": dtype code " + std::to_string(static_cast<int>(dtype)) +
                           " is not supported by this CUDA kernel");
}

}  // namespace cuda
}  // namespace examples::opgen

// OPGEN_CUDA_CHECK(cudaFoo(...)) throws, naming the CUDA error, unless the call returns cudaSuccess.
#define OPGEN_CUDA_CHECK(EXPR) OPGEN_NAMESPACE::cuda::check((EXPR), #EXPR, __FILE__, __LINE__)
// After a <<<...>>> launch: a bad configuration (too many threads, shared memory, ...) fails here.
#define OPGEN_CUDA_LAUNCH_CHECK() OPGEN_NAMESPACE::cuda::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

// OPGEN_CUDA_DISPATCH_FLOATING(buffer.dtype, "name", [&] { ... scalar_t ... }) runs the lambda with
// scalar_t the CUDA type of a float32, float64, float16 or bfloat16 dtype; other dtypes throw.
#define OPGEN_CUDA_DISPATCH_CASE_(ENUM, TYPE, ...) \
  case OPGEN_NAMESPACE::DType::ENUM: {             \
    using scalar_t = TYPE;                         \
    __VA_ARGS__();                                 \
    break;                                         \
  }
#define OPGEN_CUDA_DISPATCH_FLOATING(DTYPE, NAME, ...)                \
  [&] {                                                               \
    switch (DTYPE) {                                                  \
      OPGEN_CUDA_DISPATCH_CASE_(Float, float, __VA_ARGS__)            \
      OPGEN_CUDA_DISPATCH_CASE_(Double, double, __VA_ARGS__)          \
      OPGEN_CUDA_DISPATCH_CASE_(Half, __half, __VA_ARGS__)            \
      OPGEN_CUDA_DISPATCH_CASE_(BFloat16, __nv_bfloat16, __VA_ARGS__) \
      default:                                                        \
        OPGEN_NAMESPACE::cuda::unsupported_dtype(NAME, DTYPE);        \
    }                                                                 \
  }()
