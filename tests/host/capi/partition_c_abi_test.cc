// Partitioning through the C ABI (version 3): a C99 plugin
// (tests/plugin_api/plugins/partition_plugin.c) declares its support rule,
// asks the host for partitions and marks or fuses them. The partitions must
// be torch.fx's (partition_cases.py, run here with Python torch.fx), and
// fused models must compute eager PyTorch's numbers. The C++ wrapper's rules
// (fxp::Support) are checked on a small graph.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"
#include "fx_core/format/json_text.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "host/capi/c_api.h"
#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_target.h"
#include "host/pipeline/pipeline.h"
#include "tests/fx_core/partition/partition_cases.h"
#include "tests/plugins/plugin_test_util.h"
#include "tests/testing/reference.h"

namespace fx::host {
namespace {

using Names = std::vector<std::vector<std::string>>;

class PartitionThroughCAbi : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string skip = plugins_test::python_skip_reason();
    if (!skip.empty()) GTEST_SKIP() << skip;
    auto plugin =
        load_plugin("tests/plugin_api/plugins/libpartition_plugin.so");
    ASSERT_TRUE(plugin.ok()) << plugin.status();
    ASSERT_TRUE(registry_.add(*plugin).ok());
  }

  // Runs one pass, given as a JSON pipeline entry, on `gm`.
  PipelineReport run(GraphModule& gm, const nlohmann::ordered_json& entry) {
    nlohmann::ordered_json config = {{"pipeline", {entry}}};
    auto spec = parse_pipeline_config(config.dump(), "test", ".");
    EXPECT_TRUE(spec.ok()) << spec.status();
    if (!spec.ok()) return {};
    auto pm = PassManager::create(registry_, *std::move(spec));
    EXPECT_TRUE(pm.ok()) << pm.status();
    if (!pm.ok()) return {};
    GraphModuleTarget target(gm);
    PipelineReport report = pm->run(target);
    target.finish();
    return report;
  }

  PassRegistry registry_;
};

// The pass options of a case's rule.json.
nlohmann::ordered_json options_of(const std::string& case_dir) {
  auto rule =
      parse_json_text(testing::read_file(case_dir + "/rule.json"), "rule.json");
  EXPECT_TRUE(rule.ok()) << rule.status();
  return {{"functions", (*rule)["functions"]},
          {"methods", (*rule)["methods"]},
          {"module_types", (*rule)["module_types"]},
          {"get_attr", (*rule)["get_attr"]},
          {"allows_single", (*rule)["allows_single"]}};
}

// meta['partition'] of each node, as lists of names.
Names marked(const Graph& g) {
  std::map<int64_t, std::vector<std::string>> by_index;
  for (Node* n : g.nodes()) {
    if (const Argument* p = n->meta_value("partition")) {
      by_index[p->as_int()].emplace_back(n->name());
    }
  }
  Names out;
  for (auto& [index, names] : by_index) out.push_back(std::move(names));
  return out;
}

TEST_F(PartitionThroughCAbi, MarksTorchFxPartitions) {
  int compared = 0;
  for (const std::string& name : testing::partition_case_names()) {
    SCOPED_TRACE(name);
    testing::PartitionCase c = testing::load_partition_case(name);
    if (c.ambiguous) continue;
    auto gm = read_graph_module(c.dir + "/graph.fx.json");
    ASSERT_TRUE(gm.ok()) << gm.status();
    PipelineReport report = run(
        **gm, {{"pass", "mark_partitions"}, {"options", options_of(c.dir)}});
    ASSERT_TRUE(report.ok()) << report.failure;
    EXPECT_EQ(marked((*gm)->graph()), c.expected);
    ++compared;
  }
  EXPECT_GE(compared, 20);
}

TEST_F(PartitionThroughCAbi, FusedModelsComputeEagerNumbers) {
  struct Model {
    std::string dir;
    nlohmann::ordered_json options;
    size_t min_fused;
  };
  std::string transformer =
      std::string(std::getenv("TEST_TMPDIR")) + "/transformer";
  std::string log;
  ASSERT_EQ(
      plugins_test::run_command(
          "/usr/bin/python3 " +
              plugins_test::runfile("tools/torchfx_export.py") + " --module " +
              plugins_test::runfile(
                  "tests/fx_core/partition/transformer_block.py") +
              ":Transformer --input-shape 2,5,16 -o " + transformer,
          &log),
      0)
      << log;
  std::vector<Model> models = {
      {plugins_test::export_torchvision("resnet18"),
       {{"module_types",
         {"torch.nn.Conv2d", "torch.nn.ReLU", "torch.nn.BatchNorm2d"}},
        {"functions", {"operator.add"}},
        {"decline", {"layer2_0_relu"}},
        {"allows_single", true}},
       3},
      {transformer,
       {{"module_types", {"torch.nn.Linear", "torch.nn.LayerNorm"}},
        {"functions",
         {"torch.matmul", "operator.add", "operator.truediv",
          "operator.getitem", "torch.nn.functional.gelu"}},
        {"methods", {"chunk", "transpose"}}},
       3},
  };
  for (const Model& m : models) {
    SCOPED_TRACE(m.dir);
    plugins_test::Bundle b = plugins_test::load_bundle(m.dir);
    ASSERT_FALSE(b.expected.isNone());
    PipelineReport report =
        run(*b.gm, {{"pass", "fuse_partitions"}, {"options", m.options}});
    ASSERT_TRUE(report.ok()) << report.failure;
    size_t fused = 0;
    for (Node* n : b.gm->graph().nodes()) {
      if (n->op() != Opcode::kCallModule) continue;
      if (n->target().rfind("fused_", 0) != 0) continue;
      ++fused;
      EXPECT_NE(b.gm->get_submodule(n->target()), nullptr) << n->target();
    }
    EXPECT_GE(fused, m.min_fused);
    b.gm->recompile();
    c10::IValue got = plugins_test::forward(*b.gm, b.inputs);
    EXPECT_LT(plugins_test::max_abs_diff(got, b.expected), 1e-4);
  }
}

