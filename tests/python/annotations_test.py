"""Annotations as torch.fx prints and generates them (issue 32, item 4),
against torch.fx 1.13 in the same process.

Each module's forward is annotated with one typing construct torch.fx's own
tests use (Tuple[()], forward references, a NamedTuple, a local class,
gradual typing's TensorType and Dyn, nested generics, typing.OrderedDict).
torch.fx prints an annotation as repr(type) and generates code that names
it through globals; the SDK keeps both: its graph text and code, and
to_torch_fx's graph text, code and node types, are torch.fx's. Through a
bundle file (tools/torchfx_export.py, then `fx print` / `fx code`) too.

"""

import json
import subprocess
import typing
from typing import Any, Dict, List, NamedTuple, Optional, Tuple, Union

import pytest
import torch
import torch.fx
from torch.fx.annotate import annotate  # noqa: F401 (RewritingTracer's)
from torch.fx.tensor_type import Dyn, TensorType

import fx_sdk
from fx_command import fx_binary
from fx_sdk import torchfx_export


class Pair(NamedTuple):
    a: torch.Tensor
    b: int


class Opaque:
    """A user's class torch.fx names by its module path."""


def annotated(forward):
    """A module whose forward is `forward`."""
    return type("Annotated", (torch.nn.Module,), {"forward": forward})()


def f_tuple_empty(self, x: Tuple[()]) -> Tuple[()]:
    return x


def f_forward_ref(self, x: "torch.Tensor") -> "torch.Tensor":
    return x + 1


def f_list_of_forward_ref(self, x: List["torch.Tensor"]) -> torch.Tensor:
    return x[0]


