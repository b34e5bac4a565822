"""The standard checks, run over every op's spec (`SPEC` in opgen_examples/ops/<op>.py).

Owned by the template: `copier update` brings new and fixed checks to every op, the existing ones
too. An op's own tests/test_<op>.py holds only what is special to it.
"""

import math
import threading
import warnings

import pytest
import torch

import opgen_testing as testing

SPECS = testing.all_specs()
CASES = "spec, device, dtype, shape"


def test_every_op_is_built():
    """An op added after the last build is reported here (its checks cannot run), not as a crash."""
    missing = testing.unbuilt_ops()
    assert not missing, f"not built: {', '.join(missing)}; run `pip install --no-build-isolation -e .`"


def differentiable(spec):
    return bool(spec.differentiable)


def elementwise(spec):
    return spec.kind == "elementwise"


GRAD_SHAPE = (37, 129)


def _drawn_for_grad(spec, dtype, device, shape=GRAD_SHAPE):
    args = testing.draw(spec, shape, dtype, device)
    for name in spec.differentiable:
        args[name].requires_grad_()
    return args


def _substituting(spec, args, names):
    """The op as a function of the tensors `names` (in that order), the other arguments as in args."""

    def fn(*tensors):
        return testing.call(spec, {**args, **dict(zip(names, tensors))})

    return fn


def _float64_leaves(spec, args):
    """args in float64, the differentiable ones as fresh leaves that require grad."""
    widened = {}
    for name, value in args.items():
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            value = value.detach().double().requires_grad_(name in spec.differentiable)
        widened[name] = value
    return widened


@pytest.mark.parametrize("layout", testing.LAYOUTS)
@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, dtypes=True, shapes=True))
def test_matches_reference(spec, device, dtype, shape, layout):
    args = testing.draw(spec, shape, dtype, device, layout)
    testing.assert_matches_reference(spec, testing.call(spec, args), args, dtype, shape)


def _floating(value) -> bool:
    return isinstance(value, torch.Tensor) and value.is_floating_point()


def _a_middling_shape(spec) -> tuple:
    """spec's shape with the most elements up to 2^17: several vectors and blocks, and quick on CPU."""
    return max((s for s in spec.shapes or testing.SHAPES if math.prod(s) <= 2**17), key=math.prod)


def _floating_input(spec) -> bool:
    """Whether spec has an input of a floating-point dtype in the suite's float32 cases."""
    case_dtype = torch.float32 if torch.float32 in spec.dtypes else spec.dtypes[0]
    tensors = [v for n, v in spec.args.items() if isinstance(v, testing.TensorArg) and n != spec.out]
    return any((v.dtype or case_dtype).is_floating_point for v in tensors)


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, where=_floating_input))
def test_reads_negated_views(spec, device, dtype, shape):
    """Inputs that are negated views (torch._neg_view: minus the values in their memory) give what
    the same values in plain tensors give: the op reads values, not memory, even where its function
    skips the dispatcher (which materializes such views)."""
    shape = _a_middling_shape(spec)
    args = testing.draw(spec, shape, dtype, device)
    negated = {
        name: torch._neg_view(-value) if _floating(value) and name != spec.out else value
        for name, value in args.items()
    }
    assert any(isinstance(value, torch.Tensor) and value.is_neg() for value in negated.values())
    testing.assert_matches_reference(spec, testing.call(spec, negated), args, dtype, shape)


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS))
def test_calls_are_seen_by_the_tracer_and_the_profiler(spec, device, dtype, shape):
    """A call of the public function is a node in a torch.jit.trace graph (for an op returning its
    result; the tracer's alias analysis asserts on some spellings of an argument written in place)
    and, for a C++ op, an op event in torch.profiler's trace, however the function reaches the
    kernel. (The dispatcher records no profiler event for the overload of an op registered in
    Python, as Triton ops are.)"""
    args = testing.draw(spec, _a_middling_shape(spec), dtype, device)
    if not spec.out:
        names = [name for name, value in args.items() if isinstance(value, torch.Tensor)]
        traced = _substituting(spec, args, names)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.jit.trace is deprecated, and warns so; it still traces
            graph = torch.jit.trace(traced, tuple(args[name] for name in names), check_trace=False).graph
        assert spec.op.name() in {node.kind() for node in graph.nodes()}
    if not spec.triton:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:  # op events
            testing.call(spec, args)
        assert spec.op.name() in {event.name for event in profile.events()}


