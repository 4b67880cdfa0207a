// A GraphModule's own targets (ForeignTargets) and opaque modules
// (OpaqueModuleImpl), without Python: each GraphModule runs its own object
// for a target name no registry knows, keeps it through graph replacement,
// deepcopy and child modules, and refuses to write it to a file.
#include "fx_core/runtime/foreign_targets.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/graph_module_folder.h"
#include "fx_core/runtime/interpreter.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/modules/opaque_module.h"
#include "fx_core/runtime/op_registry.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

constexpr char kTarget[] = "user_code.scale";

// x -> kTarget(x) -> output.
std::unique_ptr<Graph> scale_graph() {
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* y = graph->call_function(kTarget, {Argument(x)});
  graph->output(Argument(y));
  return graph;
}

// An entry for kTarget multiplying by `factor`; the handle holds it.
ForeignTargets scaling_by(double factor) {
  auto handle = std::make_shared<double>(factor);
  ForeignTargets targets;
  targets.add(
      Opcode::kCallFunction, kTarget, "x",
      [handle](OpArgs& a) -> c10::IValue { return a.tensor(0) * *handle; },
      handle, "test");
  return targets;
}

std::shared_ptr<GraphModule> module_scaling_by(double factor) {
  auto gm =
      std::make_shared<GraphModule>(GraphModule::AttributeMap{}, scale_graph());
  gm->set_foreign_targets(scaling_by(factor));
  return gm;
}

at::Tensor run(GraphModule& gm, const at::Tensor& x) {
  return gm.forward({x}).toTensor();
}

TEST(ForeignTargets, ATargetNoRegistryKnowsDoesNotRunWithoutThem) {
  ASSERT_EQ(OpRegistry::global().resolve(Opcode::kCallFunction, kTarget),
            nullptr);
  GraphModule gm(GraphModule::AttributeMap{}, scale_graph());
  absl::Status s = gm.check_executable();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no kernel for call_function target"),
            std::string::npos);
  EXPECT_FALSE(gm.has_function(kTarget));
}

TEST(ForeignTargets, EachGraphModuleRunsItsOwnObjectForOneName) {
  auto twice = module_scaling_by(2);
  auto thrice = module_scaling_by(3);
  at::Tensor x = at::ones({2});
  EXPECT_TRUE(at::equal(run(*twice, x), x * 2));
  EXPECT_TRUE(at::equal(run(*thrice, x), x * 3));
  EXPECT_TRUE(twice->has_function(kTarget));
  // Nothing leaked into the process-wide registry.
  EXPECT_EQ(OpRegistry::global().resolve(Opcode::kCallFunction, kTarget),
            nullptr);
}

TEST(ForeignTargets, TheInterpreterRunsThem) {
  auto gm = module_scaling_by(5);
  at::Tensor x = at::ones({3});
  EXPECT_TRUE(at::equal(Interpreter(*gm).run({x}).toTensor(), x * 5));
}

TEST(ForeignTargets, KeptWhenTheGraphIsReplacedCopiedAndUsedAsRoot) {
  auto gm = module_scaling_by(2);
  at::Tensor x = at::ones({2});
  gm->set_graph(gm->graph().deepcopy());
  EXPECT_TRUE(at::equal(run(*gm, x), x * 2));
  std::shared_ptr<GraphModule> copy = gm->deepcopy();
  EXPECT_TRUE(at::equal(run(*copy, x), x * 2));
  GraphModule child(*gm, scale_graph());
  EXPECT_TRUE(at::equal(run(child, x), x * 2));
}

TEST(ForeignTargets, OneNameForTwoObjectsIsRefused) {
  ForeignTargets targets = scaling_by(2);
  ForeignTargets other = scaling_by(3);
  const ForeignTarget* entry = other.find(Opcode::kCallFunction, kTarget);
  ASSERT_NE(entry, nullptr);
  EXPECT_THROW(targets.add(Opcode::kCallFunction, kTarget, "x",
                           entry->def.kernel, entry->handle, "test"),
               FxError);
  // The same object again is the same entry; merge keeps the first.
  const ForeignTarget* mine = targets.find(Opcode::kCallFunction, kTarget);
  EXPECT_EQ(&targets.add(Opcode::kCallFunction, kTarget, "x", mine->def.kernel,
                         mine->handle, "test"),
            mine);
  targets.merge(other);
  EXPECT_EQ(targets.find(Opcode::kCallFunction, kTarget), mine);
}

TEST(ForeignTargets, WritingAGraphThatCallsOneIsRefusedNamingIt) {
  auto gm = module_scaling_by(2);
  absl::StatusOr<GraphBundle> bundle = describe_graph_module(*gm, "w.pt");
  ASSERT_FALSE(bundle.ok());
  EXPECT_NE(bundle.status().message().find(kTarget), std::string::npos);
  EXPECT_NE(bundle.status().message().find("only in this process"),
            std::string::npos);
  // Without the nodes (the in-process converter's form) it describes.
  EXPECT_TRUE(describe_graph_module(*gm, "w.pt", false).ok());
}

