// shape_prop through the pass manager against torch.fx's own ShapeProp (run
// in Python on the same bundle): meta['type'] and every field of
// meta['tensor_meta'] on every node, for the reference graphs, resnet18 and
// mobilenet_v2; then the options-only form (meta tensors, no data) gives the
// same shapes and dtypes.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "fx_core/ir/argument.h"
#include "fx_core/ir/node.h"
#include "tests/plugins/plugin_test_util.h"
#include "tests/testing/reference.h"

namespace fx::plugins_test {
namespace {

using json = nlohmann::json;

json golden_shape_prop(const std::string& dir) {
  std::string out_path =
      std::string(std::getenv("TEST_TMPDIR")) + "/golden.json";
  std::string log;
  int status = run_command(
      "/usr/bin/python3 " + runfile("tests/plugins/shape_prop_golden.py") +
          " " + runfile("tools/torchfx_import.py") + " " + dir + " " + out_path,
      &log);
  if (status != 0) throw std::runtime_error("ShapeProp golden failed:\n" + log);
  std::ifstream f(out_path);
  return json::parse(f);
}

std::vector<int64_t> ints(const Argument& a) {
  std::vector<int64_t> out;
  for (const Argument& e : a.elements()) out.push_back(e.as_int());
  return out;
}

// One TensorMetadata (dict) against torch.fx's.
void expect_tensor_meta(const Argument& got, const json& want,
                        const std::string& where, bool compare_strides = true) {
  ASSERT_TRUE(got.is_dict()) << where;
  auto field = [&](const char* key) -> const Argument& {
    const Argument* a = got.find(key);
    if (a == nullptr) throw std::runtime_error(where + ": no " + key);
    return *a;
  };
  EXPECT_EQ(ints(field("shape")), want["shape"].get<std::vector<int64_t>>())
      << where;
  EXPECT_EQ(field("dtype").as_string(), want["dtype"].get<std::string>())
      << where;
  EXPECT_EQ(field("is_quantized").as_bool(), want["is_quantized"].get<bool>())
      << where;
  if (!compare_strides) return;
  EXPECT_EQ(ints(field("stride")), want["stride"].get<std::vector<int64_t>>())
      << where;
  EXPECT_EQ(field("requires_grad").as_bool(), want["requires_grad"].get<bool>())
      << where;
  const Argument& mf = field("memory_format");
  if (want["memory_format"].is_null()) {
    EXPECT_TRUE(mf.is_none()) << where;
  } else if (mf.is_none() ||
             mf.as_string() != want["memory_format"].get<std::string>()) {
    // torch.fx 1.13 picks the first format from a Python set, whose order
    // varies between processes: for a tensor contiguous in several formats
    // (N x C x 1 x 1) any of them is torch.fx's answer in some run.
    std::vector<int64_t> shape = want["shape"].get<std::vector<int64_t>>();
    std::vector<int64_t> stride = want["stride"].get<std::vector<int64_t>>();
    auto contiguous_in = [&](const std::string& format) {
      std::vector<int> order;
      if (format == "torch.contiguous_format") {
        for (size_t i = 0; i < shape.size(); ++i) order.push_back(i);
      } else if (format == "torch.channels_last" && shape.size() == 4) {
        order = {0, 2, 3, 1};
      } else if (format == "torch.channels_last_3d" && shape.size() == 5) {
        order = {0, 2, 3, 4, 1};
      } else {
        return false;
      }
      int64_t expected = 1;
      for (size_t k = order.size(); k-- > 0;) {
        int d = order[k];
        if (shape[d] == 1) continue;
        if (stride[d] != expected) return false;
        expected *= shape[d];
      }
      return true;
    };
    EXPECT_TRUE(!mf.is_none() && contiguous_in(mf.as_string()) &&
                contiguous_in(want["memory_format"].get<std::string>()))
        << where << ": memory_format "
        << (mf.is_none() ? "None" : mf.as_string()) << ", torch.fx says "
        << want["memory_format"].get<std::string>();
  }
}

void expect_meta(const Argument& got, const json& want,
                 const std::string& where, bool compare_strides) {
  if (want.is_object()) {
    expect_tensor_meta(got, want, where, compare_strides);
  } else if (want.is_array()) {
    ASSERT_TRUE(got.is_tuple()) << where;
    ASSERT_EQ(got.elements().size(), want.size()) << where;
    for (size_t i = 0; i < want.size(); ++i) {
      expect_meta(got.elements()[i], want[i],
                  where + "[" + std::to_string(i) + "]", compare_strides);
    }
  }
}

// Every node's meta against the golden; returns how many nodes compared.
size_t expect_like_torch_fx(const Graph& graph, const json& golden,
                            bool compare_strides) {
  size_t compared = 0;
  for (const Node* n : graph.nodes()) {
    std::string name(n->name());
    std::string where = "node '" + name + "'";
    if (!golden.contains(name)) {
      ADD_FAILURE() << where << " is not in torch.fx's graph";
      continue;
    }
    const json& want = golden[name];
    const Argument* type = n->meta_value("type");
    if (!want["type"].is_null()) {
      if (type == nullptr) {
        ADD_FAILURE() << where << " has no meta['type']";
        continue;
      }
      EXPECT_EQ(type->as_string(), want["type"].get<std::string>()) << where;
    }
    const Argument* meta = n->meta_value("tensor_meta");
    EXPECT_EQ(meta != nullptr, want.contains("tensor_meta")) << where;
    if (meta != nullptr && want.contains("tensor_meta")) {
      expect_meta(*meta, want["tensor_meta"], where, compare_strides);
    }
    ++compared;
  }
  return compared;
}

std::string shapes_option(const std::vector<at::Tensor>& inputs) {
  std::string shapes, dtypes;
  for (const at::Tensor& t : inputs) {
    std::string s;
    for (int64_t d : t.sizes()) s += (s.empty() ? "" : "x") + std::to_string(d);
    shapes += (shapes.empty() ? "" : ",") + s;
    dtypes += (dtypes.empty() ? "" : ",") +
              std::string(t.scalar_type() == at::kFloat  ? "float32"
                          : t.scalar_type() == at::kLong ? "int64"
                                                         : "float64");
  }
  return "shape_prop{shapes=" + shapes + ",dtypes=" + dtypes + "}";
}

class ShapePropTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!python_skip_reason().empty()) GTEST_SKIP() << python_skip_reason();
  }
  std::string dir() const {
    const std::string& name = GetParam();
    if (name.rfind("seed_", 0) == 0) {
      return testing::reference_dir() + "/" + name;
    }
    return export_torchvision(name);
  }
};

