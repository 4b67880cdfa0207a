// Support rules: composition (torch.fx's chain and friends), targets in every
// spelling, and tensor_meta limits.
#include "fx_core/partition/operator_support.h"

#include <gtest/gtest.h>

#include "fx_core/ir/graph.h"
#include "fx_core/partition/target_support.h"
#include "fx_core/partition/tensor_meta_support.h"
#include "fx_core/support/error.h"

namespace fx {
namespace {

SupportedTargets functions(std::vector<std::string> names) {
  SupportedTargets t;
  t.functions = std::move(names);
  return t;
}
SupportedTargets methods(std::vector<std::string> names) {
  SupportedTargets t;
  t.methods = std::move(names);
  return t;
}
SupportedTargets module_types(std::vector<std::string> names) {
  SupportedTargets t;
  t.module_types = std::move(names);
  return t;
}

Argument tensor_meta(std::vector<int64_t> shape, const char* dtype) {
  ArgumentList dims(shape.begin(), shape.end());
  return Argument::dict(
      {{"shape", Argument::tuple(dims)}, {"dtype", Argument::dtype(dtype)}});
}

class Support : public ::testing::Test {
 protected:
  void SetUp() override {
    x_ = g_.placeholder("x");
    x_->set_meta("tensor_meta", tensor_meta({2, 3}, "torch.float32"));
    add_ = g_.call_function("_operator.add", {x_, x_});
    add_->set_meta("tensor_meta", tensor_meta({2, 3}, "torch.float32"));
    aten_ = g_.call_function("torch.ops.aten.add.Tensor", {add_, x_});
    aten_->set_meta("tensor_meta", tensor_meta({2, 3, 4, 5, 6}, "torch.int64"));
    packet_ = g_.call_function("torch.ops.aten.relu", {aten_});
    method_ = g_.call_method("add", {packet_, x_});
    conv_ = g_.call_module("conv", {method_});
    split_ = g_.call_function("torch.split", {conv_, 1});
    split_->set_meta("tensor_meta",
                     Argument::tuple({tensor_meta({1}, "torch.float"),
                                      tensor_meta({1}, "torch.float16")}));
    g_.output(split_);
  }
  Graph g_;
  Node *x_, *add_, *aten_, *packet_, *method_, *conv_, *split_;
};

TEST_F(Support, CompositionFollowsTorchFxHelpers) {
  OperatorSupport yes([](const Node&) { return true; });
  OperatorSupport no;
  EXPECT_TRUE(all_of({}).is_node_supported(*add_));
  EXPECT_FALSE(any_of({}).is_node_supported(*add_));
  EXPECT_FALSE(all_of({yes, no}).is_node_supported(*add_));
  EXPECT_TRUE(any_of({no, yes}).is_node_supported(*add_));
  EXPECT_TRUE(negation(no).is_node_supported(*add_));
  OperatorSupport decline_add = negation(node_names_support({"add"}));
  EXPECT_FALSE(decline_add.is_node_supported(*add_));
  EXPECT_TRUE(decline_add.is_node_supported(*aten_));
  EXPECT_TRUE(opcode_support({Opcode::kPlaceholder}).is_node_supported(*x_));
  EXPECT_FALSE(opcode_support({Opcode::kGetAttr}).is_node_supported(*x_));
}

TEST_F(Support, FunctionTargetsInAnySpelling) {
  for (const char* spelling : {"operator.add", "_operator.add"}) {
    SCOPED_TRACE(spelling);
    EXPECT_TRUE(target_support(functions({spelling})).is_node_supported(*add_));
  }
  for (const char* spelling :
       {"torch.ops.aten.add", "aten::add", "aten.add", "aten::add.Tensor",
        "torch.ops.aten.add.Tensor"}) {
    SCOPED_TRACE(spelling);
    EXPECT_TRUE(
        target_support(functions({spelling})).is_node_supported(*aten_));
  }
  // Another overload, or an overload for a packet node, does not match.
  EXPECT_FALSE(target_support(functions({"aten::add.Scalar"}))
                   .is_node_supported(*aten_));
  EXPECT_FALSE(target_support(functions({"aten::relu.default"}))
                   .is_node_supported(*packet_));
  EXPECT_TRUE(
      target_support(functions({"aten::relu"})).is_node_supported(*packet_));
  // Function lists do not cover methods, placeholders or the output.
  EXPECT_FALSE(
      target_support(functions({"operator.add"})).is_node_supported(*method_));
  EXPECT_FALSE(
      target_support(functions({"x", "output"})).is_node_supported(*x_));
  EXPECT_EQ(canonical_function_target("torch._C._VariableFunctions.relu"),
            "torch.relu");
  EXPECT_EQ(canonical_function_target("builtins.getattr"), "getattr");
}

TEST_F(Support, FunctionalNamesCoverTheirBuiltins) {
  Node* linear = g_.call_function("torch._C._nn.linear", {x_, x_});
  EXPECT_TRUE(target_support(functions({"torch.nn.functional.linear"}))
                  .is_node_supported(*linear));
}

TEST_F(Support, MethodsAndModuleTypes) {
  for (const char* spelling : {"add", "Tensor.add", "torch.Tensor.add"}) {
    SCOPED_TRACE(spelling);
    EXPECT_TRUE(
        target_support(methods({spelling})).is_node_supported(*method_));
  }
  ModuleTypeFn types = [](const Node& call) {
    return call.target() == "conv" ? std::string("torch.nn.Conv2d")
                                   : std::string();
  };
  for (const char* spelling :
       {"torch.nn.Conv2d", "torch.nn.modules.conv.Conv2d"}) {
    SCOPED_TRACE(spelling);
    EXPECT_TRUE(target_support(module_types({spelling}), types)
                    .is_node_supported(*conv_));
  }
  EXPECT_FALSE(target_support(module_types({"torch.nn.Linear"}), types)
                   .is_node_supported(*conv_));
  // Without a way to know the module's type, no call_module is supported.
  EXPECT_FALSE(target_support(module_types({"torch.nn.Conv2d"}))
                   .is_node_supported(*conv_));
}

TEST_F(Support, TensorMetaLimits) {
  TensorRule float_only;
  float_only.dtypes = {"torch.float"};
  OperatorSupport f = tensor_meta_support(float_only);
  EXPECT_TRUE(f.is_node_supported(*add_));
  EXPECT_FALSE(f.is_node_supported(*aten_));
  EXPECT_FALSE(f.is_node_supported(*packet_));  // no tensor_meta
  EXPECT_FALSE(f.is_node_supported(*split_));   // one float16 item
  TensorRule halves;
  halves.dtypes = {"torch.float32", "torch.half"};
  EXPECT_TRUE(tensor_meta_support(halves).is_node_supported(*split_));

  TensorRule rank;
  rank.max_rank = 4;
  EXPECT_TRUE(tensor_meta_support(rank).is_node_supported(*add_));
  EXPECT_FALSE(tensor_meta_support(rank).is_node_supported(*aten_));
  rank.max_rank = -1;
  rank.min_rank = 3;
  EXPECT_FALSE(tensor_meta_support(rank).is_node_supported(*add_));
  TensorRule dims;
  dims.max_dim_size = 5;
  EXPECT_FALSE(tensor_meta_support(dims).is_node_supported(*aten_));
  EXPECT_TRUE(tensor_meta_support(dims).is_node_supported(*add_));
}

TEST_F(Support, DeclineIfInputDtype) {
  TensorRule int64_input;
  int64_input.dtypes = {"torch.long"};
  int64_input.check_output = false;
  int64_input.check_inputs = true;
  int64_input.any_input = true;
  OperatorSupport decline = negation(tensor_meta_support(int64_input));
  EXPECT_TRUE(decline.is_node_supported(*aten_));     // float inputs
  EXPECT_FALSE(decline.is_node_supported(*packet_));  // reads aten's int64
}

TEST_F(Support, UnknownDtypeIsRefused) {
  TensorRule bad;
  bad.dtypes = {"torch.float33"};
  try {
    tensor_meta_support(bad);
    FAIL() << "expected an error";
  } catch (const FxError& e) {
    EXPECT_NE(
        std::string(e.what()).find("'torch.float33' is not a torch dtype"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace fx
