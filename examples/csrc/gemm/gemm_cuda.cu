// gemm: C = A @ B on CUDA with a hand-written tiled kernel (plain FMA, no tensor cores, no TF32).
//
// The kernel itself is in gemm_kernel.cuh; this file picks its tile shape per dtype, checks the
// inputs' layout and launches it, on the stream gemm.cpp passes (which checks the arguments, sets
// the device and hands over row-major views). No torch header here. float16 and bfloat16 load and store their own type and accumulate
// in float; float64 uses a smaller tile (twice the bytes per register) and accumulates in double.
// gemm_naive is the seed's one-thread-per-output kernel, kept as the benchmark's baseline.
#include <cstdint>
#include <limits>

#include <stdexcept>
#include <string>

#include "common/elementwise.cuh"
#include "gemm/gemm.h"
#include "gemm/gemm_kernel.cuh"

namespace examples::gemm {
namespace {

// float32/16/bf16: 128x128 block tile, K step 16, 8x8 per thread, 256 threads, 33 KB of shared
// memory, one block per SM (up to 255 registers a thread). Measured on an H100 at 4096 and 8192
// against 128x128 with K step 8, one or two blocks per SM, 128x256, 256x128 and 64x128 tiles: the
// fastest (docs/gemm.md).
using FloatShape = TileShape<128, 128, 16, 8, 8, 1>;
// float64: a 64x64 tile with 4x4 per thread keeps twice-as-wide accumulators from spilling.
using DoubleShape = TileShape<64, 64, 16, 4, 4, 1>;

template <typename acc_t>
struct ShapeFor {
  using type = FloatShape;
};
template <>
struct ShapeFor<double> {
  using type = DoubleShape;
};

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
  OPGEN_CUDA_DISPATCH_FLOATING(c.dtype, "gemm_cuda", [&] { launch_gemm<scalar_t>(stream, a, b, c.as<scalar_t>()); });
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
