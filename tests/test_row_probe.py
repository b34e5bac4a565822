"""The row-wise CUDA launch runs a functor once on the host, over rows whose elements are never
read, to learn whether it reduces or syncs across a row's threads (common/row_probe.h). One that
does not has its rows split over blocks, where a reduction would trap, so the answer must be right:
tests/row_probe.cpp asks it of functors of each sort (the probe is plain C++: any compiler)."""
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
CSRC = HERE.parent / "examples" / "csrc"  # rendered from the template's csrc/common


def test_the_launch_tells_reducing_functors_from_the_rest(tmp_path):
    binary = tmp_path / "row_probe"
    subprocess.run(["c++", "-std=c++17", "-Wall", "-Werror", f"-I{CSRC}", str(HERE / "row_probe.cpp"), "-o", str(binary)],
                   check=True, capture_output=True, text=True)
    found = dict(line.split() for line in subprocess.run([str(binary)], check=True, capture_output=True,
                                                         text=True).stdout.splitlines())
    assert found == {
        "rms_norm": "1",  # row.sum
        "gated": "0",  # for_each alone, reading x[j + d]
        "synced": "1",  # row.sync
        "softmax": "1",  # row.exp_sum
        "centred_short": "0",  # its row.sum only past 8 elements: rows of 4 do not reduce...
        "centred_long": "1",  # ... rows of 16 do
    }