@pytest.mark.parametrize("out_layout", testing.LAYOUTS)
@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, where=lambda spec: spec.out))
def test_writes_out_in_any_layout(spec, device, dtype, shape, out_layout):
    args = testing.draw(spec, (33, 65), dtype, device)
    expected = testing.reference_in_float64(spec, args)
    out = testing.make_tensor(expected.shape, dtype, device, out_layout)
    args[spec.out] = out
    returned = spec.function(**args)
    assert args[spec.out] is out
    # A derived function returns out, as torch's out= functions do (one written by hand may return None).
    assert returned is out or (returned is None and not spec.derived)
    testing.assert_matches(spec, out, expected, dtype, (33, 65), testing.error_bound(spec, args, dtype))


# Lengths for the misalignment checks: below one vector, a few vectors, many tiles and a partial one.
MISALIGNMENT_LENGTHS = [1, 5, 17, 70001]


def _at_offsets(tensors, offset, step):
    """Each tensor copied to start `offset` elements past a 16-byte boundary (all at the same one,
    step 0), or the k-th at offset + k * step, modulo the elements in its 16 bytes."""
    return {
        name: testing.at_offset(t, (offset + k * step) % (16 // t.element_size()))
        for k, (name, t) in enumerate(tensors.items())
    }


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, dtypes=True, where=elementwise))
def test_every_misalignment(spec, device, dtype, shape):
    """The tensors (out= too) at every element offset in a 16-byte vector, all at the same one or
    each at its own. On CUDA the vector path follows the output's alignment and shifts misaligned
    inputs into place: each offset, and each tensor's offset against the others, is its own case."""
    for n in MISALIGNMENT_LENGTHS:
        args = testing.draw(spec, (n,), dtype, device)
        expected = testing.reference_in_float64(spec, args)
        bound = testing.error_bound(spec, args, dtype)
        tensors = {name: args[name] for name in spec.tensor_args + ([spec.out] if spec.out else [])}
        for offset in range(16 // min(t.element_size() for t in tensors.values())):
            for step in (0, 1):
                shifted = {**args, **_at_offsets(tensors, offset, step)}
                testing.assert_matches(spec, testing.call(spec, shifted), expected, dtype, (n,), bound)


@pytest.mark.parametrize(
    CASES, testing.spec_cases(SPECS, dtypes=True, where=lambda s: elementwise(s) and differentiable(s))
)
def test_gradients_at_every_misalignment(spec, device, dtype, shape):
    """The backward kernels (one result per input) with grad and the inputs at every offset, as above."""
    for n in MISALIGNMENT_LENGTHS:
        args = testing.draw(spec, (n,), dtype, device)
        grad = testing.make_tensor(spec.reference(**args).shape, dtype, device)
        args64 = _float64_leaves(spec, args)
        expected = torch.autograd.grad(
            spec.reference(**args64), [args64[name] for name in spec.differentiable], grad.double()
        )
        bound = testing.grad_error_bound(spec, args, grad, dtype, spec.differentiable)
        tensors = {**{name: args[name] for name in spec.tensor_args}, "the result's grad": grad}
        for offset in range(16 // dtype.itemsize):
            for step in (0, 1):
                shifted = _at_offsets(tensors, offset, step)
                leaves = [shifted[name].requires_grad_() for name in spec.differentiable]
                result = spec.function(**{**args, **{name: shifted[name] for name in spec.tensor_args}})
                actual = torch.autograd.grad(result, leaves, shifted["the result's grad"])
                testing.assert_matches(spec, actual, expected, dtype, (n,), bound)


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, where=lambda spec: spec.out))
def test_refuses_out_sharing_memory(spec, device, dtype, shape):
    args = testing.draw(spec, (33, 65), dtype, device)
    for name in spec.tensor_args:
        with pytest.raises(RuntimeError, match=rf"{spec.out} overlaps {name}"):
            spec.function(**{**args, spec.out: args[name]})
    expanded = torch.empty(1, 65, dtype=dtype, device=device).expand(33, 65)
    with pytest.raises(RuntimeError, match=rf"{spec.out} has elements that share memory"):
        spec.function(**{**args, spec.out: expanded})


