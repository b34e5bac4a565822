"""row.mean_var on CUDA reduces a row's sum and sum of squares together and keeps the mean and
variance they give only where that is as accurate as two passes (common/row_stats.h's
finish_mean_var); elsewhere it takes a second pass over the squared deviations. The GPU runs it, but
the choice is host-device code: tests/row_stats.cpp asks it of rows of each sort with a plain C++
compiler, so that a wrong threshold is caught here, not only on a GPU."""
from pathlib import Path

from helpers import common_program_lines

HERE = Path(__file__).resolve().parent


def test_the_one_reduction_is_kept_only_where_it_is_accurate(tmp_path):
    found = {name: (second_pass == "1", float(error))
             for name, second_pass, error in common_program_lines(HERE / "row_stats.cpp", tmp_path, "-O2")}
    # (took the second pass, relative error of the variance against float64's)
    assert not found["centred"][0] and found["centred"][1] < 1e-5
    assert not found["offset_half_spread"][0] and found["offset_half_spread"][1] < 1e-5  # mean^2 0.06 < var 0.33
    assert found["offset_past_spread"][0] and found["offset_past_spread"][1] < 1e-5  # mean^2 0.81 > var 0.33
    assert found["offset_far"][0] and found["offset_far"][1] < 1e-3  # the sum of squares alone: no digit right
    assert found["constant"][0] and found["constant"][1] == 0.0  # var 0 exactly, as two passes give it
    assert found["nan"][0] and found["nan"][1] != found["nan"][1]  # NaN, not a number from a NaN sum