TEST_P(ShapePropTest, RecordsWhatTorchFxShapePropRecords) {
  Bundle b = load_bundle(dir());
  if (b.inputs.empty()) GTEST_SKIP() << "the bundle has no input.pt";
  json golden = golden_shape_prop(b.dir);
  host::PipelineReport report = run_pipeline(*b.gm, "shape_prop", b.inputs);
  ASSERT_TRUE(report.ok()) << report.failure;
  size_t compared = expect_like_torch_fx(b.gm->graph(), golden, true);
  EXPECT_EQ(compared, golden.size());
}

TEST_P(ShapePropTest, MetaRunFromOptionsGivesTheSameShapesAndDtypes) {
  Bundle b = load_bundle(dir());
  if (b.inputs.empty()) GTEST_SKIP() << "the bundle has no input.pt";
  json golden = golden_shape_prop(b.dir);
  host::PipelineReport report = run_pipeline(*b.gm, shapes_option(b.inputs));
  ASSERT_TRUE(report.ok()) << report.failure;
  expect_like_torch_fx(b.gm->graph(), golden, false);
}

INSTANTIATE_TEST_SUITE_P(ReferenceAndTorchvision, ShapePropTest,
                         ::testing::Values("seed_dropout", "seed_leaf",
                                           "seed_mymodule", "seed_static_flow",
                                           "seed_topk", "seed_wrap", "resnet18",
                                           "mobilenet_v2"));

TEST(ShapeProp, WithoutInputsOrShapesSaysWhatItNeeds) {
  Bundle b = load_reference("seed_mymodule");
  host::PipelineReport report = run_pipeline(*b.gm, "shape_prop");
  EXPECT_FALSE(report.ok());
  EXPECT_NE(report.failure.find("shape_prop needs inputs"), std::string::npos)
      << report.failure;
}

TEST(ShapeProp, PlaceholderShapesFromTheTracerAreEnough) {
  Bundle b = load_reference("seed_mymodule");
  for (Node* n : b.gm->graph().nodes()) {
    if (n->op() == Opcode::kPlaceholder) {
      n->set_meta("shape",
                  Argument::list({Argument(int64_t{3}), Argument(int64_t{4})}));
    }
  }
  host::PipelineReport report = run_pipeline(*b.gm, "shape_prop");
  ASSERT_TRUE(report.ok()) << report.failure;
  const Argument* meta = b.gm->graph().output_node()->meta_value("tensor_meta");
  ASSERT_NE(meta, nullptr);
  EXPECT_EQ(ints(*meta->find("shape")), (std::vector<int64_t>{3, 5}));
}

TEST(ShapeProp, AWrongNumberOfShapesIsRefused) {
  Bundle b = load_reference("seed_mymodule");
  host::PipelineReport report =
      run_pipeline(*b.gm, "shape_prop{shapes=3x4,3x4}");
  EXPECT_NE(report.failure.find("shapes gives 2 inputs, the graph has 1"),
            std::string::npos)
      << report.failure;
}

}  // namespace
}  // namespace fx::plugins_test
