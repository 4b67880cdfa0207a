// Isolated passes (pass_call.h) through the pass manager: the same result as
// in-process passes (graph, names, replaced and added attributes, subgraph
// modules); a pass that crashes, aborts, exits, hangs past the timeout or
// runs past the memory limit is rolled back with the graph byte-identical,
// named with what ended its worker, and gets a reproducer.
#include "host/pipeline/pass_call.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <boost/filesystem.hpp>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module.h"
#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_manager.h"

namespace fx::host {
namespace {

const std::string kTestPlugins = "tests/plugin_api/plugins/";

class PassCallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const std::string& lib :
         {kTestPlugins + "libtest_passes.so", kTestPlugins + "libc_plugin.so",
          kTestPlugins + "libcrash_plugin.so",
          std::string("plugins/libfx_passes.so")}) {
      auto plugin = load_plugin(lib);
      ASSERT_TRUE(plugin.ok()) << plugin.status();
      ASSERT_TRUE(registry_.add(*plugin).ok());
    }
    reset();
  }

  // x -> relu -> add 1 -> output
  void reset() {
    file_.graph = std::make_unique<Graph>();
    Graph& g = *file_.graph;
    Node* x = g.placeholder("x");
    Node* relu = g.call_function("torch.relu", {x});
    Node* add = g.call_function("operator.add", {relu, 1});
    g.output(add);
  }

  PassManager manager(const std::string& text, bool isolate,
                      WorkerLimits limits = {}) {
    auto spec = parse_pipeline_text(text);
    EXPECT_TRUE(spec.ok()) << spec.status();
    spec->isolate = isolate ? Isolation::kAll : Isolation::kNone;
    spec->pass_timeout_seconds = limits.timeout_seconds;
    spec->pass_memory_limit_mib = limits.memory_limit_mib;
    spec->reproducer_dir = reproducer_dir_;
    auto pm = PassManager::create(registry_, *std::move(spec));
    EXPECT_TRUE(pm.ok()) << pm.status();
    return *std::move(pm);
  }

  PipelineReport run(const std::string& text, bool isolate,
                     WorkerLimits limits = {}) {
    GraphFileTarget target(file_);
    return manager(text, isolate, limits).run(target);
  }

  std::string json() const { return to_graph_json(*file_.graph); }

  PassRegistry registry_;
  GraphFile file_;
  std::string reproducer_dir_;
};

TEST_F(PassCallTest, AnIsolatedPassGivesWhatAnInProcessPassGives) {
  const std::string text =
      "decompose_relu,c_add_to_mul{tag=from_c},fake_shape_prop";
  PipelineReport here = run(text, false);
  ASSERT_TRUE(here.ok()) << here.failure;
  std::string expected = json();
  std::string next_name(
      file_.graph->call_function("torch.relu", {1.0})->name());

  reset();
  PipelineReport isolated = run(text, true);
  ASSERT_TRUE(isolated.ok()) << isolated.failure;
  EXPECT_EQ(json(), expected);
  ASSERT_EQ(isolated.passes.size(), here.passes.size());
  for (size_t i = 0; i < here.passes.size(); ++i) {
    EXPECT_EQ(isolated.passes[i].changed, here.passes[i].changed) << i;
    EXPECT_EQ(isolated.passes[i].claimed_changed,
              here.passes[i].claimed_changed)
        << i;
  }
  EXPECT_NO_THROW(file_.graph->lint());
  // Names handed out before the pass stay taken: `relu` was erased, and a
  // new relu is named as it would be in-process.
  EXPECT_EQ(file_.graph->call_function("torch.relu", {1.0})->name(), next_name);
}

// A code generator the file format cannot hold (as a Python CodeGen kept in
// process): the graph keeps it when an isolated pass changes it.
class ListOutputCodeGen : public CodeGen {
 public:
  std::unique_ptr<CodeGen> clone() const override {
    return std::make_unique<ListOutputCodeGen>(*this);
  }
  std::string generate_output(const Argument& output_args) const override {
    return "return [" + CodeGen::generate_output(output_args).substr(7) + "]";
  }
};

