// OperatorSchemas and ValueStorage (C ABI version 12).
//  - OperatorSchemas: the schemas of the ATen operators a target names, as
//    torch prints str(op._schema): one for an exact overload, every overload
//    in torch's order for the spellings that name them all (torch.ops.aten
//    packets, torch.NAME, torch.nn.functional.NAME, Tensor methods), none
//    for a target that names no operator; checked against Python torch
//    (operator_schemas_cases.py, run at test time; skipped without
//    python3-torch) for the test's targets and every aten operator but the
//    seven torch's Python extension registers.
//  - ValueStorage: during a GraphRun, real or meta, a view and its base
//    share an identity, an in-place op's result keeps its input's, a fresh
//    result gets a new one, offsets are storage_offset(); items of tuples
//    are values of the run; identities are not reused when intermediates
//    die; non-tensors, sparse tensors and GraphEvaluate's values are
//    refused.
#include <ATen/DLConvertor.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"
#include "fx_core/ir/argument.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "host/capi/c_api.h"
#include "tests/testing/python.h"

namespace fx::host {
namespace {

using Schemas = std::vector<std::string>;

class OperatorSchemasCAbi : public ::testing::Test {
 protected:
  void SetUp() override { fxp::api() = api(); }
  void TearDown() override { fxp::api() = api(); }
};

// The expected texts here were copied from what /usr/bin/python3 (torch
// 1.13) printed for str(torch.ops.aten.diagonal.default._schema), ... and
// torch._C._jit_get_schemas_for_operator("aten::add"); MatchPythonTorch
// checks these targets, and more, against torch itself.
TEST_F(OperatorSchemasCAbi, AnOverloadIsItsSchemaAsTorchPrintsIt) {
  EXPECT_EQ(fxp::operator_schemas("torch.ops.aten.diagonal.default"),
            (Schemas{"aten::diagonal(Tensor(a) self, int offset=0, int dim1=0, "
                     "int dim2=1) -> Tensor(a)"}));
  EXPECT_EQ(fxp::operator_schemas("torch.ops.aten.split.Tensor"),
            (Schemas{"aten::split.Tensor(Tensor(a -> *) self, int split_size, "
                     "int dim=0) -> Tensor(a)[]"}));
  EXPECT_EQ(fxp::operator_schemas("torch.ops.aten.add_.Tensor"),
            (Schemas{"aten::add_.Tensor(Tensor(a!) self, Tensor other, *, "
                     "Scalar alpha=1) -> Tensor(a!)"}));
  // A TorchScript overload is one too, as torch.ops.aten.add.int is.
  EXPECT_EQ(fxp::operator_schemas("torch.ops.aten.add.int"),
            (Schemas{"aten::add.int(int a, int b) -> int"}));
}

TEST_F(OperatorSchemasCAbi, APacketIsEveryOverloadInTorchsOrder) {
  const Schemas add = fxp::operator_schemas("torch.ops.aten.add");
  ASSERT_EQ(add.size(), 16u);
  EXPECT_EQ(add[0],
            "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) "
            "-> Tensor");
  EXPECT_EQ(add[1],
            "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> "
            "Tensor");
  EXPECT_EQ(add[2],
            "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, "
            "Tensor(a!) out) -> Tensor(a!)");
  EXPECT_EQ(add[3],
            "aten::add.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, "
            "*, Tensor(a!) out) -> Tensor(a!)");
  EXPECT_EQ(add[4], "aten::add.t(t[] a, t[] b) -> t[]");
  EXPECT_EQ(add[15], "aten::add(Scalar a, Scalar b) -> Scalar");
  // torch.add and the method x.add name the same operator.
  EXPECT_EQ(fxp::operator_schemas("torch.add"), add);
  EXPECT_EQ(fxp::operator_schemas("add"), add);
  const Schemas add_ = fxp::operator_schemas("add_");
  ASSERT_FALSE(add_.empty());
  EXPECT_EQ(add_[0],
            "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar "
            "alpha=1) -> Tensor(a!)");
  EXPECT_EQ(fxp::operator_schemas("torch.nn.functional.dropout"),
            fxp::operator_schemas("torch.ops.aten.dropout"));
  EXPECT_FALSE(fxp::operator_schemas("torch.nn.functional.dropout").empty());
}

TEST_F(OperatorSchemasCAbi, ATargetNamingNoOperatorHasNone) {
  for (const char* target :
       {"operator.add", "builtins.getattr", "torch.ops.aten.no_such_operator",
        "torch.ops.aten.add.no_such_overload", "torch.nn.functional.nope",
        "torch.nn.functional.relu.x", "__add__", "", "torch.ops.aten"}) {
    EXPECT_EQ(fxp::operator_schemas(target), Schemas{}) << target;
  }
}

TEST_F(OperatorSchemasCAbi, NullIsRefusedAndOlderTablesLackIt) {
  FxArg* out = nullptr;
  StatusText s = take_status(api()->OperatorSchemas(nullptr, &out));
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(s.message, "OperatorSchemas: target must not be NULL");
  EXPECT_EQ(out, nullptr);
  s = take_status(api()->OperatorSchemas("torch.add", nullptr));
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(s.message, "OperatorSchemas: out must not be NULL");
  EXPECT_EQ(api(11)->OperatorSchemas, nullptr);
  EXPECT_EQ(api(11)->ValueStorage, nullptr);
  EXPECT_NE(api(12)->OperatorSchemas, nullptr);
  fxp::api() = api(11);
  try {
    fxp::operator_schemas("torch.add");
    ADD_FAILURE() << "no error on a version-11 table";
  } catch (const fxp::Error& e) {
    EXPECT_EQ(e.code(), FX_UNIMPLEMENTED);
    EXPECT_EQ(std::string(e.what()),
              "OperatorSchemas needs fx plugin API version 12, but the "
              "host's table is version 11 (use a newer fx host)");
  }
}

// operator_schemas_cases.py's output: "= TARGET", then its schemas.
std::map<std::string, Schemas> parse_cases(const std::string& text) {
  std::map<std::string, Schemas> cases;
  std::istringstream lines(text);
  std::string line;
  Schemas* current = nullptr;
  while (std::getline(lines, line)) {
    if (line.rfind("= ", 0) == 0) {
      current = &cases[line.substr(2)];
    } else if (current != nullptr) {
      current->push_back(line);
    }
  }
  return cases;
}

TEST_F(OperatorSchemasCAbi, MatchPythonTorch) {
  if (!testing::have_python_torch()) GTEST_SKIP() << "no python3-torch";
  const std::map<std::string, Schemas> cases = parse_cases(
      testing::run_python("tests/host/capi/operator_schemas_cases.py", {}));
  ASSERT_GT(cases.size(), 1000u);
  // Registered by torch's Python extension (libtorch_python: distributed
  // RPC's RRef operators and dist_autograd's backward), not by LibTorch, so
  // a LibTorch host has none of them.
  const std::set<std::string> python_only = {
      "torch.ops.aten.confirmed_by_owner",
      "torch.ops.aten.dist_backward",
      "torch.ops.aten.is_owner",
      "torch.ops.aten.local_value",
      "torch.ops.aten.owner",
      "torch.ops.aten.owner_name",
      "torch.ops.aten.to_here"};
  size_t differ = 0;
  for (const auto& [target, want] : cases) {
    Schemas got = fxp::operator_schemas(target.c_str());
    if (python_only.count(target) > 0) {
      EXPECT_EQ(got, Schemas{}) << target;
      EXPECT_FALSE(want.empty()) << target;
      continue;
    }
    if (got != want && ++differ <= 10) {
      ADD_FAILURE() << target << ": got " << got.size() << " schemas, torch "
                    << want.size() << (got.empty() ? "" : "; first: " + got[0])
                    << (want.empty() ? "" : "; torch's first: " + want[0]);
    }
  }
  EXPECT_EQ(differ, 0u) << "of " << cases.size() << " targets";
}

// ------------------------------------------------------------ ValueStorage

struct Seen {
  fxp::TensorStorage storage{0, 0};
  std::vector<fxp::TensorStorage> items;
  FxStatusCode refused = FX_OK;
  std::string message;
};

class ValueStorageCAbi : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { fxp::api() = api(); }
  void TearDown() override { fxp::api() = api(); }