@pytest.mark.parametrize("grad_layout", testing.LAYOUTS)
@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, dtypes=True, where=differentiable))
def test_gradients_match_reference(spec, device, dtype, shape, grad_layout):
    args = _drawn_for_grad(spec, dtype, device)
    result = spec.function(**args)
    grad = testing.make_tensor(result.shape, dtype, device, grad_layout)
    actual = torch.autograd.grad(result, [args[name] for name in spec.differentiable], grad)
    args64 = _float64_leaves(spec, args)
    expected = torch.autograd.grad(spec.reference(**args64), [args64[n] for n in spec.differentiable], grad.double())
    bound = testing.grad_error_bound(spec, args, grad, dtype, spec.differentiable)
    testing.assert_matches(spec, actual, expected, dtype, GRAD_SHAPE, bound)


def rowwise_in_cpp(spec):
    return spec.kind == "rowwise" and not spec.triton  # (Triton's row kernels take rows up to a bound)


def _rows_past_resident_blocks(device) -> int:
    """More rows than stay resident on the device (32 blocks a multiprocessor at most), so that a
    CUDA row kernel's blocks loop over rows; a few on CPU."""
    if device == "cuda":
        return 2 * 32 * torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count + 3
    return 67


@pytest.mark.parametrize("length", [1024, 4096])
@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, dtypes=True, where=rowwise_in_cpp))
def test_many_aligned_rows_match_reference(spec, device, dtype, shape, length):
    """Rows on 16-byte boundaries, more than stay resident: the CUDA kernels that hold rows in
    registers and load (or stage) the next row while working on this one, each block looping over
    rows. The result, and the gradients of the row inputs (a broadcast input's sums over every row,
    rounded once a row, are checked at fewer rows by test_gradients_match_reference)."""
    shape = (_rows_past_resident_blocks(device), length)
    args = testing.draw(spec, shape, dtype, device)
    row_inputs = [name for name in spec.differentiable if name not in spec.broadcast]
    for name in row_inputs:
        args[name].requires_grad_()
    result = testing.call(spec, args)
    testing.assert_matches_reference(spec, result, args, dtype, shape)
    if row_inputs:
        grad = testing.make_tensor(result.shape, dtype, device, "contiguous")
        actual = torch.autograd.grad(result, [args[name] for name in row_inputs], grad)
        args64 = _float64_leaves(spec, args)
        expected = torch.autograd.grad(spec.reference(**args64), [args64[n] for n in row_inputs], grad.double())
        bound = testing.grad_error_bound(spec, args, grad, dtype, row_inputs)
        testing.assert_matches(spec, actual, expected, dtype, shape, bound)


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, where=lambda spec: len(spec.differentiable) > 1))
def test_gradient_of_each_input_alone(spec, device, dtype, shape):
    """Only the inputs that require grad get one (the op is told which are needed)."""
    for name in spec.differentiable:
        args = testing.draw(spec, (5, 67), dtype, device)
        args[name].requires_grad_()
        result = spec.function(**args)
        (actual,) = torch.autograd.grad(result, [args[name]], torch.ones_like(result))
        args64 = _float64_leaves(spec, args)
        (expected,) = torch.autograd.grad(spec.reference(**args64), [args64[name]], torch.ones_like(result).double())
        bound = testing.grad_error_bound(spec, args, torch.ones_like(result), dtype, [name])
        testing.assert_matches(spec, actual, expected, dtype, (5, 67), bound)


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, where=differentiable))
def test_gradcheck(spec, device, dtype, shape):
    args = testing.draw(spec, (4, 33), torch.float64, device)
    names = list(spec.differentiable)
    testing.check_gradients(_substituting(spec, args, names), *[args[n] for n in names])


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, where=lambda s: differentiable(s) and s.first_order_only))
def test_second_derivative_raises(spec, device, dtype, shape):
    args = testing.draw(spec, (4, 33), torch.float64, device)
    names = list(spec.differentiable)
    testing.check_second_derivative_raises(_substituting(spec, args, names), *[args[n] for n in names])


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, where=lambda s: differentiable(s) and not s.first_order_only))
def test_second_derivatives(spec, device, dtype, shape):
    """An op that declares gradients of any order: its second derivatives match finite differences."""
    args = testing.draw(spec, (4, 33), torch.float64, device)
    names = list(spec.differentiable)
    testing.check_second_derivatives(_substituting(spec, args, names), *[args[n] for n in names])


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS))
def test_opcheck(spec, device, dtype, shape):
    """torch.library.opcheck: schema, fake kernel, autograd registration, AOT dispatch."""
    for case_shape in [(7, 9), (0,), (1031,)]:
        args = testing.draw(spec, case_shape, dtype, device)
        testing.check_opcheck(spec.op, **args)
        if spec.differentiable:
            testing.check_opcheck(spec.op, **_drawn_for_grad(spec, dtype, device, case_shape))


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, where=lambda spec: spec.compiles))
def test_torch_compile_fullgraph(spec, device, dtype, shape):
    """Compiled without graph breaks, the op gives the reference's values (not merely its own eager
    ones: a fake kernel that compiled into something else would agree with itself)."""
    args = testing.draw(spec, (64, 33), dtype, device)
    torch._dynamo.reset()
    compiled = torch.compile(lambda kwargs: testing.call(spec, kwargs), fullgraph=True)
    testing.assert_matches_reference(spec, compiled(args), args, dtype, (64, 33))


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, where=lambda s: all(d.is_floating_point for d in s.dtypes)))
def test_refuses_integer_tensors_naming_the_argument(spec, device, dtype, shape):
    for name in spec.tensor_args:
        if spec.args[name].dtype is not None:
            continue  # a fixed dtype (an index tensor, say) is the op's own business
        args = testing.draw(spec, (4, 5), dtype, device)
        args[name] = torch.arange(args[name].numel(), device=device).view(args[name].shape)
        with pytest.raises(RuntimeError, match=rf"\b{name}\b"):
            spec.function(**args)


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, where=lambda s: elementwise(s) and len(s.tensor_args) > 1))
def test_refuses_mismatched_shapes_and_dtypes(spec, device, dtype, shape):
    first, *others = spec.tensor_args
    for name in others:
        args = testing.draw(spec, (4, 5), dtype, device)
        args[name] = testing.make_tensor((5, 4), dtype, device)
        shape_rule = (
            rf"{name} must broadcast over {first}"
            if name in spec.broadcast
            else rf"({name} and {first}|{first} and {name}) must have the same shape"
        )
        with pytest.raises(RuntimeError, match=shape_rule):
            spec.function(**args)
        args[name] = testing.make_tensor((4, 5), torch.float64 if dtype != torch.float64 else torch.float32, device)
        with pytest.raises(RuntimeError, match=rf"({name} and {first}|{first} and {name}) must have the same dtype"):
            spec.function(**args)


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, where=lambda s: len(s.tensor_args) > 1, devices=["cuda"]))
def test_refuses_tensors_on_different_devices(spec, device, dtype, shape):
    first, *others = spec.tensor_args
    for name in others:
        args = testing.draw(spec, (4, 5), dtype, "cuda")
        args[name] = args[name].cpu()
        with pytest.raises(RuntimeError, match=rf"({name} and {first}|{first} and {name}) must be on the same device"):
            spec.function(**args)


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, devices=["cuda"]))
def test_runs_on_the_current_stream(spec, device, dtype, shape):
    """Called under a side stream whose inputs are written behind a sleep, the op gives what it gives
    on the current stream (its own result, not the reference: the same kernels, the same rounding)."""
    args = testing.draw(spec, testing.big_shape(spec), dtype, "cuda")
    names = [n for n in args if isinstance(args[n], torch.Tensor)]
    expected = testing.call(spec, {**args, **{n: args[n].clone() for n in names}})
    result = testing.call_on_side_stream(_substituting(spec, args, names), *[args[n] for n in names])
    testing.assert_matches(spec, result, expected, dtype, testing.big_shape(spec))


