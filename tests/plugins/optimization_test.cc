// libfx_optimization through the pass manager against torch 1.13's
// torch.fx.experimental.optimization on the same bundles (Python in the
// test): fuse gives torch's graph text and code, torch's fused weights to
// the bit and torch's output; it refuses what torch's fuse refuses.
// remove_dropout and merge_matmul give torch's text, code and output, and
// refuse where torch's would rename a node or fail.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fx_core/io/torch_save.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/python_repr.h"
#include "plugins/common/plugin_util.h"
#include "tests/plugins/plugin_test_util.h"
#include "tests/testing/module_listing.h"
#include "tests/testing/reference.h"

namespace fx::plugins_test {
namespace {

using ::fx::testing::attribute_listing;

constexpr const char* kModels = "tests/plugins/optimization_models.py";

// Runs optimization_golden.py MODE on the bundle exported from `model`
// (torchvision:NAME, or CLASS of optimization_models.py); returns its output
// directory.
std::string torch_fx(const std::string& bundle, const std::string& mode,
                     std::string model) {
  if (model.rfind("torchvision:", 0) != 0) {
    model = runfile(kModels) + ":" + model;
  }
  std::string out = bundle + ".golden_" + mode;
  std::string log;
  int status = run_command(
      "/usr/bin/python3 " + runfile("tests/plugins/optimization_golden.py") +
          " " + runfile("tools/torchfx_import.py") + " " + bundle + " '" +
          mode + "' '" + out + "' " + model,
      &log);
  if (status != 0) throw std::runtime_error("torch.fx golden failed:\n" + log);
  return out;
}

c10::IValue read(const std::string& path) {
  auto v = read_value_file(path);
  if (!v.ok()) throw std::runtime_error(std::string(v.status().message()));
  return *v;
}

class OptimizationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!python_skip_reason().empty()) GTEST_SKIP() << python_skip_reason();
  }

  // `pass` on the bundle against torch's pass of that name on the model:
  // graph text, code and output; the bundle after the pass.
  Bundle expect_as_torch(const std::string& dir, const std::string& model,
                         const std::string& pass, bool changes = true) {
    Bundle b = load_bundle(dir);
    std::string golden = torch_fx(dir, pass, model);
    EXPECT_FALSE(std::filesystem::exists(golden + "/error.txt"));
    host::PipelineReport report = run_pipeline(*b.gm, pass, b.inputs);
    EXPECT_TRUE(report.ok()) << report.failure;
    EXPECT_EQ(report.passes.at(0).changed, changes);
    EXPECT_EQ(b.gm->graph().str(), testing::read_file(golden + "/graph.txt"));
    EXPECT_EQ(b.gm->code(), testing::read_file(golden + "/code.py"));
    EXPECT_EQ(
        max_abs_diff(forward(*b.gm, b.inputs), read(golden + "/output.pt")),
        0.0);
    expect_next_names(dir, pass, golden);
    return b;
  }

  // The names new nodes get after the pass are torch's (what its graph's
  // namespace holds): made on the pass's result in a bundle of its own.
  void expect_next_names(const std::string& dir, const std::string& pass,
                         const std::string& golden) {
    Bundle b = load_bundle(dir);
    ASSERT_TRUE(run_pipeline(*b.gm, pass, b.inputs).ok());
    Graph& g = b.gm->graph();
    std::vector<Node*> existing(g.nodes().begin(), g.nodes().end());
    std::string names;
    for (Node* n : existing) {
      if (n->op() == Opcode::kPlaceholder || n->op() == Opcode::kOutput) {
        continue;
      }
      names += std::string(g.create_node(n->op(), n->target())->name()) + "\n";
    }
    EXPECT_EQ(names, testing::read_file(golden + "/next_names.txt"));
  }

  // extract_subgraph `pass` as torch's: graph text, code, the names new
  // nodes get, and the numbers on the values the inputs have when the model
  // runs on the bundle's input.
  void expect_extract_as_torch(const std::string& dir, const std::string& model,
                               const std::string& pass) {
    Bundle b = load_bundle(dir);
    std::string golden = torch_fx(dir, pass, model);
    ASSERT_FALSE(std::filesystem::exists(golden + "/error.txt"));
    host::PipelineReport report = run_pipeline(*b.gm, pass, b.inputs);
    ASSERT_TRUE(report.ok()) << report.failure;
    EXPECT_EQ(b.gm->graph().str(), testing::read_file(golden + "/graph.txt"));
    EXPECT_EQ(b.gm->code(), testing::read_file(golden + "/code.py"));
    EXPECT_EQ(attribute_listing(*b.gm),
              testing::read_file(golden + "/attributes.txt"));
    std::vector<at::Tensor> inputs;
    const c10::IValue saved = read(golden + "/inputs.pt");
    for (const c10::IValue& v : saved.toListRef()) {
      inputs.push_back(v.toTensor());
    }
    EXPECT_EQ(max_abs_diff(forward(*b.gm, inputs), read(golden + "/output.pt")),
              0.0);
    expect_next_names(dir, pass, golden);
  }

  // split_by_tags or splitter `pass` as torch's: the main graph's text,
  // code and the names new nodes get, the module's attributes, each
  // component's text and code (the tags given, or the splitter's from the
  // golden), the numbers; in process, then each pass in a worker process.
  // `before` runs first (the splitter's shape_prop).
  void expect_split_as_torch(const std::string& dir, const std::string& model,
                             const std::string& pass,
                             std::vector<std::string> tags = {},
                             const std::string& before = "") {
    std::string golden = torch_fx(dir, pass, model);
    ASSERT_FALSE(std::filesystem::exists(golden + "/error.txt"));
    if (tags.empty()) tags = lines_of(testing::read_file(golden + "/tags.txt"));
    c10::IValue expected = read(golden + "/output.pt");
    for (bool isolated : {false, true}) {
      SCOPED_TRACE(isolated ? "isolated" : "in process");
      Bundle b = load_bundle(dir);
      const std::string pipeline =
          isolated
              ? R"({"pipeline": ")" + before + pass + R"(", "isolate": true})"
              : before + pass;
      host::PipelineReport report = run_pipeline(*b.gm, pipeline, b.inputs);
      ASSERT_TRUE(report.ok()) << report.failure;
      EXPECT_EQ(b.gm->graph().str(), testing::read_file(golden + "/graph.txt"));
      EXPECT_EQ(b.gm->code(), testing::read_file(golden + "/code.py"));
      EXPECT_EQ(attribute_listing(*b.gm),
                testing::read_file(golden + "/attributes.txt"));
      for (const std::string& tag : tags) {
        SCOPED_TRACE(tag);
        auto sub =
            std::dynamic_pointer_cast<GraphModule>(b.gm->get_submodule(tag));
        ASSERT_NE(sub, nullptr);
        EXPECT_EQ(sub->graph().str(),
                  testing::read_file(golden + "/" + tag + ".graph.txt"));
        EXPECT_EQ(sub->code(),
                  testing::read_file(golden + "/" + tag + ".code.py"));
      }
      EXPECT_EQ(max_abs_diff(forward(*b.gm, b.inputs), expected), 0.0);
    }
    expect_next_names(dir, before + pass, golden);
  }

  // fuse as torch's, and every convolution's weights exactly torch's.
  void expect_fuse_as_torch(const std::string& dir, const std::string& model) {
    Bundle b = expect_as_torch(dir, model, "fuse");
    c10::Dict<c10::IValue, c10::IValue> weights =
        read(dir + ".golden_fuse/weights.pt").toGenericDict();
    ASSERT_GT(weights.size(), 0u);
    std::string grads;
    for (const auto& entry : weights) {
      const std::string name = entry.key().toStringRef();
      at::Tensor ours = b.gm->get_attr(name);
      ASSERT_TRUE(ours.defined()) << name;
      EXPECT_TRUE(at::equal(ours, entry.value().toTensor())) << name;
      grads += name + (ours.requires_grad() ? " True\n" : " False\n");
    }
    EXPECT_EQ(grads,
              testing::read_file(dir + ".golden_fuse/requires_grad.txt"));
  }
};

