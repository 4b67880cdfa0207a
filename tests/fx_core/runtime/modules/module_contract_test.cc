// Module configs are checked against their constructors' contracts before
// anything is allocated (issue 41): ranges, rules across fields, products
// that overflow, and the weights a file actually holds. And configs say what
// torch 1.13's constructors take (ModuleConfig).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/pooling.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/io/atomic_file.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/ir/python_repr.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/support/error.h"

namespace fx {
namespace {

// The FxError ModuleRegistry::create gives for `config`, or "".
std::string create_error(const std::string& type, const ArgumentDict& config) {
  try {
    ModuleRegistry::global().create(type, config);
  } catch (const FxError& e) {
    return e.what();
  }
  return "";
}

Argument ints(std::vector<int64_t> v) {
  ArgumentList items;
  for (int64_t i : v) items.emplace_back(i);
  return Argument::list(std::move(items));
}

// A graph calling module `m` of `type` with `config_json`, written to a
// fresh directory with `weights` (none: the file names no weights file).
std::string bundle(
    const std::string& name, const std::string& type,
    const std::string& config_json,
    const std::vector<std::pair<std::string, at::Tensor>>& weights = {}) {
  std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::filesystem::create_directories(dir);
  std::string json =
      std::string(R"({"format": "fx-graph", "version": 1, "nodes": [
  {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
  {"name": "m", "op": "call_module", "target": "m", "args": [{"node": "x"}], "kwargs": {}},
  {"name": "output", "op": "output", "target": "output", "args": [{"node": "m"}], "kwargs": {}}],
 "modules": {"m": {"type": ")") +
      type + R"(", "config": )" + config_json + R"(, "training": false}})" +
      (weights.empty() ? "}" : R"(, "weights": "model.weights.pt"})");
  EXPECT_TRUE(write_file_atomically(dir + "/graph.fx.json", json).ok());
  if (!weights.empty()) {
    EXPECT_TRUE(write_tensor_dict(dir + "/model.weights.pt", weights).ok());
  }
  return dir + "/graph.fx.json";
}

std::string load_error(const std::string& path) {
  auto gm = read_graph_module(path);
  return gm.ok() ? "" : std::string(gm.status().message());
}

// The process's peak resident memory in kB (VmHWM).
int64_t peak_rss_kb() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmHWM:") {
      int64_t kb = 0;
      status >> kb;
      return kb;
    }
  }
  return 0;
}

TEST(ModuleContract, AConvPaddingBeyondInt32IsRefusedByFieldAndValue) {
  // Reached LibTorch's convolution and crashed in oneDNN.
  std::string msg = create_error("torch.nn.Conv2d",
                                 {{"in_channels", int64_t{1}},
                                  {"out_channels", int64_t{1}},
                                  {"kernel_size", int64_t{3}},
                                  {"padding", ints({1, 9007199254740993})}});
  EXPECT_EQ(msg,
            "torch.nn.Conv2d: config 'padding' = [1, 9007199254740993]: every "
            "int of a module config must lie within +-2147483647");
}

// A reference module's weight_qparams hold its qscheme and dtype as their
// ints (a file may give any int): one naming none is refused, not cast.
TEST(ModuleContract, WeightQParamsIntsNamingNoDtypeOrQSchemeAreRefused) {
  auto config = [](int64_t qscheme, int64_t dtype) -> ArgumentDict {
    return {{"in_channels", int64_t{2}},
            {"out_channels", int64_t{3}},
            {"kernel_size", int64_t{3}},
            {"weight_qparams", Argument::dict({{"qscheme", qscheme},
                                               {"dtype", dtype},
                                               {"scale", 0.5},
                                               {"zero_point", int64_t{0}}})}};
  };
  const std::string type =
      "torch.ao.nn.quantized.reference.modules.conv.Conv2d";
  // torch.per_tensor_affine (0) and torch.qint8 (12) build.
  EXPECT_EQ(create_error(type, config(0, 12)), "");
  EXPECT_EQ(create_error(type, config(0, 268)),
            type + ": weight_qparams' dtype 268 names no torch.dtype");
  EXPECT_EQ(create_error(type, config(-1, 12)),
            type + ": weight_qparams' qscheme -1 names no torch.qscheme");
  EXPECT_EQ(create_error(type, config(5, 12)),
            type + ": weight_qparams' qscheme 5 names no torch.qscheme");
}

