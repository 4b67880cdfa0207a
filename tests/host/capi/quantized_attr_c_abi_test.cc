// GraphSetQuantizedAttr (C ABI version 9): a plugin hands a quantized
// tensor's integers, scales and zero points; the module gets the tensor
// torch.quantize_per_tensor / quantize_per_channel would have made (same
// integers, qscheme, scales, zero points, axis). Bad parts are refused with
// a status naming them and leave the module as it was; a pass that fails
// after setting one is rolled back.
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "fx/plugin_api.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "host/capi/c_api.h"
#include "host/pipeline/pass_target.h"

namespace fx::host {
namespace {

class QuantizedAttrCAbi : public ::testing::Test {
 protected:
  void SetUp() override {
    auto graph = std::make_unique<Graph>();
    Node* x = graph->placeholder("x");
    graph->output(
        graph->call_function("operator.add", {x, graph->get_attr("w")}));
    GraphModule::AttributeMap attrs = {{"w", {nullptr, at::ones({2}), false}}};
    gm_ = std::make_unique<GraphModule>(attrs, std::move(graph));
    target_ = std::make_unique<GraphModuleTarget>(*gm_);
    target_->begin();
    store_ = std::make_unique<ScopedAttributeStore>(&gm_->graph(),
                                                    target_->attributes());
  }

  // Sets `name` from `q`'s parts (its int_repr, scales, zero points).
  std::string set(const char* name, const at::Tensor& values,
                  const at::Tensor& scales, const at::Tensor& zero_points,
                  int64_t axis) {
    DLManagedTensor* s = at::toDLPack(scales.contiguous());
    DLManagedTensor* z = at::toDLPack(zero_points.contiguous());
    FxStatus* status = api()->GraphSetQuantizedAttr(
        to_handle(&gm_->graph()), name, at::toDLPack(values.contiguous()),
        &s->dl_tensor, &z->dl_tensor, axis);
    s->deleter(s);
    z->deleter(z);
    std::string message;
    if (status != nullptr) {
      message = api()->GetStatusMessage(status);
      api()->ReleaseStatus(status);
    }
    return message;
  }

