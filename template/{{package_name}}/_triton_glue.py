"""A Triton op's kernels and launchers, made from its declaration around its @triton.jit math.

declare(..., triton=(forward, backward)) with kind "elementwise" or "rowwise" calls `register`: it
writes the kernels that load, call the math and store (as the C++ kinds' derived glue does), their
launchers (checks, allocation, a stored or autotuned config), and registers them with
torch.library.triton_op, so torch.compile sees into them. CPU tensors take the reference (in float64,
rounded to the dtype), or the Triton kernels themselves under TRITON_INTERPRET=1. Template-owned.

    elementwise: forward(x, bias, alpha) -> y and backward(grad, x, bias, alpha) -> (grad_x, grad_bias)
      over blocks of elements, in float32 (float64 for float64);
    rowwise: forward(x, weight, eps, cols, d) -> y and backward(grad, x, weight, eps, cols, d) -> grads
      over [ROWS, BLOCK] tiles of whole rows (zero past d; cols is each column's index, [1, BLOCK]);
      a broadcast input is one [1, BLOCK] row.
"""

from __future__ import annotations

import functools
import linecache
import threading
from collections.abc import Callable

import torch

from . import _triton
from ._opgen.errors import DeclarationError
from ._triton import tl, triton

MAX_ROW = 65536  # a row-wise Triton op keeps a row in registers: longer rows take the CUDA row-wise kind
# Elementwise: elements a program handles; row-wise: rows a program handles (its BLOCK is the row's power of 2).
ELEMENTWISE_CONFIGS = [{"BLOCK": b, "num_warps": w} for b in (1024, 2048, 4096) for w in (4, 8)]
MAX_ROWS, MAX_ROW_TILE = _triton.MAX_ROWS, _triton.MAX_ROW_TILE
ROWWISE_CONFIGS = [{"ROWS": 1 << r, "num_warps": w} for r in range(9) for w in (1, 2, 4, 8, 16, 32)]


def _row_configs_that_fit(configs, named_args, **kwargs):
    """The row-wise configs worth timing for this row length (BLOCK): tiles of 2K to 16K elements, 8
    to 32 a thread; rows of 16K or more one to a program, on 16 or 32 warps."""
    block = kwargs.get("BLOCK", named_args.get("BLOCK"))
    kept = []
    for config in configs:
        rows, threads = config.kwargs["ROWS"], config.num_warps * 32
        tile = rows * block
        if block >= MAX_ROW_TILE:
            keep = rows == 1 and threads >= 512
        else:
            keep = (2048 <= tile or rows == MAX_ROWS) and tile <= MAX_ROW_TILE and 8 <= tile / threads <= 32
        if keep:
            kept.append(config)
    return kept or configs[:1]


if _triton.AVAILABLE:

    @triton.jit
    def load_math(ptr, offsets, mask, WIDE: tl.constexpr):
        """Elements at ptr + offsets (0 where masked off) in the math type: float32, float64 if WIDE."""
        value = tl.load(ptr + offsets, mask=mask, other=0)
        if WIDE:
            value = value.to(tl.float64)
        else:
            value = value.to(tl.float32)
        return value

else:
    load_math = None


KERNELS: dict[str, dict] = {}  # {op: {"forward": its autotuned kernel, "backward": ...}}
KEYS = {"elementwise": ["size_class"], "rowwise": ["BLOCK", "rows_class"]}  # what autotuning is keyed on


def tuned(op: str) -> dict:
    """{config_key: config} the autotuner picked for op's kernels in this process (`--tune` stores them)."""
    from ._build import declared_ops

    keys = KEYS[declared_ops()[op].kind]
    entries = {}
    for which, kernel in KERNELS.get(op, {}).items():
        entries.update(_triton.autotuned(which, kernel, keys))
    return entries


