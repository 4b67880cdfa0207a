// libfx_passes through the pass manager against torch.fx's own passes on the
// same bundles (Python in the test): dce and cse give torch.fx's graph text,
// const_fold and split_module its structure and numbers; dot draws every
// node and edge.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fx_core/io/torch_save.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/module_registry.h"
#include "tests/plugins/plugin_test_util.h"
#include "tests/testing/reference.h"

namespace fx::plugins_test {
namespace {

std::string tmp(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

// Exports tests/plugins/golden_models.py:CLASS with torch.fx.
std::string export_model(const std::string& cls, const std::string& shape) {
  return export_module("tests/plugins/golden_models.py", cls, shape);
}

// Runs passes_golden.py MODE on the bundle; returns its output directory.
std::string torch_fx(const std::string& bundle, const std::string& mode,
                     const std::string& arg = "") {
  std::string out = tmp("golden/" + mode);
  std::string log;
  int status = run_command("/usr/bin/python3 " +
                               runfile("tests/plugins/passes_golden.py") + " " +
                               runfile("tools/torchfx_import.py") + " " +
                               bundle + " " + mode + " " + out + " " + arg,
                           &log);
  if (status != 0) throw std::runtime_error("torch.fx golden failed:\n" + log);
  return out;
}

c10::IValue read_output(const std::string& dir) {
  auto v = read_value_file(dir + "/output.pt");
  if (!v.ok()) throw std::runtime_error(std::string(v.status().message()));
  return *v;
}

// "call_function operator.add" for each call node, as passes_golden.py.
std::vector<std::string> call_targets(const Graph& g) {
  std::vector<std::string> out;
  for (const Node* n : g.nodes()) {
    if (n->op() == Opcode::kCallFunction || n->op() == Opcode::kCallMethod ||
        n->op() == Opcode::kCallModule) {
      out.push_back(std::string(opcode_name(n->op())) + " " + n->target());
    }
  }
  return out;
}

class PassesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!python_skip_reason().empty()) GTEST_SKIP() << python_skip_reason();
  }
};

TEST_F(PassesTest, DceGivesTorchFxsGraphAndKeepsImpureNodes) {
  std::string dir = export_model("DeadCode", "3,4");
  Bundle b = load_bundle(dir);
  std::string golden = torch_fx(dir, "dce");
  host::PipelineReport report = run_pipeline(*b.gm, "dce", b.inputs);
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_TRUE(report.passes[0].changed);
  EXPECT_EQ(b.gm->graph().str(), testing::read_file(golden + "/graph.txt"));
  EXPECT_LE(max_abs_diff(forward(*b.gm, b.inputs), b.expected), 1e-6);
}

TEST_F(PassesTest, CseGivesTorchFxsCsePassGraph) {
  std::string dir = export_model("Repeated", "3,4");
  Bundle b = load_bundle(dir);
  std::string golden = torch_fx(dir, "cse");
  // torch.fx's CSEPass leaves the merged duplicates' users pointing at the
  // first copy and drops the duplicates: cse then dce.
  host::PipelineReport report = run_pipeline(*b.gm, "cse", b.inputs);
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ(b.gm->graph().str(), testing::read_file(golden + "/graph.txt"));
  EXPECT_LE(max_abs_diff(forward(*b.gm, b.inputs), read_output(golden)), 1e-6);
}

TEST_F(PassesTest, CseLeavesRandomAndImpureNodesAlone) {
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* r1 = graph->call_function("torch.randn_like", {x});
  Node* r2 = graph->call_function("torch.randn_like", {x});
  Node* a1 = graph->call_function("torch._assert", {true, "a"});
  Node* a2 = graph->call_function("torch._assert", {true, "a"});
  (void)a1;
  (void)a2;
  graph->output(graph->call_function("operator.add", {r1, r2}));
  GraphModule gm(GraphModule::AttributeMap{}, std::move(graph));
  host::PipelineReport report = run_pipeline(gm, "cse");
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_FALSE(report.passes[0].changed);
  EXPECT_EQ(gm.graph().size(), 7u);
}

TEST_F(PassesTest, ConstFoldFoldsAttributeOnlySubgraphsLikeTorchFx) {
  std::string dir = export_model("ConstFold", "3,4");
  Bundle b = load_bundle(dir);
  std::string golden = torch_fx(dir, "const_fold");
  host::PipelineReport report = run_pipeline(*b.gm, "const_fold", b.inputs);
  ASSERT_TRUE(report.ok()) << report.failure;
  // torch.fx keeps the same computations on the input (its folded
  // attributes come back through getitem of one tuple).
  std::vector<std::string> want;
  for (const std::string& line :
       lines_of(testing::read_file(golden + "/targets.txt"))) {
    if (line != "call_function operator.getitem") want.push_back(line);
  }
  EXPECT_EQ(call_targets(b.gm->graph()), want) << b.gm->graph().str();
  std::vector<std::string> folded;
  for (const Node* n : b.gm->graph().nodes()) {
    if (n->op() == Opcode::kGetAttr) folded.push_back(n->target());
  }
  EXPECT_EQ(folded,
            (std::vector<std::string>{"_folded_constant0", "_folded_constant1",
                                      "_folded_constant2"}));
  EXPECT_LE(max_abs_diff(forward(*b.gm, b.inputs), read_output(golden)), 1e-5);
  EXPECT_LE(max_abs_diff(forward(*b.gm, b.inputs), b.expected), 1e-5);
}

