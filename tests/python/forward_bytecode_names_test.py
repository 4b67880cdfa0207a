"""fx_sdk._C._forward_code (python/forward_bytecode.cc) binds only names
CPython's compiler binds (issue 41): a parameter or assignment target that
is a keyword, None / True / False or __debug__, or a parameter given twice,
is a ValueError naming the node, where compile() raises SyntaxError. Before,
`def forward(self, None)` made a code object whose forward ignored its
argument. Run by fx_sdk_test.sh.
"""

import sys

import pytest

import fx_sdk  # noqa: F401  (loads the extension)
from fx_sdk import _C

pytestmark = pytest.mark.skipif(sys.version_info[:2] != (3, 11),
                                reason="the emitter writes CPython 3.11 code")


def forward(header_params, body):
    return ("\n\n\ndef forward(" + header_params + "):\n" + body +
            "\n    \n")


REFUSED = [
    (forward("self, None", "    return None"), "node 'None' (placeholder)",
     "a Python constant"),
    (forward("self, __debug__", "    return __debug__"),
     "node '__debug__' (placeholder)", "does not let code assign"),
    (forward("self, x, x", "    return x"), "node 'x' (placeholder)",
     "two parameters named 'x'"),
    (forward("self, z", "    True = z\n    return True"),
     "node 'True' (an assignment in the forward)", "a Python constant"),
    (forward("self, z", "    lambda = z\n    return z"),
     "node 'lambda' (an assignment in the forward)", "a Python keyword"),
    (forward("self, z", "    relu = torch.relu(z);  False = None\n"
             "    return relu"),
     "node 'False' (freed with '= None')", "a Python constant"),
    (forward("self, class", "    return class"), "node 'class' (placeholder)",
     "a Python keyword"),
]


@pytest.mark.parametrize("src,node,why", REFUSED)
def test_names_cpython_refuses_are_refused_naming_the_node(src, node, why):
    with pytest.raises(SyntaxError):
        compile(src, "<check>", "exec")
    with pytest.raises(ValueError) as e:
        _C._forward_code(src, "<eval_with_key>.t")
    assert node in str(e.value)
    assert why in str(e.value)


def test_bindable_names_still_make_compiles_code():
    src = forward("self, x_1", "    relu = torch.relu(x_1);  x_1 = None\n"
                  "    return relu")
    code = _C._forward_code(src, "<eval_with_key>.t")
    assert code is not None
    want = compile(src, "<eval_with_key>.t", "exec")
    want = next(c for c in want.co_consts if hasattr(c, "co_code"))
    assert code.co_code == want.co_code
    assert code.co_varnames == want.co_varnames