def register(
    m, namespace: str, forward: Callable, backward: Callable | None, reference: Callable, signature: str
) -> Callable:
    """Define <ns>::<op> (and <op>_backward where m has gradients) with Triton kernels; return the
    forward launcher for eager calls that need no dispatcher (`_triton.plain_eager`)."""
    if m.kind not in ("elementwise", "rowwise"):
        raise DeclarationError(f"{m.op}: triton= is for the elementwise and rowwise kinds, not {m.kind}")
    if m.out is not None or m.with_out:
        raise DeclarationError(f"{m.op}: a Triton op returns its result; declare it without an out= output")
    if m.kind == "rowwise" and m.out_cols_ratio != (1, 1):
        raise DeclarationError(f'{m.op}: a row-wise Triton op writes rows of d (out_cols="d"), got {m.out_cols!r}')
    if m.differentiable and backward is None:
        raise DeclarationError(f"{m.op}: declare triton=(forward, backward): {m.tensor_names} get gradients")
    source = _Source(m, namespace)
    scope = {
        "torch": torch,
        "Tensor": torch.Tensor,
        "triton": triton,
        "tl": tl,
        "T": _triton,
        "load_math": load_math,
        "forward": forward,
        "backward": backward,
        "reference": reference,
        "wrap_triton": torch.library.wrap_triton,
        "MAX_ROW": MAX_ROW,
        "autotune": _triton.autotune,
        "CONFIGS": ELEMENTWISE_CONFIGS if m.kind == "elementwise" else ROWWISE_CONFIGS,
        "prune": _row_configs_that_fit if m.kind == "rowwise" else None,
    }
    _exec(source.kernels(), f"<{namespace}::{m.op} Triton kernels, made by declare()>", scope)
    KERNELS[m.op] = {which: scope[f"{which}_kernel"] for which in ("forward", "backward") if f"{which}_kernel" in scope}
    # The launchers twice: for the op (wrap_triton: torch.compile traces the launches), and for eager
    # calls outside any mode, which launch the kernels themselves (wrap_triton's dispatch costs ~1 ms).
    direct = {**scope, "wrap_triton": _itself}
    _exec(source.launchers(), f"<{namespace}::{m.op} Triton launchers, made by declare()>", scope)
    _exec(source.launchers(), f"<{namespace}::{m.op} direct Triton launchers, made by declare()>", direct)
    _define(f"{namespace}::{m.op}", signature, scope["launch_forward"])
    if m.differentiable:
        backward_signature = m.backward_definition[len(m.op) + len("_backward") :]
        _define(f"{namespace}::{m.op}_backward", backward_signature, scope["launch_backward"])
    return _one_at_a_time(direct["launch_forward"]) if _triton.INTERPRET else direct["launch_forward"]


def _itself(kernel):
    return kernel


def _exec(source: str, filename: str, scope: dict) -> None:
    # Triton reads a kernel's source back (inspect.getsource): linecache holds it, as for a file.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    code = compile(source, filename, "exec", dont_inherit=True)  # annotations evaluated: torch.library reads them
    exec(code, scope)


def _define(qualname: str, signature: str, launcher: Callable) -> None:
    if not _triton.AVAILABLE:
        op = torch.library.custom_op(qualname, launcher, mutates_args=(), schema=signature)
        op.register_fake(launcher)
        return
    if _triton.INTERPRET:
        launcher = _one_at_a_time(launcher)
    # torch.compile traces into the launcher and sees the kernels: on CUDA. On the CPU the op stays
    # one opaque call (its reference path differentiates with torch.func, which tracing cannot enter).
    op = torch.library.triton_op(qualname, launcher, mutates_args=(), schema=signature)
    from torch._subclasses.functional_tensor import FunctionalTensorMode

    decompose = op._torch_dispatch_fns[FunctionalTensorMode]

    def decompose_on_cuda(mode, op_overload, types, args, kwargs):
        if any(isinstance(a, torch.Tensor) and a.device.type == "cuda" for a in args) and not _triton.INTERPRET:
            return decompose(mode, op_overload, types, args, kwargs)
        return mode.__torch_dispatch__(op_overload, types, args, kwargs)

    op.register_torch_dispatch(FunctionalTensorMode, decompose_on_cuda)