TEST(ModuleContract, AWindowWhoseSizeOverflowsIsRefused) {
  std::string msg = create_error("torch.nn.Conv2d",
                                 {{"in_channels", int64_t{1}},
                                  {"out_channels", int64_t{8}},
                                  {"kernel_size", int64_t{1}},
                                  {"padding", ints({2147483647, 2147483647})}});
  EXPECT_EQ(msg,
            "torch.nn.Conv2d: config 'padding' = [2147483647, 2147483647] "
            "with 'kernel_size' = [1, 1]: the window spans more elements than "
            "a tensor can hold");
}

TEST(ModuleContract, RangesAndCrossFieldRulesNameFieldAndValue) {
  ArgumentDict conv = {{"in_channels", int64_t{3}},
                       {"out_channels", int64_t{4}},
                       {"kernel_size", int64_t{3}}};
  ArgumentDict bad_groups = conv;
  bad_groups.emplace_back("groups", int64_t{0});
  EXPECT_EQ(create_error("torch.nn.Conv2d", bad_groups),
            "torch.nn.Conv2d: config 'groups' = 0: must be at least 1");
  ArgumentDict odd_groups = conv;
  odd_groups.emplace_back("groups", int64_t{2});
  EXPECT_EQ(create_error("torch.nn.Conv2d", odd_groups),
            "torch.nn.Conv2d: config 'in_channels' = 3: must be divisible by "
            "'groups' = 2");
  ArgumentDict bad_stride = conv;
  bad_stride.emplace_back("stride", ints({1, -2}));
  EXPECT_EQ(create_error("torch.nn.Conv2d", bad_stride),
            "torch.nn.Conv2d: config 'stride' = [1, -2]: must be at least 1");
  EXPECT_EQ(create_error("torch.nn.Dropout", {{"p", 1.5}}),
            "torch.nn.Dropout: config 'p' = 1.5: must lie in [0.0, 1.0]");
  EXPECT_EQ(
      create_error("torch.nn.LayerNorm", {{"normalized_shape", ints({4, -1})}}),
      "torch.nn.LayerNorm: config 'normalized_shape' = [4, -1]: must be "
      "at least 0");
  EXPECT_EQ(create_error("torch.nn.Embedding", {{"num_embeddings", int64_t{4}},
                                                {"embedding_dim", int64_t{2}},
                                                {"padding_idx", int64_t{9}}}),
            "torch.nn.Embedding: config 'padding_idx' = 9: must lie within "
            "num_embeddings (4)");
  EXPECT_EQ(create_error("torch.nn.MaxPool2d", {{"kernel_size", int64_t{0}}}),
            "torch.nn.MaxPool2d: config 'kernel_size' = 0: must be at least 1");
}

TEST(ModuleContract, RowsRebuiltFromPythonHaveContractsToo) {
  // groups 0 divided by zero when the weight's shape was computed.
  EXPECT_EQ(
      create_error("torch.nn.ConvTranspose2d", {{"in_channels", int64_t{2}},
                                                {"out_channels", int64_t{2}},
                                                {"kernel_size", int64_t{2}},
                                                {"groups", int64_t{0}}}),
      "torch.nn.ConvTranspose2d: config 'groups' = 0: must be at least "
      "1");
  EXPECT_EQ(create_error("torch.nn.Bilinear", {{"in1_features", int64_t{-1}},
                                               {"in2_features", int64_t{2}},
                                               {"out_features", int64_t{2}}}),
            "torch.nn.Bilinear: config 'in1_features' = -1: must be at least "
            "0");
}

