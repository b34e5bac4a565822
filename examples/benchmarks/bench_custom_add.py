"""custom_add is a CPU-only op: there is no CUDA kernel to time (vector_add is its CUDA version)."""


def run(bench) -> None:
    print(f"{'custom_add':>20} | skipped: a CPU-only op, no CUDA kernel to time (see vector_add)", flush=True)
