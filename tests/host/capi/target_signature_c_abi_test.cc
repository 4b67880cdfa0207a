// TargetSignature (C ABI version 14): the Python signature a call binds its
// arguments to, as inspect.signature has it in torch 1.13.
//  - call_function targets that are Python functions (torch.nn.functional.
//    relu, torch._assert, torch.masked's, a vendor's registered with a
//    signature): a list of {"name", "kind", "default"} dicts in order, kinds
//    as inspect names them, "default" absent for a parameter without one
//    and, where present, the value Python holds (None, a bool, an int, a
//    float, a string, a tuple, a list, a dtype, a memory format);
//  - builtins (torch.add, torch.ops.aten.add.Tensor, operator.add,
//    math.sqrt) and unknown targets: FX_NOT_FOUND;
//  - call_module: the forward of the graph's owning GraphModule's submodule
//    without self (Conv2d, Linear: [input]); no such submodule, or one of a
//    class the host does not know: FX_NOT_FOUND; a graph without an owning
//    GraphModule: FX_FAILED_PRECONDITION;
//  - NULL target / out / graph (call_module), another opcode:
//    FX_INVALID_ARGUMENT; tables older than 14 lack it and
//    fxp::target_signature says so.
// target_signature_conformance_test checks every registered target and
// module kind against Python torch.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/op_registry.h"
#include "host/capi/c_api.h"

namespace fx::host {
namespace {

// A parameter as "name KIND" or "name KIND=DEFAULT", the default spelled as
// Python would print it: None, True, 3, 1.5, 'text', (1, 2), [],
// torch.float32.
std::string spell(fxp::ArgView v) {
  switch (v.kind()) {
    case FX_ARG_NONE:
      return "None";
    case FX_ARG_BOOL:
      return v.as_bool() ? "True" : "False";
    case FX_ARG_INT:
      return std::to_string(v.as_int());
    case FX_ARG_FLOAT: {
      std::ostringstream s;
      s << "float(" << v.as_float() << ")";
      return s.str();
    }
    case FX_ARG_STRING:
      return "'" + v.as_string() + "'";
    case FX_ARG_DTYPE:
    case FX_ARG_MEMORY_FORMAT:
    case FX_ARG_LAYOUT:
      return v.as_string();
    case FX_ARG_TUPLE:
    case FX_ARG_LIST: {
      const bool tuple = v.kind() == FX_ARG_TUPLE;
      std::string s = tuple ? "(" : "[";
      for (size_t i = 0; i < v.size(); ++i) {
        if (i > 0) s += ", ";
        s += spell(v[i]);
      }
      if (tuple && v.size() == 1) s += ",";
      return s + (tuple ? ")" : "]");
    }
    default:
      return "<kind " + std::to_string(v.kind()) + ">";
  }
}

std::vector<std::string> spell(
    const std::optional<std::vector<fxp::SignatureParam>>& params) {
  std::vector<std::string> out;
  if (!params) return {"<none>"};
  for (const fxp::SignatureParam& p : *params) {
    std::string s = p.name + " " + p.kind;
    if (p.default_value) s += "=" + spell(p.default_value->view());
    out.push_back(s);
  }
  return out;
}

using Spelled = std::vector<std::string>;

class TargetSignatureCAbi : public ::testing::Test {
 protected:
  void SetUp() override {
    auto graph = std::make_unique<Graph>();
    Node* x = graph->placeholder("x");
    Node* y = graph->call_module("conv", {x});
    Node* z = graph->call_module(
        "fc", {graph->call_method("flatten", {y, int64_t{1}})});
    // A GraphModule keeps the submodules its graph calls.
    graph->output(
        graph->call_module("unknown", {graph->call_module("block", {z})}));
    auto block = std::make_shared<torch::nn::SequentialImpl>(
        torch::nn::Linear(4, 3), torch::nn::ReLU());
    struct Unknown : torch::nn::Module {};
    gm_ = std::make_unique<GraphModule>(
        GraphModule::AttributeMap{
            {"conv",
             {std::make_shared<torch::nn::Conv2dImpl>(
                  torch::nn::Conv2dOptions(3, 2, 3)),
              {},
              false}},
            {"fc", {std::make_shared<torch::nn::LinearImpl>(2, 4), {}, false}},
            {"block", {block, {}, false}},
            {"unknown", {std::make_shared<Unknown>(), {}, false}}},
        std::move(graph));
    fxp::api() = api();
  }
  void TearDown() override { fxp::api() = api(); }

