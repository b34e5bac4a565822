"""nn.Module layers over the ops: yours to write (`copier update` leaves this file alone).

For example, a layer over an op `silu_and_mul(Tensor x) -> Tensor`:

    class SiluAndMul(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return opgen_examples.silu_and_mul(x)

Import it as `from opgen_examples.layers import SiluAndMul`; the package does not import this
module itself, so a layer may use any op.
"""