TEST_F(OptimizationTest, FuseFoldsEachPatternAsTorchDoes) {
  // Conv2d without bias + BatchNorm2d, Conv1d + BatchNorm1d(eps=1e-3),
  // Conv3d + affine-less BatchNorm3d fused; a shared convolution, a
  // BatchNorm without running statistics, a mismatched pair and a
  // functional convolution left alone.
  std::string dir = export_module(kModels, "ConvBn", "2,3,8,8");
  expect_fuse_as_torch(dir, "ConvBn");
  Bundle b = load_bundle(dir);
  ASSERT_TRUE(run_pipeline(*b.gm, "fuse", b.inputs).ok());
  ASSERT_TRUE(b.gm->get_attr("conv2.bias").defined());
  std::string text = b.gm->graph().str();
  for (const char* kept :
       {"bn_shared", "bn_batch", "bn_mismatch", "bn_functional"}) {
    EXPECT_NE(text.find(std::string("target=") + kept + "]"), std::string::npos)
        << kept;
  }
  // conv2 was rebuilt with a bias: still in eval mode, as torch's
  // deep copy of it is.
  EXPECT_FALSE(b.gm->get_submodule("conv2")->is_training());
}

TEST_F(OptimizationTest, FuseOnResnet18IsTorchs) {
  expect_fuse_as_torch(export_torchvision("resnet18"), "torchvision:resnet18");
}

TEST_F(OptimizationTest, FuseRefusesTrainingModeAsTorchDoes) {
  // bn3 alone is in training mode: torch fuses the Conv1d and Conv2d pairs
  // first, then asserts; the SDK's pass refuses there and is rolled back,
  // the pairs fused before it included.
  std::string dir = export_module(kModels, "ConvBnLastInTraining", "2,3,8,8");
  std::string golden = torch_fx(dir, "fuse", "ConvBnLastInTraining");
  EXPECT_EQ(testing::read_file(golden + "/error.txt"), "AssertionError\n");
  Bundle b = load_bundle(dir);
  const std::string before = b.gm->graph().str();
  at::Tensor conv1 = b.gm->get_attr("conv1.weight").clone();
  at::Tensor conv2 = b.gm->get_attr("conv2.weight").clone();
  host::PipelineReport report = run_pipeline(*b.gm, "fuse", b.inputs);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.failure.find("fuse: 'conv3' and 'bn3' must be in eval mode"),
            std::string::npos)
      << report.failure;
  EXPECT_EQ(b.gm->graph().str(), before);
  EXPECT_TRUE(at::equal(b.gm->get_attr("conv1.weight"), conv1));
  EXPECT_TRUE(at::equal(b.gm->get_attr("conv2.weight"), conv2));
  EXPECT_FALSE(b.gm->get_attr("conv2.bias").defined());
}