TEST(ModuleContract, RepeatedPartsAreBoundedAndRecurrentWeightsDeclared) {
  EXPECT_EQ(create_error("torch.nn.LSTM", {{"input_size", int64_t{2}},
                                           {"hidden_size", int64_t{2}},
                                           {"num_layers", int64_t{1} << 30}}),
            "torch.nn.LSTM: config 'num_layers' = 1073741824: must be at most "
            "65536");
  EXPECT_EQ(create_error("torch.nn.TransformerEncoder",
                         {{"encoder_layer", Argument()},
                          {"num_layers", int64_t{100000}}}),
            "torch.nn.TransformerEncoder: config 'num_layers' = 100000: must "
            "be at most 65536");
  // A GRU's weights from a file: sized from the config before any exists.
  std::string msg =
      load_error(bundle("huge_gru", "torch.nn.GRU",
                        R"({"input_size": 65536, "hidden_size": 65536})"));
  EXPECT_EQ(msg,
            "module 'm': torch.nn.GRU: 'weight_ih_l0' is missing from the "
            "weights (the config makes it [196608, 65536])");
  msg = load_error(bundle("huge_attention", "torch.nn.MultiheadAttention",
                          R"({"embed_dim": 65536, "num_heads": 8})"));
  EXPECT_EQ(msg,
            "module 'm': torch.nn.MultiheadAttention: 'in_proj_weight' is "
            "missing from the weights (the config makes it [196608, 65536])");
}

TEST(ModuleContract, StacksDeclareEveryLayersWeightsWithoutFormingThem) {
  // 65536 layers of width 4096 (about 13 TB of weights) declared by a few
  // hundred bytes: the first missing weight is named before any layer is
  // made, and the walk forms one layer's shapes, not 65536.
  int64_t before = peak_rss_kb();
  auto start = std::chrono::steady_clock::now();
  std::string msg = load_error(bundle(
      "huge_stack", "torch.nn.TransformerEncoder",
      R"({"encoder_layer": {"dict": {"type": "torch.nn.TransformerEncoderLayer",)"
      R"( "config": {"dict": {"d_model": 4096, "nhead": 8}}}},)"
      R"( "num_layers": 65536})",
      {{"m.layers.0.self_attn.in_proj_weight", at::zeros({1})}}));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_EQ(msg,
            "module 'm': torch.nn.TransformerEncoder: weight "
            "'m.layers.0.self_attn.in_proj_weight': shape mismatch: the config "
            "makes it [12288, 4096], the weights hold [1]");
  EXPECT_LT(peak_rss_kb() - before, 64 * 1024);
  EXPECT_LT(seconds, 1.0);
  // A Transformer names its encoder's and decoder's weights the same way.
  msg = load_error(bundle("huge_transformer", "torch.nn.Transformer",
                          R"({"d_model": 65536, "nhead": 8})"));
  EXPECT_EQ(msg,
            "module 'm': torch.nn.Transformer: "
            "'encoder.layers.0.self_attn.in_proj_weight' is missing from the "
            "weights (the config makes it [196608, 65536])");
}

TEST(ModuleContract, AdaptiveLogSoftmaxChecksItsClustersBeforeAllocating) {
  EXPECT_EQ(create_error("torch.nn.AdaptiveLogSoftmaxWithLoss",
                         {{"in_features", int64_t{8}},
                          {"n_classes", int64_t{10}},
                          {"cutoffs", ints({4, 4})}}),
            "torch.nn.AdaptiveLogSoftmaxWithLoss: config 'cutoffs': 4 at index "
            "1: the cutoffs must be strictly increasing, each between 1 and "
            "n_classes - 1 (9)");
  EXPECT_EQ(create_error("torch.nn.AdaptiveLogSoftmaxWithLoss",
                         {{"in_features", int64_t{8}},
                          {"n_classes", int64_t{10}},
                          {"cutoffs", ints({4})},
                          {"div_value", 0.0}}),
            "torch.nn.AdaptiveLogSoftmaxWithLoss: config 'div_value' = 0.0: "
            "must be positive");
  EXPECT_EQ(create_error("torch.nn.AdaptiveLogSoftmaxWithLoss",
                         {{"in_features", int64_t{1} << 30},
                          {"n_classes", int64_t{10}},
                          {"cutoffs", ints({4})},
                          {"div_value", 1e-300}}),
            "torch.nn.AdaptiveLogSoftmaxWithLoss: config 'div_value' = "
            "1e-300: div_value**1 is 1e-300; LibTorch's "
            "AdaptiveLogSoftmaxWithLoss needs it between 1 and 2**62");
  // Found by tests/fuzz:module_config: LibTorch divided by zero (SIGFPE).
  EXPECT_EQ(create_error("torch.nn.AdaptiveLogSoftmaxWithLoss",
                         {{"in_features", int64_t{8}},
                          {"n_classes", int64_t{12}},
                          {"cutoffs", ints({3, 6, 9})},
                          {"div_value", 0.18446744073709552}}),
            "torch.nn.AdaptiveLogSoftmaxWithLoss: config 'div_value' = "
            "0.18446744073709553: div_value**1 is 0.18446744073709553; "
            "LibTorch's AdaptiveLogSoftmaxWithLoss needs it between 1 and "
            "2**62");
  // LibTorch would make 8 / int(2.5) = 4 hidden features, Python 8 // 2.5.
  EXPECT_EQ(create_error("torch.nn.AdaptiveLogSoftmaxWithLoss",
                         {{"in_features", int64_t{8}},
                          {"n_classes", int64_t{10}},
                          {"cutoffs", ints({4})},
                          {"div_value", 2.5}}),
            "torch.nn.AdaptiveLogSoftmaxWithLoss: config 'div_value' = 2.5: "
            "tail cluster 0 would have 4 hidden features in LibTorch's "
            "AdaptiveLogSoftmaxWithLoss but 3.0 in torch's Python class (they "
            "agree for whole div_values)");
  std::string msg =
      load_error(bundle("huge_asm", "torch.nn.AdaptiveLogSoftmaxWithLoss",
                        R"({"in_features": 1048576, "n_classes": 1048576,)"
                        R"( "cutoffs": [4, 8]})"));
  EXPECT_EQ(msg,
            "module 'm': torch.nn.AdaptiveLogSoftmaxWithLoss: 'head.weight' is "
            "missing from the weights (the config makes it [6, 1048576])");
}

