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
# for a call with nothing to differentiate (the ops' functions test for that themselves, _declare.py).
below_autograd = torch._C._AutoDispatchBelowAutograd
