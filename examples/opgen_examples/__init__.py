"""opgen-examples: PyTorch custom operators (torch.ops.examples.*)."""

import torch  # noqa: F401  (loads libtorch before the extension)

from ._extension import load_extension

loaded_ops = load_extension()  # None: every op, from the installed extension

from .ops import *  # noqa: E402,F401,F403
from .ops import __all__  # noqa: E402,F401