@testing.requires_two_cuda_devices
@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, devices=["cuda"]))
def test_runs_on_the_inputs_device(spec, device, dtype, shape):
    args = testing.draw(spec, testing.big_shape(spec), dtype, "cuda")
    names = [n for n in args if isinstance(args[n], torch.Tensor)]
    testing.check_runs_on_the_inputs_device(_substituting(spec, args, names), *[args[n] for n in names])


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS))
def test_calls_from_several_threads_at_once(spec, device, dtype, shape):
    failures = []

    def worker():
        try:
            for _ in range(5):
                args = testing.draw(spec, (257, 33), dtype, device)
                testing.assert_matches_reference(spec, testing.call(spec, args), args, dtype, (257, 33))
        except Exception as error:  # noqa: BLE001 (reported below, with the thread's error)
            failures.append(error)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[0]


@pytest.mark.parametrize(CASES, testing.large_cases(SPECS))
def test_more_than_2_to_the_31_elements(spec, device, dtype, shape):
    """64-bit indexing: float16 tensors of 2**31 + 77 elements, right at the start, around element
    2**31 (where a 32-bit index wraps) and at the end. Needs the memory the tensors take (on the
    CPU only the result's: the inputs are written only where they are checked)."""
    args, parts = testing.draw_large(spec, testing.LARGE_NUMEL, device)
    result = testing.call(spec, args)
    for part in parts:
        sliced = {k: v[part] if isinstance(v, torch.Tensor) else v for k, v in args.items()}
        testing.assert_matches_reference(spec, result[part], sliced, torch.float16, (testing.LARGE_NUMEL,))