TEST_F(PassesTest, ConstFoldOnResnet18ComputesTheSame) {
  Bundle b = load_bundle(export_torchvision("resnet18"));
  size_t before = b.gm->graph().size();
  host::PipelineReport report = run_pipeline(*b.gm, "const_fold", b.inputs);
  ASSERT_TRUE(report.ok()) << report.failure;
  // resnet18 has no attribute-only computation: nothing to fold.
  EXPECT_EQ(b.gm->graph().size(), before);
  EXPECT_LE(max_abs_diff(forward(*b.gm, b.inputs), b.expected), 1e-4);
}

TEST_F(PassesTest, SplitModuleMakesTorchFxsPartitionsAndComputesTheSame) {
  std::string dir = export_model("Split", "1,3,8,8");
  Bundle b = load_bundle(dir);
  std::string golden = torch_fx(dir, "split", "relu,adaptive_avg_pool2d");
  host::PipelineReport report = run_pipeline(
      *b.gm, "split_module{split_at=relu,adaptive_avg_pool2d}", b.inputs);
  ASSERT_TRUE(report.ok()) << report.failure;
  std::vector<std::string> got;
  for (const Node* n : b.gm->graph().nodes()) {
    if (n->op() != Opcode::kCallModule) continue;
    auto sub = std::dynamic_pointer_cast<GraphModule>(
        b.gm->get_submodule(n->target()));
    ASSERT_NE(sub, nullptr) << n->target();
    EXPECT_NO_THROW(sub->graph().lint()) << sub->graph().str();
    std::string line = n->target() + ":";
    for (const std::string& t : call_targets(sub->graph())) line += " " + t;
    got.push_back(line);
  }
  EXPECT_EQ(got, lines_of(testing::read_file(golden + "/targets.txt")))
      << b.gm->graph().str();
  EXPECT_LE(max_abs_diff(forward(*b.gm, b.inputs), read_output(golden)), 1e-5);
}

TEST_F(PassesTest, SplitModuleOnResnet18ByLayer) {
  Bundle b = load_bundle(export_torchvision("resnet18"));
  host::PipelineReport report = run_pipeline(
      *b.gm,
      "split_module{split_at=layer1_0_conv1,layer2_0_conv1,layer3_0_conv1,"
      "layer4_0_conv1,avgpool}",
      b.inputs);
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ(call_targets(b.gm->graph()),
            (std::vector<std::string>{
                "call_module submod_0", "call_module submod_1",
                "call_module submod_2", "call_module submod_3",
                "call_module submod_4", "call_module submod_5"}));
  EXPECT_LE(max_abs_diff(forward(*b.gm, b.inputs), b.expected), 1e-4);
}

// split_module on resnet18 by layer, in the host and in a worker process
// (the submodules sent back): every submodule's graph text and code are
// torch's split_module's with the same split_callback (layer1.0.conv1 is
// called as layer1_0_conv1 there, the parent's module object itself), and
// the numbers torch's.
TEST_F(PassesTest, SplitModuleOnResnet18IsTorchsInTheHostAndIsolated) {
  const std::string dir = export_torchvision("resnet18");
  const std::string starts =
      "layer1_0_conv1,layer2_0_conv1,layer3_0_conv1,layer4_0_conv1,avgpool";
  const std::string golden = torch_fx(dir, "split", starts);
  const std::string text = "split_module{split_at=" + starts + "}";
  for (const std::string& pipeline :
       {text, "{\"pipeline\": \"" + text + "\", \"isolate\": true}"}) {
    SCOPED_TRACE(pipeline);
    Bundle b = load_bundle(dir);
    std::shared_ptr<torch::nn::Module> conv =
        b.gm->get_submodule("layer1.0.conv1");
    ASSERT_NE(conv, nullptr);
    host::PipelineReport report = run_pipeline(*b.gm, pipeline, b.inputs);
    ASSERT_TRUE(report.ok()) << report.failure;
    std::vector<std::string> got;
    for (const Node* n : b.gm->graph().nodes()) {
      if (n->op() != Opcode::kCallModule) continue;
      auto sub = std::dynamic_pointer_cast<GraphModule>(
          b.gm->get_submodule(n->target()));
      ASSERT_NE(sub, nullptr) << n->target();
      got.push_back(n->target() + ":");
      for (const std::string& t : call_targets(sub->graph())) {
        got.back() += " " + t;
      }
      const std::string want = golden + "/" + n->target();
      EXPECT_EQ(sub->graph().str(), testing::read_file(want + ".graph.txt"));
      EXPECT_EQ(sub->code(), testing::read_file(want + ".code.py"));
    }
    EXPECT_EQ(got, lines_of(testing::read_file(golden + "/targets.txt")));
    auto submod_1 =
        std::dynamic_pointer_cast<GraphModule>(b.gm->get_submodule("submod_1"));
    ASSERT_NE(submod_1, nullptr);
    EXPECT_EQ(submod_1->get_submodule("layer1_0_conv1"), conv);
    EXPECT_EQ(submod_1->get_submodule("layer1"), nullptr);
    EXPECT_LE(max_abs_diff(forward(*b.gm, b.inputs), read_output(golden)),
              1e-5);
  }
}

