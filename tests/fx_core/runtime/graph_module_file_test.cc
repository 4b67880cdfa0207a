// Loading bundles refuses, at load time and by name, everything that could
// not run: a missing or misshapen weight, an unknown target or module type, a
// bad format or version, a node used before it is defined.
#include "fx_core/runtime/graph_module_file.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "fx_core/io/atomic_file.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

// A bundle directory holding `json` and, when given, `weights`.
std::string bundle(const std::string& name, const std::string& json,
                   std::vector<std::pair<std::string, at::Tensor>> weights) {
  std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::filesystem::create_directories(dir);
  EXPECT_TRUE(write_file_atomically(dir + "/graph.fx.json", json).ok());
  if (!weights.empty()) {
    EXPECT_TRUE(write_tensor_dict(dir + "/model.weights.pt", weights).ok());
  }
  return dir + "/graph.fx.json";
}

const char* kLinearGraph = R"({"format": "fx-graph", "version": 1, "nodes": [
  {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
  {"name": "fc", "op": "call_module", "target": "fc", "args": [{"node": "x"}], "kwargs": {}},
  {"name": "output", "op": "output", "target": "output", "args": [{"node": "fc"}], "kwargs": {}}],
 "modules": {"fc": {"type": "torch.nn.Linear", "config": {"in_features": 4, "out_features": 2, "bias": true}, "training": false}},
 "weights": "model.weights.pt"})";

std::string load_error(const std::string& path) {
  auto gm = read_graph_module(path);
  EXPECT_FALSE(gm.ok());
  return gm.ok() ? "" : std::string(gm.status().message());
}

TEST(GraphModuleFile, CompleteBundleLoadsAndRuns) {
  at::Tensor w = at::rand({2, 4}), b = at::rand({2});
  auto gm = read_graph_module(
      bundle("complete", kLinearGraph, {{"fc.weight", w}, {"fc.bias", b}}));
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  at::Tensor x = at::rand({3, 4});
  EXPECT_TRUE(at::allclose((**gm)(x).toTensor(), at::linear(x, w, b)));
}

TEST(GraphModuleFile, DescribedWithoutNodesKeepsModulesAndWeights) {
  at::Tensor w = at::rand({2, 4}), b = at::rand({2});
  auto gm = read_graph_module(
      bundle("describe", kLinearGraph, {{"fc.weight", w}, {"fc.bias", b}}));
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  auto full = describe_graph_module(**gm, "w.pt");
  auto bare = describe_graph_module(**gm, "w.pt", /*include_nodes=*/false);
  ASSERT_TRUE(full.ok() && bare.ok());
  EXPECT_NE(full->json.find("\"fc\""), std::string::npos);
  EXPECT_NE(bare->json.find("torch.nn.Linear"), std::string::npos);
  EXPECT_NE(bare->json.find("\"nodes\": []"), std::string::npos) << bare->json;
  EXPECT_EQ(bare->json.find("placeholder"), std::string::npos);
  ASSERT_EQ(bare->weights.size(), 2u);
  EXPECT_TRUE(bare->weights[0].second.is_same(full->weights[0].second));
}

TEST(GraphModuleFile, MissingWeightIsNamed) {
  std::string msg = load_error(
      bundle("missing", kLinearGraph, {{"fc.weight", at::rand({2, 4})}}));
  // Found from the config before the module is made (issue 41).
  EXPECT_NE(msg.find("module 'fc': torch.nn.Linear: 'bias' is missing from "
                     "the weights"),
            std::string::npos)
      << msg;
}