TEST_F(OptimizationTest, FuseRefusesStatisticsThatDoNotFitTheConvolution) {
  // torch's fuse_conv_bn_weights fails on these in its broadcasting; the
  // pass names the tensor and what is wrong, and is rolled back (conv2's
  // pair, folded before bn1's, included).
  std::string dir = export_module(kModels, "ConvBn", "2,3,8,8");
  struct Case {
    const char* attr;
    at::Tensor value;
    bool is_parameter;
    const char* message;
  };
  const Case cases[] = {
      {"bn1.running_var", at::ones({5}), false,
       "fuse: 'bn1.running_var' has 5 values; the convolution has 8 output "
       "channels"},
      {"bn1.weight", at::ones({8}, at::kDouble), true,
       "fuse: 'bn1.weight' is not a contiguous tensor of the convolution "
       "weight's dtype (float32 or float64)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.attr);
    Bundle b = load_bundle(dir);
    b.gm->set_attr(c.attr, c.value, c.is_parameter);
    const std::string before = b.gm->graph().str();
    at::Tensor conv2 = b.gm->get_attr("conv2.weight").clone();
    host::PipelineReport report = run_pipeline(*b.gm, "fuse", b.inputs);
    ASSERT_FALSE(report.ok());
    EXPECT_NE(report.failure.find(c.message), std::string::npos)
        << report.failure;
    EXPECT_EQ(b.gm->graph().str(), before);
    EXPECT_TRUE(at::equal(b.gm->get_attr("conv2.weight"), conv2));
    EXPECT_FALSE(b.gm->get_attr("conv2.bias").defined());
  }
}

TEST_F(OptimizationTest, RemoveDropoutIsTorchsRetrace) {
  // Dropout modules (one inside a Sequential) go; Dropout2d and F.dropout
  // stay; the forward's annotations go with the retrace.
  expect_as_torch(export_module(kModels, "Dropouts", "3,8"), "Dropouts",
                  "remove_dropout");
  expect_as_torch(export_torchvision("mobilenet_v2"),
                  "torchvision:mobilenet_v2", "remove_dropout");
}

TEST_F(OptimizationTest, RemoveDropoutRenamesAsTorchsRetrace) {
  // torch's retrace names F.dropout's node `dropout` once the module's node
  // `dropout` is gone: the pass renames it (C ABI version 11).
  std::string dir = export_module(kModels, "DropoutNameClash", "3,8");
  Bundle b = expect_as_torch(dir, "DropoutNameClash", "remove_dropout");
  EXPECT_NE(b.gm->graph().str().find("%dropout : [num_users=1] = "
                                     "call_function"),
            std::string::npos);
}

// extract_subgraph against torch's: the subgraph of resnet18 from layer1's
// output to layer2's (torchvision's feature extraction cut), and of
// SubgraphSource from the batch norm and tanh to the product (a parameter
// read on the way), from `x` to both results, with the nodes listed, and
// with an input returned and another unused.
TEST_F(OptimizationTest, ExtractSubgraphIsTorchs) {
  std::string resnet = export_torchvision("resnet18");
  expect_extract_as_torch(resnet, "torchvision:resnet18",
                          "extract_subgraph{inputs=layer1_1_relu_1,"
                          "outputs=layer2_1_relu_1}");
  std::string dir = export_module(kModels, "SubgraphSource", "2,3,6,6");
  for (const char* pass :
       {"extract_subgraph{inputs=bn,tanh,outputs=mul}",
        "extract_subgraph{inputs=x,outputs=sum_1,sigmoid}",
        "extract_subgraph{inputs=relu,tanh,outputs=add,mul,nodes=add,w,view,"
        "mul}",
        "extract_subgraph{inputs=conv,bn,outputs=bn}"}) {
    SCOPED_TRACE(pass);
    expect_extract_as_torch(dir, "SubgraphSource", pass);
  }
}

TEST_F(OptimizationTest, ExtractSubgraphRefusesWhatTorchCannotCopy) {
  std::string dir = export_module(kModels, "SubgraphSource", "2,3,6,6");
  const std::string pass =
      "extract_subgraph{inputs=bn,outputs=add,nodes=relu,add}";
  std::string golden = torch_fx(dir, pass, "SubgraphSource");
  EXPECT_EQ(testing::read_file(golden + "/error.txt"), "KeyError\n");
  Bundle b = load_bundle(dir);
  const std::string before = b.gm->graph().str();
  for (const auto& [text, message] :
       std::vector<std::pair<std::string, std::string>>{
           {pass,
            "extract_subgraph: node 'add' reads 'tanh', which is neither an "
            "input nor a node before it in the subgraph (torch raises "
            "KeyError); add it to 'inputs' or 'nodes'"},
           {"extract_subgraph{inputs=bn,outputs=nope}",
            "extract_subgraph: option 'outputs' names 'nope', which is no "
            "node of the graph"},
           {"extract_subgraph{inputs=bn}",
            "extract_subgraph: option 'outputs' names no node"},
           {"extract_subgraph{inputs=x,outputs=output}",
            "extract_subgraph: option 'outputs' names the output node; name "
            "the values it returns"},
           {"extract_subgraph{inputs=relu,outputs=mul,nodes=mul}",
            "extract_subgraph: node 'mul' reads 'add', which is neither an "
            "input nor a node before it in the subgraph (torch raises "
            "KeyError); add it to 'inputs' or 'nodes'"}}) {
    SCOPED_TRACE(text);
    host::PipelineReport report = run_pipeline(*b.gm, text, b.inputs);
    ASSERT_FALSE(report.ok());
    EXPECT_NE(report.failure.find(message), std::string::npos)
        << report.failure;
    EXPECT_EQ(b.gm->graph().str(), before);
  }
}

// replace_target_nodes_with against torch's: a function for another, a
// function for a method (the opcode changes), a method for another, a
// module call for another; a target nothing has changes nothing.
TEST_F(OptimizationTest, ReplaceTargetNodesWithIsTorchs) {
  std::string dir = export_module(kModels, "SubgraphSource", "2,3,6,6");
  for (const char* pass :
       {"replace_target_nodes_with{old_op=call_function,old_target=torch.relu,"
        "new_op=call_function,new_target=torch.sigmoid}",
        "replace_target_nodes_with{old_op=call_function,old_target=torch.tanh,"
        "new_op=call_method,new_target=tanh}",
        "replace_target_nodes_with{old_op=call_method,old_target=view,"
        "new_op=call_method,new_target=reshape}",
        "replace_target_nodes_with{old_op=call_module,old_target=bn,"
        "new_op=call_function,new_target=torch.nn.functional.relu}"}) {
    SCOPED_TRACE(pass);
    expect_as_torch(dir, "SubgraphSource", pass);
  }
  expect_as_torch(dir, "SubgraphSource",
                  "replace_target_nodes_with{old_target=torch.cos,"
                  "new_target=torch.sin}",
                  /*changes=*/false);
  Bundle b = load_bundle(dir);
  host::PipelineReport report = run_pipeline(
      *b.gm, "replace_target_nodes_with{old_op=output,new_target=x}");
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.failure.find("replace_target_nodes_with: option 'old_op' "
                                "is 'output': placeholders and the output "
                                "are not replaced"),
            std::string::npos)
      << report.failure;
}

