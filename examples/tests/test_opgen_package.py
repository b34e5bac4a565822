"""The package loads its compiled ops, and every built op folder under csrc/ has its Python side.
(An op not built yet is reported by test_opgen_conformance.py::test_every_op_is_built.)"""

import importlib

import torch

import opgen_examples
from opgen_examples import _build, _extension


def built_ops() -> list[str]:
    return sorted(_extension.built_ops(opgen_examples.loaded_ops) & set(_build.op_names()))


def test_every_built_op_is_registered_and_wrapped():
    for op in built_ops():
        assert hasattr(torch.ops.examples, op), f"csrc/{op}/ is not registered as torch.ops.examples.{op}"
        module = importlib.import_module(f"opgen_examples.ops.{op}")
        assert callable(getattr(module, op)), f"opgen_examples/ops/{op}.py has no function {op}()"


def test_the_ops_packets_are_where_hugging_face_kernels_packages_keep_them():
    from opgen_examples._ops import add_op_namespace_prefix, ops

    for op in built_ops():
        assert getattr(ops, op) is getattr(torch.ops.examples, op)
        torch._C._dispatch_find_schema_or_throw(add_op_namespace_prefix(op), "")  # the name torch.library takes


def test_public_api_lists_every_built_op():
    assert set(built_ops()) <= set(opgen_examples.__all__)


def test_needs_autograd_only_when_an_input_needs_a_gradient(monkeypatch):
    # The ops' Python functions skip the autograd layer (and its Python cost) when this is False.
    from opgen_examples import _autograd

    plain, tracked = torch.ones(2), torch.ones(2, requires_grad=True)
    assert not _autograd.needs_autograd(plain, None)
    assert _autograd.needs_autograd(plain, tracked)
    assert _autograd.needs_autograd(tracked[1:])  # a view of a tensor that requires grad
    with torch.no_grad():
        assert not _autograd.needs_autograd(tracked)
    with torch.inference_mode():
        assert not _autograd.needs_autograd(torch.ones(2))
    monkeypatch.setattr(_autograd, "_is_compiling", lambda: True)  # torch.compile sees the op as it is
    assert _autograd.needs_autograd(plain)