TEST(ModuleContract, WeightsWhoseBytesOverflowAreRefusedBeforeAllocating) {
  std::string msg =
      create_error("torch.nn.Linear", {{"in_features", int64_t{2147483647}},
                                       {"out_features", int64_t{2147483647}}});
  EXPECT_EQ(msg,
            "torch.nn.Linear: the config gives 'weight' the shape "
            "[2147483647, 2147483647], whose size in bytes overflows a 64-bit "
            "int");
}

TEST(ModuleContract, AFileDeclaringAHugeConvWithoutWeightsAllocatesNothing) {
  // 514 bytes that used 756 MB and 2.6 s before failing.
  int64_t before = peak_rss_kb();
  auto start = std::chrono::steady_clock::now();
  std::string msg =
      load_error(bundle("huge_conv", "torch.nn.Conv2d",
                        R"({"in_channels": 4096, "out_channels": 4096, )"
                        R"("kernel_size": 3})"));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_EQ(msg,
            "module 'm': torch.nn.Conv2d: 'weight' is missing from the "
            "weights (the config makes it [4096, 4096, 3, 3])");
  EXPECT_LT(peak_rss_kb() - before, 64 * 1024);  // under 64 MB
  EXPECT_LT(seconds, 1.0);
  // in_channels 2^31-1 asked for 618 GB.
  msg = load_error(bundle("huge_channels", "torch.nn.Conv2d",
                          R"({"in_channels": 2147483647, )"
                          R"("out_channels": 8, "kernel_size": 3})"));
  EXPECT_EQ(msg,
            "module 'm': torch.nn.Conv2d: 'weight' is missing from the "
            "weights (the config makes it [8, 2147483647, 3, 3])");
}

TEST(ModuleContract, AFileWeightOfAnotherShapeIsRefusedBeforeAllocating) {
  int64_t before = peak_rss_kb();
  std::string msg = load_error(bundle(
      "huge_conv_small_weight", "torch.nn.Conv2d",
      R"({"in_channels": 4096, "out_channels": 4096, "kernel_size": 3})",
      {{"m.weight", at::zeros({1, 1, 3, 3})}, {"m.bias", at::zeros({1})}}));
  EXPECT_EQ(msg,
            "module 'm': torch.nn.Conv2d: weight 'm.weight': shape mismatch: "
            "the config makes it [4096, 4096, 3, 3], the weights hold "
            "[1, 1, 3, 3]");
  EXPECT_LT(peak_rss_kb() - before, 64 * 1024);
}

// The process's resident memory in kB (`field` VmRSS or VmHWM, the peak).
int64_t status_kb(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == field + ":") {
      int64_t kb = 0;
      status >> kb;
      return kb;
    }
  }
  return 0;
}