// get_size_of_all_nodes after shape_prop against torch's after its
// ShapeProp: every node's output and total bytes (a module's parameters
// counted), on SubgraphSource and resnet18; without tensor_meta, torch's
// error.
TEST_F(OptimizationTest, GetSizeOfAllNodesIsTorchs) {
  for (const auto& [dir, model] :
       std::vector<std::pair<std::string, std::string>>{
           {export_module(kModels, "SubgraphSource", "2,3,6,6"),
            "SubgraphSource"},
           {export_torchvision("resnet18"), "torchvision:resnet18"}}) {
    SCOPED_TRACE(model);
    std::string golden = torch_fx(dir, "get_size_of_all_nodes", model);
    Bundle b = load_bundle(dir);
    host::PipelineReport report =
        run_pipeline(*b.gm, "shape_prop,get_size_of_all_nodes", b.inputs);
    ASSERT_TRUE(report.ok()) << report.failure;
    std::string sizes;
    for (Node* n : b.gm->graph().nodes()) {
      if (n->op() == Opcode::kOutput) break;
      const Argument* s = nullptr;
      for (const auto& [key, value] : n->meta()) {
        if (key == "size_bytes") s = &value;
      }
      ASSERT_NE(s, nullptr) << n->name();
      sizes += std::string(n->name()) + " " +
               std::to_string(s->elements().at(0).as_int()) + " " +
               std::to_string(s->elements().at(1).as_int()) + "\n";
    }
    EXPECT_EQ(sizes, testing::read_file(golden + "/sizes.txt"));
  }
  Bundle b = load_bundle(export_module(kModels, "SubgraphSource", "2,3,6,6"));
  host::PipelineReport report = run_pipeline(*b.gm, "get_size_of_all_nodes");
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.failure.find("get_size_of_all_nodes: Node x has no tensor "
                                "metadata associated with it! Check that "
                                "shape propagation has run."),
            std::string::npos)
      << report.failure;
}

TEST_F(OptimizationTest, MergeMatmulIsTorchs) {
  // A parameter's three matmuls merged (a dependent pair on another left
  // alone, a dead chain sorted with the rest); a node's three; a left
  // operand too deep for torch's dependency search: nothing merged; one
  // just within it: merged.
  expect_as_torch(export_module(kModels, "MatmulsSharingAWeight", "6,8"),
                  "MatmulsSharingAWeight", "merge_matmul");
  expect_as_torch(export_module(kModels, "MatmulsSharingANode", "6,8"),
                  "MatmulsSharingANode", "merge_matmul");
  expect_as_torch(export_module(kModels, "MatmulsTooFarApart", "4,8"),
                  "MatmulsTooFarApart", "merge_matmul", /*changes=*/false);
  expect_as_torch(export_module(kModels, "MatmulsJustCloseEnough", "4,8"),
                  "MatmulsJustCloseEnough", "merge_matmul");
}

