// fused_bias_gelu: CUDA kernels, on the stream fused_bias_gelu.cpp passes (the current stream of the
// input's device, set there). No torch header here.
//
// x is viewed as rows x cols (cols = x.size(-1)); a 2-D grid covers column vectors (x) by rows (y).
// Each thread loads its bias vector once, keeps it in registers and walks down its column,
// kRowsPerThread rows at a time with all their loads in flight before any math: no index division
// at all, 64-bit offsets, and x is read and y written exactly once. Vectors are 16 bytes when y is
// 16-byte aligned and cols is a multiple of the vector width (so a vector never straddles two rows);
// a misaligned x or bias (a view such as x[1:]) is read with aligned loads shifted into place
// (opgen::cuda::Input). Otherwise the same kernel moves one element at a time.
#include <algorithm>
#include <cstdint>

#include "common/elementwise.cuh"
#include "fused_bias_gelu/fused_bias_gelu.h"

namespace examples::fused_bias_gelu {

using opgen::Buffer;

namespace {

using opgen::cuda::Input;
using opgen::cuda::Vec;

constexpr int kBlockThreads = 256;
constexpr int kRowsPerThread = 4;

// Rows a thread does in one pass: half as many when an input is misaligned (two loads a vector),
// for the same loads in flight and registers.
template <bool kMisalignedInputs>
constexpr int rows_per_thread() {
  return kMisalignedInputs ? kRowsPerThread / 2 : kRowsPerThread;
}
constexpr int kMaxGridY = 65535;

// One thread's vectors of one input, in rows row, row + step, ...
template <int kVec, int kRows, typename T>
struct RowVectors {
  Vec<T, kVec> v[kRows];
};

template <int kVec, bool kMisalignedInputs, typename T>
__device__ __forceinline__ auto load_rows(const Input<T>& p, int64_t offset, int64_t step, int rows_here) {
  constexpr int kRows = rows_per_thread<kMisalignedInputs>();
  RowVectors<kVec, kRows, T> r;
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    if (k < rows_here) {
      r.v[k] = opgen::cuda::load_vector<kVec, kMisalignedInputs>(p, offset + k * step);
    }
  }
  return r;
}

// Called with every input already loaded (the arguments are evaluated first), so the loads of all
// kRows rows are in flight together.
template <int kVec, int kRows, typename Op, typename scalar_t, typename opmath_t, typename... in_t>
__device__ __forceinline__ void compute_rows(const Op& op, scalar_t* __restrict__ out, int64_t offset, int64_t step,
                                             int rows_here, const opmath_t (&bias)[kVec],
                                             const RowVectors<kVec, kRows, in_t>&... in) {
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    if (k < rows_here) {
      Vec<scalar_t, kVec> y;
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        y.v[j] = opgen::cuda::convert<scalar_t>(op(opgen::cuda::convert<opmath_t>(in.v[k].v[j])..., bias[j]));
      }
      *reinterpret_cast<Vec<scalar_t, kVec>*>(out + offset + k * step) = y;
    }
  }
}

// out[r][c] = op(in[r][c]..., bias[c]) for a row-major rows x cols layout; kVec columns per thread.
// kMisalignedInputs: bias or an input starts mid-vector (a separate kernel, so that the shifting
// costs the aligned case nothing).
template <int kVec, bool kMisalignedInputs, typename Op, typename scalar_t, typename... in_t>
__global__ void __launch_bounds__(kBlockThreads)
    bias_rows_kernel(Op op, int64_t rows, int64_t cols, scalar_t* __restrict__ out, Input<scalar_t> bias,
                     Input<in_t>... in) {
  using opmath_t = opgen::opmath_t<scalar_t>;
  const int64_t col = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * kVec;
  if (col >= cols) {
    return;
  }
  const Vec<scalar_t, kVec> b = opgen::cuda::load_vector<kVec, kMisalignedInputs>(bias, col);
  opmath_t bias_here[kVec];
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    bias_here[j] = opgen::cuda::convert<opmath_t>(b.v[j]);
  }

  constexpr int kRows = rows_per_thread<kMisalignedInputs>();
  const int64_t row_stride = int64_t(gridDim.y) * blockDim.y;
  const int64_t step = row_stride * cols;  // elements between the rows one thread does in one pass
  for (int64_t row = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; row < rows; row += kRows * row_stride) {
    int rows_here = 0;
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      rows_here += row + k * row_stride < rows;
    }
    const int64_t offset = row * cols + col;
    compute_rows<kVec, kRows>(op, out, offset, step, rows_here, bias_here,
                              load_rows<kVec, kMisalignedInputs>(in, offset, step, rows_here)...);
  }
}

