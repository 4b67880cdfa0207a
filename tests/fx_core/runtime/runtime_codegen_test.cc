// fx::RuntimeCodeGen: torch.fx's process_inputs / process_outputs hooks, as
// every runtime applies them.
#include "fx_core/runtime/runtime_codegen.h"

#include <ATen/core/ivalue.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "fx_core/ir/graph.h"

namespace fx {
namespace {

// torch.fx's docs example of a custom CodeGen's runtime side: the inputs
// come as one list, the output leaves in a one-element tuple.
class ListCodeGen : public RuntimeCodeGen {
 public:
  std::unique_ptr<CodeGen> clone() const override {
    return std::make_unique<ListCodeGen>(*this);
  }
  std::vector<c10::IValue> process_inputs(
      std::vector<c10::IValue> inputs) const override {
    return inputs.empty() ? inputs : inputs[0].toList().vec();
  }
  c10::IValue process_outputs(c10::IValue outputs) const override {
    return c10::ivalue::Tuple::create({std::move(outputs)});
  }
};

TEST(RuntimeCodeGen, APlainCodeGenHasIdentityHooks) {
  CodeGen plain;
  std::vector<c10::IValue> out =
      process_inputs(plain, {c10::IValue(int64_t{1}), c10::IValue(int64_t{2})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].toInt(), 2);
  EXPECT_EQ(process_outputs(plain, c10::IValue(int64_t{7})).toInt(), 7);
}

TEST(RuntimeCodeGen, TheBaseClassHooksAreIdentity) {
  RuntimeCodeGen base;
  std::vector<c10::IValue> out =
      process_inputs(base, {c10::IValue(int64_t{5})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].toInt(), 5);
  EXPECT_EQ(process_outputs(base, c10::IValue(int64_t{7})).toInt(), 7);
}

TEST(RuntimeCodeGen, AGraphsCodeGenHooksAreFoundThroughTheGraph) {
  Graph g;
  g.set_codegen(std::make_unique<ListCodeGen>());
  c10::List<int64_t> list({3, 4});
  std::vector<c10::IValue> in =
      process_inputs(g.codegen(), {c10::IValue(list)});
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0].toInt(), 3);
  c10::IValue out = process_outputs(g.codegen(), c10::IValue(int64_t{9}));
  ASSERT_TRUE(out.isTuple());
  EXPECT_EQ(out.toTupleRef().elements()[0].toInt(), 9);
}

TEST(RuntimeCodeGen, TheHooksSurviveGraphDeepcopy) {
  Graph g;
  g.set_codegen(std::make_unique<ListCodeGen>());
  std::unique_ptr<Graph> copy = g.deepcopy();
  EXPECT_TRUE(
      process_outputs(copy->codegen(), c10::IValue(int64_t{1})).isTuple());
}

}  // namespace
}  // namespace fx