# ---- what models do to an op: tags, determinism, CUDA graphs, autocast, dynamic shapes, export ---
# Once per op and device (in float32, or the op's first dtype): the slow ones (export) most of all.


def once_per_op(where=lambda spec: True, devices=("cpu", "cuda")):
    return testing.spec_cases(SPECS, where=where, devices=devices)


@pytest.mark.skipif(
    not testing.registers_tags(),
    reason=f"torch {torch.__version__}'s stable ABI registers no tags (torch >= 2.12 does)",
)
@pytest.mark.parametrize("spec", [pytest.param(s, id=s.name) for s in SPECS if s.tags is not None])
def test_registered_tags_match_the_declaration(spec):
    """pt2_compliant_tag where it compiles (the checks above hold it to that), nondeterministic_bitwise
    and cudagraph_unsafe where its declaration says so (the checks below hold it to the rest)."""
    assert sorted(tag.name for tag in spec.op.tags) == sorted(spec.tags)


def _twice(spec, args):
    """The op's results, then its inputs' gradients (where it has any), for the same arguments."""
    args = {
        name: value.detach().requires_grad_(name in spec.differentiable) if isinstance(value, torch.Tensor) else value
        for name, value in args.items()
    }
    results = testing.as_tuple(testing.call(spec, args))
    grads = ()
    if spec.differentiable:
        outputs = [r for r in results if r.requires_grad]  # (not an index result)
        inputs = [args[name] for name in spec.differentiable]
        grads = torch.autograd.grad(outputs, inputs, [torch.ones_like(r) for r in outputs])
    return tuple(t.detach().clone() for t in (*results, *grads))  # (an out= op's out is written again)


@pytest.mark.parametrize(CASES, once_per_op(lambda spec: spec.deterministic))
def test_two_runs_give_the_same_bits(spec, device, dtype, shape):
    args = testing.draw(spec, testing.big_shape(spec), dtype, device)
    testing.assert_same_bits(_twice(spec, args), _twice(spec, args))


@pytest.mark.parametrize(CASES, once_per_op(lambda spec: not spec.deterministic))
def test_nondeterministic_op_refuses_deterministic_mode(spec, device, dtype, shape):
    args = testing.draw(spec, (5, 33), dtype, device)
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        with pytest.raises(RuntimeError, match=rf"{spec.name}\b.* does not have a deterministic implementation"):
            spec.function(**args)
    finally:
        torch.use_deterministic_algorithms(previous)


@pytest.mark.parametrize(CASES, once_per_op(lambda spec: spec.cuda_graphs, devices=["cuda"]))
def test_cuda_graph_replays_with_new_inputs(spec, device, dtype, shape):
    """Captured once, replayed after new values are written into its inputs (an out= op's output
    stays the captured one): each replay gives the reference's values for those inputs."""
    args = testing.draw(spec, (257, 129), dtype, device)
    names = testing.tensor_names(args)
    graph, output = testing.capture_in_cuda_graph(_substituting(spec, args, names), *[args[n] for n in names])
    for _ in range(2):
        fresh = testing.draw(spec, (257, 129), dtype, device)
        for name in names:
            if name != spec.out:
                args[name].copy_(fresh[name])
        graph.replay()
        testing.assert_matches_reference(spec, output, args, dtype, (257, 129))


