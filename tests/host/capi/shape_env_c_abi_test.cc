// Symbolic shapes through the C ABI (version 8). A torch 1.13
// make_fx(tracing_mode="symbolic") graph, exported at test time by
// tests/tools/export_symbolic.py with torch's own ShapeEnv text beside it,
// is read by a plugin (tests/plugin_api/plugins/shape_env_plugin.cc): its
// format_guards() is torch's byte for byte, every symbol has torch's hint
// (var_to_val) and the placeholder and dimension torch named it after, and
// a check of input shapes names the guard, the placeholder and the
// dimension. The entries themselves are driven directly too: symints
// against strings, NULL and out-of-range handles, older tables. Needs
// python3-torch.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fx/plugin_api.hpp"
#include "fx_core/format/graph_json.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "host/capi/c_api.h"
#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_target.h"
#include "host/pipeline/pipeline.h"
#include "tests/testing/python.h"
#include "tests/testing/reference.h"

namespace fx::host {
namespace {

class ShapeEnvCAbi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::have_python_torch()) return;
    dir_ = new std::string(std::string(std::getenv("TEST_TMPDIR")) + "/sym");
    std::string command = "/usr/bin/python3 " +
                          testing::runfile("tests/tools/export_symbolic.py") +
                          " " + *dir_ + " > " + *dir_ + ".log 2>&1";
    exported_ = std::system(command.c_str()) == 0;
  }
  void SetUp() override {
    if (!testing::have_python_torch()) {
      GTEST_SKIP() << "python3-torch is not installed";
    }
    ASSERT_TRUE(exported_) << testing::read_file(*dir_ + ".log");
    fxp::api() = api();
    auto file = read_graph_file(path("graph.fx.json"));
    ASSERT_TRUE(file.ok()) << file.status();
    auto gm = load_graph_module(*std::move(file));
    ASSERT_TRUE(gm.ok()) << gm.status();
    gm_ = *std::move(gm);
  }
  static std::string path(const std::string& name) {
    return *dir_ + "/" + name;
  }
  static std::vector<at::Tensor> inputs(const std::string& name) {
    auto value = read_value_file(path(name));
    EXPECT_TRUE(value.ok()) << value.status();
    std::vector<at::Tensor> out;
    if (value.ok()) {
      for (const c10::IValue& v : value->toListRef()) {
        out.push_back(v.toTensor());
      }
    }
    return out;
  }
  // Runs the plugin's pass with `example` as the example inputs; returns
  // the output node's meta[key] as text.
  std::string run_plugin(const std::string& example, const char* key);
  fxp::ShapeEnv env() {
    return fxp::Graph(to_handle(&gm_->graph())).shape_env();
  }

  static std::string* dir_;
  static bool exported_;
  std::shared_ptr<GraphModule> gm_;
};
std::string* ShapeEnvCAbi::dir_ = nullptr;
bool ShapeEnvCAbi::exported_ = false;

std::string ShapeEnvCAbi::run_plugin(const std::string& example,
                                     const char* key) {
  auto plugin = load_plugin("tests/plugin_api/plugins/libshape_env_plugin.so");
  EXPECT_TRUE(plugin.ok()) << plugin.status();
  if (!plugin.ok()) return "";
  PassRegistry registry;
  EXPECT_TRUE(registry.add(*plugin).ok());
  auto pm =
      PassManager::create(registry, *parse_pipeline_text("read_shape_env"));
  EXPECT_TRUE(pm.ok()) << pm.status();
  GraphModuleTarget target(*gm_, inputs(example));
  PipelineReport report = pm->run(target);
  EXPECT_TRUE(report.ok()) << report.failure;
  const Argument* value = gm_->graph().output_node()->meta_value(key);
  if (value == nullptr) return "<no meta " + std::string(key) + ">";
  return value->is_int() ? std::to_string(value->as_int()) : value->as_string();
}

// torch's symbols as the plugin lists them, "t0.size(1) 6 x_1 1": the hint
// from var_to_val, the source from torch's name for it (tN.size(D): the
// N-th placeholder, dimension D).
std::string torch_symbol_lines(const std::string& hints_txt) {
  const char* const placeholders[] = {"x_1", "y_1"};
  std::istringstream in(hints_txt);
  std::string name, out;
  int64_t hint = 0;
  while (in >> name >> hint) {
    int input = -1, dim = -1;
    EXPECT_EQ(std::sscanf(name.c_str(), "t%d.size(%d)", &input, &dim), 2)
        << name;
    EXPECT_TRUE(input == 0 || input == 1) << name;
    out += name + " " + std::to_string(hint) + " " +
           placeholders[input == 1 ? 1 : 0] + " " + std::to_string(dim) + "\n";
  }
  return out;
}

TEST_F(ShapeEnvCAbi, FormatGuardsIsTorchs) {
  std::string want = testing::read_file(path("format_guards.txt"));
  ASSERT_NE(want, "");
  EXPECT_EQ(run_plugin("input_0.pt", "format_guards"), want);
  EXPECT_EQ(env().format_guards(), want);
}