// ------------------------------------------------------------ attributes

constexpr char kUse[] = "user_code.use";
constexpr char kObject[] = "holder.obj";

// x, holder.obj -> kUse(x, obj) -> output.
std::unique_ptr<Graph> attribute_graph() {
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* obj = graph->get_attr(kObject);
  Node* y = graph->call_function(kUse, {Argument(x), Argument(obj)});
  graph->output(Argument(y));
  return graph;
}

// kUse multiplies x by its object (a double); holder.obj is `factor`,
// copied (times 10) when `copyable`.
ForeignTargets with_object(double factor, bool copyable) {
  ForeignTargets targets;
  auto fn = std::make_shared<int>(0);
  targets.add(
      Opcode::kCallFunction, kUse, "x, obj",
      [](OpArgs& a) -> c10::IValue { return a.tensor(0) * a[1].toDouble(); },
      fn, "test");
  ForeignAttribute attribute;
  attribute.path = kObject;
  attribute.value = factor;
  attribute.handle = std::make_shared<double>(factor);
  attribute.origin = "test";
  attribute.description = "user_code.Factor";
  if (copyable) {
    attribute.copy = [](const ForeignAttribute& from) {
      ForeignAttribute copy = from;
      double value = *static_cast<double*>(from.handle.get()) * 10;
      copy.handle = std::make_shared<double>(value);
      copy.value = value;
      return copy;
    };
  }
  targets.add_attribute(std::move(attribute));
  return targets;
}

std::shared_ptr<GraphModule> module_with_object(double factor,
                                                bool copyable = false) {
  return std::make_shared<GraphModule>(GraphModule::AttributeMap{},
                                       attribute_graph(), "GraphModule",
                                       with_object(factor, copyable));
}

TEST(ForeignAttributes, WithoutOneTheGetAttrNodeIsRefusedNamingIt) {
  try {
    GraphModule gm(GraphModule::AttributeMap{}, attribute_graph());
    FAIL() << "built without the attribute";
  } catch (const FxError& e) {
    EXPECT_NE(std::string(e.what()).find("holder_obj"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(kObject), std::string::npos);
  }
}

TEST(ForeignAttributes, ThePlanAndTheInterpreterReadThem) {
  auto gm = module_with_object(4);
  ASSERT_TRUE(gm->check_executable().ok()) << gm->check_executable().message();
  at::Tensor x = at::ones({2});
  EXPECT_TRUE(at::equal(run(*gm, x), x * 4));
  Interpreter interpreter(*gm);
  EXPECT_TRUE(at::equal(interpreter.run({x}).toTensor(), x * 4));
  EXPECT_EQ(interpreter.fetch_attr(kObject).toDouble(), 4);
  EXPECT_THROW(interpreter.fetch_attr("holder.other"), FxError);
}

TEST(ForeignAttributes, LintSeesThemAsOtherAttributes) {
  auto gm = module_with_object(2);
  EXPECT_EQ(gm->resolve_attr(kObject), GraphOwner::AttrKind::kOther);
  EXPECT_EQ(gm->resolve_attr("holder"), GraphOwner::AttrKind::kOther);
  EXPECT_EQ(gm->resolve_attr("hold"), GraphOwner::AttrKind::kMissing);
  EXPECT_EQ(gm->resolve_attr("holder.obj.x"), GraphOwner::AttrKind::kMissing);
  EXPECT_NO_THROW(gm->graph().lint());
  EXPECT_FALSE(gm->get_attr(kObject).defined());
}

TEST(ForeignAttributes, KeptWhenTheGraphIsReplacedAndUsedAsRoot) {
  auto gm = module_with_object(3);
  at::Tensor x = at::ones({2});
  gm->set_graph(gm->graph().deepcopy());
  EXPECT_TRUE(at::equal(run(*gm, x), x * 3));
  GraphModule child(*gm, attribute_graph());
  EXPECT_TRUE(at::equal(run(child, x), x * 3));
}

TEST(ForeignAttributes, DeepcopyCopiesThoseThatCanBeCopied) {
  at::Tensor x = at::ones({2});
  EXPECT_TRUE(
      at::equal(run(*module_with_object(3, true)->deepcopy(), x), x * 30));
  EXPECT_TRUE(
      at::equal(run(*module_with_object(3, false)->deepcopy(), x), x * 3));
}

TEST(ForeignAttributes, OnePathForTwoObjectsOrABadPathIsRefused) {
  ForeignTargets targets = with_object(2, false);
  const ForeignAttribute* mine = targets.find_attribute(kObject);
  ASSERT_NE(mine, nullptr);
  EXPECT_EQ(&targets.add_attribute(*mine), mine);
  ForeignAttribute other = *mine;
  other.handle = std::make_shared<double>(2);
  EXPECT_THROW(targets.add_attribute(other), FxError);
  for (const char* bad : {"", "a..b", ".a", "a.", "1a", "a-b"}) {
    other.path = bad;
    EXPECT_THROW(targets.add_attribute(other), FxError) << bad;
  }
  EXPECT_TRUE(targets.has_attribute_within("holder"));
  EXPECT_FALSE(targets.has_attribute_within("holde"));
  EXPECT_FALSE(targets.empty());
  EXPECT_EQ(targets.attributes().size(), 1u);
}

TEST(ForeignAttributes, WritingAGraphThatReadsOneIsRefusedNamingIt) {
  auto gm = module_with_object(2);
  absl::StatusOr<GraphBundle> bundle = describe_graph_module(*gm, "w.pt");
  ASSERT_FALSE(bundle.ok());
  const std::string message(bundle.status().message());
  EXPECT_NE(message.find(cat("attribute '", kObject, "'")), std::string::npos)
      << message;
  EXPECT_NE(message.find("user_code.Factor"), std::string::npos) << message;
  EXPECT_NE(message.find("only in this process"), std::string::npos);
  EXPECT_TRUE(describe_graph_module(*gm, "w.pt", false).ok());
  absl::Status folder =
      to_folder(*gm, ::testing::TempDir() + "/foreign_attribute_folder");
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.message().find(kObject), std::string::npos)
      << folder.message();
}