  Spelled function(const std::string& target) const {
    return spell(fxp::target_signature(graph(), FX_OP_CALL_FUNCTION, target));
  }
  Spelled module(const std::string& target) const {
    return spell(fxp::target_signature(graph(), FX_OP_CALL_MODULE, target));
  }
  fxp::Graph graph() const { return fxp::Graph(to_handle(&gm_->graph())); }

  std::unique_ptr<GraphModule> gm_;
};

TEST_F(TargetSignatureCAbi, ReluIsInputAndInplace) {
  // The C view: a list of dicts, "default" absent where there is none.
  FxArg* out = nullptr;
  StatusText s = take_status(api()->TargetSignature(
      nullptr, FX_OP_CALL_FUNCTION, "torch.nn.functional.relu", &out));
  ASSERT_EQ(s.code, FX_OK) << s.message;
  ASSERT_NE(out, nullptr);
  const fxp::Arg list = fxp::Arg::adopt(out);
  ASSERT_EQ(list.view().kind(), FX_ARG_LIST);
  ASSERT_EQ(list.view().size(), 2u);
  const fxp::ArgView input = list.view()[0];
  ASSERT_EQ(input.kind(), FX_ARG_DICT);
  ASSERT_EQ(input.size(), 2u);
  EXPECT_EQ(input.key(0), "name");
  EXPECT_EQ(input[0].as_string(), "input");
  EXPECT_EQ(input.key(1), "kind");
  EXPECT_EQ(input[1].as_string(), "POSITIONAL_OR_KEYWORD");
  const fxp::ArgView inplace = list.view()[1];
  ASSERT_EQ(inplace.size(), 3u);
  EXPECT_EQ(inplace[0].as_string(), "inplace");
  EXPECT_EQ(inplace[1].as_string(), "POSITIONAL_OR_KEYWORD");
  EXPECT_EQ(inplace.key(2), "default");
  ASSERT_EQ(inplace[2].kind(), FX_ARG_BOOL);
  EXPECT_FALSE(inplace[2].as_bool());
  // The wrapper, with a graph or without.
  EXPECT_EQ(function("torch.nn.functional.relu"),
            (Spelled{"input POSITIONAL_OR_KEYWORD",
                     "inplace POSITIONAL_OR_KEYWORD=False"}));
}

TEST_F(TargetSignatureCAbi, KeywordOnlyParametersAndTheirDefaults) {
  EXPECT_EQ(
      function("torch.nn.functional.triplet_margin_with_distance_loss"),
      (Spelled{"anchor POSITIONAL_OR_KEYWORD", "positive POSITIONAL_OR_KEYWORD",
               "negative POSITIONAL_OR_KEYWORD",
               "distance_function KEYWORD_ONLY=None",
               "margin KEYWORD_ONLY=float(1)", "swap KEYWORD_ONLY=False",
               "reduction KEYWORD_ONLY='mean'"}));
  EXPECT_EQ(
      function("torch.nn.functional.softmax"),
      (Spelled{"input POSITIONAL_OR_KEYWORD", "dim POSITIONAL_OR_KEYWORD=None",
               "_stacklevel POSITIONAL_OR_KEYWORD=3",
               "dtype POSITIONAL_OR_KEYWORD=None"}));
  EXPECT_EQ(
      function("torch.masked._ops.sum"),
      (Spelled{"input POSITIONAL_OR_KEYWORD", "dim POSITIONAL_OR_KEYWORD=None",
               "keepdim KEYWORD_ONLY=False", "dtype KEYWORD_ONLY=None",
               "mask KEYWORD_ONLY=None"}));
  // *tensors, then a keyword-only parameter.
  EXPECT_EQ(function("torch.functional.meshgrid"),
            (Spelled{"tensors VAR_POSITIONAL", "indexing KEYWORD_ONLY=None"}));
  EXPECT_EQ(
      function("torch.nn.functional.interpolate"),
      (Spelled{"input POSITIONAL_OR_KEYWORD", "size POSITIONAL_OR_KEYWORD=None",
               "scale_factor POSITIONAL_OR_KEYWORD=None",
               "mode POSITIONAL_OR_KEYWORD='nearest'",
               "align_corners POSITIONAL_OR_KEYWORD=None",
               "recompute_scale_factor POSITIONAL_OR_KEYWORD=None",
               "antialias POSITIONAL_OR_KEYWORD=False"}));
}

// A vendor's function registered with a signature holding every kind of
// literal a default may be: the values Python would hold, typed.
TEST_F(TargetSignatureCAbi, AVendorsSignatureKeepsItsDefaultsTyped) {
  OpRegistry::global().add(
      Opcode::kCallFunction, "acme_ops.blend",
      "x, size=(1, 2), pair=(3,), names=[], eps=1e-05, neg=-2, scale=2., "
      "*rest, dtype=torch.float16, fmt=torch.channels_last, "
      "layout=torch.strided, label=\"a, b\", **options",
      [](OpArgs& a) { return a[0]; });
  const std::optional<std::vector<fxp::SignatureParam>> got =
      fxp::target_signature(graph(), FX_OP_CALL_FUNCTION, "acme_ops.blend");
  EXPECT_EQ(
      spell(got),
      (Spelled{"x POSITIONAL_OR_KEYWORD", "size POSITIONAL_OR_KEYWORD=(1, 2)",
               "pair POSITIONAL_OR_KEYWORD=(3,)",
               "names POSITIONAL_OR_KEYWORD=[]",
               "eps POSITIONAL_OR_KEYWORD=float(1e-05)",
               "neg POSITIONAL_OR_KEYWORD=-2",
               "scale POSITIONAL_OR_KEYWORD=float(2)", "rest VAR_POSITIONAL",
               "dtype KEYWORD_ONLY=torch.float16",
               "fmt KEYWORD_ONLY=torch.channels_last",
               "layout KEYWORD_ONLY=torch.strided", "label KEYWORD_ONLY='a, b'",
               "options VAR_KEYWORD"}));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->at(1).default_value->view().kind(), FX_ARG_TUPLE);
  EXPECT_EQ(got->at(1).default_value->view()[0].kind(), FX_ARG_INT);
  EXPECT_EQ(got->at(3).default_value->view().kind(), FX_ARG_LIST);
  EXPECT_EQ(got->at(4).default_value->view().as_float(), 1e-05);
  EXPECT_EQ(got->at(8).default_value->view().kind(), FX_ARG_DTYPE);
  EXPECT_EQ(got->at(9).default_value->view().kind(), FX_ARG_MEMORY_FORMAT);
  EXPECT_EQ(got->at(10).default_value->view().kind(), FX_ARG_LAYOUT);
}

TEST_F(TargetSignatureCAbi, TorchAssertIsConditionAndMessage) {
  EXPECT_EQ(function("torch._assert"),
            (Spelled{"condition POSITIONAL_OR_KEYWORD",
                     "message POSITIONAL_OR_KEYWORD"}));
}

TEST_F(TargetSignatureCAbi, BuiltinsAndUnknownTargetsHaveNone) {
  for (const char* target :
       {"torch.add", "torch.ops.aten.add.Tensor", "torch.ops.aten.add",
        "operator.add", "math.sqrt", "builtins.getattr", "torch.relu",
        "torch._C._nn.linear", "torch.nn.functional.nope", "nope", ""}) {
    SCOPED_TRACE(target);
    FxArg* out = nullptr;
    StatusText s = take_status(
        api()->TargetSignature(nullptr, FX_OP_CALL_FUNCTION, target, &out));
    EXPECT_EQ(s.code, FX_NOT_FOUND) << s.message;
    EXPECT_EQ(out, nullptr);
    EXPECT_EQ(fxp::target_signature(graph(), FX_OP_CALL_FUNCTION, target),
              std::nullopt);
  }
  FxArg* out = nullptr;
  StatusText s = take_status(
      api()->TargetSignature(nullptr, FX_OP_CALL_FUNCTION, "torch.add", &out));
  EXPECT_EQ(s.message,
            "TargetSignature: 'torch.add' has no Python signature the host "
            "knows (a builtin binds to its ATen schemas)");
}

TEST_F(TargetSignatureCAbi, ASubmodulesForwardWithoutSelf) {
  EXPECT_EQ(module("conv"), (Spelled{"input POSITIONAL_OR_KEYWORD"}));
  EXPECT_EQ(module("fc"), (Spelled{"input POSITIONAL_OR_KEYWORD"}));
  EXPECT_EQ(module("block.0"), (Spelled{"input POSITIONAL_OR_KEYWORD"}));
  EXPECT_EQ(module("block.1"),
            (Spelled{"input POSITIONAL_OR_KEYWORD"}));  // ReLU
}

TEST_F(TargetSignatureCAbi, AnUnknownSubmoduleOrClassIsNotFound) {
  FxArg* out = nullptr;
  StatusText s = take_status(api()->TargetSignature(
      to_handle(&gm_->graph()), FX_OP_CALL_MODULE, "nope", &out));
  EXPECT_EQ(s.code, FX_NOT_FOUND);
  EXPECT_EQ(s.message, "TargetSignature: the module has no submodule 'nope'");
  EXPECT_EQ(out, nullptr);
  s = take_status(api()->TargetSignature(to_handle(&gm_->graph()),
                                         FX_OP_CALL_MODULE, "block.7", &out));
  EXPECT_EQ(s.code, FX_NOT_FOUND) << s.message;
  EXPECT_EQ(module("nope"), (Spelled{"<none>"}));
  // A module of a class no ModuleKind describes.
  ASSERT_NE(gm_->get_submodule("unknown"), nullptr);
  s = take_status(api()->TargetSignature(to_handle(&gm_->graph()),
                                         FX_OP_CALL_MODULE, "unknown", &out));
  EXPECT_EQ(s.code, FX_NOT_FOUND) << s.message;
  EXPECT_NE(s.message.find("'unknown'"), std::string::npos) << s.message;
  EXPECT_EQ(out, nullptr);
  // A call_function spelling is no submodule.
  EXPECT_EQ(module("torch.nn.functional.relu"), (Spelled{"<none>"}));
}

TEST_F(TargetSignatureCAbi, NullAndOtherOpcodesAreRefused) {
  FxGraph* g = to_handle(&gm_->graph());
  FxArg* out = nullptr;
  StatusText s = take_status(
      api()->TargetSignature(g, FX_OP_CALL_FUNCTION, nullptr, &out));
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(s.message, "TargetSignature: target must not be NULL");
  s = take_status(api()->TargetSignature(g, FX_OP_CALL_FUNCTION,
                                         "torch.nn.functional.relu", nullptr));
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(s.message, "TargetSignature: out must not be NULL");
  s = take_status(
      api()->TargetSignature(nullptr, FX_OP_CALL_MODULE, "conv", &out));
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(s.message, "TargetSignature: graph must not be NULL");
  for (FxOpcode op :
       {FX_OP_PLACEHOLDER, FX_OP_GET_ATTR, FX_OP_CALL_METHOD, FX_OP_OUTPUT}) {
    SCOPED_TRACE(op);
    s = take_status(api()->TargetSignature(g, op, "relu", &out));
    EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
    EXPECT_EQ(s.message,
              "TargetSignature: op must be FX_OP_CALL_FUNCTION or "
              "FX_OP_CALL_MODULE");
  }
  EXPECT_EQ(out, nullptr);
}

TEST_F(TargetSignatureCAbi, CallModuleNeedsAnOwningGraphModule) {
  Graph bare;
  bare.output(bare.call_module("conv", {bare.placeholder("x")}));
  FxArg* out = nullptr;
  StatusText s = take_status(api()->TargetSignature(
      to_handle(&bare), FX_OP_CALL_MODULE, "conv", &out));
  EXPECT_EQ(s.code, FX_FAILED_PRECONDITION);
  EXPECT_NE(s.message.find("no owning GraphModule"), std::string::npos)
      << s.message;
  EXPECT_EQ(out, nullptr);
  // call_function needs none.
  s = take_status(api()->TargetSignature(to_handle(&bare), FX_OP_CALL_FUNCTION,
                                         "torch.nn.functional.relu", &out));
  EXPECT_EQ(s.code, FX_OK) << s.message;
  fxp::Arg::adopt(out);
}

TEST_F(TargetSignatureCAbi, OlderTablesLackIt) {
  EXPECT_EQ(api(13)->TargetSignature, nullptr);
  EXPECT_NE(api(13)->WriteOutputFile, nullptr);
  EXPECT_NE(api(14)->TargetSignature, nullptr);
  fxp::api() = api(13);
  try {
    fxp::target_signature(graph(), FX_OP_CALL_FUNCTION,
                          "torch.nn.functional.relu");
    ADD_FAILURE() << "no error on a version-13 table";
  } catch (const fxp::Error& e) {
    EXPECT_EQ(e.code(), FX_UNIMPLEMENTED);
    EXPECT_EQ(std::string(e.what()),
              "TargetSignature needs fx plugin API version 14, but the "
              "host's table is version 13 (use a newer fx host)");
  }
}

TEST_F(TargetSignatureCAbi, BooleanDispatchesOfDispatchesAreVariadic) {
  // inspect.signature(torch.unique) is the dispatcher's (*args, **kwargs).
  if (OpRegistry::global().find(Opcode::kCallFunction,
                                "torch.functional.unique") == nullptr) {
    GTEST_SKIP() << "the host registers no torch.functional.unique";
  }
  EXPECT_EQ(function("torch.functional.unique"),
            (Spelled{"args VAR_POSITIONAL", "kwargs VAR_KEYWORD"}));
}

TEST_F(TargetSignatureCAbi, FunctionalBuiltinsHaveNone) {
  // F.conv2d is torch.conv2d and F.pad torch._C._nn.pad in torch 1.13.
  for (const char* target :
       {"torch.nn.functional.conv2d", "torch.nn.functional.pad",
        "torch.nn.functional.linear"}) {
    SCOPED_TRACE(target);
    EXPECT_EQ(function(target), (Spelled{"<none>"}));
  }
}

// TargetReturnType (version 14): AnnotateTypesWithSchema's types.
std::string return_type(const fxp::Graph& g, FxOpcode op,
                        const std::string& target) {
  return fxp::target_return_type(g, op, target).value_or("<none>");
}

TEST_F(TargetSignatureCAbi, ReturnTypesOfFunctionalsModulesAndTensors) {
  const fxp::Graph g = graph();
  EXPECT_EQ(return_type(g, FX_OP_CALL_FUNCTION, "torch.nn.functional.relu"),
            "torch.Tensor");
  EXPECT_EQ(return_type(g, FX_OP_CALL_FUNCTION,
                        "torch.nn.functional.max_pool2d_with_indices"),
            "typing_Tuple[torch.Tensor,torch.Tensor]");
  // Its branches declare different types; a builtin declares none.
  EXPECT_EQ(
      return_type(g, FX_OP_CALL_FUNCTION, "torch.nn.functional.max_pool2d"),
      "<none>");
  EXPECT_EQ(return_type(g, FX_OP_CALL_FUNCTION, "torch.add"), "<none>");
  EXPECT_EQ(return_type(g, FX_OP_CALL_MODULE, "conv"), "torch.Tensor");
  EXPECT_EQ(return_type(g, FX_OP_CALL_MODULE, "block.0"), "torch.Tensor");
  EXPECT_EQ(return_type(g, FX_OP_CALL_MODULE, "block"), "<none>");
  EXPECT_EQ(return_type(g, FX_OP_CALL_MODULE, "unknown"), "<none>");
  EXPECT_EQ(return_type(g, FX_OP_CALL_MODULE, "nope"), "<none>");
  EXPECT_EQ(return_type(g, FX_OP_GET_ATTR, "conv.weight"), "torch.Tensor");
  EXPECT_EQ(return_type(g, FX_OP_GET_ATTR, "conv"), "<none>");
  EXPECT_EQ(return_type(g, FX_OP_GET_ATTR, "nope"), "<none>");
}

TEST_F(TargetSignatureCAbi, ReturnTypeRefusals) {
  FxGraph* g = to_handle(&gm_->graph());
  char* out = nullptr;
  StatusText s = take_status(
      api()->TargetReturnType(g, FX_OP_CALL_FUNCTION, nullptr, &out));
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(s.message, "TargetReturnType: target must not be NULL");
  s = take_status(api()->TargetReturnType(g, FX_OP_CALL_METHOD, "relu", &out));
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  s = take_status(
      api()->TargetReturnType(nullptr, FX_OP_GET_ATTR, "conv.weight", &out));
  EXPECT_EQ(s.message, "TargetReturnType: graph must not be NULL");
  Graph bare;
  bare.output(bare.placeholder("x"));
  s = take_status(
      api()->TargetReturnType(to_handle(&bare), FX_OP_GET_ATTR, "w", &out));
  EXPECT_EQ(s.code, FX_FAILED_PRECONDITION) << s.message;
  EXPECT_EQ(out, nullptr);
  s = take_status(api()->TargetReturnType(nullptr, FX_OP_CALL_FUNCTION,
                                          "torch.nn.functional.relu", &out));
  ASSERT_EQ(s.code, FX_OK) << s.message;
  EXPECT_STREQ(out, "torch.Tensor");
  api()->ReleaseString(out);
  EXPECT_EQ(api(13)->TargetReturnType, nullptr);
  EXPECT_NE(api(14)->TargetReturnType, nullptr);
}

}  // namespace
}  // namespace fx::host
