"""What holds the examples back where a sweep target is missed: the `limit` texts of their TARGETS,
from the H100 runs behind results/h100/ (the numbers are that machine's)."""

# The memory-bound ops against torch.compile at small sizes.
LAUNCH_BOUND = (
    "below about 2^20 elements every implementation takes 4-7 us, launch and one trip to memory, and "
    "torch.compile's Triton kernels end 0.3-0.9 us sooner in these CUDA-event timings; under ncu the kernels "
    "themselves take 2.9-3.2 us, ours within 0.2 us of Triton's and level with eager's ATen kernels (which "
    "trail torch.compile as much here): the rest of the gap is in the launch, not in the kernel"
)

# fused_bias_gelu's rows of an odd length, which its vectors cannot cross.
ODD_ROWS = (
    "rows of an odd length (1001) go one element at a time: 93% of copy at 65537 x 1001 float32 against "
    "torch.compile's 101% (four times the rows per thread in flight was slower: 229 against 194 us)"
)

# bitonic_sort's shortest rows.
SHORT_ROWS = (
    "rows of 3 to 16 elements (2^20 to 2^22 rows) go through the shared-memory network at 87-92% of copy, "
    "where torch.compile's sort reaches 97-98%"
)
