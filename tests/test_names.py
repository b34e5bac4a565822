import pytest

from opgen.errors import OpgenError
from opgen.names import validate_op_name


@pytest.mark.parametrize("name", ["gelu_approx", "a", "op2", "fused_bias_gelu", "x" * 64])
def test_accepts_lowercase_identifiers(name):
    assert validate_op_name(name) == name


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("1abc", "starting with a letter"),
        ("my-op", "lowercase letters, digits and"),
        ("GeluApprox", "lowercase"),
        ("_private", "starting with a letter"),
        ("", "starting with a letter"),
        ("class", "Python keyword"),
        ("match", "Python keyword"),
        ("template", r"C\+\+ keyword"),
        ("namespace", r"C\+\+ keyword"),
        ("ops", "reserved"),
        ("common", "reserved"),
        ("default", "C\\+\\+ keyword"),
        ("jit", "reserved"),
        ("gelu_backward", "_backward"),
        ("x" * 65, "longer than 64"),
        ("gelu approx", "lowercase letters"),
    ],
)
def test_rejects_bad_names_with_a_reason(name, reason):
    with pytest.raises(OpgenError, match=reason):
        validate_op_name(name)


def test_rejects_the_package_and_namespace_names():
    with pytest.raises(OpgenError, match="reserved"):
        validate_op_name("my_ops", package="my_ops", namespace="ns")
    with pytest.raises(OpgenError, match="reserved"):
        validate_op_name("ns", package="my_ops", namespace="ns")