  bool meta() const { return GetParam(); }

  // Runs `gm` on `input` and records, per node name, its storage (or why it
  // was refused) and its items' storages.
  std::map<std::string, Seen> run(GraphModule& gm, const at::Tensor& input) {
    std::map<std::string, Seen> seen;
    auto record = [&seen](fxp::Node n, fxp::RuntimeValue v) {
      Seen& s = seen[std::string(n.name())];
      try {
        s.storage = v.storage();
      } catch (const fxp::Error& e) {
        s.refused = e.code();
        s.message = e.what();
      }
      for (size_t i = 0; i < v.size(); ++i) {
        if (v.item(i).is_tensor()) s.items.push_back(v.item(i).storage());
      }
    };
    DLManagedTensor* dl = at::toDLPack(input);
    fxp::Graph g(to_handle(&gm.graph()));
    try {
      fxp::run_graph(g, {&dl->dl_tensor}, meta(), record);
    } catch (...) {
      dl->deleter(dl);
      throw;
    }
    dl->deleter(dl);
    return seen;
  }
};

TEST_P(ValueStorageCAbi, ViewsShareTheirBasesStorageAndFreshResultsDoNot) {
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* view = graph->call_method("view", {x, int64_t{-1}});
  graph->call_method("transpose", {x, int64_t{0}, int64_t{1}});
  Node* row = graph->call_function("operator.getitem", {x, int64_t{1}});
  Node* diagonal = graph->call_function("torch.diagonal", {x});
  Node* sum = graph->call_function("torch.add", {x, x});
  Node* in_place = graph->call_method("add_", {sum, int64_t{1}});
  Node* chunks = graph->call_function("torch.chunk", {in_place, int64_t{2}});
  Node* size = graph->call_method("size", {x});
  graph->output(Argument::tuple({chunks, view, row, diagonal, size}));
  GraphModule gm(GraphModule::AttributeMap{}, std::move(graph));

  std::map<std::string, Seen> seen = run(gm, torch::rand({4, 3}));
  const uint64_t base = seen["x"].storage.id;
  EXPECT_NE(base, 0u);
  EXPECT_EQ(seen["x"].storage.offset, 0);
  EXPECT_EQ(seen["view"].storage.id, base);
  EXPECT_EQ(seen["transpose"].storage.id, base);
  // x[1] starts one row in: stride(0) == 3 elements.
  EXPECT_EQ(seen["getitem"].storage.id, base);
  EXPECT_EQ(seen["getitem"].storage.offset, 3);
  EXPECT_EQ(seen["diagonal"].storage.id, base);
  EXPECT_EQ(seen["diagonal"].storage.offset, 0);
  const uint64_t fresh = seen["add"].storage.id;
  EXPECT_NE(fresh, 0u);
  EXPECT_NE(fresh, base);
  EXPECT_EQ(seen["add_"].storage.id, fresh);
  // The chunks of the contiguous (4, 3) sum, views of it: rows 0-1 and
  // rows 2-3, six elements in.
  ASSERT_EQ(seen["chunk"].items.size(), 2u);
  EXPECT_EQ(seen["chunk"].items[0].id, fresh);
  EXPECT_EQ(seen["chunk"].items[0].offset, 0);
  EXPECT_EQ(seen["chunk"].items[1].id, fresh);
  EXPECT_EQ(seen["chunk"].items[1].offset, 6);
  EXPECT_EQ(seen["chunk"].refused, FX_INVALID_ARGUMENT);  // a tuple
  // The output's items: the chunks' tuple is no tensor; view, row, diagonal.
  ASSERT_EQ(seen["output"].items.size(), 3u);
  EXPECT_EQ(seen["output"].items[0].id, base);
  EXPECT_EQ(seen["output"].items[1].id, base);
  EXPECT_EQ(seen["output"].items[1].offset, 3);
  // torch.Size is no tensor.
  EXPECT_EQ(seen["size"].refused, FX_INVALID_ARGUMENT);
  EXPECT_EQ(seen["size"].message,
            "ValueStorage: the value is a Tuple, not a tensor");
}

TEST_P(ValueStorageCAbi, IdentitiesAreNotReusedWhenIntermediatesDie) {
  auto graph = std::make_unique<Graph>();
  Node* y = graph->placeholder("x");
  for (int i = 0; i < 20; ++i) {
    y = graph->call_function("torch.add", {y, int64_t{1}});
  }
  graph->output(y);
  GraphModule gm(GraphModule::AttributeMap{}, std::move(graph));
  std::map<std::string, Seen> seen = run(gm, torch::rand({64, 64}));
  std::set<uint64_t> ids;
  for (const auto& [name, s] : seen) {
    if (name == "output") continue;
    EXPECT_NE(s.storage.id, 0u) << name;
    ids.insert(s.storage.id);
  }
  EXPECT_EQ(ids.size(), 21u);  // x and every add, each its own
  EXPECT_EQ(seen["output"].storage.id, seen["add_19"].storage.id);
}

INSTANTIATE_TEST_SUITE_P(RealAndMeta, ValueStorageCAbi, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Meta" : "Real";
                         });