TEST_F(OptimizationTest, MergeMatmulFailsOnASecondGroupAsTorchDoes) {
  std::string dir = export_module(kModels, "MatmulsInTwoGroups", "4,8");
  std::string golden = torch_fx(dir, "merge_matmul", "MatmulsInTwoGroups");
  EXPECT_EQ(testing::read_file(golden + "/error.txt"), "KeyError\n");
  Bundle b = load_bundle(dir);
  const std::string before = b.gm->graph().str();
  host::PipelineReport report = run_pipeline(*b.gm, "merge_matmul", b.inputs);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.failure.find(
                "merge_matmul: the matmuls 'matmul_2', 'matmul_3' share a "
                "right operand too, after the merged 'matmul', 'matmul_1'"),
            std::string::npos)
      << report.failure;
  EXPECT_EQ(b.gm->graph().str(), before);

  // all_groups=true merges both, with the numbers of the unmerged graph.
  c10::IValue expected = forward(*b.gm, b.inputs);
  report = run_pipeline(*b.gm, "merge_matmul{all_groups=true}", b.inputs);
  ASSERT_TRUE(report.ok()) << report.failure;
  const std::string text = b.gm->graph().str();
  size_t merged = 0;
  for (size_t at = text.find("split_result_tensors]"); at != std::string::npos;
       at = text.find("split_result_tensors]", at + 1)) {
    ++merged;
  }
  EXPECT_EQ(merged, 2u) << text;
  EXPECT_LT(max_abs_diff(forward(*b.gm, b.inputs), expected), 1e-5);
}

TEST_F(OptimizationTest, SplitByTagsIsTorchs) {
  std::string dir = export_module(kModels, "TaggedBranches", "2,8");
  // Two components, the second reading the first and the input; a buffer
  // read in one and returned by the main graph.
  expect_split_as_torch(dir, "TaggedBranches",
                        "split_by_tags{tags=ro,main,tag_nodes=ro:linear1,"
                        "main:relu+linear2+add+cat+linear3+softmax}",
                        {"ro", "main"});
  // A component returning two values (getitem in the main graph), one
  // returning the model's output and a value the output returns directly,
  // a tag with no nodes (nothing in, an empty tuple out), and tags named
  // like the placeholder and a node.
  expect_split_as_torch(dir, "TaggedBranches",
                        "split_by_tags{tags=x,cat,empty,tag_nodes=x:linear1+"
                        "relu,cat:linear2+add+cat+linear3+softmax}",
                        {"x", "cat", "empty"});
  // Tags naming the module's own attributes: a submodule the component
  // calls, a buffer the component reads (and the output returns as b_1):
  // the component takes the name in torch's new root.
  expect_split_as_torch(dir, "TaggedBranches",
                        "split_by_tags{tags=linear1,main,tag_nodes=linear1:"
                        "linear1,main:relu+linear2+add+cat+linear3+softmax}",
                        {"linear1", "main"});
  expect_split_as_torch(dir, "TaggedBranches",
                        "split_by_tags{tags=ro,b,tag_nodes=ro:linear1,b:relu+"
                        "linear2+add+cat+linear3+softmax}",
                        {"ro", "b"});
}

// torch 1.13's split_by_tags keeps dotted targets in its components
// (lift_subgraph_as_module nests holder modules: block.0, block.0.bias),
// unlike split_module's flat names; so do the components here.
TEST_F(OptimizationTest, SplitByTagsKeepsNestedTargetsAsTorchDoes) {
  std::string dir = export_module(kModels, "NestedTagged", "2,8");
  expect_split_as_torch(dir, "NestedTagged",
                        "split_by_tags{tags=a,b,tag_nodes=a:block_0+block_1,"
                        "b:add+head_0}",
                        {"a", "b"});
  // A node reading block.0.bias before block.0 is called, tags naming the
  // submodules: the moved component's container at block.0 gives way to
  // the module, as in torch's.
  std::string read_first = export_module(kModels, "ReadBeforeCall", "2,8");
  expect_split_as_torch(read_first, "ReadBeforeCall",
                        "split_by_tags{tags=block,head,tag_nodes=block:mul+"
                        "block_0+block_1,head:head}",
                        {"block", "head"});
  // Tagged by the modules the nodes belong to: tags `block` and `head`
  // name the submodules whose layers the components call.
  expect_split_as_torch(dir, "NestedTagged",
                        "split_by_tags{tags=block,head,tag_nodes=block:"
                        "block_0+block_1,head:add+head_0}",
                        {"block", "head"});
  Bundle b = load_bundle(dir);
  const at::Tensor bias = b.gm->get_attr("block.0.bias");
  ASSERT_TRUE(run_pipeline(*b.gm,
                           "split_by_tags{tags=a,b,tag_nodes=a:block_0+"
                           "block_1,b:add+head_0}",
                           b.inputs)
                  .ok());
  auto comp = std::dynamic_pointer_cast<GraphModule>(b.gm->get_submodule("b"));
  ASSERT_NE(comp, nullptr);
  EXPECT_TRUE(comp->get_attr("block.0.bias").is_same(bias));
}