TEST(ModuleContract, AFileLoadsEachWeightOnce) {
  // 64 MB of Linear weights: the weights file is read record by record (not
  // whole as well) and the module takes the tensors it read (not copies),
  // so loading peaks near one copy of the weights; it was three.
  const int64_t n = 4096;
  std::string path;
  {
    at::Tensor w = at::rand({n, n});
    path = bundle("big_linear", "torch.nn.Linear",
                  R"({"in_features": 4096, "out_features": 4096})",
                  {{"m.weight", w}, {"m.bias", at::rand({n})}});
  }
  std::ofstream("/proc/self/clear_refs") << "5";  // resets VmHWM to VmRSS
  int64_t before = status_kb("VmRSS");
  ASSERT_GE(status_kb("VmHWM"), before);
  auto gm = read_graph_module(path);
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  int64_t weights_kb = n * n * 4 / 1024;
  EXPECT_LT(status_kb("VmHWM") - before, weights_kb * 13 / 10);
  // The weights are the file's, as a copy would have had them.
  auto file = read_tensor_dict(std::filesystem::path(path).parent_path() /
                               "model.weights.pt");
  ASSERT_TRUE(file.ok());
  at::Tensor x = at::rand({2, n});
  EXPECT_TRUE(at::equal((**gm)(x).toTensor(),
                        at::linear(x, (*file)[0].second, (*file)[1].second)));
}

TEST(ModuleContract, AFileWithTheWeightsLoadsThemAndRuns) {
  at::Tensor w = at::rand({4, 2, 3, 3}), b = at::rand({4});
  at::Tensor mean = at::rand({4}), var = at::rand({4}) + 1;
  auto gm = read_graph_module(
      bundle("conv_ok", "torch.nn.Conv2d",
             R"({"in_channels": 2, "out_channels": 4, "kernel_size": 3, )"
             R"("padding": [1, 1]})",
             {{"m.weight", w}, {"m.bias", b}}));
  ASSERT_TRUE(gm.ok()) << gm.status().message();
  at::Tensor x = at::rand({1, 2, 5, 5});
  EXPECT_TRUE(at::allclose((**gm)(x).toTensor(), at::conv2d(x, w, b, 1, 1)));
  auto bn = read_graph_module(
      bundle("bn_ok", "torch.nn.BatchNorm2d", R"({"num_features": 4})",
             {{"m.weight", w.new_ones({4})},
              {"m.bias", b},
              {"m.running_mean", mean},
              {"m.running_var", var},
              {"m.num_batches_tracked", at::zeros({}, at::kLong)}}));
  ASSERT_TRUE(bn.ok()) << bn.status().message();
  at::Tensor y = at::rand({1, 4, 2, 2});
  EXPECT_TRUE(at::allclose((**bn)(y).toTensor(),
                           at::batch_norm(y, w.new_ones({4}), b, mean, var,
                                          false, 0.1, 1e-5, false)));
}

// ---- Configs as torch 1.13 holds them (the kinds fixed by PyTorch's
// test_normalize_modules_exhaustive through fx_sdk) ----

Argument tuple_of(std::vector<Argument> items) {
  return Argument::tuple(ArgumentList(std::move(items)));
}

// What the kind of `m` says its constructor arguments are, as Python's repr
// of the keyword dict; and that a module built from that says the same.
std::string described(const std::shared_ptr<torch::nn::Module>& m) {
  const ModuleKind* kind = ModuleRegistry::global().find(*m);
  if (kind == nullptr || !kind->describe) return "<no description>";
  ArgumentDict config = kind->describe(*m);
  auto again = ModuleRegistry::global().create(kind->type, config);
  const ModuleKind* again_kind = ModuleRegistry::global().find(*again);
  EXPECT_EQ(again_kind, kind);
  EXPECT_EQ(repr(Argument::dict(again_kind->describe(*again))),
            repr(Argument::dict(config)));
  return repr(Argument::dict(std::move(config)));
}

c10::IValue run(const std::shared_ptr<torch::nn::Module>& m,
                const at::Tensor& x) {
  return call_module(*m, "m", {x}, {});
}