  std::unique_ptr<GraphModule> gm_;
  std::unique_ptr<GraphModuleTarget> target_;
  std::unique_ptr<ScopedAttributeStore> store_;
};

TEST_F(QuantizedAttrCAbi, PerChannelIsWhatTorchQuantizePerChannelMakes) {
  at::Tensor w = at::randn({4, 3, 2, 2});
  at::Tensor scales = w.abs().amax({1, 2, 3}).to(at::kDouble) / 127;
  at::Tensor zps = at::zeros({4}, at::kLong);
  at::Tensor expected = at::quantize_per_channel(w, scales, zps, 0, at::kQInt8);
  ASSERT_EQ(set("conv.weight", expected.int_repr(), scales.to(at::kFloat),
                zps.to(at::kInt), 0),
            "");
  at::Tensor got = gm_->get_attr("conv.weight");
  ASSERT_TRUE(got.is_quantized());
  EXPECT_EQ(got.scalar_type(), at::kQInt8);
  EXPECT_EQ(got.qscheme(), at::kPerChannelAffine);
  EXPECT_EQ(got.q_per_channel_axis(), 0);
  EXPECT_TRUE(at::equal(got.int_repr(), expected.int_repr()));
  // float32 scales read back as torch stores them (double).
  EXPECT_TRUE(at::allclose(got.q_per_channel_scales(),
                           scales.to(at::kFloat).to(at::kDouble)));
  EXPECT_TRUE(at::equal(got.q_per_channel_zero_points(), zps));
}

TEST_F(QuantizedAttrCAbi, PerTensorQuint8AndQint32) {
  at::Tensor x = at::rand({5});
  at::Tensor q = at::quantize_per_tensor(x, 0.01, 3, at::kQUInt8);
  ASSERT_EQ(set("act", q.int_repr(), at::tensor(0.01, at::kDouble),
                at::tensor(3, at::kLong), -1),
            "");
  at::Tensor got = gm_->get_attr("act");
  EXPECT_EQ(got.scalar_type(), at::kQUInt8);
  EXPECT_EQ(got.qscheme(), at::kPerTensorAffine);
  EXPECT_DOUBLE_EQ(got.q_scale(), 0.01);
  EXPECT_EQ(got.q_zero_point(), 3);
  EXPECT_TRUE(at::equal(got.int_repr(), q.int_repr()));

  at::Tensor b = at::quantize_per_tensor(at::randn({4}), 1e-4, 0, at::kQInt32);
  ASSERT_EQ(set("bias_q", b.int_repr(), at::tensor({1e-4}),
                at::tensor({0}, at::kInt), -1),
            "");
  EXPECT_EQ(gm_->get_attr("bias_q").scalar_type(), at::kQInt32);
}

TEST_F(QuantizedAttrCAbi, BadPartsAreNamedAndNothingChanges) {
  at::Tensor ints = at::zeros({2, 3}, at::kChar);
  at::Tensor one = at::ones({1});
  at::Tensor zero = at::zeros({1}, at::kLong);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    at::Tensor values, scales, zero_points;
    int64_t axis;
    std::string error;
  };
  const std::vector<Case> cases = {
      {ints, at::zeros({1}), zero, -1,
       "GraphSetQuantizedAttr: scale 0 is 0.0 (a quantization scale is "
       "positive and finite)"},
      {ints, at::full({1}, nan, at::kDouble), zero, -1,
       "GraphSetQuantizedAttr: scale 0 is nan (a quantization scale is "
       "positive and finite)"},
      {ints, one, at::full({1}, 128, at::kLong), -1,
       "GraphSetQuantizedAttr: zero point 0 is 128.0, outside -128..127"},
      {ints.to(at::kByte), one, at::full({1}, -1, at::kLong), -1,
       "GraphSetQuantizedAttr: zero point 0 is -1.0, outside 0..255"},
      {ints, at::ones({3}), at::zeros({3}, at::kLong), 0,
       "GraphSetQuantizedAttr: there are 3 scales and 3 zero points; axis 0 "
       "has 2 channels"},
      {ints, at::ones({2}), at::zeros({2}, at::kLong), -1,
       "GraphSetQuantizedAttr: there are 2 scales and 2 zero points; a per "
       "tensor quantization has 1 of each"},
      {ints, at::ones({2}), at::zeros({2}, at::kLong), 2,
       "GraphSetQuantizedAttr: axis 2 is out of range for values of 2 "
       "dimensions (-1: per tensor)"},
      {ints.to(at::kFloat), one, zero, -1,
       "GraphSetQuantizedAttr: values must be int8 (qint8), uint8 (quint8) "
       "or int32 (qint32), not Float"},
      {ints, at::ones({1, 1}), zero, -1,
       "GraphSetQuantizedAttr: scales must have 0 or 1 dimensions"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(set("w", c.values, c.scales, c.zero_points, c.axis), c.error);
  }
  EXPECT_TRUE(at::equal(gm_->get_attr("w"), at::ones({2})));
  EXPECT_FALSE(target_->changed());
}

// LibTorch cannot unregister a tensor, and replacing an unquantized one's
// data with a quantized one's would leave it without its quantizer.
TEST_F(QuantizedAttrCAbi, AnUnquantizedAttributeIsNotReplaced) {
  at::Tensor q = at::quantize_per_tensor(at::rand({2}), 0.1, 0, at::kQUInt8);
  EXPECT_EQ(set("w", q.int_repr(), at::tensor(0.1), at::tensor(0), -1),
            "GraphSetQuantizedAttr: 'w' holds an unquantized tensor; it "
            "cannot be replaced by a quantized one (give the new tensor a "
            "new name)");
  EXPECT_TRUE(at::equal(gm_->get_attr("w"), at::ones({2})));
}

// A pass that fails after replacing a quantized attribute gets the old one
// back.
TEST_F(QuantizedAttrCAbi, AFailedPassIsRolledBack) {
  at::Tensor first =
      at::quantize_per_tensor(at::rand({2}), 0.1, 0, at::kQUInt8);
  ASSERT_EQ(set("a", first.int_repr(), at::tensor(0.1), at::tensor(0), -1), "");
  target_->commit();
  target_->begin();
  at::Tensor second =
      at::quantize_per_tensor(at::rand({2}), 0.5, 1, at::kQUInt8);
  ASSERT_EQ(set("a", second.int_repr(), at::tensor(0.5), at::tensor(1), -1),
            "");
  EXPECT_DOUBLE_EQ(gm_->get_attr("a").q_scale(), 0.5);
  EXPECT_TRUE(target_->changed());
  target_->rollback();
  at::Tensor a = gm_->get_attr("a");
  EXPECT_DOUBLE_EQ(a.q_scale(), 0.1);
  EXPECT_TRUE(at::equal(a.int_repr(), first.int_repr()));
}

// An isolated pass's changes travel from its worker as bytes: a quantized
// attribute arrives as it was set.
TEST_F(QuantizedAttrCAbi, ComesBackFromAnIsolatedPassesWorker) {
  at::Tensor w = at::randn({3, 4});
  at::Tensor scales = at::rand({3}, at::kDouble) + 0.01;
  at::Tensor q = at::quantize_per_channel(w, scales, at::zeros({3}, at::kLong),
                                          0, at::kQInt8);
  ASSERT_EQ(
      set("fc.weight", q.int_repr(), scales, at::zeros({3}, at::kLong), 0), "");
  std::string bytes = target_->encode_changes();
  target_->rollback();

  auto graph = std::make_unique<Graph>();
  graph->output(graph->placeholder("x"));
  GraphModule host({}, std::move(graph));
  GraphModuleTarget host_target(host);
  host_target.begin();
  ASSERT_TRUE(host_target.apply_changes(bytes).ok());
  host_target.commit();
  at::Tensor got = host.get_attr("fc.weight");
  ASSERT_TRUE(got.is_quantized());
  EXPECT_TRUE(at::equal(got.int_repr(), q.int_repr()));
  EXPECT_TRUE(at::equal(got.q_per_channel_scales(), scales));
}

}  // namespace
}  // namespace fx::host