// accelerator_partition on resnet18 (its nested modules called as
// layer1_0_conv1 in the submodules, as torch's split_module names them) in
// the host and in a worker process: the same main graph and submodules,
// each flat name the root's module object itself, eager's numbers.
TEST_F(OptimizationTest, AcceleratorPartitionSharesNestedModulesIsolated) {
  std::string devices;
  for (int i = 0; i < 6; ++i) {
    devices += (i ? "," : "") + ("dev_" + std::to_string(i)) +
               ":20000000:" + std::to_string(i);
  }
  const std::string text =
      "shape_prop,accelerator_partition{devices=" + devices + "}";
  std::string host_code;
  for (const std::string& pipeline :
       {text, "{\"pipeline\": \"" + text + "\", \"isolate\": true}"}) {
    SCOPED_TRACE(pipeline);
    Bundle b = load_bundle(export_torchvision("resnet18"));
    std::map<std::string, std::shared_ptr<torch::nn::Module>> before;
    for (const auto& m : b.gm->named_modules("", /*include_self=*/false)) {
      before[m.key()] = m.value();
    }
    host::PipelineReport report = run_pipeline(*b.gm, pipeline, b.inputs);
    ASSERT_TRUE(report.ok()) << report.failure;
    std::string code = b.gm->code();
    size_t flat = 0;
    for (const Node* n : b.gm->graph().nodes()) {
      if (n->op() != Opcode::kCallModule) continue;
      auto sub = std::dynamic_pointer_cast<GraphModule>(
          b.gm->get_submodule(n->target()));
      ASSERT_NE(sub, nullptr) << n->target();
      code += "\n# " + n->target() + "\n" + sub->code();
      for (const Node* m : sub->graph().nodes()) {
        if (m->op() != Opcode::kCallModule) continue;
        const std::string target = m->target();
        std::string dotted;
        for (const auto& [name, module] : before) {
          std::string spelt = name;
          std::replace(spelt.begin(), spelt.end(), '.', '_');
          if (spelt == target) dotted = name;
        }
        ASSERT_FALSE(dotted.empty()) << target;
        EXPECT_EQ(sub->get_submodule(target), before.at(dotted)) << target;
        flat += dotted != target;
      }
    }
    EXPECT_GT(flat, 0u) << code;
    if (host_code.empty()) {
      host_code = code;
    } else {
      EXPECT_EQ(code, host_code);
    }
    EXPECT_LE(max_abs_diff(forward(*b.gm, b.inputs), b.expected), 1e-4);
  }
}

TEST_F(OptimizationTest, SplitterIsTorchs) {
  const std::string prop = "shape_prop,";
  // Linears on the accelerator; the rest (relu, add, cat, softmax) on CPU.
  std::string dir = export_module(kModels, "TaggedBranches", "2,8");
  expect_split_as_torch(dir, "TaggedBranches",
                        "splitter{supported=torch.nn.modules.linear.Linear}",
                        {}, prop);
  expect_split_as_torch(dir, "TaggedBranches",
                        "splitter{supported=torch.nn.modules.linear.Linear,"
                        "relu,torch.cat,min_acc_module_size=3,"
                        "non_acc_submodule_name=_host_}",
                        {}, prop);
  // Non-tensor values: sizes read on either side of the accelerator, with
  // and without fusion groups and the non-tensor rule.
  std::string sizes = export_module(kModels, "SizesAndViews", "4,3,4");
  for (const char* pass :
       {"splitter{supported=size,view,torch.relu}",
        "splitter{supported=view,torch.relu,reshape,_operator.add}",
        "splitter{supported=view,torch.relu,reshape,_operator.add,"
        "allow_non_tensor=true}",
        // Everything but the linear: the sizes' fusion group holds it, so
        // the group runs on CPU; without fusion groups, three subgraphs.
        "splitter{supported=size,view,torch.relu,getattr,_operator.getitem,"
        "reshape,_operator.add}",
        "splitter{supported=size,view,torch.relu,getattr,_operator.getitem,"
        "reshape,_operator.add,skip_fusion=true}",
        // Everything but the add: one fusion group on the accelerator.
        "splitter{supported=size,view,torch.nn.modules.linear.Linear,"
        "torch.relu,getattr,_operator.getitem,reshape}",
        "splitter{supported=size,view,torch.nn.modules.linear.Linear,"
        "torch.relu,getattr,_operator.getitem,reshape,_operator.add}"}) {
    SCOPED_TRACE(pass);
    expect_split_as_torch(sizes, "SizesAndViews", pass, {}, prop);
  }
}

TEST_F(OptimizationTest, SplitterReportIsTorchs) {
  // node_support_preview's report (module classes as torch prints them,
  // torch.nn.modules.linear.Linear) and what the splitter prints, with a
  // small acc subgraph eliminated.
  std::string dir = export_module(kModels, "TaggedBranches", "2,8");
  const std::string options =
      "supported=torch.nn.modules.linear.Linear,relu,torch.cat,"
      "min_acc_module_size=3";
  std::string golden =
      torch_fx(dir, "splitter{" + options + "}", "TaggedBranches");
  Bundle b = load_bundle(dir);
  const std::string path = b.dir + ".report.txt";
  host::PipelineReport report = run_pipeline(
      *b.gm, "shape_prop,splitter{" + options + ",report=" + path + "}",
      b.inputs);
  ASSERT_TRUE(report.ok()) << report.failure;
  const std::string want = testing::read_file(golden + "/report.txt");
  EXPECT_NE(want.find("Eliminating acc subgraph"), std::string::npos) << want;
  EXPECT_NE(want.find("torch.nn.modules.linear.Linear: "), std::string::npos)
      << want;
  EXPECT_EQ(testing::read_file(path), want);
}