// Threads of a block along the columns: the power of two in [32, 256] that launches the fewest idle
// threads for this shape (e.g. 64 x 4 for 192 vectors per row, 256 x 1 for a single long row).
int block_columns(int64_t rows, int64_t col_vectors) {
  int best = kBlockThreads;
  int64_t best_launched = -1;
  for (int bx = kBlockThreads; bx >= 32; bx /= 2) {
    const int by = kBlockThreads / bx;
    const int64_t launched = (col_vectors + bx - 1) / bx * bx * ((rows + by - 1) / by * by);
    if (best_launched < 0 || launched < best_launched) {
      best = bx;
      best_launched = launched;
    }
  }
  return best;
}

template <int kVec, bool kMisalignedInputs, typename Op, typename scalar_t, typename... in_t>
void launch(cudaStream_t stream, const Op& op, int64_t rows, int64_t cols, scalar_t* out, Input<scalar_t> bias,
            Input<in_t>... in) {
  constexpr int kRows = rows_per_thread<kMisalignedInputs>();
  const int64_t col_vectors = cols / kVec;
  const int bx = block_columns(rows, col_vectors);
  const int by = kBlockThreads / bx;
  const dim3 block(bx, by);
  const dim3 grid(opgen::cuda::grid_size(col_vectors, bx),
                  static_cast<unsigned int>(std::min<int64_t>((rows + by * kRows - 1) / (by * kRows), kMaxGridY)));
  bias_rows_kernel<kVec, kMisalignedInputs><<<grid, block, 0, stream>>>(op, rows, cols, out, bias, in...);
  OPGEN_CUDA_LAUNCH_CHECK();
}

// Picks the 16-byte vector path when it is safe, else the scalar one. numel > 0, a multiple of cols.
// Vectors start at multiples of kVec in every row, so each input is misaligned by the same bytes in
// all of them.
template <typename Op, typename scalar_t, typename... in_t>
void launch_bias_rows(cudaStream_t stream, const Op& op, int64_t numel, int64_t cols, scalar_t* out,
                      const scalar_t* bias, const in_t*... in) {
  const int64_t rows = numel / cols;
  constexpr int kVec = opgen::cuda::vector_width<scalar_t>();
  const bool vectorizable = cols % kVec == 0 && opgen::cuda::is_vector_aligned<kVec>(out) &&
                            opgen::cuda::is_vector_aligned<1>(bias) && (opgen::cuda::is_vector_aligned<1>(in) && ...);
  if (!vectorizable) {
    launch<1, false>(stream, op, rows, cols, out, Input<scalar_t>{bias, 0}, Input<in_t>{in, 0}...);
  } else if (opgen::cuda::is_vector_aligned<kVec>(bias) && (opgen::cuda::is_vector_aligned<kVec>(in) && ...)) {
    launch<kVec, false>(stream, op, rows, cols, out, Input<scalar_t>{bias, 0}, Input<in_t>{in, 0}...);
  } else {
    launch<kVec, true>(stream, op, rows, cols, out, Input<scalar_t>{bias, opgen::cuda::misalignment<kVec>(bias)},
                       Input<in_t>{in, opgen::cuda::misalignment<kVec>(in)}...);
  }
}

}  // namespace

// y = gelu(x + bias) for x (rows x cols, contiguous, numel > 0) and bias (cols).
void forward_cuda(opgen::CudaStream stream, const Buffer& y, const Buffer& x, const Buffer& bias, int64_t cols) {
  OPGEN_CUDA_DISPATCH_FLOATING(x.dtype, "fused_bias_gelu_cuda", [&] {
    launch_bias_rows(stream, Forward{}, x.numel, cols, y.as<scalar_t>(), bias.as<const scalar_t>(),
                     x.as<const scalar_t>());
  });
}

// dz = grad * gelu'(x + bias), same layout.
void backward_cuda(opgen::CudaStream stream, const Buffer& dz, const Buffer& grad, const Buffer& x,
                   const Buffer& bias, int64_t cols) {
  OPGEN_CUDA_DISPATCH_FLOATING(x.dtype, "fused_bias_gelu_backward_cuda", [&] {
    launch_bias_rows(stream, Backward{}, x.numel, cols, dz.as<scalar_t>(), bias.as<const scalar_t>(),
                     grad.as<const scalar_t>(), x.as<const scalar_t>());
  });
}

}  // namespace examples::fused_bias_gelu
