// gemm: C = A @ B on CUDA with a hand-written tiled kernel (plain FMA, no tensor cores, no TF32).
//
// The kernels are in gemm_async_kernel.cuh (float32: cp.async pipeline) and gemm_kernel.cuh
// (float16, bfloat16, float64: register-staged loads); this file picks the kernel and its tile shape,
// checks the inputs' layout and launches it, on the stream gemm.cpp passes (which checks the
// arguments, sets the device and hands over row-major views, float32 b with 16-byte aligned rows).
// No torch header here. float16 and bfloat16 load and store their own type and accumulate in float;
// float64 uses a smaller tile (twice the bytes per register) and accumulates in double.
// gemm_naive is the seed's one-thread-per-output kernel, kept as the benchmark's baseline.
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "common/elementwise.cuh"
#include "gemm/gemm.h"
#include "gemm/gemm_async_kernel.cuh"
#include "gemm/gemm_kernel.cuh"

namespace examples::gemm {
namespace {

// float16/bfloat16: 128x128 block tile, K step 16, 8x8 per thread, 256 threads, register-staged
// loads (gemm_kernel.cuh), one block per SM (up to 255 registers a thread).
using HalfShape = TileShape<128, 128, 16, 8, 8, 1>;
// float64: a 64x64 tile with 4x4 per thread keeps twice-as-wide accumulators from spilling.
using DoubleShape = TileShape<64, 64, 16, 4, 4, 1>;

template <typename acc_t>
struct ShapeFor {
  using type = HalfShape;
};
template <>
struct ShapeFor<double> {
  using type = DoubleShape;
};

// float32 (gemm_async_kernel.cuh): 64x128 block tiles, K step 8, four cp.async stages, 128 threads
// as 2 warps of 32x64, 8x8 per thread, four blocks per SM (127 registers a thread, no spills). On
// an H100: 47.7 TFLOP/s at 4096^3 and 48.0 at 8192^3 (0.92 and 0.93 of cuBLAS without TF32), the
// fastest of ~40 shapes we timed (docs/gemm.md): 128x128, 128x256 and 256x128 tiles with 256
// threads and one or two blocks per SM, K steps 8 to 32, 3 to 6 stages, 8x16 and 16x8 per thread.
using FloatShape = AsyncShape<64, 128, 8, 32, 64, 8, 8, 4, 4>;
// Products with fewer 64x128 tiles than half the SMs (256^3: 0.80 of cuBLAS against 0.61 with
// FloatShape): 64x64 tiles, 4x8 per thread, twice the blocks.
using SmallFloatShape = AsyncShape<64, 64, 8, 32, 32, 4, 8, 4, 4>;

// Grids are 1-D: refuses more tiles than a launch can have.
void check_tiles(int64_t tiles, const char* name, int64_t M, int64_t N) {
  if (tiles > std::numeric_limits<int32_t>::max()) {
    throw std::runtime_error(std::string(name) + ": output too large (" + std::to_string(M) + " x " +
                             std::to_string(N) + ")");
  }
}

template <typename T>
bool vector_friendly(const Matrix& m) {
  return opgen::cuda::is_vector_aligned<4>(m.data.as<const T>()) && m.ld % 4 == 0 && m.cols % 4 == 0;
}

// float32, b's rows 16-byte aligned (gemm.cpp sees to it).
template <typename Shape>
void launch_gemm_async(cudaStream_t stream, const Matrix& a, const Matrix& b, float* pc) {
  const int64_t M = a.rows, N = b.cols, K = a.cols;
  const int64_t tiles_m = (M + Shape::BM - 1) / Shape::BM;
  const int64_t tiles_n = (N + Shape::BN - 1) / Shape::BN;
  check_tiles(tiles_m * tiles_n, "gemm", M, N);
  const auto kernel = gemm_async_kernel<Shape>;
  if constexpr (Shape::kSmemBytes > 48 * 1024) {  // past the default limit of dynamic shared memory
    OPGEN_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Shape::kSmemBytes));
  }
  kernel<<<static_cast<unsigned int>(tiles_m * tiles_n), Shape::kThreads, Shape::kSmemBytes, stream>>>(
      a.data.as<const float>(), b.data.as<const float>(), pc, M, N, K, a.ld, b.ld, tiles_m, tiles_n);
  OPGEN_CUDA_LAUNCH_CHECK();
}

void launch_gemm_float(cudaStream_t stream, const Matrix& a, const Matrix& b, float* pc) {
  if (!rows_16_byte_aligned(b)) {
    throw std::runtime_error("gemm: internal error: b's rows must be 16-byte aligned");
  }
  int device = 0, sms = 0;
  OPGEN_CUDA_CHECK(cudaGetDevice(&device));
  OPGEN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int64_t tiles =
      (a.rows + FloatShape::BM - 1) / FloatShape::BM * ((b.cols + FloatShape::BN - 1) / FloatShape::BN);
  if (2 * tiles < sms) {
    launch_gemm_async<SmallFloatShape>(stream, a, b, pc);
  } else {
    launch_gemm_async<FloatShape>(stream, a, b, pc);
  }
}

