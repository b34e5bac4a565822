// rgb_to_gray: CUDA kernel, on the stream rgb_to_gray.cpp passes (the current stream of img's
// device), 64-bit indices. No torch header here.
//
// Each block converts a tile of 4096 pixels, 16 per thread. RGB pixels are 3 bytes, so a thread's
// 16 pixels are 48 bytes: the block stages its 12 KiB of RGB in shared memory with coalesced
// 16-byte loads, each thread reads its three 16-byte vectors back (a 48-byte stride: no bank
// conflicts) and writes its 16 gray bytes as one 16-byte store. That needs both pointers 16-byte
// aligned; otherwise (a view that starts mid-vector) and in the last, partial tile, threads
// convert one pixel at a time.
#include <cstdint>

#include "common/elementwise.cuh"
#include "rgb_to_gray/rgb_to_gray.h"

namespace examples::rgb_to_gray {

using opgen::Buffer;

constexpr int kThreads = 256;
constexpr int kPixelsPerThread = 16;  // one 16-byte vector of gray
constexpr int64_t kTilePixels = int64_t(kThreads) * kPixelsPerThread;
constexpr int kTileRgbVectors = kThreads * 3;  // 16-byte vectors of RGB in a tile

// The gray bytes of the 16 pixels in `rgb` (48 bytes), packed into one 16-byte vector. Bytes are
// taken out of the 32-bit words with shifts, so everything stays in registers.
__device__ __forceinline__ uint4 luma16(const uint4 (&rgb)[3]) {
  const uint32_t words[12] = {rgb[0].x, rgb[0].y, rgb[0].z, rgb[0].w, rgb[1].x, rgb[1].y,
                              rgb[1].z, rgb[1].w, rgb[2].x, rgb[2].y, rgb[2].z, rgb[2].w};
  const auto byte = [&](int i) { return (words[i / 4] >> (8 * (i % 4))) & 0xFFu; };
  uint32_t gray[4];
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    gray[w] = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int first = 3 * (4 * w + k);  // the pixel's R byte
      gray[w] |= uint32_t(luma(byte(first), byte(first + 1), byte(first + 2))) << (8 * k);
    }
  }
  return make_uint4(gray[0], gray[1], gray[2], gray[3]);
}

template <bool kVectorized>
__global__ void __launch_bounds__(kThreads)
    rgb_to_gray_kernel(const uint8_t* __restrict__ rgb, uint8_t* __restrict__ gray, int64_t pixels) {
  const int64_t tile_start = int64_t(blockIdx.x) * kTilePixels;
  // The same for every thread of the block, so the __syncthreads below is reached by all or none.
  if (kVectorized && tile_start + kTilePixels <= pixels) {
    __shared__ uint4 tile[kTileRgbVectors];
    const uint4* tile_rgb = reinterpret_cast<const uint4*>(rgb + 3 * tile_start);
#pragma unroll
    for (int k = 0; k < 3; ++k) {
      tile[k * kThreads + threadIdx.x] = tile_rgb[k * kThreads + threadIdx.x];
    }
    __syncthreads();
    const uint4 mine[3] = {tile[3 * threadIdx.x], tile[3 * threadIdx.x + 1], tile[3 * threadIdx.x + 2]};
    reinterpret_cast<uint4*>(gray + tile_start)[threadIdx.x] = luma16(mine);
  } else {
    const int64_t tile_end = tile_start + kTilePixels < pixels ? tile_start + kTilePixels : pixels;
    for (int64_t p = tile_start + threadIdx.x; p < tile_end; p += kThreads) {
      gray[p] = luma(rgb[3 * p], rgb[3 * p + 1], rgb[3 * p + 2]);
    }
  }
}

// gray (H x W) from rgb (H x W x 3), both contiguous uint8.
void forward_cuda(opgen::CudaStream stream, const Buffer& gray, const Buffer& rgb_buffer) {
  const int64_t pixels = gray.numel;
  if (pixels == 0) {
    return;
  }
  const uint8_t* rgb = rgb_buffer.as<const uint8_t>();
  uint8_t* out = gray.as<uint8_t>();
  const unsigned int blocks = opgen::cuda::grid_size(pixels, kTilePixels);
  if (opgen::cuda::is_vector_aligned<16>(rgb) && opgen::cuda::is_vector_aligned<16>(out)) {
    rgb_to_gray_kernel<true><<<blocks, kThreads, 0, stream>>>(rgb, out, pixels);
  } else {
    rgb_to_gray_kernel<false><<<blocks, kThreads, 0, stream>>>(rgb, out, pixels);
  }
  OPGEN_CUDA_LAUNCH_CHECK();
}

}  // namespace examples::rgb_to_gray