TEST_F(PartitionThroughCAbi, FusionRefusesATakenNameAndChangesNothing) {
  plugins_test::Bundle b =
      plugins_test::load_bundle(plugins_test::export_torchvision("resnet18"));
  nlohmann::ordered_json options = {
      {"module_types", {"torch.nn.Conv2d", "torch.nn.BatchNorm2d"}},
      {"allows_single", true},
      {"prefix", "conv"}};  // conv1 is taken
  std::string before = b.gm->graph().str();
  PipelineReport report =
      run(*b.gm, {{"pass", "fuse_partitions"}, {"options", options}});
  EXPECT_FALSE(report.ok());
  EXPECT_NE(report.failure.find("the module already has an attribute 'conv1'"),
            std::string::npos)
      << report.failure;
  EXPECT_EQ(b.gm->graph().str(), before);
}

TEST_F(PartitionThroughCAbi, FusionRefusesPartitionsTorchFxFindsCyclic) {
  int refused = 0;
  for (const std::string& name : testing::partition_case_names()) {
    testing::PartitionCase c = testing::load_partition_case(name);
    if (c.ambiguous || !std::filesystem::exists(c.dir + "/fuse_error.txt")) {
      continue;
    }
    SCOPED_TRACE(name);
    auto gm = read_graph_module(c.dir + "/graph.fx.json");
    ASSERT_TRUE(gm.ok()) << gm.status();
    std::string before = (*gm)->graph().str();
    PipelineReport report = run(
        **gm, {{"pass", "fuse_partitions"}, {"options", options_of(c.dir)}});
    EXPECT_FALSE(report.ok());
    EXPECT_NE(report.failure.find("the graph would have a cycle"),
              std::string::npos)
        << report.failure;
    EXPECT_EQ((*gm)->graph().str(), before);
    ++refused;
  }
  EXPECT_GE(refused, 3);
}

// relu(x) -> neg, in a GraphModule of its own.
std::unique_ptr<GraphModule> relu_neg() {
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* r = graph->call_function("torch.relu", {x});
  graph->output(graph->call_function("torch.neg", {r}));
  return std::make_unique<GraphModule>(GraphModule::AttributeMap{},
                                       std::move(graph));
}

// Issue 39: partitions and support rules are checked handles. Partitions
// name their nodes by handle, so once their graph is gone (rolled back,
// replaced, released) they name no node and fusing them is refused; a
// released rule or partition list is refused, and releasing twice does
// nothing.
TEST(PartitionEntries, KeptPartitionsAndRulesAreRefusedNotFollowed) {
  const FxApi* t = api();
  auto code_of = [&](FxStatus* status, const std::string& says) {
    EXPECT_NE(status, nullptr) << says;
    if (status == nullptr) return FX_OK;
    FxStatusCode code = t->GetStatusCode(status);
    EXPECT_NE(std::string(t->GetStatusMessage(status)).find(says),
              std::string::npos)
        << t->GetStatusMessage(status);
    t->ReleaseStatus(status);
    return code;
  };
  const char* targets[] = {"torch.relu", "torch.neg"};
  FxSupport* rule = nullptr;
  ASSERT_EQ(t->SupportTargets(FX_OP_CALL_FUNCTION, targets, 2, &rule), nullptr);
  std::unique_ptr<GraphModule> first = relu_neg();
  FxPartitions* partitions = nullptr;
  ASSERT_EQ(t->GraphProposePartitions(to_handle(&first->graph()), rule, nullptr,
                                      &partitions),
            nullptr);
  ASSERT_EQ(t->PartitionsCount(partitions), 1u);
  ASSERT_EQ(t->PartitionSize(partitions, 0), 2u);
  EXPECT_NE(t->PartitionNode(partitions, 0, 0), nullptr);

  first.reset();  // the graph the partitions were proposed on is gone
  EXPECT_EQ(t->PartitionNode(partitions, 0, 0), nullptr);
  std::unique_ptr<GraphModule> second = relu_neg();
  std::string before = second->graph().str();
  EXPECT_EQ(code_of(t->GraphFusePartitions(to_handle(&second->graph()),
                                           partitions, nullptr),
                    "partition 0 names a node that no longer exists"),
            FX_FAILED_PRECONDITION);
  EXPECT_EQ(second->graph().str(), before);

  t->ReleasePartitions(partitions);
  t->ReleasePartitions(partitions);  // a second release does nothing
  EXPECT_EQ(t->PartitionsCount(partitions), 0u);
  EXPECT_EQ(code_of(t->GraphFusePartitions(to_handle(&second->graph()),
                                           partitions, nullptr),
                    "the partitions handle is stale"),
            FX_FAILED_PRECONDITION);
  t->ReleaseSupport(rule);
  t->ReleaseSupport(rule);
  EXPECT_EQ(code_of(t->GraphProposePartitions(to_handle(&second->graph()), rule,
                                              nullptr, &partitions),
                    "the support rule handle is stale"),
            FX_FAILED_PRECONDITION);
  int supported = 0;
  EXPECT_EQ(code_of(t->SupportIsNodeSupported(
                        reinterpret_cast<const FxSupport*>(&supported),
                        to_handle(second->graph().output_node()), &supported),
                    "the support rule handle was not made by this host"),
            FX_INVALID_ARGUMENT);
}