TEST(ValueStorageCAbiC, NullOutParametersAndValuesWithoutAStorageOrRun) {
  const FxApi* a = api();
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* w = graph->get_attr("w");
  Node* sum = graph->call_function("torch.add", {x, w});
  graph->output(graph->call_method("to_sparse", {sum}));
  GraphModule gm(
      GraphModule::AttributeMap{{"w", {nullptr, torch::ones({2}), true}}},
      std::move(graph));
  struct Probe {
    StatusText null_outs;
    StatusText null_value;
    StatusText sparse;
    int64_t offset_only = -1;
  } probe;
  FxNodeValueFn on_node = [](FxNode* n, const FxValue* v,
                             void* data) -> FxStatus* {
    auto* p = static_cast<Probe*>(data);
    if (std::string(api()->NodeName(n)) == "to_sparse") {
      uint64_t id = 0;
      p->sparse = take_status(api()->ValueStorage(v, &id, nullptr));
      return nullptr;
    }
    if (std::string(api()->NodeName(n)) != "add") return nullptr;
    p->null_outs = take_status(api()->ValueStorage(v, nullptr, nullptr));
    p->null_value = take_status(api()->ValueStorage(nullptr, nullptr, nullptr));
    int64_t offset = -1;
    FxStatus* s = api()->ValueStorage(v, nullptr, &offset);
    if (s == nullptr) p->offset_only = offset;
    return s;
  };
  at::Tensor input = torch::ones({2});
  DLManagedTensor* dl = at::toDLPack(input);
  const DLTensor* inputs[] = {&dl->dl_tensor};
  StatusText run = take_status(
      a->GraphRun(to_handle(&gm.graph()), inputs, 1, 0, on_node, &probe));
  dl->deleter(dl);
  EXPECT_EQ(run.code, FX_OK) << run.message;
  EXPECT_EQ(probe.null_outs.code, FX_OK);
  EXPECT_EQ(probe.null_value.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(probe.null_value.message, "ValueStorage: value must not be NULL");
  EXPECT_EQ(probe.offset_only, 0);
  EXPECT_EQ(probe.sparse.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(probe.sparse.message,
            "ValueStorage: the tensor has no storage (a sparse or mkldnn "
            "tensor)");

  // GraphEvaluate's value belongs to no run.
  StatusText evaluated;
  FxNodeValueFn on_value = [](FxNode*, const FxValue* v,
                              void* data) -> FxStatus* {
    uint64_t id = 0;
    *static_cast<StatusText*>(data) =
        take_status(api()->ValueStorage(v, &id, nullptr));
    return nullptr;
  };
  StatusText eval = take_status(a->GraphEvaluate(
      to_handle(&gm.graph()), to_handle(w), on_value, &evaluated));
  EXPECT_EQ(eval.code, FX_OK) << eval.message;
  EXPECT_EQ(evaluated.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(evaluated.message,
            "ValueStorage: the value is not a value of a GraphRun in progress "
            "(GraphEvaluate numbers no storages)");
}

}  // namespace
}  // namespace fx::host