// The host names torch.nn's classes torch.nn.NAME; the splitter's report and
// param_fetch's `name` spell each as torch 1.13 prints it, by the module
// defining it (type(m).__module__): every torch.nn class of the torch here.
TEST_F(OptimizationTest, TorchClassPathsAreTorchs) {
  std::string out;
  ASSERT_EQ(run_command("/usr/bin/python3 -c 'import torch\n"
                        "for n in sorted(dir(torch.nn)):\n"
                        "    c = getattr(torch.nn, n)\n"
                        "    if isinstance(c, type) and "
                        "issubclass(c, torch.nn.Module):\n"
                        "        print(\"CLASS\", n, c.__module__)'",
                        &out),
            0)
      << out;
  size_t classes = 0;
  for (const std::string& line : lines_of(out)) {
    if (line.rfind("CLASS ", 0) != 0) continue;
    const size_t space = line.find(' ', 6);
    const std::string name = line.substr(6, space - 6);
    const std::string module = line.substr(space + 1);
    EXPECT_EQ(fx_plugins::torch_class_path("torch.nn." + name),
              module + "." + name);
    ++classes;
  }
  EXPECT_GT(classes, 100u) << out;
  // Other classes the host already names by their module.
  for (const char* type :
       {"torch.fx.graph_module.GraphModule", "models.blocks.Residual",
        "torch.nn.NoSuchClass", "torch.nn.intrinsic.modules.fused.ConvReLU2d",
        "torch.ao.nn.quantized.modules.linear.Linear"}) {
    EXPECT_EQ(fx_plugins::torch_class_path(type), type);
  }
}

TEST_F(OptimizationTest, SplitterRefusesWithoutShapes) {
  // torch's splitter runs ShapeProp itself; here shape_prop runs first.
  std::string dir = export_module(kModels, "TaggedBranches", "2,8");
  Bundle b = load_bundle(dir);
  const std::string before = b.gm->graph().str();
  host::PipelineReport report = run_pipeline(
      *b.gm, "splitter{supported=torch.nn.modules.linear.Linear}", b.inputs);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.failure.find("splitter: node 'linear1' has no "
                                "meta['type']: run shape_prop first"),
            std::string::npos)
      << report.failure;
  EXPECT_EQ(b.gm->graph().str(), before);
}

TEST_F(OptimizationTest, SplitterOnResnet18IsTorchs) {
  // Convolutions and batch norms on the accelerator: every relu, add and
  // the pooling and head on CPU, alternating through the residual blocks.
  std::string resnet = export_torchvision("resnet18");
  expect_split_as_torch(resnet, "torchvision:resnet18",
                        "splitter{supported=torch.nn.modules.conv.Conv2d,"
                        "torch.nn.modules.batchnorm.BatchNorm2d,"
                        "min_acc_module_size=2}",
                        {}, "shape_prop,");
}

// "NODE REPR" for each call_module node's meta['attrs_for_lowering'].
std::string fetched_attrs(const GraphModule& gm) {
  std::string out;
  for (const Node* n : gm.graph().nodes()) {
    if (n->op() != Opcode::kCallModule) continue;
    const Argument* attrs = n->meta_value("attrs_for_lowering");
    out += std::string(n->name()) + " " +
           (attrs == nullptr ? "missing" : repr(*attrs)) + "\n";
  }
  return out;
}

TEST_F(OptimizationTest, ParamFetchIsTorchs) {
  // resnet18: every class of torch's module_fetch_book but Linear's
  // neighbours; MaxPool2d(kernel_size=3, stride=2, padding=1) as given.
  std::string resnet = export_torchvision("resnet18");
  std::string golden = torch_fx(resnet, "param_fetch", "torchvision:resnet18");
  Bundle b = load_bundle(resnet);
  host::PipelineReport report = run_pipeline(*b.gm, "param_fetch", b.inputs);
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ(fetched_attrs(*b.gm), testing::read_file(golden + "/attrs.txt"));
  // A convolution without bias, a BatchNorm without affine weights or
  // running statistics, a ReLU in place, a MaxPool2d with tuples.
  std::string dir = export_module(kModels, "FetchBook", "2,3,8,8");
  golden = torch_fx(dir, "param_fetch", "FetchBook");
  b = load_bundle(dir);
  report = run_pipeline(*b.gm, "param_fetch", b.inputs);
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ(fetched_attrs(*b.gm), testing::read_file(golden + "/attrs.txt"));
}

TEST_F(OptimizationTest, ParamFetchRefusesWhatTorchsBookLacks) {
  // ConvBn holds Conv1d and BatchNorm1d, which torch's book lacks.
  std::string dir = export_module(kModels, "ConvBn", "2,3,8,8");
  std::string golden = torch_fx(dir, "param_fetch", "ConvBn");
  EXPECT_EQ(testing::read_file(golden + "/error.txt"), "RuntimeError\n");
  Bundle b = load_bundle(dir);
  host::PipelineReport report = run_pipeline(*b.gm, "param_fetch", b.inputs);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.failure.find("which is not in the module_fetch_book yet"),
            std::string::npos)
      << report.failure;
  EXPECT_EQ(fetched_attrs(*b.gm).find("{"), std::string::npos);
}

