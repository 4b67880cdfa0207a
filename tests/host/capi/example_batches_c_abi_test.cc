// GraphNumExampleBatches and GraphExampleBatchInput (C ABI version 10): the
// batches of example inputs a host holds (fx run --inputs FILE with a list
// of batches), each input a copy; batch 0 is GraphExampleInput's; out of
// range is FX_NOT_FOUND naming the batch; a version-9 table has neither
// entry, and the C++ wrapper then gives the one batch it can.
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "host/capi/c_api.h"
#include "host/pipeline/pass_target.h"

namespace fx::host {
namespace {

class ExampleBatchesCAbi : public ::testing::Test {
 protected:
  void SetUp() override {
    auto graph = std::make_unique<Graph>();
    Node* x = graph->placeholder("x");
    Node* y = graph->placeholder("y");
    graph->output(graph->call_function("operator.add", {x, y}));
    gm_ = std::make_unique<GraphModule>(GraphModule::AttributeMap{},
                                        std::move(graph));
    for (int b = 0; b < 3; ++b) {
      batches_.push_back(
          {at::full({2}, static_cast<double>(b)), at::full({2}, 10.0 + b)});
    }
    target_ = std::make_unique<GraphModuleTarget>(*gm_, batches_[0]);
    target_->add_example_batches({batches_[1], batches_[2]});
    store_ = std::make_unique<ScopedAttributeStore>(&gm_->graph(),
                                                    target_->attributes());
  }
  FxGraph* handle() { return to_handle(&gm_->graph()); }

  std::unique_ptr<GraphModule> gm_;
  std::vector<std::vector<at::Tensor>> batches_;
  std::unique_ptr<GraphModuleTarget> target_;
  std::unique_ptr<ScopedAttributeStore> store_;
};

TEST_F(ExampleBatchesCAbi, EveryBatchsInputsAreCopies) {
  ASSERT_EQ(api()->GraphNumExampleBatches(handle()), 3u);
  for (size_t b = 0; b < 3; ++b) {
    for (size_t i = 0; i < 2; ++i) {
      DLManagedTensor* t = nullptr;
      ASSERT_EQ(api()->GraphExampleBatchInput(handle(), b, i, &t), nullptr);
      at::Tensor got = at::fromDLPack(t);
      EXPECT_TRUE(at::equal(got, batches_[b][i])) << b << " " << i;
      EXPECT_NE(got.data_ptr(), batches_[b][i].data_ptr());
    }
  }
}

TEST_F(ExampleBatchesCAbi, OutOfRangeIsNamed) {
  DLManagedTensor* t = nullptr;
  FxStatus* s = api()->GraphExampleBatchInput(handle(), 3, 0, &t);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(api()->GetStatusCode(s), FX_NOT_FOUND);
  EXPECT_STREQ(api()->GetStatusMessage(s),
               "GraphExampleBatchInput: there are 3 batches of example "
               "inputs, no batch 3");
  api()->ReleaseStatus(s);
  s = api()->GraphExampleBatchInput(handle(), 1, 2, &t);
  ASSERT_NE(s, nullptr);
  EXPECT_STREQ(api()->GetStatusMessage(s),
               "GraphExampleBatchInput: batch 1 has 2 example inputs, no "
               "index 2");
  api()->ReleaseStatus(s);
}

TEST_F(ExampleBatchesCAbi, TheWrapperReadsThemAllOrOneOnAnOlderHost) {
  fxp::api() = api();
  fxp::Graph g(handle());
  std::vector<std::vector<fxp::Tensor>> all = fxp::example_batches(g);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2][1].dl().shape[0], 2);
  EXPECT_EQ(static_cast<const float*>(all[2][1].dl().data)[0], 12.0f);
  const FxApi* v9 = api(9);
  EXPECT_EQ(v9->GraphNumExampleBatches, nullptr);
  fxp::api() = v9;
  EXPECT_EQ(fxp::example_batches(g).size(), 1u);
  fxp::api() = api();
}

}  // namespace
}  // namespace fx::host
