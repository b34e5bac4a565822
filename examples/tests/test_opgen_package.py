"""The package loads its compiled ops, and every op folder under csrc/ has its Python side."""
import importlib

import torch

import opgen_examples
from opgen_examples import _build


def test_every_csrc_op_is_registered_and_wrapped():
    for op in _build.op_names():
        assert hasattr(torch.ops.examples, op), f"csrc/{op}/ is not registered as torch.ops.examples.{op}"
        module = importlib.import_module(f"opgen_examples.ops.{op}")
        assert callable(getattr(module, op)), f"opgen_examples/ops/{op}.py has no function {op}()"


def test_public_api_lists_every_op():
    assert set(_build.op_names()) <= set(opgen_examples.__all__)