// A get_attr of a nested module's parameter read in another partition is
// recreated there under torch's flat name (block_0_bias), the parent's
// tensor itself, in the host and in a worker process.
TEST_F(PassesTest, SplitModuleSharesNestedAttributesUnderFlatNames) {
  const std::string dir = export_model("NestedAttr", "3,4");
  const std::string golden = torch_fx(dir, "split", "add");
  const std::string text = "split_module{split_at=add}";
  for (const std::string& pipeline :
       {text, "{\"pipeline\": \"" + text + "\", \"isolate\": true}"}) {
    SCOPED_TRACE(pipeline);
    Bundle b = load_bundle(dir);
    std::shared_ptr<torch::nn::Module> linear = b.gm->get_submodule("block.0");
    ASSERT_NE(linear, nullptr);
    const at::Tensor bias = b.gm->get_attr("block.0.bias");
    host::PipelineReport report = run_pipeline(*b.gm, pipeline, b.inputs);
    ASSERT_TRUE(report.ok()) << report.failure;
    auto submod_0 =
        std::dynamic_pointer_cast<GraphModule>(b.gm->get_submodule("submod_0"));
    auto submod_1 =
        std::dynamic_pointer_cast<GraphModule>(b.gm->get_submodule("submod_1"));
    ASSERT_NE(submod_0, nullptr);
    ASSERT_NE(submod_1, nullptr);
    EXPECT_EQ(submod_0->get_submodule("block_0"), linear);
    EXPECT_TRUE(submod_1->get_attr("block_0_bias").is_same(bias));
    EXPECT_NE(
        submod_1->graph().str().find(
            "%block_0_bias : [num_users=1] = get_attr[target=block_0_bias]"),
        std::string::npos)
        << submod_1->graph().str();
    std::vector<std::string> got;
    for (const auto& [name, sub] :
         {std::pair{"submod_0", submod_0}, std::pair{"submod_1", submod_1}}) {
      got.push_back(std::string(name) + ":");
      for (const std::string& t : call_targets(sub->graph())) {
        got.back() += " " + t;
      }
    }
    EXPECT_EQ(got, lines_of(testing::read_file(golden + "/targets.txt")));
    EXPECT_LE(max_abs_diff(forward(*b.gm, b.inputs), read_output(golden)),
              1e-6);
  }
}

// Two attributes whose paths flatten alike in one submodule are refused,
// naming both names, and the graph is rolled back.
TEST_F(PassesTest, SplitModuleRefusesTwoPathsWithOneFlatName) {
  Bundle b = load_bundle(export_model("FlatNameClash", "2,4"));
  const std::string before = b.gm->graph().str();
  host::PipelineReport report =
      run_pipeline(*b.gm, "split_module{partitions=a_b_c+a_b_c_1}", b.inputs);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.failure.find("attribute 'a_b.c' becomes 'a_b_c' in the "
                                "submodule, which already holds another "
                                "attribute under that name"),
            std::string::npos)
      << report.failure;
  EXPECT_EQ(b.gm->graph().str(), before);
  // The rollback took out the submodule the pass had added: a rerun fails
  // for the same reason, not because submod_0 is taken.
  EXPECT_EQ(b.gm->get_submodule("submod_0"), nullptr);
  const std::string first = report.failure;
  report =
      run_pipeline(*b.gm, "split_module{partitions=a_b_c+a_b_c_1}", b.inputs);
  EXPECT_EQ(report.failure, first);
  EXPECT_EQ(b.gm->graph().str(), before);
}

