// gemm: C = A @ B on CUDA with a hand-written tiled kernel (plain FMA, no tensor cores, no TF32).
//
// The kernel itself is in gemm_kernel.cuh; this file picks its tile shape per dtype, checks the
// inputs' layout and launches it. float16 and bfloat16 load and store their own type and accumulate
// in float; float64 uses a smaller tile (twice the bytes per register) and accumulates in double.
// gemm_naive is the seed's one-thread-per-output kernel, kept as the benchmark's baseline.
#include <cstdint>
#include <limits>

#include "common/elementwise.cuh"
#include "common/torch_api.h"
#include "gemm/gemm.h"
#include "gemm/gemm_kernel.cuh"

namespace examples::gemm {
namespace {

using opgen::Tensor;

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

// A view of t with unit column stride (copied only when it has none) and its row stride.
struct RowMajor {
  Tensor t;
  int64_t ld;
};

RowMajor row_major(const Tensor& t) {
  const Tensor m = (t.size(1) <= 1 || t.stride(1) == 1) ? t : opgen::contiguous(t);
  // A single row's stride is never used to step; give it one that keeps vectors aligned.
  return {m, m.size(0) <= 1 ? m.size(1) : m.stride(0)};
}

template <typename T>
bool vector_friendly(const RowMajor& m) {
  return opgen::cuda::is_vector_aligned<4>(m.t.const_data_ptr<T>()) && m.ld % 4 == 0 && m.t.size(1) % 4 == 0;
}

template <typename T>
void launch_gemm(const RowMajor& a, const RowMajor& b, Tensor& c) {
  using acc_t = opgen::opmath_t<T>;
  using Shape = typename ShapeFor<acc_t>::type;
  const int64_t M = c.size(0), N = c.size(1), K = a.t.size(1);
  const int64_t tiles_m = (M + Shape::BM - 1) / Shape::BM;
  const int64_t tiles_n = (N + Shape::BN - 1) / Shape::BN;
  OPGEN_CHECK(tiles_m * tiles_n <= std::numeric_limits<int32_t>::max(), "gemm: output too large (", M, " x ", N, ")");
  const unsigned int blocks = static_cast<unsigned int>(tiles_m * tiles_n);
  const cudaStream_t stream = opgen::current_stream();
  // c is freshly allocated (aligned, row stride N), so N % 4 == 0 is all it needs for vector stores.
  const bool vec = vector_friendly<T>(a) && vector_friendly<T>(b);
  const T* pa = a.t.const_data_ptr<T>();
  const T* pb = b.t.const_data_ptr<T>();
  T* pc = c.mutable_data_ptr<T>();
  if (vec) {
    gemm_kernel<Shape, true, T, acc_t>
        <<<blocks, Shape::kThreads, 0, stream>>>(pa, pb, pc, M, N, K, a.ld, b.ld, tiles_m, tiles_n);
  } else {
    gemm_kernel<Shape, false, T, acc_t>
        <<<blocks, Shape::kThreads, 0, stream>>>(pa, pb, pc, M, N, K, a.ld, b.ld, tiles_m, tiles_n);
  }
  OPGEN_CUDA_LAUNCH_CHECK();
}

Tensor forward_cuda(const Tensor& a, const Tensor& b) {
  check_inputs(a, b);
  const opgen::DeviceGuard device_guard(a);
  const int64_t M = a.size(0), N = b.size(1), K = a.size(1);
  Tensor c = opgen::empty(a, {M, N});
  if (M == 0 || N == 0 || K == 0) {
    opgen::zero_(c);  // an empty sum is zero
    return c;
  }
  const RowMajor ra = row_major(a);
  const RowMajor rb = row_major(b);
  OPGEN_DISPATCH_FLOATING(a.scalar_type(), "gemm_cuda", [&] { launch_gemm<scalar_t>(ra, rb, c); });
  return c;
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

Tensor naive_cuda(const Tensor& a, const Tensor& b) {
  check_inputs(a, b);
  opgen::check_dtype(a, "a", opgen::kFloat);
  const opgen::DeviceGuard device_guard(a);
  const Tensor ac = opgen::contiguous(a);
  const Tensor bc = opgen::contiguous(b);
  const int64_t M = a.size(0), N = b.size(1), K = a.size(1);
  Tensor c = opgen::empty(a, {M, N});
  if (c.numel() == 0) {
    return c;
  }
  const int64_t tiles_n = (N + kNaiveSide - 1) / kNaiveSide;
  const int64_t tiles = (M + kNaiveSide - 1) / kNaiveSide * tiles_n;
  OPGEN_CHECK(tiles <= std::numeric_limits<int32_t>::max(), "gemm_naive: output too large (", M, " x ", N, ")");
  gemm_naive_kernel<<<static_cast<unsigned int>(tiles), dim3(kNaiveSide, kNaiveSide), 0,
                      opgen::current_stream()>>>(ac.const_data_ptr<float>(), bc.const_data_ptr<float>(),
                                                 c.mutable_data_ptr<float>(), M, N, K, tiles_n);
  OPGEN_CUDA_LAUNCH_CHECK();
  return c;
}

}  // namespace

OPGEN_LIBRARY_IMPL(examples, CUDA, m) {
  m.impl("gemm", OPGEN_KERNEL(forward_cuda));
  m.impl("gemm_naive", OPGEN_KERNEL(naive_cuda));
}

}  // namespace examples::gemm