_INTERPRETER_LOCK = threading.RLock()


def _one_at_a_time(launcher: Callable) -> Callable:
    """Triton's interpreter patches triton.language while a kernel runs: one launch at a time."""

    @functools.wraps(launcher)
    def locked(*args, **kwargs):
        with _INTERPRETER_LOCK:
            return launcher(*args, **kwargs)

    return locked


class _Source:
    """The Python source of one op's kernels and launchers."""

    def __init__(self, m, namespace: str):
        self.m, self.ns = m, namespace
        self.tensors = [a.name for a in m.tensors]
        self.scalars = [a.name for a in m.scalars]
        self.first = self.tensors[0]
        self.grads = [a.name for a in m.differentiable]
        self.rows = m.kind == "rowwise"

    def kernels(self) -> str:
        return "\n\n".join(self._kernel(which) for which in self._directions())

    def launchers(self) -> str:
        return "\n\n".join(self._on_cpu(which) + "\n\n" + self._launcher(which) for which in self._directions())

    def _directions(self) -> list[str]:
        return ["forward", "backward"] if self.grads else ["forward"]

    # ---- kernels --------------------------------------------------------------------------------
    def _inputs(self, which: str) -> list[str]:
        return (["grad"] if which == "backward" else []) + self.tensors

    def _outputs(self, which: str) -> list[str]:
        return [f"grad_{g}" for g in self.grads] if which == "backward" else ["result"]

    def _kernel(self, which: str) -> str:
        inputs, outputs = self._inputs(which), self._outputs(which)
        broadcast = [n for n in self.tensors if n in self.m.broadcast]
        needs = (
            [f"NEEDS_{g.upper()}: tl.constexpr" for g in self.grads]
            if which == "backward" and len(self.grads) > 1
            else []
        )
        params = [f"{n}_ptr" for n in inputs] + self.scalars + [f"{o}_ptr" for o in outputs]
        if self.rows:
            params += ["rows", "d", *(f"{n}_row_stride" for n in inputs if n not in broadcast), "rows_class"]
            params += [*needs, "WIDE: tl.constexpr", "BLOCK: tl.constexpr", "ROWS: tl.constexpr"]
            body = [
                "row = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)[:, None]",
                "cols = tl.arange(0, BLOCK)[None, :]",
                "in_row = cols < d",
                "mask = (row < rows) & in_row",
            ]
            for n in inputs:
                where = "cols, in_row" if n in broadcast else f"row * {n}_row_stride + cols, mask"
                body.append(f"{n} = load_math({n}_ptr, {where}, WIDE)")
            math_args = ", ".join(inputs + self.scalars + ["cols", "d"])
            store_at = "row * d + cols"
        else:
            params += ["n", *(f"{b}_inner, {b}_period" for b in broadcast), "size_class"]
            params += [*needs, "WIDE: tl.constexpr", "BLOCK: tl.constexpr"]
            body = [
                "offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)",
                "mask = offsets < n",
            ]
            for n in inputs:
                where = f"(offsets // {n}_inner) % {n}_period" if n in broadcast else "offsets"
                body.append(f"{n} = load_math({n}_ptr, {where}, mask, WIDE)")
            math_args = ", ".join(inputs + self.scalars)
            store_at = "offsets"
        body.append(f"{', '.join(outputs)} = {which}({math_args})")
        for o in outputs:
            store = f"tl.store({o}_ptr + {store_at}, {o}.to({o}_ptr.dtype.element_ty), mask=mask)"
            if needs:
                body += [f"if NEEDS_{o[len('grad_') :].upper()}:", f"    {store}"]
            else:
                body.append(store)
        key = KEYS[self.m.kind]
        lines = [
            f"@autotune(CONFIGS, key={key}, prune=prune)",
            "@triton.jit",
            f"def {which}_kernel({', '.join(params)}):",
            *(f"    {line}" for line in body),
            "",
            f"{which}_plain = getattr({which}_kernel, 'fn', {which}_kernel)  # the kernel alone, for stored configs",
        ]
        return "\n".join(lines) + "\n"

    def _params(self, which: str, annotated: bool = False, defaults: bool = True) -> list[str]:
        """The op's parameters in schema order (the dispatcher passes them so): the forward's with
        their defaults; the backward's after grad, then needs_<x> where several get gradients.
        Annotated for torch.library, which reads the op's schema from them (torch < 2.15 ignores schema=)."""
        args = self.m.schema.args

        def param(a, default: bool) -> str:
            text = f"{a.name}: {a.python_type}" if annotated else a.name
            return text if not default or a.python_default is None else f"{text} = {a.python_default}"

        if which == "forward":
            return [param(a, defaults) for a in args]
        flag = ": bool" if annotated else ""
        needs = [f"needs_{g}{flag}" for g in self.grads] if len(self.grads) > 1 else []
        return ["grad: Tensor" if annotated else "grad", *(param(a, False) for a in args), *needs]

    def _on_cpu(self, which: str) -> str:
        """The CPU path: the reference in the math type (its gradients by torch.func.vjp)."""
        several = which == "backward" and len(self.grads) > 1
        params = self._params(which)
        tensors = "{" + ", ".join(f"{n!r}: {n}" for n in self.tensors) + "}"
        scalars = "{" + ", ".join(f"{n!r}: {n}" for n in self.scalars) + "}"
        if which == "forward":
            call = f"T.reference_result(reference, {tensors}, {scalars})"
        else:
            needs = "(" + ", ".join(f"needs_{g}" if several else "True" for g in self.grads) + ",)"
            call = (
                f"T.reference_grads(reference, grad, {tensors}, {scalars}, {self.grads!r}, {needs}, "
                f"{list(self.m.broadcast)!r}, rowwise={self.rows})"
            )
            call += "" if several else "[0]"
        return f"def T_cpu_{which}({', '.join(params)}):\n    return {call}\n"

    # ---- launchers ------------------------------------------------------------------------------
    def _checks(self, which: str) -> list[str]:
        first = self.first
        lines = [f"T.check_floating({n}, {n!r})" for n in self._inputs(which)]
        for n in self._inputs(which):
            if n == first:
                continue
            if n in self.m.broadcast and self.rows:
                lines += [
                    f"T.check_like({n}, {n!r}, {first}, {first!r}, shape=False)",
                    f"if tuple({n}.shape) != tuple({first}.shape[-1:]):",
                    f"    raise RuntimeError(f'{n} must have shape {{list({first}.shape[-1:])}}, "
                    f"got {{list({n}.shape)}}')",
                ]
            elif n in self.m.broadcast:
                lines.append(f"T.check_like({n}, {n!r}, {first}, {first!r}, shape=False)")
            else:
                lines.append(f"T.check_like({n}, {n!r}, {first}, {first!r})")
        if self.rows:
            lines = [
                f"if {first}.dim() < 1:",
                f"    raise RuntimeError('{first} must have at least one dimension (its rows are along the last), "
                "got a scalar')",
                *lines,
                f"d = {first}.shape[-1]",
                "if d > MAX_ROW:",
                f"    raise RuntimeError(f'{self.m.op}: rows of {{d}} elements are longer than its Triton kernel "
                "holds ({MAX_ROW}): use the CUDA row-wise kind for them')",
            ]
        else:
            lines += [
                f"{b}_inner, {b}_period = T.broadcast_repeats({b}, {b!r}, {first}, {first!r})"
                for b in self.tensors
                if b in self.m.broadcast
            ]
        return lines

    def _launcher(self, which: str) -> str:
        m, first = self.m, self.first
        inputs, outputs = self._inputs(which), self._outputs(which)
        several = which == "backward" and len(self.grads) > 1
        body = self._checks(which)
        if which == "forward":
            allocate = [f"result = torch.empty_like({first}, memory_format=torch.contiguous_format)"]
            returned = "result"
        else:
            needed = (lambda g: f"needs_{g}") if several else (lambda g: "True")
            allocate = [
                f"grad_{g} = torch.empty_like({first}, memory_format=torch.contiguous_format) if {needed(g)} "
                f"else {first}.new_empty((0,))"
                for g in self.grads
            ]
            returned = ", ".join(outputs) + ("," if len(outputs) == 1 and several else "")
        body += allocate
        # CPU tensors: the reference (through the interpreter, the kernels themselves).
        cpu_call = f"T_cpu_{which}({', '.join(self._params(which, defaults=False))})"
        body += [
            f"if {first}.device.type != 'cuda' and not T.INTERPRET:",
            f"    return ({returned}) if T.is_fake({first}) else {cpu_call}",
        ]
        body += [f"if {first}.numel() == 0 or (T.INTERPRET and T.is_fake({first})):", f"    return {returned}"]
        body += ["if not T.AVAILABLE:", f"    raise T.missing_triton({m.op!r})"]
        body += [f"{n} = {n}.contiguous()" for n in inputs if not self.rows or n in m.broadcast]
        if self.rows:
            body += [f"{n} = {n}.reshape(-1, d)" for n in inputs if n not in m.broadcast]
            body += [f"{n} = {n} if {n}.stride(-1) == 1 else {n}.contiguous()" for n in inputs if n not in m.broadcast]
            body += [
                f"rows = {first}.shape[0]",
                "BLOCK = T.next_power_of_2(d)",
                "rows_class = T.next_power_of_2(min(rows, 1 << 14)) if isinstance(rows, int) else rows",
            ]
            sizes = ["rows", "d", *(f"{n}.stride(0)" for n in inputs if n not in m.broadcast), "rows_class"]
            grid_of = "triton.cdiv(rows, {}['ROWS'])"
            fixed = {"BLOCK": "BLOCK"}
        else:
            body += [
                f"n = {first}.numel()",
                "size_class = T.next_power_of_2(n) if isinstance(n, int) else n",
            ]
            sizes = ["n", *(f"{b}_inner, {b}_period" for b in self.tensors if b in m.broadcast), "size_class"]
            grid_of = "triton.cdiv(n, {}['BLOCK'])"
            fixed = {}
        if several:
            fixed.update({f"NEEDS_{g.upper()}": f"needs_{g}" for g in self.grads})
        fixed["WIDE"] = f"{first}.dtype == torch.float64"
        args = ", ".join(inputs + self.scalars + outputs + sizes)
        kwargs = ", ".join(f"{k}={v}" for k, v in fixed.items())
        stored_grid = grid_of.format("config['kwargs']")
        key_values = ", ".join(KEYS[m.kind])
        body += [
            f"config = T.stored_config({m.op!r}, {which!r}, ({key_values},), {first}.dtype, CONFIGS[0])",
            "if config is None:  # autotune this size class (once a process: later calls find it picked)",
            "    with T.AUTOTUNE_LOCK:",
            f"        wrap_triton({which}_kernel)[lambda meta: ({grid_of.format('meta')},)]({args}, {kwargs})",
            f"    T.remember({m.op!r}, {which!r}, {which}_kernel, ({key_values},), {first}.dtype)",
            "else:",
            f"    run = {which}_plain if T.INTERPRET else wrap_triton({which}_plain)  # torch < 2.11 cannot wrap it",
            f"    run[({stored_grid},)](",
            f"        {args}, {kwargs}, **config['kwargs'],",
            "        num_warps=config['num_warps'], num_stages=config['num_stages'])",
            f"return {returned}",
        ]
        returns = f"tuple[{', '.join(['Tensor'] * len(outputs))}]" if several else "Tensor"
        signature = ", ".join(self._params(which, annotated=True))
        lines = [f"def launch_{which}({signature}) -> {returns}:", *(f"    {line}" for line in body)]
        return "\n".join(lines) + "\n"
