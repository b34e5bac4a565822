// Prints, for a few row functors, whether the row-wise CUDA launch finds them reducing across a row's
// threads (common/row_probe.h, asked before a CUDA launch; plain C++). tests/test_row_probe.py runs it.
#include <cmath>
#include <cstdio>

#include "common/row_probe.h"
#include "rms_norm/rms_norm.h"

namespace opgen = examples::opgen;
using S = float;

template <typename T>
struct Gated {  // y[j] = x[j] * x[j + d]: no reduction
  template <typename Row, typename In, typename Out>
  OPGEN_HOST_DEVICE void operator()(const Row& row, const In& x, const Out& y) const {
    row.for_each(y.cols, [&](auto j) { y.set(j, x[j] * x[j + y.cols]); });
  }
};

template <typename T>
struct Synced {  // writes y, then reads it back after row.sync()
  template <typename Row, typename In, typename Out>
  OPGEN_HOST_DEVICE void operator()(const Row& row, const In& x, const Out& y) const {
    row.for_each(y.cols, [&](auto j) { y.set(j, x[j]); });
    row.sync();
  }
};

template <typename T>
struct Softmax {
  template <typename Row, typename In, typename Out>
  OPGEN_HOST_DEVICE void operator()(const Row& row, const In& x, const Out& y) const {
    const auto terms = row.exp_sum(x.cols, [&](auto j) { return x[j]; });
    row.for_each(y.cols, [&](auto j) { y.set(j, std::exp(x[j] - terms.max) / terms.sum); });
  }
};

template <typename T>
struct LongRowsCentred {  // reduces only where rows are longer than 8
  template <typename Row, typename In, typename Out>
  OPGEN_HOST_DEVICE void operator()(const Row& row, const In& x, const Out& y) const {
    const T mean = x.cols > 8 ? row.sum(x.cols, [&](auto j) { return x[j]; }) / T(x.cols) : T(0);
    row.for_each(y.cols, [&](auto j) { y.set(j, x[j] - mean); });
  }
};

template <typename Op, int N>
bool reduces(const Op& op, int64_t cols) {
  opgen::RowTensors<const S, N> in{};
  for (int i = 0; i < N; ++i) {
    in.cols[i] = cols;
  }
  opgen::RowTensors<S, 1> out{};
  out.cols[0] = cols;
  return opgen::cuda::reduces_across_threads(op, in, out, std::make_index_sequence<N>{}, std::make_index_sequence<1>{});
}

int main() {
  std::printf("rms_norm %d\n", reduces<examples::rms_norm::Forward<float>, 2>({1e-6f}, 1024));
  std::printf("gated %d\n", reduces<Gated<float>, 1>({}, 1024));
  std::printf("synced %d\n", reduces<Synced<float>, 1>({}, 1024));
  std::printf("softmax %d\n", reduces<Softmax<float>, 1>({}, 1024));
  std::printf("centred_short %d\n", reduces<LongRowsCentred<float>, 1>({}, 4));
  std::printf("centred_long %d\n", reduces<LongRowsCentred<float>, 1>({}, 16));
}