# The dtype each device's autocast regions compute in by default.
AUTOCAST_DTYPES = {"cpu": torch.bfloat16, "cuda": torch.float16}


@pytest.mark.parametrize(CASES, once_per_op())
def test_autocast_computes_in_the_declared_dtype(spec, device, dtype, shape):
    """In an autocast region the op computes in its inputs' dtype, or, declared with autocast=<dtype>,
    in that one: the result is the op's own outside the region on inputs in that dtype, bit for bit."""
    region = AUTOCAST_DTYPES[device]
    drawn = region if region in spec.dtypes else dtype  # where a declared dtype differs, the cast shows
    computes = spec.autocast or drawn
    assert computes in spec.dtypes, f"{spec.name} declares autocast={computes}, a dtype it does not take"
    args = testing.draw(spec, (5, 67), drawn, device)
    cast = {
        name: value.to(computes) if isinstance(value, torch.Tensor) and value.dtype == drawn else value
        for name, value in args.items()
    }
    expected = testing.call(spec, cast)
    with torch.autocast(device, dtype=region):
        actual = testing.call(spec, args)
    testing.assert_same_bits(actual, expected)


@pytest.mark.parametrize(CASES, once_per_op(lambda spec: spec.compiles))
def test_torch_compile_dynamic_compiles_once(spec, device, dtype, shape):
    """torch.compile(dynamic=True) over three sizes: what compiled for the first serves the other two
    (no recompile), and each size gives the reference's values. (A Triton row kernel holds a whole
    row in one block, and is built for each power of two of the row's length, as is what
    torch.compile makes of it: its sizes keep the row length within one.)"""
    from torch._dynamo.testing import CompileCounterWithBackend

    counter = CompileCounterWithBackend("inductor")
    torch._dynamo.reset()
    compiled = torch.compile(lambda kwargs: testing.call(spec, kwargs), backend=counter, dynamic=True, fullgraph=True)
    row_blocks = spec.triton and spec.kind == "rowwise"
    for k, case_shape in enumerate([(5, 33), (9, 40), (17, 60)] if row_blocks else [(5, 33), (9, 67), (17, 130)]):
        args = testing.draw(spec, case_shape, dtype, device)
        testing.assert_matches_reference(spec, compiled(args), args, dtype, case_shape)
        if k == 0:
            compiles = counter.frame_count  # (one, or two where dynamo restarted its analysis once)
    assert counter.frame_count == compiles, f"recompiled for {counter.frame_count - compiles} of two new sizes"


def _exported(device):
    """(spec, dtype) of each op that exports, on `device`, in the dtype its other once-per-op checks use."""
    return [
        (spec, dtype)
        for spec, case_device, dtype, _ in (case.values for case in once_per_op(lambda s: s.exports))
        if case_device == device
    ]


@pytest.mark.parametrize(
    "device",
    [pytest.param(d, marks=[testing.requires_cuda] if d == "cuda" else []) for d in ("cpu", "cuda") if _exported(d)],
)
def test_every_op_runs_from_one_aoti_package(device, tmp_path):
    """torch.export, then AOTInductor: every op that exports, in one package (its compile is mostly the
    wrapper's, about 7 s on the CPU whatever the ops, so one package checks them all at the price of one);
    loaded back, each op gives the reference's values on new inputs."""
    calls, example = [], []
    for spec, dtype in _exported(device):
        args = testing.draw(spec, AOTI_SHAPE, dtype, device)
        names = testing.tensor_names(args)
        fn = _substituting(spec, args, names)
        calls.append((spec, dtype, names, fn, len(_outputs(fn(*[args[n] for n in names])))))
        example += [args[n] for n in names]

    def every_op(*tensors):
        outputs, start = [], 0
        for _, _, names, fn, _ in calls:
            outputs += _outputs(fn(*tensors[start : start + len(names)]))
            start += len(names)
        return tuple(outputs)

    try:
        loaded = testing.aoti_package(every_op, example, tmp_path / "ops.pt2")
    except Exception as error:
        raise AssertionError(_alone_failing(calls, example, tmp_path)) from error
    fresh = [testing.draw(spec, AOTI_SHAPE, dtype, device) for spec, dtype, *_ in calls]
    actual = list(loaded(*[args[n] for args, (_, _, names, _, _) in zip(fresh, calls) for n in names]))
    for args, (spec, dtype, _, _, count) in zip(fresh, calls):
        outputs, actual = actual[:count], actual[count:]
        try:
            testing.assert_matches_reference(
                spec, outputs[0] if count == 1 else tuple(outputs), args, dtype, AOTI_SHAPE
            )
        except AssertionError as error:
            raise AssertionError(f"{spec.name}, run from the AOTInductor package: {error}") from error


