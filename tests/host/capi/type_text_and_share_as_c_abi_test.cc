// C ABI version 15:
//  - NodeSetTypeText / NodeTypeText: a node's type as code spells it and as
//    print(graph) shows it (a gradual type's TensorType[(1, 2, Dyn)]), shown
//    in the graph text, kept by graph files, checked as a file's fields are;
//  - GraphShareAttrAs: an attribute of the graph's module shared with a
//    submodule under another name (split_module's "block_0" for "block.0"),
//    the same object, refusing to replace another.
// Version 14's table has none of them; the C++ wrapper says so.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <string>

#include "fx/plugin_api.hpp"
#include "fx_core/format/graph_json.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "host/capi/c_api.h"

namespace fx::host {
namespace {

class Version15CAbi : public ::testing::Test {
 protected:
  void SetUp() override {
    auto graph = std::make_unique<Graph>();
    x_ = graph->placeholder("x");
    Node* y = graph->call_module("block.0", {x_});
    graph->output(
        graph->call_function("operator.mul", {y, graph->get_attr("scale")}));
    auto block = std::make_shared<torch::nn::SequentialImpl>(
        torch::nn::Linear(4, 4), torch::nn::ReLU());
    gm_ = std::make_unique<GraphModule>(
        GraphModule::AttributeMap{{"block", {block, {}, false}},
                                  {"scale", {nullptr, torch::ones({1}), true}}},
        std::move(graph));
    fxp::api() = api();
  }
  void TearDown() override { fxp::api() = api(); }

  FxGraph* graph() { return to_handle(&gm_->graph()); }
  FxNode* x() { return to_handle(x_); }

  // A new submodule `part` of the graph's module, as split_module makes.
  FxGraph* add_part() {
    FxGraph* sub = nullptr;
    EXPECT_EQ(api()->GraphAddSubgraphModule(graph(), "part", &sub), nullptr);
    return sub;
  }
  GraphModule& part() {
    return dynamic_cast<GraphModule&>(*gm_->get_submodule("part"));
  }

  Node* x_ = nullptr;
  std::unique_ptr<GraphModule> gm_;
};

std::string type_text(FxNode* n) {
  char* out = nullptr;
  EXPECT_EQ(api()->NodeTypeText(n, &out), nullptr);
  std::string text = out ? out : "<null>";
  api()->ReleaseString(out);
  return text;
}

TEST_F(Version15CAbi, ATypeTextIsWhatTheGraphPrints) {
  ASSERT_EQ(
      api()->NodeSetTypeText(x(), "torch.Tensor", "TensorType[(1, 2, Dyn)]"),
      nullptr);
  EXPECT_STREQ(api()->NodeType(x()), "torch.Tensor");
  EXPECT_EQ(type_text(x()), "TensorType[(1, 2, Dyn)]");
  EXPECT_NE(gm_->graph().str().find("%x : TensorType[(1, 2, Dyn)]"),
            std::string::npos)
      << gm_->graph().str();
  // The graph file keeps it.
  absl::StatusOr<GraphFile> back =
      parse_graph_json(to_graph_json(gm_->graph()), "<test>");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back->graph->nodes().begin())->type_text(),
            "TensorType[(1, 2, Dyn)]");
  // No text: the one torch.fx derives; no type: none.
  ASSERT_EQ(api()->NodeSetTypeText(x(), "torch.Tensor", nullptr), nullptr);
  EXPECT_EQ(type_text(x()), "torch.Tensor");
  ASSERT_EQ(api()->NodeSetTypeText(x(), "", ""), nullptr);
  EXPECT_EQ(type_text(x()), "");
  EXPECT_STREQ(api()->NodeType(x()), "");
}

TEST_F(Version15CAbi, BadTypesAndTextsAreRefusedAndChangeNothing) {
  ASSERT_EQ(api()->NodeSetTypeText(x(), "torch.Tensor", "Shown"), nullptr);
  StatusText s = take_status(api()->NodeSetTypeText(x(), "int)", nullptr));
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(s.message,
            "NodeSetTypeText: type 'int)' is not a type expression (dotted "
            "ASCII names, [ ] and commas)");
  s = take_status(api()->NodeSetTypeText(x(), "int", "a\nb"));
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(s.message,
            "NodeSetTypeText: a type text is printable ASCII on one line");
  s = take_status(api()->NodeSetTypeText(x(), nullptr, "Shown"));
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(s.message, "NodeSetTypeText: a type text needs a type");
  EXPECT_EQ(type_text(x()), "Shown");
  EXPECT_EQ(take_status(api()->NodeTypeText(x(), nullptr)).code,
            FX_INVALID_ARGUMENT);
}

