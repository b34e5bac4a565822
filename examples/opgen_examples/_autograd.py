"""Autograd helpers shared by the ops."""

import torch


def first_order_only(backward_op: str) -> None:
    """Make a second derivative through `backward_op` (an op's first-order backward kernel) an error.

    Without an autograd formula of its own, PyTorch lets such an op into a create_graph=True graph,
    only warns, and silently drops its contribution to the second derivative. With this, taking
    that derivative raises instead. Replace it with a real formula if the op needs one.
    """

    def second_derivative(ctx, *grads):
        raise RuntimeError(
            f"{backward_op}: second derivatives are not implemented (it is the first-order "
            "backward of an op; give it an autograd formula to support them)"
        )

    torch.library.register_autograd(backward_op, second_derivative)


# `with below_autograd(): op(...)` dispatches past the autograd keys, as the autograd layer does
# for a call with nothing to differentiate. (A declared op's function tests for that inline, _declare.py;
# hand-written glue, a blank op's, calls needs_autograd.)
below_autograd = torch._C._AutoDispatchBelowAutograd
_is_compiling = torch.compiler.is_compiling
_grad_enabled = torch.is_grad_enabled


def needs_autograd(*inputs: torch.Tensor | None) -> bool:
    """Whether an op call must go through the op's autograd layer (registered in Python: about 10 us
    a call): gradient mode is on and an input requires grad, or torch.compile is tracing the call.

    Otherwise that layer would only redispatch below itself, which `below_autograd()` does directly
    (the same test as torch.library's own, torch/_library/autograd.py, without its Python cost).
    """
    if _is_compiling():
        return True
    if not _grad_enabled():
        return False
    for tensor in inputs:
        if tensor is not None and tensor.requires_grad:
            return True
    return False