TEST(GraphModuleFile, ShapeMismatchIsNamed) {
  std::string msg = load_error(
      bundle("mismatch", kLinearGraph,
             {{"fc.weight", at::rand({3, 4})}, {"fc.bias", at::rand({2})}}));
  EXPECT_NE(msg.find("weight 'fc.weight'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("shape mismatch"), std::string::npos) << msg;
}

TEST(GraphModuleFile, WeightsFileThatIsNotTorchSaveIsNamed) {
  std::string path = bundle("garbage", kLinearGraph, {});
  ASSERT_TRUE(
      write_file_atomically(std::filesystem::path(path).parent_path().string() +
                                "/model.weights.pt",
                            "not a zip")
          .ok());
  std::string msg = load_error(path);
  EXPECT_NE(msg.find("model.weights.pt: not a readable torch.save file"),
            std::string::npos)
      << msg;
}

TEST(GraphModuleFile, UnknownFunctionTargetIsRefusedAtLoad) {
  std::string msg = load_error(bundle("unknown_target", R"({
 "format": "fx-graph", "version": 1, "nodes": [
  {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
  {"name": "y", "op": "call_function", "target": "vendor.fancy", "args": [{"node": "x"}], "kwargs": {}},
  {"name": "output", "op": "output", "target": "output", "args": [{"node": "y"}], "kwargs": {}}]})",
                                      {}));
  EXPECT_NE(msg.find("node 'y'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("vendor.fancy"), std::string::npos) << msg;
  EXPECT_NE(msg.find("OpRegistry::global().add()"), std::string::npos) << msg;
}

// A one-module bundle of `type` built from `config` (JSON text).
std::string module_bundle(const std::string& name, const std::string& type,
                          const std::string& config) {
  return bundle(name,
                R"({"format": "fx-graph", "version": 1, "nodes": [
  {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
  {"name": "m", "op": "call_module", "target": "m", "args": [{"node": "x"}], "kwargs": {}},
  {"name": "output", "op": "output", "target": "output", "args": [{"node": "m"}], "kwargs": {}}],
 "modules": {"m": {"type": ")" +
                    type + R"(", "config": )" + config +
                    R"(, "training": false}}})",
                {});
}

TEST(GraphModuleFile, ModulesRebuiltFromPythonLoadWithoutWeights) {
  auto gm = read_graph_module(
      module_bundle("elu", "torch.nn.ELU", R"({"alpha": 0.5})"));
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  at::Tensor x = at::randn({3, 4});
  EXPECT_TRUE(at::allclose((**gm)(x).toTensor(), at::elu(x, 0.5)));
  gm = read_graph_module(
      module_bundle("pad", "torch.nn.ReflectionPad2d", R"({"padding": 1})"));
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  x = at::randn({1, 2, 3, 3});
  EXPECT_TRUE(
      at::equal((**gm)(x).toTensor(), at::reflection_pad2d(x, {1, 1, 1, 1})));
}

TEST(GraphModuleFile, ModuleConfigsThatCannotBuildAreNamed) {
  std::string msg = load_error(module_bundle(
      "sync_bn", "torch.nn.SyncBatchNorm", R"({"num_features": 2})"));
  EXPECT_NE(msg.find("module 'm'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown module type 'torch.nn.SyncBatchNorm'"),
            std::string::npos)
      << msg;
  // A module argument must describe a module.
  msg = load_error(module_bundle("transformer", "torch.nn.TransformerEncoder",
                                 R"({"encoder_layer": 3, "num_layers": 2})"));
  EXPECT_NE(msg.find("module 'm'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("encoder_layer must describe a module as {\"type\": "
                     "..., \"config\": {...}}, not a int"),
            std::string::npos)
      << msg;
  msg = load_error(
      module_bundle("bad_arg", "torch.nn.ELU", R"({"alpha": 0.5, "beta": 2})"));
  EXPECT_NE(msg.find("module 'm'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unexpected keyword argument 'beta'"), std::string::npos)
      << msg;
  msg = load_error(module_bundle("missing_arg", "torch.nn.PReLU",
                                 R"({"num_parameters": "three"})"));
  EXPECT_NE(msg.find("torch.nn.PReLU"), std::string::npos) << msg;
  msg = load_error(module_bundle("bad_rnn", "torch.nn.GRU",
                                 R"({"input_size": 4, "hidden_size": 6,
                                     "proj_size": 2})"));
  EXPECT_NE(msg.find("proj_size argument is only supported for LSTM"),
            std::string::npos)
      << msg;
  msg = load_error(module_bundle("missing_weights", "torch.nn.PReLU", "{}"));
  // Found from the config before the module is made (issue 41).
  EXPECT_NE(msg.find("module 'm': torch.nn.PReLU: 'weight' is missing from "
                     "the weights"),
            std::string::npos)
      << msg;
}

TEST(GraphModuleFile, BadFormatAndVersionAreRefused) {
  std::string msg = load_error(bundle("bad_format", R"({
 "format": "onnx", "version": 1, "nodes": []})",
                                      {}));
  EXPECT_NE(msg.find("format"), std::string::npos) << msg;
  msg = load_error(bundle("bad_version", R"({
 "format": "fx-graph", "version": 7, "nodes": []})",
                          {}));
  EXPECT_NE(msg.find("version"), std::string::npos) << msg;
}

TEST(GraphModuleFile, NodeReferencingALaterNodeIsNamed) {
  std::string msg = load_error(bundle("later", R"({
 "format": "fx-graph", "version": 1, "nodes": [
  {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
  {"name": "a", "op": "call_function", "target": "torch.relu", "args": [{"node": "b"}], "kwargs": {}},
  {"name": "b", "op": "call_function", "target": "torch.relu", "args": [{"node": "x"}], "kwargs": {}},
  {"name": "output", "op": "output", "target": "output", "args": [{"node": "a"}], "kwargs": {}}]})",
                                      {}));
  EXPECT_NE(msg.find("node 'a'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'b'"), std::string::npos) << msg;
}