TEST(ModuleConfig, ZeroPad2dTakesOnlyPaddingAndPadsWithZeros) {
  auto m = ModuleRegistry::global().create(
      "torch.nn.ZeroPad2d", {{"padding", tuple_of({1, 1, 2, 0})}});
  EXPECT_EQ(described(m), "{'padding': (1, 1, 2, 0)}");
  at::Tensor x = at::randn({2, 3, 4, 5});
  EXPECT_TRUE(at::equal(run(m, x).toTensor(),
                        at::constant_pad_nd(x, {1, 1, 2, 0}, 0.0)));
  EXPECT_EQ(described(ModuleRegistry::global().create(
                "torch.nn.ZeroPad2d", {{"padding", int64_t{2}}})),
            "{'padding': 2}");
  EXPECT_NE(create_error("torch.nn.ZeroPad2d",
                         {{"padding", int64_t{1}}, {"value", 0.0}})
                .find("value"),
            std::string::npos);
}

TEST(ModuleConfig, AvgPool1dHasNoDivisorOverrideAvgPool2dDoes) {
  auto m = ModuleRegistry::global().create("torch.nn.AvgPool1d",
                                           {{"kernel_size", int64_t{3}},
                                            {"stride", int64_t{2}},
                                            {"padding", int64_t{1}},
                                            {"count_include_pad", false}});
  EXPECT_EQ(described(m),
            "{'kernel_size': 3, 'stride': 2, 'padding': 1, 'ceil_mode': "
            "False, 'count_include_pad': False}");
  at::Tensor x = at::randn({2, 3, 7});
  EXPECT_TRUE(at::equal(run(m, x).toTensor(),
                        at::avg_pool1d(x, {3}, {2}, {1}, false, false)));
  EXPECT_NE(
      create_error("torch.nn.AvgPool1d", {{"kernel_size", int64_t{3}},
                                          {"divisor_override", int64_t{2}}})
          .find("divisor_override"),
      std::string::npos);
  auto m2 = ModuleRegistry::global().create(
      "torch.nn.AvgPool2d",
      {{"kernel_size", int64_t{2}}, {"divisor_override", int64_t{3}}});
  EXPECT_EQ(described(m2),
            "{'kernel_size': 2, 'stride': (2, 2), 'padding': (0, 0), "
            "'ceil_mode': False, 'count_include_pad': True, "
            "'divisor_override': 3}");
}

TEST(ModuleConfig, MaxPoolWithReturnIndicesReturnsValuesAndIndices) {
  at::Tensor x2 = at::randn({1, 2, 7, 7});
  auto m2 = ModuleRegistry::global().create("torch.nn.MaxPool2d",
                                            {{"kernel_size", int64_t{3}},
                                             {"stride", int64_t{2}},
                                             {"padding", int64_t{1}},
                                             {"return_indices", true},
                                             {"ceil_mode", true}});
  EXPECT_EQ(described(m2),
            "{'kernel_size': 3, 'stride': 2, 'padding': 1, 'dilation': (1, "
            "1), 'return_indices': True, 'ceil_mode': True}");
  c10::IValue out = run(m2, x2);
  ASSERT_TRUE(out.isTuple());
  auto [values, indices] =
      at::max_pool2d_with_indices(x2, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true);
  ASSERT_EQ(out.toTupleRef().elements().size(), 2u);
  EXPECT_TRUE(at::equal(out.toTupleRef().elements()[0].toTensor(), values));
  EXPECT_TRUE(at::equal(out.toTupleRef().elements()[1].toTensor(), indices));
  // A copy is still one that returns the indices.
  auto copy = m2->clone();
  EXPECT_TRUE(run(copy, x2).isTuple());

  at::Tensor x1 = at::randn({2, 3, 7});
  auto m1 = ModuleRegistry::global().create(
      "torch.nn.MaxPool1d",
      {{"kernel_size", int64_t{2}}, {"return_indices", true}});
  EXPECT_EQ(described(m1),
            "{'kernel_size': 2, 'stride': (2,), 'padding': (0,), "
            "'dilation': (1,), 'return_indices': True, 'ceil_mode': False}");
  auto [v1, i1] = at::max_pool1d_with_indices(x1, {2}, {2}, {0}, {1}, false);
  out = run(m1, x1);
  ASSERT_TRUE(out.isTuple());
  EXPECT_TRUE(at::equal(out.toTupleRef().elements()[0].toTensor(), v1));
  EXPECT_TRUE(at::equal(out.toTupleRef().elements()[1].toTensor(), i1));

  // Without it: LibTorch's class, which generated C++ names.
  auto plain = ModuleRegistry::global().create("torch.nn.MaxPool2d",
                                               {{"kernel_size", int64_t{2}}});
  EXPECT_NE(dynamic_cast<torch::nn::MaxPool2dImpl*>(plain.get()), nullptr);
  EXPECT_EQ(ModuleRegistry::global().find("torch.nn.MaxPool2d"),
            ModuleRegistry::global().find(*plain));
  EXPECT_TRUE(run(plain, x2).isTensor());
  EXPECT_EQ(described(plain),
            "{'kernel_size': 2, 'stride': (2, 2), 'padding': (0, 0), "
            "'dilation': (1, 1), 'return_indices': False, 'ceil_mode': "
            "False}");

  at::Tensor x3 = at::randn({1, 2, 4, 4, 4});
  auto m3 = ModuleRegistry::global().create(
      "torch.nn.MaxPool3d",
      {{"kernel_size", int64_t{2}}, {"return_indices", true}});
  auto [v3, i3] = at::max_pool3d_with_indices(x3, {2, 2, 2}, {2, 2, 2},
                                              {0, 0, 0}, {1, 1, 1}, false);
  out = run(m3, x3);
  ASSERT_TRUE(out.isTuple());
  EXPECT_TRUE(at::equal(out.toTupleRef().elements()[0].toTensor(), v3));
  EXPECT_TRUE(at::equal(out.toTupleRef().elements()[1].toTensor(), i3));
}