AOTI_SHAPE = (33, 65)


def _outputs(result):
    return list(result) if isinstance(result, (list, tuple)) else [result]


def _alone_failing(calls, example, tmp_path) -> str:
    """Which op fails to export or compile by itself (only on failure: one package an op)."""
    start = 0
    for spec, _, names, fn, _ in calls:
        tensors, start = example[start : start + len(names)], start + len(names)
        try:
            testing.aoti_package(fn, tensors, tmp_path / f"{spec.name}.pt2")
        except Exception as error:
            return f"{spec.name} cannot be exported or AOT-compiled: {error}"
    return "the ops export and compile one by one but not in one package"


# ---- what the glue derived from a declaration promises (ops made with declare()) ----------------

SPECIAL_VALUES = [0.0, -0.0, 1e-30, -1e-30, 1e30, -1e30, float("inf"), float("-inf"), float("nan")]


def derived(kind):
    return lambda spec: spec.derived and spec.kind == kind


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, dtypes=True, where=derived("elementwise")))
def test_special_values_match_the_reference(spec, device, dtype, shape):
    """Zeros, tiny and huge values, infinities and NaN in every tensor: the kernel's math agrees with
    the reference (NaN where it gives NaN). 16-bit dtypes get the values they can hold."""
    values = torch.tensor(SPECIAL_VALUES, dtype=torch.float64).to(dtype).to(device)
    args = testing.draw(spec, values.shape, dtype, device)
    for name in spec.tensor_args:
        args[name] = values.clone()
    testing.assert_matches_reference(spec, testing.call(spec, args), args, dtype)


def _reduced(spec):
    return spec.tensor_args[0]


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, where=derived("reduction")))
def test_reduction_refuses_what_it_cannot_reduce(spec, device, dtype, shape):
    name = _reduced(spec)
    with pytest.raises(RuntimeError, match=rf"{name} must have at least one dimension"):
        spec.function(**{**testing.draw(spec, (4, 5), dtype, device), name: torch.tensor(1.0, device=device)})
    if spec.differentiable:
        args = testing.draw(spec, (4, 5), dtype, device)
        backward = getattr(torch.ops, spec.op.namespace)  # the op's <op>_backward, called with a wrong grad
        backward = getattr(backward, f"{spec.name}_backward").default
        with pytest.raises(RuntimeError, match="grad must have the shape of the result"):
            backward(testing.make_tensor((5, 5), dtype, device), *args.values())
    if "dim" in spec.args:
        with pytest.raises(RuntimeError, match="dim must be in"):
            spec.function(**{**testing.draw(spec, (4, 5), dtype, device), "dim": 2})


@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, where=derived("reduction")))
def test_reduction_of_an_empty_row_is_zero(spec, device, dtype, shape):
    args = {**testing.draw(spec, (3, 0), dtype, device)}
    if "dim" in args:
        args["dim"] = -1
    if "keepdim" in args:
        args["keepdim"] = False
    torch.testing.assert_close(spec.function(**args), torch.zeros(3, dtype=dtype, device=device))


@pytest.mark.parametrize("dim", [-3, -2, -1, 0, 1, 2])
@pytest.mark.parametrize(CASES, testing.spec_cases(SPECS, where=lambda s: derived("reduction")(s) and "dim" in s.args))
def test_reduction_over_every_dim(spec, device, dtype, shape, dim):
    name = _reduced(spec)
    for keepdim in [False, True] if "keepdim" in spec.args else [None]:
        args = testing.draw(spec, (5, 33, 67), dtype, device, "transposed")
        args["dim"] = dim
        if keepdim is not None:
            args["keepdim"] = keepdim
        args[name].requires_grad_()
        testing.assert_matches_reference(spec, spec.function(**args), args, dtype, (67,))
        testing.check_gradients(_substituting(spec, args, [name]), args[name].detach()[:2, :3, :4])