TEST_F(ShapeEnvCAbi, SymbolsHaveTorchsHintsAndSources) {
  std::string want = torch_symbol_lines(testing::read_file(path("hints.txt")));
  ASSERT_NE(want, "");
  EXPECT_EQ(run_plugin("input_0.pt", "symbols"), want);
}

// The relations are what the file's shape_env "guards" hold (the exporter's
// integer form of torch's guards), and what the host checks.
TEST_F(ShapeEnvCAbi, RelationsAreTheFilesGuards) {
  auto file = read_graph_file(path("graph.fx.json"));
  ASSERT_TRUE(file.ok() && file->shape_env) << file.status();
  std::string want;
  for (const sym::Relation& r : file->shape_env->guards()) {
    want += r.str() + "\n";
  }
  ASSERT_NE(want, "");
  EXPECT_EQ(run_plugin("input_0.pt", "relations"), want);
}

TEST_F(ShapeEnvCAbi, CheckAcceptsEveryShapeTheGuardsAllow) {
  for (const char* example : {"input_0.pt", "input_1.pt", "input_2.pt"}) {
    EXPECT_EQ(run_plugin(example, "check"), "ok") << example;
  }
}

TEST_F(ShapeEnvCAbi, CheckNamesTheGuardThePlaceholderAndTheDimension) {
  EXPECT_EQ(run_plugin("input_bad.pt", "check"),
            "ShapeEnvCheck: the guard Eq(t0.size(0)*(Mod(t0.size(1), 2)), 0) "
            "does not hold: t0.size(0) = 5 (placeholder 'x_1' dimension 0), "
            "t0.size(1) = 7 (placeholder 'x_1' dimension 1)");
}

TEST_F(ShapeEnvCAbi, SymIntsAreStringsToArgKindAndSymIntsToArgIsSymInt) {
  EXPECT_EQ(run_plugin("input_0.pt", "symint_sizes"), "3");
  const Argument* doubled = gm_->graph().output_node()->meta_value("doubled");
  ASSERT_NE(doubled, nullptr);
  EXPECT_TRUE(doubled->is_symint());
  EXPECT_EQ(doubled->as_string(), "2*t0.size(0)");
  FxArg* arg = nullptr;
  ASSERT_EQ(api()->CreateSymInt("t0.size(1) * 2 + 0", &arg), nullptr);
  EXPECT_EQ(api()->ArgKind(arg), FX_ARG_STRING);
  EXPECT_EQ(api()->ArgIsSymInt(arg), 1);
  const char* text = nullptr;
  ASSERT_EQ(api()->ArgGetString(arg, &text), nullptr);
  EXPECT_STREQ(text, "2*t0.size(1)");
  api()->ReleaseArg(arg);
  ASSERT_EQ(api()->CreateString("t0.size(0)", &arg), nullptr);
  EXPECT_EQ(api()->ArgIsSymInt(arg), 0);
  api()->ReleaseArg(arg);
  EXPECT_EQ(api()->ArgIsSymInt(nullptr), 0);
  FxStatus* bad = api()->CreateSymInt("2*", &arg);
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(api()->GetStatusCode(bad), FX_INVALID_ARGUMENT);
  EXPECT_NE(std::string(api()->GetStatusMessage(bad)).find("\"2*\""),
            std::string::npos);
  api()->ReleaseStatus(bad);
}

TEST_F(ShapeEnvCAbi, CheckRefusesAWrongRankOrCount) {
  fxp::ShapeEnv e = env();
  ASSERT_TRUE(e);
  std::vector<at::Tensor> good = inputs("input_0.pt");
  at::Tensor cube = at::zeros({4, 6, 1});
  auto dl = [](const at::Tensor& t) {
    DLTensor d{};
    d.ndim = static_cast<int32_t>(t.dim());
    d.shape = const_cast<int64_t*>(t.sizes().data());
    return d;
  };
  DLTensor x = dl(cube), y = dl(good[1]);
  try {
    e.check({&x, &y});
    ADD_FAILURE() << "a 3-d x_1 passed";
  } catch (const fxp::Error& err) {
    EXPECT_EQ(err.code(), FX_INVALID_ARGUMENT);
    EXPECT_NE(std::string(err.what())
                  .find("placeholder 'x_1' has 3 dimensions, but the graph was "
                        "captured for 2"),
              std::string::npos)
        << err.what();
  }
  EXPECT_THROW(e.check({&y}), fxp::Error);  // one input for two placeholders
  x = dl(good[0]);
  EXPECT_NO_THROW(e.check({&x, &y}));                // NULL strides: row-major
  EXPECT_THROW(e.check({nullptr, &y}), fxp::Error);  // x_1 is a tensor
}