TEST_F(PassesTest, SplitModuleByMetaKeyAndBadOptions) {
  Bundle b = load_reference("seed_mymodule");
  EXPECT_NE(run_pipeline(*b.gm, "split_module")
                .failure.find("split_module needs exactly one of"),
            std::string::npos);
  EXPECT_NE(run_pipeline(*b.gm, "split_module{split_at=nope}")
                .failure.find("split_at names no node 'nope'"),
            std::string::npos);
  for (Node* n : b.gm->graph().nodes()) {
    if (n->name() == "linear") n->set_meta("stage", Argument(int64_t{1}));
  }
  c10::IValue want = forward(*b.gm, b.inputs);
  host::PipelineReport report =
      run_pipeline(*b.gm, "split_module{meta_key=stage}", b.inputs);
  ASSERT_TRUE(report.ok()) << report.failure;
  // add before linear (unlabelled: joins the first labelled partition).
  EXPECT_EQ(call_targets(b.gm->graph()),
            (std::vector<std::string>{"call_module submod_0"}));
  EXPECT_LE(max_abs_diff(forward(*b.gm, b.inputs), want), 1e-6);
}

TEST_F(PassesTest, DotDrawsEveryNodeAndEdgeWithTensorMeta) {
  Bundle b = load_reference("seed_mymodule");
  std::string path = tmp("mymodule.dot");
  host::PipelineReport report =
      run_pipeline(*b.gm, "shape_prop,dot{path=" + path + "}", b.inputs);
  ASSERT_TRUE(report.ok()) << report.failure;
  std::string dot = testing::read_file(path);
  EXPECT_EQ(dot.rfind("digraph \"GraphModule\" {", 0), 0u) << dot;
  EXPECT_NE(dot.find("\"linear\" [label=\"{linear|call_module|linear|[3x5] "
                     "torch.float32}\""),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("\"add\" [label=\"{add|call_function|operator.add|[3x4] "
                     "torch.float32}\""),
            std::string::npos)
      << dot;
  size_t edges = 0;
  for (size_t p = dot.find(" -> "); p != std::string::npos;
       p = dot.find(" -> ", p + 1)) {
    ++edges;
  }
  EXPECT_EQ(edges, 5u);  // x, param -> add -> linear -> clamp -> output
  EXPECT_FALSE(report.passes[1].changed);
}

TEST_F(PassesTest, DotWritesThroughNoPlantedTemporary) {
  // A symlink planted where the pass once put its temporary (PATH.tmp)
  // leads to another file: that file stays as it was, the drawing lands
  // at PATH (the host's fresh O_EXCL | O_NOFOLLOW temporary renamed over
  // it: WriteOutputFile), and nothing else is left in the directory.
  Bundle b = load_reference("seed_mymodule");
  const std::string dir = tmp("planted");
  std::filesystem::create_directories(dir);
  const std::string victim = dir + "/victim.txt", path = dir + "/g.dot";
  { std::ofstream(victim) << "precious\n"; }
  std::filesystem::create_symlink(victim, path + ".tmp");
  host::PipelineReport report = run_pipeline(*b.gm, "dot{path=" + path + "}");
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ(testing::read_file(victim), "precious\n");
  EXPECT_EQ(testing::read_file(path).rfind("digraph", 0), 0u);
  size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 3u);  // victim.txt, g.dot.tmp (the symlink), g.dot
  // A path in a directory that does not exist: refused, naming it.
  report = run_pipeline(*b.gm, "dot{path=" + dir + "/no/such/g.dot}");
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.failure.find(dir + "/no/such/g.dot: cannot write"),
            std::string::npos)
      << report.failure;
  EXPECT_NE(report.failure.find("No such file or directory"), std::string::npos)
      << report.failure;
}

TEST_F(PassesTest, DotColoursNodesByPartition) {
  Bundle b = load_reference("seed_mymodule");
  for (Node* n : b.gm->graph().nodes()) {
    if (n->name() == "linear") n->set_meta("partition", Argument(0));
    if (n->name() == "add") n->set_meta("partition", Argument(13));
  }
  std::string path = tmp("partitions.dot");
  host::PipelineReport report =
      run_pipeline(*b.gm, "dot{path=" + path + ",color_by=partition}");
  ASSERT_TRUE(report.ok()) << report.failure;
  std::string dot = testing::read_file(path);
  auto fill_of = [&](const std::string& node) {
    size_t p = dot.find("  \"" + node + "\" [label=");
    if (p == std::string::npos) return std::string("missing");
    size_t f = dot.find("fillcolor=\"", p) + 11;
    return dot.substr(f, 7);
  };
  EXPECT_EQ(fill_of("linear"), "#8dd3c7");
  EXPECT_EQ(fill_of("add"), "#ffffb3");  // 13 wraps to the second colour
  EXPECT_EQ(fill_of("x"), "#ffffff");
}

}  // namespace
}  // namespace fx::plugins_test
