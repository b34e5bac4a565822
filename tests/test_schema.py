"""The schema parser behind `opgen new --schema`: what it accepts means what torch means by it, and
what it refuses gets a reason."""
import pytest
import torch

from opgen import derivation

_DERIVATION = derivation.load()  # the template's <package>/_opgen, which projects build with
schema, opmodel = _DERIVATION.schema, _DERIVATION.model
OpgenError = _DERIVATION.errors.DeclarationError

ACCEPTED = [
    "(Tensor x) -> Tensor",
    "(Tensor a, Tensor b, float c) -> Tensor",
    "(Tensor a, Tensor b, Tensor(a!) out) -> ()",
    "(Tensor x, int[1] dim=[-1], bool keepdim=False) -> Tensor",
    "(Tensor x, Tensor? w=None, *, float eps=1e-05) -> (Tensor, Tensor)",
    "(Tensor[] xs, int n, str mode='sum', ScalarType? dtype=None) -> Tensor[]",
    "(Tensor x, float[] scales, SymInt k=3) -> (Tensor values, Tensor indices)",
    # As vLLM and Hugging Face kernels write them: `Tensor!` without an alias letter, defaults torch
    # prints differently, keyword-only SymInt lists and optional dtypes.
    "(Tensor! out, Tensor input) -> ()",
    "(Tensor(a!) out, Tensor input, float threshold=0.) -> ()",
    "(Tensor x, *, SymInt[] size, ScalarType? dtype=None, bool flag=False, float eps=1e-06) -> Tensor",
    "(Tensor! out, Tensor! residual, Tensor weight, float epsilon) -> ()",
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_round_trip_agrees_with_torch(text):
    """Our rendering of the schema parses in torch to the same arguments, types and defaults."""
    ours = schema.parse(text)
    theirs = torch._C.parse_schema(ours.text("my_op"))
    assert [a.name for a in theirs.arguments] == [a.name for a in ours.args]
    assert [a.kwarg_only for a in theirs.arguments] == [a.kwarg_only for a in ours.args]
    assert [a.alias_info is not None and a.alias_info.is_write for a in theirs.arguments] == [a.mutable for a in ours.args]
    assert [a.has_default_value() for a in theirs.arguments] == [a.default is not None for a in ours.args]
    assert len(theirs.returns) == len(ours.returns)
    assert str(theirs) == str(torch._C.parse_schema(f"my_op{text}"))


def test_leading_name_is_ignored():
    assert schema.parse("whatever(Tensor x) -> Tensor").text("mine") == "mine(Tensor x) -> Tensor"


def test_cpp_and_python_types():
    parsed = schema.parse("(Tensor a, Tensor? w, int n, float f, bool b, int[] d, str s, *, Tensor(a!) out) -> ()")
    assert [a.cpp_type for a in parsed.args] == [
        "const opgen::Tensor&", "const std::optional<opgen::Tensor>&", "int64_t", "double", "bool",
        "const std::vector<int64_t>&", "const std::string&", "const opgen::Tensor&"]
    assert [a.python_type for a in parsed.args] == [
        "Tensor", "Tensor | None", "int", "float", "bool", "list[int]", "str", "Tensor"]


@pytest.mark.parametrize(("text", "message"), [
    ("Tensor x -> Tensor", "cannot read the schema"),
    ("(Scalar alpha, Tensor x) -> Tensor", "the stable ABI has no Scalar"),
    ("(Tensor x, Device d) -> Tensor", "pass a tensor on the device instead"),
    ("(Tensor x, Foo y) -> Tensor", "unknown type 'Foo'"),
    ("(Tensor x) -> int", "an op returns tensors"),
    ("(int n) -> Tensor", "takes no Tensor"),
    ("(Tensor x, Tensor x) -> Tensor", "'x' is used twice"),
    ("(Tensor x, float a=1.0, Tensor y) -> Tensor", "'y' has no default but follows one"),
    ("(Tensor x, float a=yes) -> Tensor", "default 'yes' does not fit type float"),
    ("(Tensor x, float a=None) -> Tensor", "default None needs an optional type"),
    ("(Tensor(a) x) -> Tensor", "would make the op return a view"),
    ("(Tensor x, Tensor(a!) out) -> Tensor", "returns `()`"),
    ("(Tensor x, Tensor(a!) o1, Tensor(a!) o2) -> ()", "share an alias"),
    ("(Tensor self) -> Tensor", "used by the generated code"),
    ("(Tensor class) -> Tensor", "not a usable argument name"),
])
def test_refusals_say_why(text, message):
    with pytest.raises(OpgenError, match=message.replace("(", r"\(").replace(")", r"\)").replace("`", ".")):
        schema.parse(text)


@pytest.mark.parametrize(("kind", "text", "message"), [
    ("elementwise", "(Tensor x, Tensor? w) -> Tensor", "elementwise ops take plain tensors"),
    ("elementwise", "(Tensor x, int[] d) -> Tensor", "take int, float and bool scalars"),
    ("elementwise", "(Tensor x) -> (Tensor, Tensor)", "returns one Tensor"),
    ("reduction", "(Tensor x, float p) -> Tensor", "--kind blank"),
    ("blank", "(int[] n, Tensor? x) -> Tensor", "takes a plain Tensor input"),
    ("elementwise", "(Tensor x, Tensor grad_x) -> Tensor", "'grad_x' is also a name the generated code uses"),
])
def test_kinds_refuse_schemas_they_cannot_generate(kind, text, message):
    with pytest.raises(OpgenError, match=message):
        opmodel.build("my_op", kind, text)


def test_backward_takes_one_flag_per_differentiable_input():
    model = opmodel.build("fma", "elementwise", "(Tensor a, Tensor b, Tensor c, float s=1.0) -> Tensor")
    assert model.backward_definition == ("fma_backward(Tensor grad, Tensor a, Tensor b, Tensor c, float s, "
                                         "bool needs_a, bool needs_b, bool needs_c) -> (Tensor, Tensor, Tensor)")
    assert model.grads_or_none == "grad_a if needs[0] else None, grad_b if needs[1] else None, grad_c if needs[2] else None, None"
    torch._C.parse_schema(model.backward_definition)