TEST(GraphModuleFile, GetAttrWithoutAWeightIsNamed) {
  std::string msg = load_error(bundle("no_attr", R"({
 "format": "fx-graph", "version": 1, "nodes": [
  {"name": "p", "op": "get_attr", "target": "p", "args": [], "kwargs": {}},
  {"name": "output", "op": "output", "target": "output", "args": [{"node": "p"}], "kwargs": {}}]})",
                                      {}));
  EXPECT_NE(msg.find("node 'p'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'p'"), std::string::npos) << msg;
}

TEST(GraphModuleFile, WeightsAreNamedAfterTheOutput) {
  EXPECT_EQ(weights_file_for("dir/out.fx.json"), "out.weights.pt");
  EXPECT_EQ(weights_file_for("out.json"), "out.weights.pt");
  EXPECT_EQ(weights_file_for("/a/b/OUT"), "OUT.weights.pt");
  EXPECT_EQ(weights_file_for("dir/model.weights.pt"),
            "model.weights.pt.weights.pt");
  EXPECT_EQ(weights_file_for("dir/graph.fx.json"), "model.weights.pt");
}

// A graph its own reader would refuse (a call_method of a dunder that
// reaches the interpreter's internals, which an in-process edit can make) is
// not written, and the file already there stays as it was (issue 39).
TEST(GraphModuleFile, AGraphThatWouldNotReadBackIsNotWritten) {
  auto gm = read_graph_module(
      bundle("reads_back", kLinearGraph,
             {{"fc.weight", at::rand({2, 4})}, {"fc.bias", at::rand({2})}}));
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  std::string out =
      std::string(std::getenv("TEST_TMPDIR")) + "/reads_back.json";
  ASSERT_TRUE(write_graph_module(**gm, out).ok());
  std::ifstream first_in(out);
  std::string first((std::istreambuf_iterator<char>(first_in)), {});
  Graph& g = (*gm)->graph();
  Node* fc = g.find_nodes(Opcode::kCallModule, "fc").at(0);
  {
    auto at = g.inserting_after(fc);
    g.call_method("__globals__", {fc});
  }
  absl::Status written = write_graph_module(**gm, out);
  EXPECT_FALSE(written.ok());
  EXPECT_NE(std::string(written.message()).find("would not read back"),
            std::string::npos)
      << written.message();
  std::ifstream again_in(out);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(again_in)), {}), first);
}