TEST_F(OptimizationTest, SplitByTagsReadsTagsFromMeta) {
  std::string dir = export_module(kModels, "TaggedBranches", "2,8");
  const std::string given =
      "split_by_tags{tags=ro,main,tag_nodes=ro:linear1+relu+linear2,"
      "main:add+cat+linear3+softmax}";
  std::string golden = torch_fx(dir, given, "TaggedBranches");
  Bundle b = load_bundle(dir);
  for (Node* n : b.gm->graph().nodes()) {
    const std::string name(n->name());
    if (n->op() == Opcode::kCallFunction || n->op() == Opcode::kCallMethod ||
        n->op() == Opcode::kCallModule) {
      const bool ro = name == "linear1" || name == "relu" || name == "linear2";
      n->set_meta("group", Argument(std::string(ro ? "ro" : "main")));
    }
  }
  host::PipelineReport report = run_pipeline(
      *b.gm, "split_by_tags{tags=ro,main,meta_key=group}", b.inputs);
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ(b.gm->graph().str(), testing::read_file(golden + "/graph.txt"));
  EXPECT_EQ(b.gm->code(), testing::read_file(golden + "/code.py"));
  auto ro = std::dynamic_pointer_cast<GraphModule>(b.gm->get_submodule("ro"));
  ASSERT_NE(ro, nullptr);
  EXPECT_EQ(ro->code(), testing::read_file(golden + "/ro.code.py"));
  EXPECT_EQ(max_abs_diff(forward(*b.gm, b.inputs), read(golden + "/output.pt")),
            0.0);
}

TEST_F(OptimizationTest, SplitByTagsRefusesWhatTorchRefuses) {
  std::string dir = export_module(kModels, "TaggedBranches", "2,8");
  const std::string tagged =
      ",tag_nodes=ro:linear1,main:relu+linear2+add+cat+linear3+softmax}";
  // torch asserts a node's tag is no earlier than its inputs', and that
  // every node has one; a tag outside `tags` is its KeyError.
  for (const auto& [pass, error, message] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"split_by_tags{tags=main,ro" + tagged, "AssertionError",
            "split_by_tags: node 'cat' (tag 'main') reads 'linear1' (tag "
            "'ro'), a later tag in option 'tags'"},
           {"split_by_tags{tags=ro,main,tag_nodes=ro:linear1,main:relu+"
            "linear2+add+cat+linear3}",
            "AssertionError",
            "split_by_tags: node 'softmax' has no tag (meta['tag'] or the "
            "option tag_nodes)"},
           {"split_by_tags{tags=ro,main,tag_nodes=ro:linear1,main:relu+"
            "linear2+add+cat+linear3,other:softmax}",
            "KeyError",
            "split_by_tags: node 'softmax' has tag 'other', which is not in "
            "option 'tags'"},
           // A tag naming the buffer the output returns: torch's TypeError
           // setting it where the component is.
           {"split_by_tags{tags=ro,b_1,tag_nodes=ro:linear1,b_1:relu+linear2+"
            "add+cat+linear3+softmax}",
            "TypeError",
            "split_by_tags: tag 'b_1' is also the name of a get_attr node the "
            "output returns"}}) {
    SCOPED_TRACE(pass);
    std::string golden = torch_fx(dir, pass, "TaggedBranches");
    EXPECT_EQ(testing::read_file(golden + "/error.txt"), error + "\n");
    Bundle b = load_bundle(dir);
    const std::string before = b.gm->graph().str();
    host::PipelineReport report = run_pipeline(*b.gm, pass, b.inputs);
    ASSERT_FALSE(report.ok());
    EXPECT_NE(report.failure.find(message), std::string::npos)
        << report.failure;
    EXPECT_EQ(b.gm->graph().str(), before);
    EXPECT_EQ(b.gm->get_submodule("ro"), nullptr);
  }
  // Where this pass departs from torch: a tag that is no identifier, a
  // node named by tag_nodes that does not exist.
  Bundle b = load_bundle(dir);
  for (const auto& [pass, message] :
       std::vector<std::pair<std::string, std::string>>{
           {"split_by_tags{tags=a.b" + tagged,
            "option 'tags' holds 'a.b', which is no Python identifier"},
           {"split_by_tags{tags=ro,main,tag_nodes=ro:linear1+nope,main:relu+"
            "linear2+add+cat+linear3+softmax}",
            "option 'tag_nodes' names 'nope', which is no node of the graph"},
       }) {
    SCOPED_TRACE(pass);
    const std::string before = b.gm->graph().str();
    host::PipelineReport report = run_pipeline(*b.gm, pass, b.inputs);
    ASSERT_FALSE(report.ok());
    EXPECT_NE(report.failure.find(message), std::string::npos)
        << report.failure;
    EXPECT_EQ(b.gm->graph().str(), before);
  }
}

}  // namespace
}  // namespace fx::plugins_test
