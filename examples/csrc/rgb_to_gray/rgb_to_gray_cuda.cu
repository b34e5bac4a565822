// rgb_to_gray: CUDA kernel, on the stream rgb_to_gray.cpp passes (the current stream of img's
// device), 64-bit indices. No torch header here.
//
// Each block converts a tile of 4096 pixels, 16 per thread. RGB pixels are 3 bytes, so a thread's
// 16 pixels are 48 bytes: the block stages its 12 KiB of RGB in shared memory with coalesced
// 16-byte loads, each thread reads its three 16-byte vectors back (a 48-byte stride: no bank
// conflicts) and writes its 16 gray bytes as one 16-byte store. An RGB view that starts mid-vector
// (rgb[1:], say) stages the aligned vectors holding the tile (one more) and each thread shifts its
// 48 bytes out of four vectors in registers. A gray output that is not 16-byte aligned, and the
// last, partial tile, go one pixel at a time.
#include <cstdint>

#include "common/elementwise.cuh"
#include "rgb_to_gray/rgb_to_gray.h"

namespace examples::rgb_to_gray {

using opgen::Buffer;

constexpr int kThreads = 256;
constexpr int kPixelsPerThread = 16;  // one 16-byte vector of gray
constexpr int64_t kTilePixels = int64_t(kThreads) * kPixelsPerThread;
constexpr int kTileRgbVectors = kThreads * 3;  // 16-byte vectors of RGB in a tile

// The gray bytes of the 16 pixels in `words` (48 bytes of RGB), packed into one 16-byte vector.
// Bytes are taken out of the 32-bit words with shifts, so everything stays in registers.
__device__ __forceinline__ uint4 luma16(const uint32_t (&words)[12]) {
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

// This thread's 48 bytes of RGB, `misalignment` bytes into the staged tile.
template <bool kMisaligned>
__device__ __forceinline__ void my_rgb_words(const uint4* tile, int misalignment, uint32_t (&words)[12]) {
  const uint4* mine = tile + 3 * threadIdx.x;
  if constexpr (!kMisaligned) {
#pragma unroll
    for (int v = 0; v < 3; ++v) {
      const uint4 x = mine[v];
      words[4 * v] = x.x, words[4 * v + 1] = x.y, words[4 * v + 2] = x.z, words[4 * v + 3] = x.w;
    }
  } else {
    uint32_t straddled[16];  // the four staged vectors the 48 bytes straddle
#pragma unroll
    for (int v = 0; v < 4; ++v) {
      const uint4 x = mine[v];
      straddled[4 * v] = x.x, straddled[4 * v + 1] = x.y, straddled[4 * v + 2] = x.z, straddled[4 * v + 3] = x.w;
    }
    opgen::cuda::shift_words(straddled, misalignment, words);
  }
}

// rgb starts `misalignment` bytes past a 16-byte boundary (so does every tile: tiles are 12 KiB);
// kMisaligned: it is not 0 (a separate kernel, so that the shifting costs the aligned case nothing).
template <bool kVectorized, bool kMisaligned>
__global__ void __launch_bounds__(kThreads)
    rgb_to_gray_kernel(const uint8_t* __restrict__ rgb, int misalignment, uint8_t* __restrict__ gray, int64_t pixels) {
  const int64_t tile_start = int64_t(blockIdx.x) * kTilePixels;
  // The same for every thread of the block, so the __syncthreads below is reached by all or none.
  if (kVectorized && tile_start + kTilePixels <= pixels) {
    // The aligned vectors holding the tile's bytes: one more when it starts mid-vector (its bytes
    // are still the tile's, so nothing outside the image is read).
    __shared__ uint4 tile[kTileRgbVectors + (kMisaligned ? 1 : 0)];
    const uint4* tile_rgb = reinterpret_cast<const uint4*>(rgb + 3 * tile_start - (kMisaligned ? misalignment : 0));
#pragma unroll
    for (int k = 0; k < 3; ++k) {
      tile[k * kThreads + threadIdx.x] = tile_rgb[k * kThreads + threadIdx.x];
    }
    if (kMisaligned && threadIdx.x == 0) {
      tile[kTileRgbVectors] = tile_rgb[kTileRgbVectors];
    }
    __syncthreads();
    uint32_t words[12];
    my_rgb_words<kMisaligned>(tile, misalignment, words);
    reinterpret_cast<uint4*>(gray + tile_start)[threadIdx.x] = luma16(words);
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
  const int misalignment = opgen::cuda::misalignment<16>(rgb);
  if (!opgen::cuda::is_vector_aligned<16>(out)) {
    rgb_to_gray_kernel<false, false><<<blocks, kThreads, 0, stream>>>(rgb, 0, out, pixels);
  } else if (misalignment == 0) {
    rgb_to_gray_kernel<true, false><<<blocks, kThreads, 0, stream>>>(rgb, 0, out, pixels);
  } else {
    rgb_to_gray_kernel<true, true><<<blocks, kThreads, 0, stream>>>(rgb, misalignment, out, pixels);
  }
  OPGEN_CUDA_LAUNCH_CHECK();
}

}  // namespace examples::rgb_to_gray
