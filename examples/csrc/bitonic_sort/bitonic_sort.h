// bitonic_sort: the order every kernel sorts by, shared by the CPU (bitonic_sort.cpp) and CUDA
// (bitonic_sort_cuda.cu, bitonic_sort_radix.cu) code. Torch-free: each side adds the keys of its own
// 16-bit float types (HalfKey, BFloat16Key below).
//
// Each element becomes an unsigned key whose unsigned order is the requested order, the
// descending one included, and the key is paired with the element's index in its row. Sorting
// (key, index) pairs, all distinct, gives one answer on every device: equal values keep their
// input order (a stable sort, like torch.sort(stable=True)), although a bitonic network itself is
// not stable (the radix sort of long rows is, and sorts the same keys). Keys follow torch.sort:
// NaN is larger than everything (last ascending, first descending; all NaNs equal), and -0.0
// equals +0.0.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/kernel_types.h"  // OPGEN_HOST_DEVICE

namespace examples::bitonic_sort {

template <typename Bits, typename F>
OPGEN_HOST_DEVICE inline Bits bits_of(F v) {
  Bits bits;
  memcpy(&bits, &v, sizeof(bits));
  return bits;
}

// Floating point: NaNs become one positive NaN and -0.0 becomes +0.0, then the sign-magnitude bits
// are mapped to an unsigned order (flip every bit of negatives, the sign bit of positives).
template <typename Bits, Bits kExponent, Bits kQuietNaN>
struct FloatKey {
  using key_t = Bits;
  static constexpr Bits kSign = Bits(Bits(1) << (sizeof(Bits) * 8 - 1));
  OPGEN_HOST_DEVICE static Bits from_bits(Bits bits) {
    const Bits magnitude = bits & Bits(~kSign);
    if (magnitude > kExponent) {
      bits = kQuietNaN;
    } else if (magnitude == 0) {
      bits = 0;
    }
    return (bits & kSign) ? Bits(~bits) : Bits(bits | kSign);
  }
  // Only NaN and zero keys lose information (payload, sign): they are the ones to read back from x.
  OPGEN_HOST_DEVICE static bool is_exact(Bits key) {
    return key != Bits(kSign) && key != Bits(kQuietNaN | kSign);
  }
  OPGEN_HOST_DEVICE static Bits to_bits(Bits key) {
    return (key & kSign) ? Bits(key & Bits(~kSign)) : Bits(~key);
  }
};

template <typename Bits>
struct IntKey {
  using key_t = Bits;
  static constexpr Bits kSign = Bits(Bits(1) << (sizeof(Bits) * 8 - 1));
  OPGEN_HOST_DEVICE static Bits from_bits(Bits bits) {
    return bits ^ kSign;
  }
  OPGEN_HOST_DEVICE static bool is_exact(Bits) {
    return true;
  }
  OPGEN_HOST_DEVICE static Bits to_bits(Bits key) {
    return key ^ kSign;
  }
};

template <typename scalar_t>
struct KeyOf;
template <>
struct KeyOf<float> : FloatKey<uint32_t, 0x7f800000u, 0x7fc00000u> {};
template <>
struct KeyOf<double> : FloatKey<uint64_t, 0x7ff0000000000000ull, 0x7ff8000000000000ull> {};
// The keys of float16 and bfloat16, for whichever C++ types hold them: torch's on the CPU, CUDA's
// in the .cu (each specializes KeyOf with these).
using HalfKey = FloatKey<uint16_t, 0x7c00, 0x7e00>;
using BFloat16Key = FloatKey<uint16_t, 0x7f80, 0x7fc0>;
template <>
struct KeyOf<int32_t> : IntKey<uint32_t> {};
template <>
struct KeyOf<int64_t> : IntKey<uint64_t> {};

// The key of v: ascending unsigned order is the requested order.
template <typename scalar_t>
OPGEN_HOST_DEVICE inline typename KeyOf<scalar_t>::key_t key_of(scalar_t v, bool descending) {
  using key_t = typename KeyOf<scalar_t>::key_t;
  const key_t key = KeyOf<scalar_t>::from_bits(bits_of<key_t>(v));
  return descending ? key_t(~key) : key;
}

// The value a key came from, exactly, unless it is NaN or zero (see FloatKey::is_exact).
template <typename scalar_t>
OPGEN_HOST_DEVICE inline bool value_of_key(typename KeyOf<scalar_t>::key_t key, bool descending, scalar_t* value) {
  using key_t = typename KeyOf<scalar_t>::key_t;
  if (descending) {
    key = key_t(~key);
  }
  if (!KeyOf<scalar_t>::is_exact(key)) {
    return false;
  }
  const key_t bits = KeyOf<scalar_t>::to_bits(key);
  memcpy(value, &bits, sizeof(bits));
  return true;
}

// A (key, index) pair for keys of up to 32 bits: one 64-bit integer, key in the high half, so a
// single unsigned compare orders it. Rows are limited to 2^32 - 1 elements.
struct NarrowItem {
  uint64_t bits;
  OPGEN_HOST_DEVICE static NarrowItem make(uint32_t key, uint32_t index) {
    return {(uint64_t(key) << 32) | index};
  }
  // Sorts after every real item; padding to a power of two uses it.
  OPGEN_HOST_DEVICE static NarrowItem sentinel() {
    return {~uint64_t(0)};
  }
  OPGEN_HOST_DEVICE uint32_t key() const {
    return uint32_t(bits >> 32);
  }
  OPGEN_HOST_DEVICE uint32_t index() const {
    return uint32_t(bits);
  }
  OPGEN_HOST_DEVICE bool operator<(const NarrowItem& other) const {
    return bits < other.bits;
  }
};

// A (key, index) pair for 64-bit keys (the CPU sorts these; the CUDA network sorts 64-bit keys in
// two passes of NarrowItems, one a 32-bit half).
struct alignas(16) WideItem {
  uint64_t key_bits;
  uint32_t idx;
  OPGEN_HOST_DEVICE static WideItem make(uint64_t key, uint32_t index) {
    return {key, index};
  }
  OPGEN_HOST_DEVICE static WideItem sentinel() {
    return {~uint64_t(0), ~uint32_t(0)};
  }
  OPGEN_HOST_DEVICE uint64_t key() const {
    return key_bits;
  }
  OPGEN_HOST_DEVICE uint32_t index() const {
    return idx;
  }
  OPGEN_HOST_DEVICE bool operator<(const WideItem& other) const {
    return key_bits < other.key_bits || (key_bits == other.key_bits && idx < other.idx);
  }
};

template <typename scalar_t>
using ItemOf = std::conditional_t<sizeof(typename KeyOf<scalar_t>::key_t) == 8, WideItem, NarrowItem>;

// Rows are indexed by uint32_t, and index 2^32 - 1 is the sentinel's.
constexpr int64_t kMaxRowLength = (int64_t(1) << 32) - 1;

}  // namespace examples::bitonic_sort
