// Prints, for a few row functors, whether the row-wise CUDA launch finds them reducing across a row's
// threads, and the longest and shortest of their row loops (common/row_probe.h, asked before a CUDA launch; plain
// C++). tests/test_row_probe.py runs it.
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
struct CachedSoftmax {  // row.softmax over the first half of the row (its loops reach 512, not 1024)
  template <typename Row, typename In, typename Out>
  OPGEN_HOST_DEVICE void operator()(const Row& row, const In& x, const Out& y) const {
    const auto p = row.softmax(x.cols / 2, [&](auto j) { return x[j]; });
    row.for_each(y.cols, [&](auto j) { y.set(j, p[j]); });
  }
};

template <typename T>
struct Standardized {  // row.mean_var over the first 256 elements
  template <typename Row, typename In, typename Out>
  OPGEN_HOST_DEVICE void operator()(const Row& row, const In& x, const Out& y) const {
    const auto stats = row.mean_var(256, [&](auto j) { return x[j]; });
    row.for_each(y.cols, [&](auto j) { y.set(j, (x[j] - stats.mean) / std::sqrt(stats.var + T(1e-5))); });
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

// "across longest shortest" for op over inputs of in_cols and an output of out_cols elements a row.
template <typename Op, int N>
void probe(const char* name, const Op& op, int64_t in_cols, int64_t out_cols) {
  opgen::RowTensors<const S, N> in{};
  for (int i = 0; i < N; ++i) {
    in.cols[i] = in_cols;
  }
  opgen::RowTensors<S, 1> out{};
  out.cols[0] = out_cols;
  const auto use = opgen::cuda::probe_row_use(op, in, out, std::make_index_sequence<N>{}, std::make_index_sequence<1>{});
  std::printf("%s %d %lld %lld\n", name, int(use.across), static_cast<long long>(use.longest),
              static_cast<long long>(use.shortest));
}

int main() {
  probe<examples::rms_norm::Forward<float>, 2>("rms_norm", {1e-6f}, 1024, 1024);
  probe<Gated<float>, 1>("gated", {}, 2048, 1024);
  probe<Synced<float>, 1>("synced", {}, 1024, 1024);
  probe<Softmax<float>, 1>("softmax", {}, 1024, 1024);
  probe<CachedSoftmax<float>, 1>("row_softmax", {}, 1024, 512);
  probe<Standardized<float>, 1>("mean_var", {}, 1024, 128);
  probe<LongRowsCentred<float>, 1>("centred_short", {}, 4, 4);
  probe<LongRowsCentred<float>, 1>("centred_long", {}, 16, 16);
}
