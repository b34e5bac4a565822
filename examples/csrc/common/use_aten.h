// Included first, before any other header, by a source that needs the full ATen C++ API in a
// "stable" project (for what the stable ABI lacks: C++ autograd, ATen's cuBLAS helpers, ...).
// It undoes the stable build's flags for that source. The build finds the include (ATEN_OPT_IN in
// the package's _build.py) and then ties the whole binary to the torch it was built with.
#pragma once

#undef OPGEN_STABLE_API
#undef TORCH_TARGET_VERSION
#define OPGEN_USE_ATEN