TEST_F(PassCallTest, AnIsolatedPassKeepsTheGraphsCodeGenerator) {
  file_.graph->set_codegen(std::make_unique<ListOutputCodeGen>());
  PipelineReport isolated = run("decompose_relu", true);
  ASSERT_TRUE(isolated.ok()) << isolated.failure;
  ASSERT_TRUE(isolated.passes.at(0).changed);
  EXPECT_NE(dynamic_cast<ListOutputCodeGen*>(&file_.graph->codegen()), nullptr);
  EXPECT_NE(file_.graph->python_code().src.find("return [add]"),
            std::string::npos)
      << file_.graph->python_code().src;
}

TEST_F(PassCallTest, AFailureReturnedByAnIsolatedPassIsReported) {
  std::string before = json();
  PipelineReport report = run("edit_then_fail", true);
  EXPECT_EQ(json(), before);
  EXPECT_EQ(report.passes[0].error,
            "FAILED_PRECONDITION: edit_then_fail gives up");
  report = run("break_graph", true);  // caught by the host's lint
  EXPECT_EQ(json(), before);
  EXPECT_NE(report.passes[0].error.find("it left an invalid graph"),
            std::string::npos)
      << report.passes[0].error;
  // As in process (issue 39): a graph no file can hold, a changed signature.
  for (const char* pass : {"second_output", "retarget_placeholder"}) {
    report = run(pass, true);
    EXPECT_EQ(json(), before) << pass;
    EXPECT_FALSE(report.ok()) << pass;
    EXPECT_EQ(report.passes[0].outcome, PassRecord::Outcome::kRolledBack)
        << pass;
  }
}

struct Crash {
  const char* pass;
  WorkerLimits limits;
  const char* error;
};

class CrashTest : public PassCallTest,
                  public ::testing::WithParamInterface<Crash> {};

// The host survives; the graph is byte-identical; the pass and what ended
// its worker are named; a reproducer holds the graph the pass received.
TEST_P(CrashTest, TheHostSurvivesWithTheGraphBeforeThePass) {
#ifdef __SANITIZE_ADDRESS__
  if (GetParam().limits.memory_limit_mib > 0) {
    GTEST_SKIP() << "ASan's allocator reports a failed allocation and exits";
  }
#endif
  ASSERT_TRUE(run("c_add_to_mul", false).ok());  // state to preserve
  std::string before = json();
  reproducer_dir_ = ::testing::TempDir() + "/isolated-" + GetParam().pass;
  boost::filesystem::remove_all(reproducer_dir_);
  PipelineReport report = run(GetParam().pass, true, GetParam().limits);
  EXPECT_EQ(json(), before);
  EXPECT_EQ(report.passes[0].outcome, PassRecord::Outcome::kRolledBack);
  EXPECT_EQ(report.passes[0].error.rfind(GetParam().error, 0), 0u)
      << report.passes[0].error;
  EXPECT_EQ(
      report.failure.rfind(
          std::string("pass '") + GetParam().pass + "' of plugin 'crash'", 0),
      0u)
      << report.failure;
  ASSERT_FALSE(report.reproducer.empty());
  std::ifstream in(report.reproducer + "/graph.fx.json");
  std::stringstream written;
  written << in.rdbuf();
  EXPECT_EQ(written.str(), before);
  auto repro = read_pipeline_config(report.reproducer + "/pipeline.json");
  ASSERT_TRUE(repro.ok()) << repro.status();
  EXPECT_TRUE(repro->isolated());
  // The host goes on: a later pass runs here as usual.
  EXPECT_TRUE(run("decompose_relu", true).ok());
}