def f_dict(self, x: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    return x


def f_optional_default(self, x: torch.Tensor,
                       y: Optional[torch.Tensor] = None) -> torch.Tensor:
    return x


def f_union(self, x: Union[torch.Tensor, int]) -> torch.Tensor:
    return x + 1


def f_any(self, x: Any) -> Any:
    return x


def f_named_tuple(self, x: Pair) -> torch.Tensor:
    return x.a


def f_user_class(self, x: Opaque) -> Opaque:
    return x


def f_tensor_type(self, x: TensorType((1, 2, 3, Dyn))) -> TensorType((1, 6)):
    return torch.flatten(x, 1)


def f_dyn(self, x: Dyn):
    return x


def f_tensor_type_dyn_first(self, x: TensorType((Dyn, 2))):
    return x.relu()


def f_builtins(self, x: int, y: float, z: str, w: bool) -> int:
    return x


def f_module_and_size(self, x: torch.nn.Module, s: torch.Size) -> torch.Size:
    return s


def f_nested(self, x: Optional[List[Tuple[int, torch.Tensor]]]
             ) -> Tuple[torch.Tensor, ...]:
    return x


def f_ordered_dict(self, x: typing.OrderedDict[str, int]) -> None:
    return None


ANNOTATED = [f_tuple_empty, f_forward_ref, f_list_of_forward_ref, f_dict,
             f_optional_default, f_union, f_any, f_named_tuple, f_user_class,
             f_tensor_type, f_dyn, f_tensor_type_dyn_first, f_builtins,
             f_module_and_size, f_nested, f_ordered_dict]


def torch_text(graph):
    return str(graph)


def sdk_text(sdk_gm):
    return sdk_gm.graph_text.replace("[num_users=", "[#users=")


@pytest.fixture(params=ANNOTATED, ids=[f.__name__ for f in ANNOTATED])
def gm(request):
    return torch.fx.symbolic_trace(annotated(request.param))


def test_the_sdk_prints_and_generates_annotations_as_torch_fx(gm):
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_text(sdk_gm) == torch_text(gm.graph)
    assert sdk_gm.code == gm.code


class GraduallyTyped(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(2)
        self.relu = torch.nn.ReLU()

    def forward(self, x: TensorType((2, 2, 5, 4))):
        return self.relu(self.bn(x))


def type_checked():
    """Gradual typing's checker gives every node a TensorType, which
    torch.fx's code then spells on each node's line."""
    from torch.fx.experimental.graph_gradual_typechecker import \
        GraphTypeChecker
    gm = torch.fx.symbolic_trace(GraduallyTyped())
    GraphTypeChecker({}, gm).type_check()
    gm.recompile()
    assert any(n.type is not None and n.op == "call_module"
               for n in gm.graph.nodes)
    return gm


def test_types_on_every_node_print_and_generate_as_torch_fx(tmp_path):
    gm = type_checked()
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_text(sdk_gm) == torch_text(gm.graph)
    assert sdk_gm.code == gm.code
    back = fx_sdk.to_torch_fx(sdk_gm, lazy=False)
    assert back.code == gm.code
    assert [n.type for n in back.graph.nodes] == [n.type
                                                  for n in gm.graph.nodes]
    test_a_bundle_prints_and_generates_annotations_as_torch_fx(gm, tmp_path)


class AnnotatedLocal(torch.nn.Module):
    """A local variable's annotation, which the AST rewriting tracer turns
    into the node's type (torch.fx's TypeCheckerTest)."""

    def __init__(self):
        super().__init__()
        self.bn1 = torch.nn.BatchNorm2d(2)

    def forward(self, x: TensorType((2, 2, 5, 4))):
        out: TensorType((2, 2, Dyn, 4)) = self.bn1(x)
        return out


def test_a_node_typed_apart_from_the_inputs_comes_back_typed():
    from torch.fx.experimental.rewriter import RewritingTracer
    tracer = RewritingTracer()
    graph = tracer.trace(AnnotatedLocal())
    gm = torch.fx.GraphModule(tracer.root, graph, "gm")
    sdk_gm = fx_sdk.from_torch_fx(gm)
    assert sdk_text(sdk_gm) == torch_text(gm.graph)
    assert sdk_gm.code == gm.code
    back = fx_sdk.to_torch_fx(sdk_gm, lazy=False)
    assert torch_text(back.graph) == torch_text(gm.graph)
    assert [n.type for n in back.graph.nodes] == [n.type
                                                  for n in gm.graph.nodes]


def test_to_torch_fx_gives_back_the_types(gm):
    back = fx_sdk.to_torch_fx(fx_sdk.from_torch_fx(gm), lazy=False)
    assert torch_text(back.graph) == torch_text(gm.graph)
    assert back.code == gm.code
    assert [n.type for n in back.graph.nodes] == [n.type
                                                  for n in gm.graph.nodes]



def test_a_bundle_prints_and_generates_annotations_as_torch_fx(gm, tmp_path):
    document, _ = torchfx_export.graph_document(gm)
    bundle = tmp_path / "graph.fx.json"
    bundle.write_text(json.dumps(document, indent=1))
    printed = subprocess.run([fx_binary(), "print", str(bundle)],
                             capture_output=True, text=True, check=True)
    assert printed.stdout.replace("[num_users=", "[#users=") == (
        torch_text(gm.graph) + "\n")
    code = subprocess.run([fx_binary(), "code", str(bundle)],
                          capture_output=True, text=True, check=True)
    assert code.stdout == gm.code


@pytest.mark.parametrize("code_form", [
    "torch.Tensor", "typing_List[int]", "typing_Tuple[int,int]",
    "typing_Union[int,NoneType]", "typing_Union[NoneType,torch.Tensor]",
    "typing_Dict[str,typing_List[torch.Tensor]]", "typing_Tuple[()]",
    "torch.fx.tensor_type.TensorType[_1,_2,torch.fx.tensor_type._DynType]",
    "_torch_Tensor_", "typing_Tuple[torch.Tensor,...]", "List[int]",
    "typing_Callable[[int],int]", "int", "",
    "typing_Optional[typing_List[typing_Tuple[int,torch.Tensor]]]"])
def test_the_exporter_derives_type_text_as_the_reader_does(code_form):
    """tools/torchfx_export.py writes a NODE's "type_text" only where the
    reader's own derivation would print something else: its Python copy of
    the rule must agree with the C++ one."""
    assert torchfx_export.type_text_form(code_form) == (
        fx_sdk._C._type_text_form(code_form))
