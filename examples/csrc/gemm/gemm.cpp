// gemm: host code for CPU and CUDA (checks, allocation, device guard, stream) and the CPU kernel
// (C = A @ B); the declaration in opgen_examples/ops/gemm.py registers it. The CUDA kernels are in gemm_cuda.cu.
//
// The CPU path is the reference: torch's matmul, which is mm for two matrices (MKL/OpenBLAS or
// torch's own loops). float16/bfloat16 are multiplied in float32 and rounded once: oneDNN's bfloat16
// GEMM on a CPU with AMX turned the inf of a[i, k] into NaN across row i (seen on an H100 host),
// where IEEE math gives +-inf.
// The point of this op is its hand-written CUDA SGEMM.
#include "common/checks.h"
#include "common/torch_api.h"
#include "gemm/gemm.h"

namespace examples::gemm {

using opgen::Tensor;

#ifdef OPGEN_WITH_CUDA
// In gemm_cuda.cu (compiled by nvcc without torch's headers). c is contiguous, M x N, not empty.
void forward_cuda(opgen::CudaStream stream, const opgen::Buffer& c, const Matrix& a, const Matrix& b);
void naive_cuda(opgen::CudaStream stream, const opgen::Buffer& c, const Matrix& a, const Matrix& b);
void pad_rows_cuda(opgen::CudaStream stream, const Matrix& src, const opgen::Buffer& dst, int64_t ld);
#endif

namespace {

// a (M, K) @ b (K, N): two floating-point matrices of one dtype on one device.
void check_inputs(const Tensor& a, const Tensor& b) {
  opgen::check_floating(a, "a");
  opgen::check_floating(b, "b");
  opgen::check_dim(a, "a", 2);
  opgen::check_dim(b, "b", 2);
  opgen::check_same_dtype(a, "a", b, "b");
  opgen::check_same_device(a, "a", b, "b");
  OPGEN_CHECK(a.size(1) == b.size(0), "a's columns and b's rows must match (a @ b), got a ", opgen::shape_name(a),
              " and b ", opgen::shape_name(b));
}

#ifdef OPGEN_WITH_CUDA
// t as a row-major matrix with unit column stride: t itself when it has one (a view with padded
// rows, say), else a contiguous copy. `keep` holds the copy alive.
Matrix row_major(const Tensor& t, Tensor& keep) {
  keep = (t.size(1) <= 1 || t.stride(1) == 1) ? t : opgen::contiguous(t);
  // A single row's stride is never used to step; give it one that keeps vectors aligned.
  const int64_t ld = keep.size(0) <= 1 ? keep.size(1) : keep.stride(0);
  const opgen::Buffer data{const_cast<void*>(keep.const_data_ptr()), keep.numel(),
                           static_cast<opgen::DType>(keep.scalar_type())};
  return {data, keep.size(0), keep.size(1), ld};
}

// float32 b for the CUDA kernel, which copies its rows 16 bytes at a time: b itself when its rows
// are 16-byte aligned, else a copy with rows padded to a multiple of 4 floats (held by `keep`). The
// copy moves K x N values next to the product's M x N x K multiply-adds.
Matrix aligned_rows(opgen::CudaStream stream, const Tensor& b, const Matrix& rb, Tensor& keep) {
  if (rows_16_byte_aligned(rb)) {
    return rb;
  }
  const int64_t ld = (rb.cols + 3) / 4 * 4;
  keep = opgen::empty(b, {rb.rows, ld});
  const opgen::Buffer padded = opgen::output(keep);
  pad_rows_cuda(stream, rb, padded, ld);
  return {padded, rb.rows, rb.cols, ld};
}

// A contiguous tensor as a Matrix.
Matrix contiguous_matrix(const Tensor& t) {
  return {opgen::input(t), t.size(0), t.size(1), t.size(1)};
}
#endif

}  // namespace

Tensor forward(const Tensor& a, const Tensor& b) {
  check_inputs(a, b);
#ifdef OPGEN_WITH_CUDA
  if (a.is_cuda()) {
    const opgen::DeviceGuard device_guard(a);
    const int64_t M = a.size(0), N = b.size(1), K = a.size(1);
    Tensor c = opgen::empty(a, {M, N});
    if (M == 0 || N == 0 || K == 0) {
      opgen::zero_(c);  // an empty sum is zero
      return c;
    }
    const opgen::CudaStream stream = opgen::current_stream();
    Tensor a_rows, b_rows, b_padded;
    const Matrix ra = row_major(a, a_rows);
    Matrix rb = row_major(b, b_rows);
    if (a.scalar_type() == opgen::kFloat) {
      rb = aligned_rows(stream, b, rb, b_padded);
    }
    forward_cuda(stream, opgen::output(c), ra, rb);
    return c;
  }
#endif
  if (a.scalar_type() == opgen::kHalf || a.scalar_type() == opgen::kBFloat16) {
    const Tensor c = torch::stable::matmul(torch::stable::to(a, opgen::kFloat), torch::stable::to(b, opgen::kFloat));
    return torch::stable::to(c, a.scalar_type());
  }
  return torch::stable::matmul(a, b);
}

#ifdef OPGEN_WITH_CUDA
// The seed's kernel: one thread per output element, float32 only, CUDA only.
Tensor naive(const Tensor& a, const Tensor& b) {
  check_inputs(a, b);
  opgen::check_dtype(a, "a", opgen::kFloat);
  const opgen::DeviceGuard device_guard(a);
  const Tensor ac = opgen::contiguous(a);
  const Tensor bc = opgen::contiguous(b);
  Tensor c = opgen::empty(a, {a.size(0), b.size(1)});
  if (c.numel() == 0) {
    return c;
  }
  naive_cuda(opgen::current_stream(), opgen::output(c), contiguous_matrix(ac), contiguous_matrix(bc));
  return c;
}
#endif

}  // namespace examples::gemm
