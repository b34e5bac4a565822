"""The ops' torch.ops packets, as Hugging Face kernels packages expose them (`from <package>._ops
import ops`): `ops.<op>` for opcheck and torch.library, `add_op_namespace_prefix` for names that
torch.library.register_* take. Template-owned."""

import torch

from . import loaded_ops  # noqa: F401  (importing the package loads the extension that registers them)

ops = torch.ops.examples


def add_op_namespace_prefix(op_name: str) -> str:
    """`<namespace>::<op_name>`, the qualified name torch.library takes."""
    return f"examples::{op_name}"
