// What a kernel's host and device code share without including torch: element types by their
// dtype code, a tensor's data handed from the op's .cpp to its .cu (Buffer), the CUDA stream it runs
// on, and fixed-size arrays for functors with several results (one gradient per input).
//
// .cu files include only this (through common/cuda_utils.cuh), never torch: nvcc then compiles
// them in about a second instead of parsing torch's headers on every edit. The .cpp side gets it
// through torch_api.h.
//
// The shared helpers live in examples::opgen, this project's own namespace: ops, written in
// examples::<op>, call them as opgen::..., and two extensions made from this template (at
// different versions) can share a process without their inline helpers colliding.
#pragma once

#include <cmath>  // for the ops' math: std::exp, std::tanh, ...
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define OPGEN_HOST_DEVICE __host__ __device__
#else
#define OPGEN_HOST_DEVICE
#endif

// The helpers' namespace, fully qualified, for the macros that name them.
#define OPGEN_NAMESPACE ::examples::opgen

namespace examples::opgen {

// The dtypes kernels see, numbered as torch numbers its ScalarType (torch_api.h checks this).
enum class DType : int8_t {
  Byte = 0,
  Char = 1,
  Short = 2,
  Int = 3,
  Long = 4,
  Half = 5,
  Float = 6,
  Double = 7,
  Bool = 11,
  BFloat16 = 15,
  UInt16 = 27,
};

// A contiguous tensor's memory as a kernel needs it.
struct Buffer {
  void* data = nullptr;
  int64_t numel = 0;
  DType dtype = DType::Float;

  template <typename T>
  T* as() const {
    return static_cast<T*>(data);
  }
};

// An input broadcast over the output (declare(..., broadcast=[...])): output element i reads
// data[(i / inner) % period]. A bias over the last dimension has inner 1 and period its length; a
// per-channel scale [C, 1, 1] of an [N, C, H, W] output has inner H * W and period C.
template <typename T>
struct Broadcast {
  const T* data;
  int64_t inner;
  int64_t period;
  int64_t offset = 0;  // added to i (the CUDA map's pointers start past its head)

  OPGEN_HOST_DEVICE const T& operator[](int64_t i) const {
    return data[((i + offset) / inner) % period];
  }
};

// A broadcast input as the host code hands it to a kernel: its buffer and where its elements repeat.
struct BroadcastBuffer {
  Buffer buffer;
  int64_t inner = 1;
  int64_t period = 1;

  template <typename T>
  Broadcast<T> as() const {
    return {buffer.as<T>(), inner, period};
  }
};

// A CUDA stream, passed as a plain pointer so that .cpp files need no CUDA headers; in CUDA code
// it converts to the cudaStream_t it is.
struct CudaStream {
  void* handle = nullptr;
#ifdef __CUDACC__
  operator cudaStream_t() const {
    return static_cast<cudaStream_t>(handle);
  }
#endif
};

// K values of type T: what a functor with several results returns, e.g. one gradient per input.
template <typename T, int K>
struct Array {
  T v[K];
  OPGEN_HOST_DEVICE T& operator[](int i) {
    return v[i];
  }
  OPGEN_HOST_DEVICE const T& operator[](int i) const {
    return v[i];
  }
};

// The gradients of an element-wise function with respect to each of its K inputs.
template <typename T, int K>
using Grads = Array<T, K>;

// A functor's result as an Array: a single value is an Array of one.
template <typename T>
OPGEN_HOST_DEVICE Array<T, 1> as_array(T value) {
  return Array<T, 1>{value};
}
template <typename T, int K>
OPGEN_HOST_DEVICE Array<T, K> as_array(const Array<T, K>& values) {
  return values;
}

// A row-wise kernel's K tensors (common/rowwise.h): rows of `cols` elements each, one after another (row_stride =
// cols), or one vector read by every row (row_stride = 0: a broadcast weight).
template <typename S, int K>
struct RowTensors {
  Array<S*, K> data;
  Array<int64_t, K> cols;
  Array<int64_t, K> row_stride;
};

// Which of a row-wise kernel's inputs may be broadcast (row_stride 0), bit i for input i, known when
// it is compiled: those declared so (rowwise.cuh's launch_rows<kBroadcast>). Its register kernels
// hold such an input across rows where its row_stride is 0, and load the others every row, with no
// register kept for a case that cannot happen. kAnyBroadcast: any input may be.
constexpr unsigned kAnyBroadcast = ~0u;

template <typename... Flags>
constexpr unsigned broadcast_mask(Flags... broadcast) {
  unsigned mask = 0, bit = 1;
  ((mask |= broadcast ? bit : 0u, bit <<= 1), ...);
  return mask;
}

// The tensors of a row-wise kernel from their buffers: a row tensor holds `rows` rows, a broadcast
// one is the vector every row reads; a null buffer (a result nobody asked for) has no rows.
template <typename S, int K>
RowTensors<S, K> row_tensors(int64_t rows, const Array<Buffer, K>& buffers, const Array<bool, K>& broadcast) {
  RowTensors<S, K> tensors{};
  for (int k = 0; k < K; ++k) {
    const int64_t cols = broadcast[k] ? buffers[k].numel : rows > 0 ? buffers[k].numel / rows : 0;
    tensors.data[k] = buffers[k].template as<S>();
    tensors.cols[k] = cols;
    tensors.row_stride[k] = broadcast[k] ? 0 : cols;
  }
  return tensors;
}

// The type arithmetic runs in: float for 16-bit floating types, the type itself otherwise. Each
// 16-bit type (torch's c10::Half, CUDA's __half, ...) adds its specialization where it is defined.
template <typename T>
struct OpMath {
  using type = T;
};
template <typename T>
using opmath_t = typename OpMath<T>::type;

// v rounded to S (a tensor's dtype) and back to T: an intermediate as a kernel computing in S has
// it (declare(..., storage=True) gives an elementwise op's functors S: Forward<T, S>). CUDA's 16-bit
// types specialize Rounding in cuda_utils.cuh.
template <typename S>
struct Rounding {
  template <typename T>
  OPGEN_HOST_DEVICE static T apply(T v) {
    return static_cast<T>(static_cast<S>(v));
  }
};
template <typename S, typename T>
OPGEN_HOST_DEVICE T rounded(T v) {
  return Rounding<S>::apply(v);
}

}  // namespace examples::opgen