TEST_F(ShapeEnvCAbi, OutOfRangeAndNullHandlesAreRefusedWithoutACrash) {
  fxp::ShapeEnv e = env();
  ASSERT_TRUE(e);
  size_t n = api()->ShapeEnvNumSymbols(e.get());
  EXPECT_EQ(api()->ShapeEnvSymbolName(e.get(), n), nullptr);
  EXPECT_EQ(api()->ShapeEnvGuard(e.get(), 100), nullptr);
  EXPECT_EQ(api()->ShapeEnvGuardRelation(e.get(), 100), nullptr);
  EXPECT_EQ(api()->ShapeEnvNumSymbols(nullptr), 0u);
  EXPECT_EQ(api()->ShapeEnvNumGuards(nullptr), 0u);
  int64_t hint = 0;
  FxStatus* s = api()->ShapeEnvSymbolHint(e.get(), n, &hint);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(api()->GetStatusCode(s), FX_INVALID_ARGUMENT);
  api()->ReleaseStatus(s);
  s = api()->ShapeEnvCheck(nullptr, nullptr, 0);
  ASSERT_NE(s, nullptr);
  api()->ReleaseStatus(s);
  api()->ReleaseShapeEnv(nullptr);
}

// Issue 39: an environment is a checked handle. Released (once or twice),
// its getters answer as for NULL and its checks are refused by name.
TEST_F(ShapeEnvCAbi, AReleasedEnvironmentIsRefusedNotFollowed) {
  FxShapeEnv* env = nullptr;
  ASSERT_EQ(api()->GraphShapeEnv(to_handle(&gm_->graph()), &env), nullptr);
  ASSERT_NE(env, nullptr);
  ASSERT_GT(api()->ShapeEnvNumSymbols(env), 0u);
  api()->ReleaseShapeEnv(env);
  api()->ReleaseShapeEnv(env);  // a second release does nothing
  EXPECT_EQ(api()->ShapeEnvNumSymbols(env), 0u);
  EXPECT_EQ(api()->ShapeEnvSymbolName(env, 0), nullptr);
  EXPECT_EQ(api()->ShapeEnvNumGuards(env), 0u);
  EXPECT_EQ(api()->ShapeEnvGuard(env, 0), nullptr);
  int64_t hint = 0;
  FxStatus* s = api()->ShapeEnvSymbolHint(env, 0, &hint);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(api()->GetStatusCode(s), FX_FAILED_PRECONDITION);
  EXPECT_NE(std::string(api()->GetStatusMessage(s))
                .find("the shape environment handle is stale"),
            std::string::npos)
      << api()->GetStatusMessage(s);
  api()->ReleaseStatus(s);
  s = api()->ShapeEnvCheck(env, nullptr, 0);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(api()->GetStatusCode(s), FX_FAILED_PRECONDITION);
  api()->ReleaseStatus(s);
}

// A graph whose tensor_meta is concrete (or absent) has no environment; a
// version-7 plugin's table has no version-8 entries, and the wrapper says so.
TEST_F(ShapeEnvCAbi, OnlySymbolicGraphsHaveOneAndOnlyVersion8Tables) {
  Graph plain;
  plain.output(plain.call_function("torch.relu", {plain.placeholder("x")}));
  FxShapeEnv* out = reinterpret_cast<FxShapeEnv*>(1);
  ASSERT_EQ(api()->GraphShapeEnv(to_handle(&plain), &out), nullptr);
  EXPECT_EQ(out, nullptr);
  EXPECT_FALSE(fxp::Graph(to_handle(&plain)).shape_env());
  EXPECT_EQ(api(7)->GraphShapeEnv, nullptr);
  EXPECT_EQ(api(7)->ArgIsSymInt, nullptr);
  EXPECT_NE(api(8)->ShapeEnvCheck, nullptr);
  fxp::api() = api(7);
  EXPECT_THROW(env(), fxp::Error);
  fxp::api() = api();
}

// A graph without an owning GraphModule has its placeholders' sizes, but no
// hints or guards (those are the module's).
TEST_F(ShapeEnvCAbi, AGraphWithoutItsModuleHasSizesOnly) {
  auto file = read_graph_file(path("graph.fx.json"));
  ASSERT_TRUE(file.ok()) << file.status();
  fxp::ShapeEnv e = fxp::Graph(to_handle(file->graph.get())).shape_env();
  ASSERT_TRUE(e);
  EXPECT_EQ(e.guards().size(), 0u);
  std::vector<fxp::ShapeEnv::Symbol> symbols = e.symbols();
  ASSERT_EQ(symbols.size(), 3u);
  EXPECT_EQ(symbols[0].name, "t0.size(0)");
  EXPECT_FALSE(symbols[0].hint);
  ASSERT_TRUE(symbols[2].source);
  EXPECT_EQ(symbols[2].source->placeholder, "y_1");
  EXPECT_EQ(symbols[2].source->dim, 0u);
}

}  // namespace
}  // namespace fx::host