// Found by tests/fuzz:bundle (crashes/bundle/int_weight_for_parameter): an
// integer weight for a parameter (which requires grad) made LibTorch throw
// out of the loader, and the process abort; it is an error naming the weight.
TEST(GraphModuleFile, AWeightLibTorchRefusesIsNamed) {
  std::ifstream in("tests/fuzz/crashes/bundle/int_weight_for_parameter",
                   std::ios::binary);
  std::string input((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  size_t nul = input.find('\0');
  ASSERT_NE(nul, std::string::npos);
  auto file = parse_graph_json(input.substr(0, nul), "bundle");
  ASSERT_TRUE(file.ok()) << file.status();
  auto weights = parse_tensor_dict(input.substr(nul + 1), "weights");
  ASSERT_TRUE(weights.ok()) << weights.status();
  auto module = load_graph_module_shared(*std::move(file), *weights);
  ASSERT_FALSE(module.ok());
  EXPECT_NE(std::string(module.status().message())
                .find("must be floating point or complex dtype"),
            std::string::npos)
      << module.status();
}

// fused_0(x) = lin(x) + c, lin a module and c a get_attr tensor of the child
// GraphModule fused_0 (`lin_type` its module type).
std::string child_bundle_json(const std::string& lin_type) {
  return R"({"format": "fx-graph", "version": 1, "nodes": [
  {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
  {"name": "fused_0", "op": "call_module", "target": "fused_0", "args": [{"node": "x"}], "kwargs": {}},
  {"name": "output", "op": "output", "target": "output", "args": [{"node": "fused_0"}], "kwargs": {}}],
 "modules": {"fused_0": {"type": "torch.fx.graph_module.GraphModule", "config": {
   "root": {"dict": {"lin": {"dict": {"type": ")" +
         lin_type +
         R"(", "config": {"dict": {"in_features": 4, "out_features": 2}}, "training": false}}}},
   "graph": [
    {"dict": {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {"dict": {}}}},
    {"dict": {"name": "lin", "op": "call_module", "target": "lin", "args": [{"node": "x"}], "kwargs": {"dict": {}}}},
    {"dict": {"name": "c", "op": "get_attr", "target": "c", "args": [], "kwargs": {"dict": {}}}},
    {"dict": {"name": "add", "op": "call_function", "target": "operator.add", "args": [{"node": "lin"}, {"node": "c"}], "kwargs": {"dict": {}}}},
    {"dict": {"name": "output", "op": "output", "target": "output", "args": [{"node": "add"}], "kwargs": {"dict": {}}}}],
   "class_name": "fused_0"}, "training": true}},
 "weights": "model.weights.pt"})";
}

TEST(GraphModuleFile, ChildGraphModulesLoadWithTheirWeights) {
  at::Tensor w = at::rand({2, 4}), b = at::rand({2}), c = at::rand({2});
  auto gm = read_graph_module(bundle(
      "child", child_bundle_json("torch.nn.Linear"),
      {{"fused_0.lin.weight", w}, {"fused_0.lin.bias", b}, {"fused_0.c", c}}));
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  at::Tensor x = at::rand({3, 4});
  EXPECT_TRUE(at::allclose((**gm)(x).toTensor(), at::linear(x, w, b) + c));
  // Only the child itself is in training mode; its Linear keeps eval.
  auto child = (*gm)->get_submodule("fused_0");
  EXPECT_TRUE(child->is_training());
  EXPECT_FALSE((*gm)->get_submodule("fused_0.lin")->is_training());
}

TEST(GraphModuleFile, ChildGraphModuleErrorsNameThePath) {
  at::Tensor w = at::rand({2, 4}), b = at::rand({2});
  EXPECT_NE(
      load_error(bundle("child_no_c", child_bundle_json("torch.nn.Linear"),
                        {{"fused_0.lin.weight", w}, {"fused_0.lin.bias", b}}))
          .find("module 'fused_0' (GraphModule): node 'c' reads 'c', "
                "but the weights lack 'fused_0.c'"),
      std::string::npos);
  EXPECT_NE(
      load_error(bundle("child_no_bias", child_bundle_json("torch.nn.Linear"),
                        {{"fused_0.lin.weight", w}, {"fused_0.c", b}}))
          .find("module 'fused_0.lin': torch.nn.Linear: 'bias' is missing "
                "from the weights"),
      std::string::npos);
  EXPECT_NE(load_error(bundle("child_bad_type",
                              child_bundle_json("torch.nn.Nonesuch"),
                              {{"fused_0.c", b}}))
                .find("module 'fused_0.lin': "),
            std::string::npos);
}

}  // namespace
}  // namespace fx