TEST(ModuleConfig, AdaptiveAvgPool2dKeepsTheInputSizeWhereOutputSizeIsNone) {
  auto m = ModuleRegistry::global().create(
      "torch.nn.AdaptiveAvgPool2d",
      {{"output_size", tuple_of({Argument(), int64_t{3}})}});
  EXPECT_EQ(described(m), "{'output_size': (None, 3)}");
  at::Tensor x = at::randn({1, 2, 5, 7});
  EXPECT_TRUE(
      at::equal(run(m, x).toTensor(), at::adaptive_avg_pool2d(x, {5, 3})));
  auto listed = ModuleRegistry::global().create(
      "torch.nn.AdaptiveAvgPool2d",
      {{"output_size", Argument::list({int64_t{4}, Argument()})}});
  EXPECT_EQ(described(listed), "{'output_size': [4, None]}");
  EXPECT_TRUE(
      at::equal(run(listed, x).toTensor(), at::adaptive_avg_pool2d(x, {4, 7})));
  EXPECT_EQ(described(ModuleRegistry::global().create(
                "torch.nn.AdaptiveAvgPool2d", {{"output_size", int64_t{3}}})),
            "{'output_size': 3}");
  EXPECT_EQ(create_error("torch.nn.AdaptiveAvgPool2d",
                         {{"output_size", tuple_of({1, 2, 3})}}),
            "torch.nn.AdaptiveAvgPool2d: argument 'output_size' must have 2 "
            "elements, not 3");
}

TEST(ModuleConfig, CrossMapLRN2dDescribesItsConstructorArguments) {
  auto m = ModuleRegistry::global().create("torch.nn.CrossMapLRN2d",
                                           {{"size", int64_t{5}},
                                            {"alpha", 5e-3},
                                            {"beta", 1e-3},
                                            {"k", int64_t{2}}});
  EXPECT_EQ(described(m), "{'size': 5, 'alpha': 0.005, 'beta': 0.001, 'k': 2}");
  EXPECT_EQ(described(ModuleRegistry::global().create("torch.nn.CrossMapLRN2d",
                                                      {{"size", int64_t{3}}})),
            "{'size': 3, 'alpha': 0.0001, 'beta': 0.75, 'k': 1}");
  EXPECT_EQ(described(ModuleRegistry::global().create(
                "torch.nn.CrossMapLRN2d", {{"size", int64_t{3}}, {"k", 2.0}})),
            "{'size': 3, 'alpha': 0.0001, 'beta': 0.75, 'k': 2.0}");
}

}  // namespace
}  // namespace fx
