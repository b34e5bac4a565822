"""The row-wise CUDA launch runs a functor once on the host, over rows whose elements are never
read, to learn whether it reduces or syncs across a row's threads, and the longest and shortest of its
row loops (common/row_probe.h). One that does not reduce has its rows split over blocks, where a
reduction would trap, their threads covering that longest loop (a shorter cover would leave elements
unwritten); a kernel's twin for whole rows skips every bounds check, so it runs only where the
shortest loop covers the whole row (a loop over part of it would visit elements past its end). The
answers must be right: tests/row_probe.cpp asks them of functors of each sort (the probe is
plain C++: any compiler)."""
from pathlib import Path

from helpers import common_program_lines

HERE = Path(__file__).resolve().parent


def test_the_launch_tells_reducing_functors_from_the_rest(tmp_path):
    lines = common_program_lines(HERE / "row_probe.cpp", tmp_path)
    found = {name: (across, longest, shortest) for name, across, longest, shortest in lines}
    assert found == {
        "rms_norm": ("1", "1024", "1024"),  # row.sum, for_each
        "gated": ("0", "1024", "1024"),  # for_each alone over y's 1024, reading x[j + d] of x's 2048 by plain index
        "synced": ("1", "1024", "1024"),  # row.sync
        "softmax": ("1", "1024", "1024"),  # row.exp_sum
        "row_softmax": ("1", "512", "512"),  # row.softmax over 512, y's 512
        "mean_var": ("1", "256", "128"),  # row.mean_var over 256, y's 128
        "centred_short": ("0", "4", "4"),  # its row.sum only past 8 elements: rows of 4 do not reduce...
        "centred_long": ("1", "16", "16"),  # ... rows of 16 do
    }