INSTANTIATE_TEST_SUITE_P(
    EveryWayToDie, CrashTest,
    ::testing::Values(
        Crash{"segfault", {}, "the worker process was killed by SIGSEGV"},
        Crash{"edit_then_segfault",
              {},
              "the worker process was killed by SIGSEGV"},
        Crash{"abort", {}, "the worker process was killed by SIGABRT"},
        Crash{"exit",
              {},
              "the worker process exited with status 3 before finishing"},
        Crash{"hang",
              {0.5, 0},
              "the worker process did not finish within 0.5 s and was "
              "killed"},
        Crash{"hog",
              {0, 128},
              "the worker process was killed by SIGABRT (its memory limit: "
              "128 MiB beyond the host's; peak resident"}),
    [](const ::testing::TestParamInfo<Crash>& info) {
      return std::string(info.param.pass);
    });

// A GraphModule: x * (w * 2) + b, with w and b parameters.
std::shared_ptr<GraphModule> weighted_module() {
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* w = graph->get_attr("w");
  Node* b = graph->get_attr("b");
  Node* w2 = graph->call_function("operator.mul", {w, 2});
  Node* y = graph->call_function("operator.mul", {x, w2});
  Node* relu = graph->call_function("torch.relu", {y});
  graph->output(graph->call_function("operator.add", {relu, b}));
  torch::manual_seed(0);
  GraphModule::AttributeMap attrs = {{"w", {nullptr, torch::randn({4}), true}},
                                     {"b", {nullptr, torch::randn({4}), true}}};
  return std::make_shared<GraphModule>(attrs, std::move(graph));
}

// What `text` makes of weighted_module(): its code, its output.
std::pair<std::string, torch::Tensor> transform(PassManager pm) {
  std::shared_ptr<GraphModule> gm = weighted_module();
  GraphModuleTarget target(*gm);
  PipelineReport report = pm.run(target);
  EXPECT_TRUE(report.ok()) << report.failure;
  torch::manual_seed(1);
  torch::Tensor out = gm->forward({torch::randn({4})}).toTensor();
  std::string code = gm->code();
  for (const auto& m : gm->named_modules("", false)) {
    if (auto* sub = dynamic_cast<GraphModule*>(m.value().get())) {
      code += "\n# " + m.key() + "\n" + sub->code();
    }
  }
  return {code, out};
}

// Attributes const_fold adds and the subgraph modules split_module builds
// come back from the worker.
TEST_F(PassCallTest, AttributesAndSubmodulesComeBackFromTheWorker) {
  for (const char* text : {"const_fold", "split_module{split_at=relu}",
                           "const_fold,split_module{split_at=relu}"}) {
    auto [code, out] = transform(manager(text, false));
    auto [isolated_code, isolated_out] = transform(manager(text, true));
    EXPECT_EQ(isolated_code, code) << text;
    EXPECT_TRUE(torch::equal(isolated_out, out)) << text;
  }
  auto [code, out] = transform(manager("split_module{split_at=relu}", true));
  EXPECT_NE(code.find("# submod_1"), std::string::npos) << code;
}

// What the pass wrote into a parameter in place in the worker reaches the
// host, and rolls back there when a later check fails.
TEST_F(PassCallTest, InPlaceWritesComeBackFromTheWorkerAndRollBack) {
  std::shared_ptr<GraphModule> gm = weighted_module();
  torch::Tensor w = gm->get_attr("w").clone();
  GraphModuleTarget target(*gm);
  PipelineReport report = manager("double_in_place{names=w}", true).run(target);
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_TRUE(report.passes[0].changed);
  EXPECT_TRUE(torch::equal(gm->get_attr("w"), w * 2));
  report = manager("double_in_place{names=w,fail=true}", true).run(target);
  EXPECT_EQ(report.passes[0].error, "INTERNAL: double_in_place gives up");
  EXPECT_TRUE(torch::equal(gm->get_attr("w"), w * 2));
}

}  // namespace
}  // namespace fx::host
