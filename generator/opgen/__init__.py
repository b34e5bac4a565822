"""opgen: stamp out PyTorch custom operators (C++/CUDA kernel, bindings, wrapper, test, benchmark)."""
__version__ = "0.6.24"