// float16, bfloat16, float64: the register-staged kernel.
template <typename T>
void launch_gemm(cudaStream_t stream, const Matrix& a, const Matrix& b, T* pc) {
  using acc_t = opgen::opmath_t<T>;
  using Shape = typename ShapeFor<acc_t>::type;
  const int64_t M = a.rows, N = b.cols, K = a.cols;
  const int64_t tiles_m = (M + Shape::BM - 1) / Shape::BM;
  const int64_t tiles_n = (N + Shape::BN - 1) / Shape::BN;
  check_tiles(tiles_m * tiles_n, "gemm", M, N);
  const unsigned int blocks = static_cast<unsigned int>(tiles_m * tiles_n);
  // c is freshly allocated (aligned, row stride N), so N % 4 == 0 is all it needs for vector stores.
  const bool vec = vector_friendly<T>(a) && vector_friendly<T>(b);
  const T* pa = a.data.as<const T>();
  const T* pb = b.data.as<const T>();
  if (vec) {
    gemm_kernel<Shape, true, T, acc_t>
        <<<blocks, Shape::kThreads, 0, stream>>>(pa, pb, pc, M, N, K, a.ld, b.ld, tiles_m, tiles_n);
  } else {
    gemm_kernel<Shape, false, T, acc_t>
        <<<blocks, Shape::kThreads, 0, stream>>>(pa, pb, pc, M, N, K, a.ld, b.ld, tiles_m, tiles_n);
  }
  OPGEN_CUDA_LAUNCH_CHECK();
}

// dst (rows x ld, contiguous) = src with each row padded by zeros to ld columns.
__global__ void pad_rows_kernel(const float* __restrict__ src, int64_t src_ld, float* __restrict__ dst, int64_t ld,
                                int64_t cols, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const int64_t row = i / ld, col = i % ld;
    dst[i] = col < cols ? src[row * src_ld + col] : 0.0f;
  }
}

// The seed's kernel: one thread per output element, every operand read from global memory.
constexpr int kNaiveSide = 16;

__global__ void __launch_bounds__(kNaiveSide* kNaiveSide)
    gemm_naive_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int64_t M,
                      int64_t N, int64_t K, int64_t tiles_n) {
  const int64_t row = (blockIdx.x / tiles_n) * kNaiveSide + threadIdx.y;
  const int64_t col = (blockIdx.x % tiles_n) * kNaiveSide + threadIdx.x;
  if (row >= M || col >= N) {
    return;
  }
  float sum = 0.0f;
  for (int64_t k = 0; k < K; ++k) {
    sum += a[row * K + k] * b[k * N + col];
  }
  c[row * N + col] = sum;
}

}  // namespace

// c (M x N, contiguous, not empty) = a (M x K) @ b (K x N).
void forward_cuda(opgen::CudaStream stream, const opgen::Buffer& c, const Matrix& a, const Matrix& b) {
  OPGEN_CUDA_DISPATCH_FLOATING(c.dtype, "gemm_cuda", [&] {
    if constexpr (std::is_same_v<scalar_t, float>) {
      launch_gemm_float(stream, a, b, c.as<float>());
    } else {
      launch_gemm<scalar_t>(stream, a, b, c.as<scalar_t>());
    }
  });
}

// dst (src.rows x ld, contiguous, float32) = src with its rows padded to ld columns.
void pad_rows_cuda(opgen::CudaStream stream, const Matrix& src, const opgen::Buffer& dst, int64_t ld) {
  constexpr int kThreads = 256;
  pad_rows_kernel<<<opgen::cuda::grid_size(dst.numel, kThreads), kThreads, 0, stream>>>(
      src.data.as<const float>(), src.ld, dst.as<float>(), ld, src.cols, dst.numel);
  OPGEN_CUDA_LAUNCH_CHECK();
}

// The same with the seed's kernel: float32, a and b contiguous.
void naive_cuda(opgen::CudaStream stream, const opgen::Buffer& c, const Matrix& a, const Matrix& b) {
  const int64_t M = a.rows, N = b.cols, K = a.cols;
  const int64_t tiles_n = (N + kNaiveSide - 1) / kNaiveSide;
  const int64_t tiles = (M + kNaiveSide - 1) / kNaiveSide * tiles_n;
  check_tiles(tiles, "gemm_naive", M, N);
  gemm_naive_kernel<<<static_cast<unsigned int>(tiles), dim3(kNaiveSide, kNaiveSide), 0, stream>>>(
      a.data.as<const float>(), b.data.as<const float>(), c.as<float>(), M, N, K, tiles_n);
  OPGEN_CUDA_LAUNCH_CHECK();
}

}  // namespace examples::gemm