// ------------------------------------------------------------ opaque modules

constexpr char kLeafType[] = "user_code.Leaf";

// Behaviour whose objects are doubles: a call adds the object's value.
std::shared_ptr<const OpaqueModuleImpl::Behaviour> adding(bool copyable) {
  auto b = std::make_shared<OpaqueModuleImpl::Behaviour>();
  b->origin = "test";
  b->call = [](void* handle, std::vector<c10::IValue> args,
               const OpaqueModuleImpl::Kwargs& kwargs) -> c10::IValue {
    at::Tensor out = args.at(0).toTensor() + *static_cast<double*>(handle);
    for (const auto& [key, value] : kwargs) out = out + value.toTensor();
    return out;
  };
  if (copyable) {
    b->copy = [](void* handle) -> std::shared_ptr<void> {
      return std::make_shared<double>(*static_cast<double*>(handle) * 10);
    };
  }
  return b;
}

std::shared_ptr<GraphModule> module_with_leaf(bool copyable) {
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* y = graph->call_module("leaf", {Argument(x)}, {{"extra", Argument(x)}});
  graph->output(Argument(y));
  GraphModule::AttributeMap attrs;
  GraphModule::Attribute leaf;
  leaf.module = std::make_shared<OpaqueModuleImpl>(
      kLeafType, std::make_shared<double>(1.0), adding(copyable), false);
  attrs.emplace_back("leaf", leaf);
  return std::make_shared<GraphModule>(attrs, std::move(graph));
}

TEST(OpaqueModule, RunsThroughItsBehaviourAsAKindOfItsOwn) {
  auto gm = module_with_leaf(false);
  ASSERT_TRUE(gm->check_executable().ok()) << gm->check_executable().message();
  at::Tensor x = at::ones({2});
  EXPECT_TRUE(at::equal(run(*gm, x), x + 1 + x));
  const ModuleKind* kind = ModuleRegistry::global().find(kLeafType);
  ASSERT_NE(kind, nullptr);
  EXPECT_TRUE(is_opaque_module_kind(*kind));
  EXPECT_EQ(module_type_name(*gm->get_submodule("leaf")), kLeafType);
  EXPECT_FALSE(gm->get_submodule("leaf")->is_training());
}

TEST(OpaqueModule, DeepcopyUsesTheBehavioursCopyOrFails) {
  at::Tensor x = at::ones({2});
  std::shared_ptr<GraphModule> copy = module_with_leaf(true)->deepcopy();
  EXPECT_TRUE(at::equal(run(*copy, x), x + 10 + x));
  EXPECT_THROW(module_with_leaf(false)->deepcopy(), FxError);
}

TEST(OpaqueModule, WritingOneIsRefusedNamingItUnlessKeptInProcess) {
  auto gm = module_with_leaf(false);
  absl::StatusOr<GraphBundle> bundle = describe_graph_module(*gm, "w.pt");
  ASSERT_FALSE(bundle.ok());
  EXPECT_NE(bundle.status().message().find("'leaf'"), std::string::npos);
  EXPECT_NE(bundle.status().message().find(kLeafType), std::string::npos);
  std::vector<std::string> kept;
  bundle = describe_graph_module(*gm, "w.pt", false, &kept);
  ASSERT_TRUE(bundle.ok()) << bundle.status().message();
  EXPECT_EQ(kept, std::vector<std::string>{"leaf"});
  EXPECT_EQ(bundle->json.find(kLeafType), std::string::npos);
}

TEST(OpaqueModule, AKindTheSdkKnowsCannotBeOpaque) {
  EXPECT_THROW(register_opaque_module_kind("torch.nn.Linear"), FxError);
}

}  // namespace
}  // namespace fx