TEST(PartitionEntries, RefuseBadArguments) {
  const FxApi* t = api();
  FxSupport* out = nullptr;
  auto message = [&](FxStatus* status) {
    std::string text = status ? t->GetStatusMessage(status) : "";
    EXPECT_NE(status, nullptr);
    if (status) {
      EXPECT_EQ(t->GetStatusCode(status), FX_INVALID_ARGUMENT);
      t->ReleaseStatus(status);
    }
    return text;
  };
  const char* names[] = {"operator.add"};
  EXPECT_EQ(message(t->SupportTargets(FX_OP_PLACEHOLDER, names, 1, &out)),
            "SupportTargets: op 0 is not call_function, call_method or "
            "call_module");
  FxTensorRule rule{};
  rule.struct_size = 4;
  EXPECT_EQ(message(t->SupportTensorMeta(&rule, &out)),
            "SupportTensorMeta: rule->struct_size is 4, expected " +
                std::to_string(sizeof(FxTensorRule)) +
                " (sizeof(FxTensorRule))");
  const char* bad_dtype[] = {"torch.float33"};
  rule.struct_size = sizeof(rule);
  rule.dtypes = bad_dtype;
  rule.num_dtypes = 1;
  FxStatus* status = t->SupportTensorMeta(&rule, &out);
  ASSERT_NE(status, nullptr);
  EXPECT_NE(std::string(t->GetStatusMessage(status))
                .find("'torch.float33' is not a torch dtype"),
            std::string::npos);
  t->ReleaseStatus(status);
  EXPECT_EQ(message(t->SupportAllOf(nullptr, 2, &out)),
            "SupportAllOf: rules must not be NULL");
  EXPECT_EQ(t->PartitionsCount(nullptr), 0u);
  EXPECT_EQ(t->PartitionNode(nullptr, 0, 0), nullptr);
}

// The C++ wrapper's rules, on x -> relu -> sigmoid -> add(sigmoid, relu).
TEST(SupportWrapper, ComposesRulesAndKeepsPredicatesAlive) {
  fxp::api() = api();
  Graph g;
  Node* x = g.placeholder("x");
  Node* relu = g.call_function("torch.relu", {x});
  Node* sigmoid = g.call_function("torch.sigmoid", {relu});
  Node* add = g.call_function("operator.add", {sigmoid, relu});
  g.output(add);
  fxp::Graph graph(to_handle(&g));
  fxp::Support rule = fxp::Support::all_of(
      {fxp::Support::functions(
           {"torch.relu", "_operator.add", "torch.sigmoid"}),
       !fxp::Support::predicate(
           [](fxp::Node n) { return n.name() == "sigmoid"; })});
  EXPECT_TRUE(rule.is_node_supported(fxp::Node(to_handle(relu))));
  EXPECT_FALSE(rule.is_node_supported(fxp::Node(to_handle(sigmoid))));
  fxp::PartitionOptions single;
  single.allows_single_node_partition = true;
  fxp::Partitions parts = fxp::propose_partitions(graph, rule, single);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].at(0).name(), "add");
  EXPECT_EQ(parts[1].at(0).name(), "relu");

  fxp::Support failing = fxp::Support::predicate(
      [](fxp::Node) -> bool { throw std::runtime_error("no"); });
  try {
    fxp::propose_partitions(graph, failing);
    FAIL() << "expected an error";
  } catch (const fxp::Error& e) {
    EXPECT_EQ(e.code(), FX_INTERNAL);
    EXPECT_NE(std::string(e.what()).find(
                  "the support callback failed on node 'relu'"),
              std::string::npos)
        << e.what();
  }
  // Without an owning GraphModule, fusion is refused.
  EXPECT_THROW(fxp::fuse_partitions(graph, parts), fxp::Error);
}

}  // namespace
}  // namespace fx::host
