// Prints, for a few rows, whether row.mean_var's finish (common/row_stats.h, shared by every CUDA row)
// keeps the one reduction's mean and variance or takes the second pass, and the variance it gives
// against float64's. tests/test_row_stats.py runs it; plain C++ (the statistics are host-device code).
#include <cmath>
#include <cstdio>
#include <vector>

#include "common/row_stats.h"

namespace opgen = examples::opgen;

void report(const char* name, const std::vector<float>& row) {
  opgen::RowSquares<float> sums{0.0f, 0.0f};
  double exact_sum = 0;
  for (float v : row) {
    sums.sum += v;
    sums.squares += v * v;
    exact_sum += v;
  }
  const double exact_mean = exact_sum / double(row.size());
  double exact_deviations = 0;
  for (float v : row) {
    exact_deviations += (v - exact_mean) * (v - exact_mean);
  }
  bool second_pass = false;
  const auto stats = opgen::finish_mean_var(sums, int64_t(row.size()), [&](float mean) {
    second_pass = true;
    float deviations = 0;
    for (float v : row) {
      deviations += (v - mean) * (v - mean);
    }
    return deviations;
  });
  const double exact_var = exact_deviations / double(row.size());
  std::printf("%s %d %.3g\n", name, int(second_pass), std::fabs(stats.var - exact_var) / (exact_var > 0 ? exact_var : 1));
}

// A row of n values spread evenly over [-1, 1] (variance about 1/3), shifted by offset.
std::vector<float> spread(int n, float offset) {
  std::vector<float> row(n);
  for (int i = 0; i < n; ++i) {
    row[i] = offset + (2.0f * float(i) / float(n - 1) - 1.0f);
  }
  return row;
}

int main() {
  report("centred", spread(4096, 0.0f));
  report("offset_half_spread", spread(4096, 0.25f));
  report("offset_past_spread", spread(4096, 0.9f));
  report("offset_far", spread(4096, 1000.0f));
  report("constant", std::vector<float>(4096, 3.0f));
  std::vector<float> with_nan = spread(4096, 0.0f);
  with_nan[7] = NAN;
  report("nan", with_nan);
}