TEST_F(Version15CAbi, AnAttributeIsSharedUnderAnotherName) {
  FxGraph* sub = add_part();
  ASSERT_NE(sub, nullptr);
  ASSERT_EQ(api()->GraphShareAttrAs(graph(), sub, "block.0", "block_0"),
            nullptr);
  ASSERT_EQ(api()->GraphShareAttrAs(graph(), sub, "scale", "scale"), nullptr);
  EXPECT_EQ(part().get_submodule("block_0"), gm_->get_submodule("block.0"));
  EXPECT_EQ(part().get_submodule("block"), nullptr);
  EXPECT_TRUE(part().get_attr("scale").is_same(gm_->get_attr("scale")));
  // The same object under the same name again: nothing changes.
  EXPECT_EQ(api()->GraphShareAttrAs(graph(), sub, "block.0", "block_0"),
            nullptr);
  EXPECT_EQ(part().get_submodule("block_0"), gm_->get_submodule("block.0"));
}

TEST_F(Version15CAbi, SharingRefusesToReplaceAnotherAttribute) {
  FxGraph* sub = add_part();
  ASSERT_EQ(api()->GraphShareAttrAs(graph(), sub, "block.0", "block_0"),
            nullptr);
  StatusText s =
      take_status(api()->GraphShareAttrAs(graph(), sub, "scale", "block_0"));
  EXPECT_EQ(s.code, FX_FAILED_PRECONDITION);
  EXPECT_EQ(s.message,
            "GraphShareAttrAs: the subgraph's module already has another "
            "attribute 'block_0'");
  EXPECT_EQ(part().get_submodule("block_0"), gm_->get_submodule("block.0"));
  s = take_status(api()->GraphShareAttrAs(graph(), sub, "nope", "nope"));
  EXPECT_EQ(s.code, FX_NOT_FOUND);
  EXPECT_EQ(s.message,
            "GraphShareAttrAs: the module has no submodule, parameter or "
            "buffer 'nope'");
  s = take_status(api()->GraphShareAttrAs(graph(), sub, "scale", "a..b"));
  EXPECT_EQ(s.code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(s.message,
            "GraphShareAttrAs: name 'a..b' is not a qualified attribute name");
  EXPECT_EQ(
      take_status(api()->GraphShareAttrAs(graph(), sub, "scale", nullptr)).code,
      FX_INVALID_ARGUMENT);
}

TEST_F(Version15CAbi, TheCxxWrapperOnBothSidesOfVersion15) {
  fxp::Graph g(graph());
  fxp::Node n(x());
  n.set_type("torch.Tensor", "TensorType[(Dyn,)]");
  EXPECT_EQ(n.type_text(), "TensorType[(Dyn,)]");
  fxp::Graph sub = fxp::add_subgraph_module(g, "part");
  fxp::share_attr(g, sub, "block.0", "block_0");
  EXPECT_EQ(part().get_submodule("block_0"), gm_->get_submodule("block.0"));

  // A version-14 host: no such entries; the wrapper says which is missing,
  // and falls back where version 14 can answer.
  EXPECT_EQ(api(14)->NodeSetTypeText, nullptr);
  EXPECT_EQ(api(14)->NodeTypeText, nullptr);
  EXPECT_EQ(api(14)->GraphShareAttrAs, nullptr);
  fxp::api() = api(14);
  EXPECT_EQ(n.type_text(), "torch.Tensor");
  try {
    n.set_type("torch.Tensor", "Shown");
    ADD_FAILURE() << "set_type(type, text) ran on a version-14 host";
  } catch (const fxp::Error& e) {
    EXPECT_EQ(e.code(), FX_UNIMPLEMENTED);
    EXPECT_NE(std::string(e.what()).find("NodeSetTypeText"), std::string::npos)
        << e.what();
  }
  fxp::share_attr(g, sub, "scale", "scale");  // GraphShareAttr serves it
  EXPECT_TRUE(part().get_attr("scale").is_same(gm_->get_attr("scale")));
  try {
    fxp::share_attr(g, sub, "block.0", "block_x");
    ADD_FAILURE() << "share_attr under another name ran on a version-14 host";
  } catch (const fxp::Error& e) {
    EXPECT_EQ(e.code(), FX_UNIMPLEMENTED);
  }
  EXPECT_EQ(part().get_submodule("block_x"), nullptr);
}

}  // namespace
}  // namespace fx::host
