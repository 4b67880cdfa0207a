// The pass manager running plugins loaded at runtime: options, ordering,
// verification, rollback of every kind of failure (the graph's JSON is
// byte-identical afterwards), skip/stop, reproducers and instrumentation
// (the hooks, their order, the standard instrumentations).
#include "host/pipeline/pass_manager.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <boost/filesystem.hpp>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/support/strings.h"
#include "host/capi/extensions.h"
#include "host/loader/plugin_loader.h"
#include "host/pipeline/standard_instrumentations.h"
#include "tests/testing/status_matchers.h"

namespace fx::host {
namespace {

using ::fx::testing::error_of;

const std::string kDir = "tests/plugin_api/plugins/";

class PassManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* lib :
         {"libtest_passes.so", "libc_plugin.so", "libold_abi_plugin.so"}) {
      auto plugin = load_plugin(kDir + lib);
      ASSERT_TRUE(plugin.ok()) << plugin.status();
      ASSERT_TRUE(registry_.add(*plugin).ok());
    }
    // x -> relu -> add 1 -> output
    file_.graph = std::make_unique<Graph>();
    Graph& g = *file_.graph;
    Node* x = g.placeholder("x");
    Node* relu = g.call_function("torch.relu", {x});
    Node* add = g.call_function("operator.add", {relu, 1});
    g.output(add);
  }

  absl::StatusOr<PassManager> manager(
      const std::string& text, FailurePolicy policy = FailurePolicy::kStop) {
    auto spec = parse_pipeline_text(text);
    if (!spec.ok()) return spec.status();
    spec->on_failure = policy;
    return PassManager::create(registry_, *std::move(spec));
  }

  PipelineReport run(const std::string& text,
                     FailurePolicy policy = FailurePolicy::kStop) {
    auto pm = manager(text, policy);
    EXPECT_TRUE(pm.ok()) << pm.status();
    if (!pm.ok()) return {};
    GraphFileTarget target(file_);
    return pm->run(target);
  }

  std::string json() const { return to_graph_json(*file_.graph); }
  std::vector<std::string> targets() const {
    std::vector<std::string> out;
    for (const Node* n : file_.graph->nodes()) {
      if (n->op() == Opcode::kCallFunction) out.push_back(n->target());
    }
    return out;
  }

  PassRegistry registry_;
  GraphFile file_;
};

TEST_F(PassManagerTest, RunsThePluginsPassesInOrder) {
  PipelineReport report = run("decompose_relu,c_add_to_mul{tag=from_c}");
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ(targets(), (std::vector<std::string>{"operator.gt", "operator.mul",
                                                 "operator.mul"}));
  EXPECT_EQ(file_.graph->output_node()->meta_value("tag")->as_string(),
            "from_c");
  ASSERT_EQ(report.passes.size(), 2u);
  EXPECT_EQ(report.passes[0].outcome, PassRecord::Outcome::kRan);
  EXPECT_TRUE(report.passes[0].changed);
  EXPECT_EQ(report.passes[1].plugin, "c_plugin");
  EXPECT_NO_THROW(file_.graph->lint());
}

TEST_F(PassManagerTest, APluginWithAnotherCxxAbiRunsWithItsOptions) {
  PipelineReport report =
      run("retarget{from=torch.relu,operator.add,to=operator.sub}");
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ(targets(),
            (std::vector<std::string>{"operator.sub", "operator.sub"}));
}

TEST_F(PassManagerTest, ChangedIsMeasuredNotTakenFromThePass) {
  PipelineReport report = run("second,decompose_relu,decompose_relu");
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report.passes[0].changed);
  EXPECT_TRUE(report.passes[1].changed);
  EXPECT_FALSE(report.passes[2].changed);  // nothing left to decompose
  // fake_shape_prop says it changed the graph; it did (meta).
  EXPECT_TRUE(run("fake_shape_prop").passes[0].changed);
}

TEST_F(PassManagerTest, OptionsReachThePassTyped) {
  ASSERT_TRUE(run("echo_options").ok());
  EXPECT_EQ(file_.graph->output_node()->meta_value("options")->as_string(),
            "false 3 0.500000 int8 [relu;gelu;]");
  ASSERT_TRUE(
      run("echo_options{flag=true,count=-7,scale=2e3,dtype=fp16,rules=silu}")
          .ok());
  EXPECT_EQ(file_.graph->output_node()->meta_value("options")->as_string(),
            "true -7 2000.000000 fp16 [silu;]");
}

TEST_F(PassManagerTest, ConfigErrorsNameThePassAndOption) {
  EXPECT_EQ(error_of(manager("dce")),
            "unknown pass 'dce' (known passes: decompose_relu, "
            "fake_shape_prop, read_meta, echo_options, edit_then_fail, "
            "break_graph, second_output, retarget_placeholder, "
            "declared_retarget_placeholder, zero_weights_then_fail, "
            "double_in_place, keep_views, "
            "write_kept_views_then_fail, keep_handles, use_kept_handles, "
            "use_kept_lent_handles, first, "
            "second, third, "
            "cycle_a, cycle_b, throw_through_c, rebuild_module_then_fail, "
            "edit_child_graph, keep_used_attrs, record_shapes, c_add_to_mul, "
            "retarget); 'dce' is no named pipeline either (named pipelines: "
            "O1, O2, inference)");
  EXPECT_EQ(error_of(manager("echo_options{bits=8}")),
            "pass 'echo_options' has no option 'bits' (its options: flag, "
            "count, scale, dtype, rules)");
  EXPECT_EQ(error_of(manager("echo_options{count=many}")),
            "option 'count' of pass 'echo_options' is a int: expected an int, "
            "got 'many'");
}

TEST_F(PassManagerTest, NamedPipelinesNameWhatTheyMiss) {
  // None of the first-party plugins is loaded here.
  std::string missing = error_of(manager("inference"));
  EXPECT_EQ(missing.substr(0, missing.find(':')),
            "the named pipeline 'inference' needs pass 'shape_prop' of "
            "plugin fx_shape_prop (libfx_shape_prop.so), which is not loaded");
  EXPECT_NE(missing.find("unknown pass 'shape_prop' (known passes: "),
            std::string::npos);
  EXPECT_EQ(error_of(manager("first,O1")).substr(0, 78),
            "the named pipeline 'O1' needs pass 'dce' of plugin fx_passes "
            "(libfx_passes.so)");
  // A word that is neither a pass nor a name, e.g. a level that does not
  // exist, names the named pipelines.
  std::string unknown = error_of(manager("O3"));
  EXPECT_EQ(unknown.substr(0, 25), "unknown pass 'O3' (known ");
  EXPECT_EQ(unknown.substr(unknown.find(';')),
            "; 'O3' is no named pipeline either (named pipelines: O1, O2, "
            "inference)");
}

TEST_F(PassManagerTest, OrderingConstraintsOfPluginsAreChecked) {
  EXPECT_EQ(error_of(manager("third,second")),
            "pass 'third' (position 1) must run after 'second' (position 2): "
            "'third' declares run_after 'second'");
  EXPECT_EQ(error_of(manager("second,first")),
            "pass 'first' (position 2) must run before 'second' (position 1): "
            "'first' declares run_before 'second'");
  EXPECT_EQ(error_of(manager("cycle_a,cycle_b")),
            "the ordering constraints form a cycle: 'cycle_a' -> 'cycle_b' -> "
            "'cycle_a' ('cycle_b' declares run_after 'cycle_a'; 'cycle_a' "
            "declares run_after 'cycle_b')");
  EXPECT_EQ(error_of(manager("read_meta")),
            "pass 'read_meta' (position 1) requires 'tensor_meta', which no "
            "earlier pass produces (passes that produce it: "
            "'fake_shape_prop')");
  EXPECT_EQ(error_of(manager("fake_shape_prop,decompose_relu,read_meta")),
            "pass 'read_meta' (position 3) requires 'tensor_meta', which "
            "'decompose_relu' (position 2) invalidates and no pass after it "
            "produces again");
}

TEST_F(PassManagerTest, AutomaticOrderingSatisfiesTheConstraints) {
  auto spec = parse_pipeline_text(
      "read_meta,third,decompose_relu,"
      "fake_shape_prop,second,first");
  ASSERT_TRUE(spec.ok());
  spec->ordering = Ordering::kAuto;
  auto pm = PassManager::create(registry_, *spec);
  ASSERT_TRUE(pm.ok()) << pm.status();
  EXPECT_EQ(pm->text(),
            "fake_shape_prop,read_meta,decompose_relu,first,second,third");
  GraphFileTarget target(file_);
  PipelineReport report = pm->run(target);
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ(
      file_.graph->output_node()->meta_value("tensor_meta_count")->as_int(), 3);
}

// Each failure leaves the graph byte-identical and names the pass and cause.
struct Failure {
  const char* pipeline;
  const char* message;
};

class RollbackTest : public PassManagerTest,
                     public ::testing::WithParamInterface<Failure> {};

TEST_P(RollbackTest, TheGraphIsExactlyWhatItWasBeforeThePass) {
  ASSERT_TRUE(run("c_add_to_mul").ok());  // state to preserve
  std::string before = json();
  PipelineReport report = run(GetParam().pipeline);
  EXPECT_EQ(json(), before);
  EXPECT_EQ(report.failure, GetParam().message);
  EXPECT_TRUE(report.stopped);
  EXPECT_EQ(report.passes[0].outcome, PassRecord::Outcome::kRolledBack);
  EXPECT_NO_THROW(file_.graph->lint());
  // The restored graph keeps its namespace: new nodes get fresh names.
  Node* n = file_.graph->call_function("torch.relu", {1.0});
  EXPECT_EQ(n->name(), "relu_1");
}

INSTANTIATE_TEST_SUITE_P(
    EveryWayToFail, RollbackTest,
    ::testing::Values(
        Failure{"edit_then_fail",
                "pass 'edit_then_fail' of plugin 'test_passes' "
                "(tests/plugin_api/plugins/libtest_passes.so) failed and was "
                "rolled back: FAILED_PRECONDITION: edit_then_fail gives up"},
        Failure{"throw_through_c",
                "pass 'throw_through_c' of plugin 'test_passes' "
                "(tests/plugin_api/plugins/libtest_passes.so) failed and was "
                "rolled back: an exception escaped the plugin: thrown through "
                "the C boundary"},
        Failure{"break_graph",
                "pass 'break_graph' of plugin 'test_passes' "
                "(tests/plugin_api/plugins/libtest_passes.so) failed and was "
                "rolled back: it left an invalid graph: Argument 'add' of "
                "Node 'output' was used before it has been defined! Please "
                "check that Nodes in the graph are topologically ordered\n"
                "graph():\n"
                "    return add\n"
                "    %x : [num_users=1] = placeholder[target=x]\n"
                "    %relu : [num_users=1] = call_function[target=torch.relu]"
                "(args = (%x,), kwargs = {})\n"
                "    %add : [num_users=1] = call_function[target=operator.mul]"
                "(args = (%relu, 1), kwargs = {})"},
        // torch.fx's lint accepts both; no file could hold the first, and
        // the second changes what callers pass (issue 39).
        Failure{"second_output",
                "pass 'second_output' of plugin 'test_passes' "
                "(tests/plugin_api/plugins/libtest_passes.so) failed and was "
                "rolled back: it left an invalid graph: 2 output nodes "
                "(exactly one, the last node, is required)"},
        Failure{"retarget_placeholder",
                "pass 'retarget_placeholder' of plugin 'test_passes' "
                "(tests/plugin_api/plugins/libtest_passes.so) failed and was "
                "rolled back: it changed the graph's placeholders (its "
                "signature) from (x) to (torch.relu)"},
        Failure{"fake_shape_prop{fail_on=relu}",
                "pass 'fake_shape_prop' of plugin 'test_passes' "
                "(tests/plugin_api/plugins/libtest_passes.so) failed and was "
                "rolled back: it declares it produces 'tensor_meta', but node "
                "'relu' is a torch.Tensor but has no meta['tensor_meta']"}));

TEST_F(PassManagerTest, SkipContinuesAndStopDoesNot) {
  PipelineReport stopped = run("edit_then_fail,decompose_relu");
  EXPECT_TRUE(stopped.stopped);
  EXPECT_EQ(stopped.passes[1].outcome, PassRecord::Outcome::kNotRun);
  EXPECT_EQ(stopped.passes[1].error,
            "not run: the pipeline stopped after the failure above");
  EXPECT_EQ(targets(),
            (std::vector<std::string>{"torch.relu", "operator.add"}));

  PipelineReport skipped =
      run("edit_then_fail,decompose_relu", FailurePolicy::kSkip);
  EXPECT_FALSE(skipped.ok());
  EXPECT_FALSE(skipped.stopped);
  EXPECT_EQ(skipped.passes[1].outcome, PassRecord::Outcome::kRan);
  EXPECT_EQ(targets(), (std::vector<std::string>{"operator.gt", "operator.mul",
                                                 "operator.add"}));
}

TEST_F(PassManagerTest, APassWhoseRequirementFailedIsNotRun) {
  PipelineReport report =
      run("fake_shape_prop{fail_on=x},read_meta", FailurePolicy::kSkip);
  EXPECT_EQ(report.passes[0].outcome, PassRecord::Outcome::kRolledBack);
  EXPECT_EQ(report.passes[1].outcome, PassRecord::Outcome::kNotRun);
  EXPECT_EQ(report.passes[1].error,
            "not run: it requires 'tensor_meta', which does not hold because "
            "the pass that produces it failed");
  EXPECT_EQ(file_.graph->output_node()->meta_value("tensor_meta_count"),
            nullptr);
}

TEST_F(PassManagerTest, VerificationCanBeTurnedOff) {
  auto spec = parse_pipeline_text("fake_shape_prop{fail_on=relu}");
  ASSERT_TRUE(spec.ok());
  spec->verify_each = false;
  auto pm = PassManager::create(registry_, *spec);
  ASSERT_TRUE(pm.ok());
  GraphFileTarget target(file_);
  EXPECT_TRUE(pm->run(target).ok());
}

TEST_F(PassManagerTest, PrintAfterAndProgress) {
  auto spec = parse_pipeline_text("second,decompose_relu");
  ASSERT_TRUE(spec.ok());
  spec->print_after = {"decompose_relu"};
  auto pm = PassManager::create(registry_, *spec);
  ASSERT_TRUE(pm.ok());
  std::ostringstream printed;
  std::vector<std::string> progress;
  RunHooks hooks;
  hooks.print_after = &printed;
  hooks.progress = [&](size_t i, size_t n, std::string_view pass) {
    progress.push_back(std::to_string(i) + "/" + std::to_string(n) + " " +
                       std::string(pass));
  };
  GraphFileTarget target(file_);
  ASSERT_TRUE(pm->run(target, hooks).ok());
  EXPECT_EQ(progress,
            (std::vector<std::string>{"1/2 second", "2/2 decompose_relu"}));
  EXPECT_EQ(printed.str(),
            "// -----// graph after decompose_relu //----- //\n" +
                file_.graph->str());
  auto bad = parse_pipeline_text("second");
  bad->print_after = {"third"};
  EXPECT_EQ(error_of(PassManager::create(registry_, *bad)),
            "print_after names pass 'third', which is not in the pipeline");
}

TEST_F(PassManagerTest, SummaryListsEveryPass) {
  PipelineReport report = run("decompose_relu,edit_then_fail,second");
  std::string summary = report.summary();
  EXPECT_NE(summary.find("decompose_relu  ran"), std::string::npos) << summary;
  EXPECT_NE(summary.find("edit_then_fail  rolled back"), std::string::npos);
  EXPECT_NE(summary.find("    FAILED_PRECONDITION: edit_then_fail gives up"),
            std::string::npos);
  EXPECT_NE(summary.find("second          not run"), std::string::npos);
}

// Records every hook it sees as "tag:hook[:pass]"; in run_before_pass it
// keeps the graph's JSON, so run_after_pass_failed can check the rollback.
class Recorder : public PassInstrumentation {
 public:
  Recorder(std::string tag, std::vector<std::string>* log)
      : tag_(std::move(tag)), log_(log) {}
  void run_before_pipeline(const PipelineEvent& e) override {
    add("before_pipeline", "");
    EXPECT_EQ(e.report.passes.size(), e.schedule.size());
  }
  void run_before_pass(const PassEvent& e) override {
    add("before_pass", e.name());
    input_ = to_graph_json(e.target.graph());
  }
  void run_after_pass_call(const PassEvent& e) override {
    add("after_pass_call", e.name());
  }
  void run_before_verification(const PassEvent& e) override {
    add("before_verification", e.name());
  }
  void run_after_verification(const PassEvent& e) override {
    add("after_verification", e.name());
  }
  void run_after_pass(const PassEvent& e) override {
    add("after_pass", e.name());
    EXPECT_EQ(e.record().outcome, PassRecord::Outcome::kRan);
  }
  void run_after_pass_failed(const PassEvent& e) override {
    add("after_pass_failed", e.name());
    EXPECT_EQ(e.record().outcome, PassRecord::Outcome::kRolledBack);
    EXPECT_EQ(to_graph_json(e.target.graph()), input_);
    EXPECT_NE(e.report.failure.find("failed and was rolled back"),
              std::string::npos);
  }
  void run_after_pipeline(const PipelineEvent& e) override {
    add("after_pipeline", "");
  }

 private:
  void add(std::string_view hook, std::string_view pass) {
    log_->push_back(cat(tag_, ":", hook, pass.empty() ? "" : ":", pass));
  }
  std::string tag_;
  std::vector<std::string>* log_;
  std::string input_;
};

TEST_F(PassManagerTest, InstrumentationsSeeEveryHookInOrder) {
  auto pm = manager("decompose_relu,edit_then_fail,second");
  ASSERT_TRUE(pm.ok()) << pm.status();
  std::vector<std::string> log;
  pm->add_instrumentation(std::make_unique<Recorder>("a", &log));
  GraphFileTarget target(file_);
  PipelineReport report = pm->run(target);
  EXPECT_TRUE(report.stopped);
  // The pass that is not run (the pipeline stopped) gets no hooks.
  EXPECT_EQ(log, (std::vector<std::string>{
                     "a:before_pipeline",
                     "a:before_pass:decompose_relu",
                     "a:after_pass_call:decompose_relu",
                     "a:before_verification:decompose_relu",
                     "a:after_verification:decompose_relu",
                     "a:after_pass:decompose_relu",
                     "a:before_pass:edit_then_fail",
                     "a:after_pass_call:edit_then_fail",
                     "a:after_pass_failed:edit_then_fail",
                     "a:after_pipeline",
                 }));
}

TEST_F(PassManagerTest, AfterHooksRunInReverseOrderOfRegistration) {
  auto pm = manager("second");
  ASSERT_TRUE(pm.ok()) << pm.status();
  std::vector<std::string> log;
  pm->add_instrumentation(std::make_unique<Recorder>("a", &log));
  pm->add_instrumentation(std::make_unique<Recorder>("b", &log));
  GraphFileTarget target(file_);
  ASSERT_TRUE(pm->run(target).ok());
  EXPECT_EQ(
      log, (std::vector<std::string>{
               "a:before_pipeline", "b:before_pipeline", "a:before_pass:second",
               "b:before_pass:second", "b:after_pass_call:second",
               "a:after_pass_call:second", "a:before_verification:second",
               "b:before_verification:second", "b:after_verification:second",
               "a:after_verification:second", "b:after_pass:second",
               "a:after_pass:second", "b:after_pipeline", "a:after_pipeline"}));
  // Registered instrumentations serve every later run.
  log.clear();
  ASSERT_TRUE(pm->run(target).ok());
  EXPECT_EQ(log.size(), 14u);
}

// The standard instrumentations can be registered by hand too: print-after
// into a stream of the host's, without the spec asking for it.
TEST_F(PassManagerTest, StandardInstrumentationsCanBeRegistered) {
  auto pm = manager("second,decompose_relu");
  ASSERT_TRUE(pm.ok()) << pm.status();
  std::ostringstream printed;
  pm->add_instrumentation(std::make_unique<IrPrintingInstrumentation>(
      printed, false, std::vector<std::string>{"decompose_relu"}));
  GraphFileTarget target(file_);
  PipelineReport report = pm->run(target);
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ(printed.str(),
            "// -----// graph after decompose_relu //----- //\n" +
                file_.graph->str());
  // Timing is always on.
  EXPECT_GT(report.passes[1].run_seconds, 0);
  EXPECT_GT(report.passes[1].verify_seconds, 0);
}

// A pipeline's plugins and the host's sources load together, each file once.
TEST(LoadPlugins, ThePipelinesPluginsThenTheSources) {
  auto spec = parse_pipeline_config(
      R"({"pipeline": "c_add_to_mul", "plugins": ["libc_plugin.so"]})",
      "c.json", "tests/plugin_api/plugins");
  ASSERT_TRUE(spec.ok()) << spec.status();
  PluginSources sources;
  sources.plugins = {kDir + "libtest_passes.so", kDir + "libc_plugin.so"};
  sources.default_dirs = false;
  PassRegistry registry;
  ASSERT_TRUE(load_plugins(*spec, sources, registry).ok());
  ASSERT_EQ(registry.plugins().size(), 2u);
  EXPECT_EQ(registry.plugins()[0]->name(), "c_plugin");
  EXPECT_EQ(registry.plugins()[1]->name(), "test_passes");
  // A registry's refusal stops loading and is returned.
  std::string copy = ::testing::TempDir() + "/libtest_passes_copy.so";
  boost::filesystem::copy_file(
      kDir + "libtest_passes.so", copy,
      boost::filesystem::copy_option::overwrite_if_exists);
  PluginSources twice;
  twice.plugins = {kDir + "libtest_passes.so", copy, kDir + "libc_plugin.so"};
  twice.default_dirs = false;
  PassRegistry refused;
  EXPECT_EQ(error_of(load_plugins(twice, refused)),
            "pass 'decompose_relu' is provided by both plugin 'test_passes' "
            "(tests/plugin_api/plugins/libtest_passes.so) and plugin "
            "'test_passes' (" +
                copy + "); load only one of them");
  EXPECT_EQ(refused.plugins().size(), 1u);
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_F(PassManagerTest, AFailureWritesAReproducerThatReproducesIt) {
  std::string dir = ::testing::TempDir() + "/repro";
  boost::filesystem::remove_all(dir);
  auto spec = parse_pipeline_text(
      "decompose_relu,edit_then_fail,echo_options{count=9}");
  ASSERT_TRUE(spec.ok());
  spec->reproducer_dir = dir;
  auto pm = PassManager::create(registry_, *spec);
  ASSERT_TRUE(pm.ok());
  GraphFileTarget target(file_);
  PipelineReport report = pm->run(target);
  ASSERT_FALSE(report.reproducer.empty());
  EXPECT_EQ(report.reproducer.rfind(dir + "/edit_then_fail-", 0), 0u);
  // The graph the failing pass received.
  EXPECT_EQ(read(report.reproducer + "/graph.fx.json"), json());
  // The rest of the pipeline, options bound, plugins pinned.
  auto repro = read_pipeline_config(report.reproducer + "/pipeline.json");
  ASSERT_TRUE(repro.ok()) << repro.status();
  EXPECT_EQ(pipeline_text(repro->passes),
            "edit_then_fail,echo_options{flag=false,count=9,scale=0.5,"
            "dtype=int8,rules=relu,gelu}");
  ASSERT_EQ(repro->plugins.size(), 3u);
  EXPECT_EQ(repro->plugins[0].sha256, registry_.plugins()[0]->sha256());
  EXPECT_NE(read(report.reproducer + "/README.txt").find(report.failure),
            std::string::npos);
  // Running it fails the same way.
  auto graph = read_graph_file(report.reproducer + "/graph.fx.json");
  ASSERT_TRUE(graph.ok());
  PassRegistry fresh;
  for (const PluginReference& ref : repro->plugins) {
    auto plugin = load_plugin(ref.path, ref.sha256);
    ASSERT_TRUE(plugin.ok()) << plugin.status();
    ASSERT_TRUE(fresh.add(*plugin).ok());
  }
  auto again = PassManager::create(fresh, *repro);
  ASSERT_TRUE(again.ok()) << again.status();
  GraphFileTarget repro_target(*graph);
  PipelineReport replay = again->run(repro_target);
  EXPECT_EQ(replay.passes[0].error, report.passes[1].error);
}

// A GraphModule: attributes a failed pass replaced are restored.
TEST_F(PassManagerTest, RollbackRestoresReplacedParameters) {
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* w = graph->get_attr("weight");
  Node* mul = graph->call_function("operator.mul", {x, w});
  graph->output(mul);
  torch::Tensor weight = torch::arange(4, torch::kFloat);
  torch::Tensor original = weight.clone();
  GraphModule::AttributeMap attrs = {{"weight", {nullptr, weight, true}}};
  GraphModule gm(attrs, std::move(graph));
  torch::Tensor before = gm.forward({torch::ones(4)}).toTensor();

  auto pm = manager("zero_weights_then_fail{names=weight}");
  ASSERT_TRUE(pm.ok()) << pm.status();
  GraphModuleTarget target(gm);
  PipelineReport report = pm->run(target);
  EXPECT_EQ(report.passes[0].error,
            "INTERNAL: zero_weights_then_fail gives up");
  EXPECT_TRUE(torch::equal(gm.get_attr("weight"), original));
  EXPECT_TRUE(torch::equal(gm.forward({torch::ones(4)}).toTensor(), before));
}

// x * weight, with the parameter `weight` a copy of `weight`.
std::unique_ptr<GraphModule> times_weight(const torch::Tensor& weight) {
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* w = graph->get_attr("weight");
  graph->output(graph->call_function("operator.mul", {x, w}));
  GraphModule::AttributeMap attrs = {
      {"weight", {nullptr, weight.clone(), true}}};
  return std::make_unique<GraphModule>(attrs, std::move(graph));
}

// A pass that declares it invalidates "signature" may change the
// placeholders (extract_subgraph does); the example inputs, which were the
// old placeholders', go. Undeclared, the same change is rolled back (above).
TEST_F(PassManagerTest, APassDeclaringItInvalidatesTheSignatureMayChangeIt) {
  std::unique_ptr<GraphModule> module = times_weight(torch::ones(4));
  auto pm = manager("declared_retarget_placeholder");
  ASSERT_TRUE(pm.ok()) << pm.status();
  GraphModuleTarget target(*module, {torch::ones(4)});
  ASSERT_EQ(target.example_inputs().size(), 1u);
  PipelineReport report = pm->run(target);
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_EQ((*module->graph().nodes().begin())->target(), "torch.relu");
  EXPECT_TRUE(target.example_inputs().empty());
}

// A pass that writes into a parameter through GraphGetAttr's view: rolled
// back when it fails; counted as a change (it says changed=0) when not.
TEST_F(PassManagerTest, InPlaceWritesToParametersRollBack) {
  torch::Tensor original = torch::arange(4, torch::kFloat);
  std::unique_ptr<GraphModule> module = times_weight(original);
  GraphModule& gm = *module;

  auto failing = manager("double_in_place{names=weight,fail=true}");
  ASSERT_TRUE(failing.ok()) << failing.status();
  GraphModuleTarget target(gm);
  PipelineReport report = failing->run(target);
  EXPECT_EQ(report.passes[0].error, "INTERNAL: double_in_place gives up");
  EXPECT_TRUE(torch::equal(gm.get_attr("weight"), original));

  auto passing = manager("double_in_place{names=weight}");
  ASSERT_TRUE(passing.ok()) << passing.status();
  report = passing->run(target);
  ASSERT_TRUE(report.ok()) << report.failure;
  EXPECT_TRUE(torch::equal(gm.get_attr("weight"), original * 2));
  EXPECT_TRUE(report.passes[0].changed);
  EXPECT_FALSE(report.passes[0].claimed_changed);
  EXPECT_EQ(report.warnings(),
            std::vector<std::string>{
                "pass 'double_in_place': it reported changed=0 but changed "
                "the graph or its attributes"});
  EXPECT_NE(report.summary().find("    warning: it reported changed=0"),
            std::string::npos);
}

// A view an earlier pass kept (never released) and a later pass writes
// through before it fails: the rollback puts the weight back all the same,
// in the module and in what is written afterwards.
TEST_F(PassManagerTest, WritesThroughAViewKeptFromAnEarlierPassRollBack) {
  torch::Tensor original = torch::arange(4, torch::kFloat);
  std::unique_ptr<GraphModule> module = times_weight(original);
  GraphModule& gm = *module;

  auto pm = manager("keep_views{names=weight},write_kept_views_then_fail");
  ASSERT_TRUE(pm.ok()) << pm.status();
  GraphModuleTarget target(gm);
  PipelineReport report = pm->run(target);
  ASSERT_EQ(report.passes.size(), 2u);
  EXPECT_EQ(report.passes[1].error,
            "INTERNAL: write_kept_views_then_fail gives up");
  EXPECT_TRUE(torch::equal(gm.get_attr("weight"), original))
      << gm.get_attr("weight");
}

// Handles kept from a graph that was rolled back are stale: getters answer
// as for NULL, edits fail with FX_FAILED_PRECONDITION; nothing is read
// after it was freed (the ASan run of this test would say so).
TEST_F(PassManagerTest, HandlesFromARolledBackGraphAreRefused) {
  PipelineReport report =
      run("keep_handles{fail=true},use_kept_handles", FailurePolicy::kSkip);
  ASSERT_EQ(report.passes.size(), 2u);
  EXPECT_EQ(report.passes[0].error, "INTERNAL: keep_handles gives up");
  ASSERT_TRUE(report.passes[1].error.empty()) << report.passes[1].error;
  const Argument* seen = file_.graph->output_node()->meta_value("stale");
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(seen->as_string(),
            "name=NULL nodes=0 status=NodeSetMeta: the node handle is stale: "
            "its node no longer exists (its graph was rolled back after a "
            "failed pass, replaced, or released); ask the host for a fresh "
            "one");
  // Not rolled back, the same handles stay good in the next pass.
  report = run("keep_handles,use_kept_handles");
  ASSERT_TRUE(report.ok()) << report.failure;
  seen = file_.graph->output_node()->meta_value("stale");
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(
      seen->as_string(),
      "name=x nodes=" + std::to_string(file_.graph->size()) + " status=OK");
}

// The same misuse from a C99 plugin: handles and a weight view kept by a
// pass that failed, then used by later passes. The stale handles are
// refused, the write through the view is rolled back.
TEST_F(PassManagerTest, ACPluginsKeptHandlesAndViewsDoNoHarm) {
  auto plugin = load_plugin(kDir + "libkept_handles_plugin.so");
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  PassRegistry registry;
  ASSERT_TRUE(registry.add(*plugin).ok());
  torch::Tensor original = torch::arange(4, torch::kFloat);
  std::unique_ptr<GraphModule> module = times_weight(original);
  GraphModule& gm = *module;

  auto spec = parse_pipeline_text(
      "keep_then_fail,use_kept_handles,write_kept_view_then_fail");
  ASSERT_TRUE(spec.ok()) << spec.status();
  spec->on_failure = FailurePolicy::kSkip;
  auto pm = PassManager::create(registry, *spec);
  ASSERT_TRUE(pm.ok()) << pm.status();
  GraphModuleTarget target(gm);
  PipelineReport report = pm->run(target);
  ASSERT_EQ(report.passes.size(), 3u);
  EXPECT_EQ(report.passes[0].error, "INTERNAL: keep_then_fail gives up");
  EXPECT_TRUE(report.passes[1].error.empty()) << report.passes[1].error;
  EXPECT_EQ(report.passes[2].error,
            "INTERNAL: write_kept_view_then_fail gives up");
  const Argument* seen = gm.graph().output_node()->meta_value("seen");
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(seen->as_string(),
            "name=NULL status=FAILED_PRECONDITION arg=FAILED_PRECONDITION "
            "released=FAILED_PRECONDITION");
  EXPECT_TRUE(torch::equal(gm.get_attr("weight"), original))
      << gm.get_attr("weight");
  EXPECT_EQ(gm.graph().first()->type(), "");  // keep_then_fail's edit undone
}

// tensor_meta as shape_prop records it (shape and dtype are what counts).
Argument tensor_meta(std::vector<int64_t> shape) {
  ArgumentList dims(shape.begin(), shape.end());
  return Argument::dict({{"shape", Argument::tuple(dims)},
                         {"dtype", Argument::dtype("torch.float32")}});
}

// A pass that changes what a node computes without declaring that it
// invalidates tensor_meta breaks its contract: with verify_each, shape
// propagation runs again and the pass is rolled back; passes that declare
// it, or change nothing a tensor_meta describes, pass.
TEST_F(PassManagerTest, AStaleTensorMetaIsAContractFailure) {
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* relu = graph->call_function("torch.relu", {x});
  Node* add = graph->call_function("operator.add", {relu, 1});
  graph->output(add);
  for (Node* n : {x, relu, add})
    n->set_meta("tensor_meta", tensor_meta({2, 3}));
  GraphModule gm(GraphModule::AttributeMap{}, std::move(graph));
  GraphModuleTarget target(gm);
  auto run_assuming_meta = [&](const std::string& text, bool verify) {
    auto spec = parse_pipeline_text(text);
    EXPECT_TRUE(spec.ok());
    spec->assume = {"tensor_meta"};
    spec->verify_each = verify;
    auto pm = PassManager::create(registry_, *std::move(spec));
    EXPECT_TRUE(pm.ok()) << pm.status();
    return pm->run(target);
  };
  std::string before = to_graph_json(gm.graph());
  PipelineReport report =
      run_assuming_meta("retarget{from=torch.relu,to=torch.flatten}", true);
  EXPECT_EQ(report.passes[0].error,
            "it changed what a node computes without declaring that it "
            "invalidates 'tensor_meta': node 'relu' computes [6] "
            "torch.float32 but its tensor_meta says [2, 3] torch.float32");
  EXPECT_EQ(to_graph_json(gm.graph()), before);
  // Same shapes: no failure.
  EXPECT_TRUE(run_assuming_meta("c_add_to_mul", true).ok());
  // Declared (decompose_relu invalidates tensor_meta), or not verifying.
  EXPECT_TRUE(run_assuming_meta("decompose_relu", true).ok());
  PipelineReport unchecked =
      run_assuming_meta("retarget{from=operator.mul,to=torch.flatten}", false);
  EXPECT_TRUE(unchecked.ok()) << unchecked.failure;
  EXPECT_TRUE(unchecked.passes[0].changed);
}

// A module a failed pass replaced is put back (the same object).
TEST_F(PassManagerTest, RollbackRestoresReplacedModules) {
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  graph->output(graph->call_module("lin", {x}));
  auto lin = std::make_shared<torch::nn::LinearImpl>(4, 2);
  GraphModule::AttributeMap attrs = {{"lin", {lin, {}, false}}};
  GraphModule gm(attrs, std::move(graph));
  std::shared_ptr<torch::nn::Module> before = gm.get_submodule("lin");
  auto pm = manager("rebuild_module_then_fail{name=lin}");
  ASSERT_TRUE(pm.ok()) << pm.status();
  GraphModuleTarget target(gm);
  PipelineReport report = pm->run(target);
  EXPECT_EQ(report.passes[0].error,
            "INTERNAL: rebuild_module_then_fail gives up");
  EXPECT_EQ(gm.get_submodule("lin"), before);
}

// A plugin's custom op runs (kernel) and propagates shapes (shape function);
// GraphRun reports every node's value to the pass.
TEST_F(PassManagerTest, CustomOpsOfAPluginRunAndPropagateShapes) {
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  Node* sum =
      graph->call_function("test_vendor.scaled_add", {x, x}, {{"alpha", 2.0}});
  Node* relu = graph->call_function("torch.relu", {sum});
  graph->output(relu);
  GraphModule gm(GraphModule::AttributeMap{}, std::move(graph));
  ASSERT_TRUE(gm.check_executable().ok()) << gm.check_executable();
  torch::Tensor in = torch::randn({2, 3});
  EXPECT_TRUE(
      torch::allclose(gm.forward({in}).toTensor(), torch::relu(in * 3)));

  auto pm = manager("record_shapes{shape=4,5}");
  ASSERT_TRUE(pm.ok());
  GraphModuleTarget target(gm);
  PipelineReport report = pm->run(target);
  ASSERT_TRUE(report.ok()) << report.failure;
  std::vector<std::string> seen;
  for (const Node* n : gm.graph().nodes()) {
    const Argument* s = n->meta_value("shape_seen");
    seen.push_back(s ? s->as_string() : "-");
  }
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "4x5 torch.float32", "4x5 torch.float32",
                      "4x5 torch.float32", "4x5 torch.float32"}));
  EXPECT_EQ(host::leaf_module_rule("test_vendor.Block", "block"), true);
  EXPECT_EQ(host::leaf_module_rule("torch.nn.Linear", "fc"), std::nullopt);

  // Issue 39: what the host lent the kernel and the registration (the
  // call, the registrar) and a released status are refused when kept past
  // their time, never followed.
  auto kept = manager("use_kept_lent_handles");
  ASSERT_TRUE(kept.ok());
  GraphModuleTarget again(gm);
  report = kept->run(again);
  ASSERT_TRUE(report.ok()) << report.failure;
  const Argument* lent = gm.graph().output_node()->meta_value("lent");
  ASSERT_NE(lent, nullptr);
  EXPECT_EQ(lent->as_string(),
            "call=FAILED_PRECONDITION registrar=FAILED_PRECONDITION "
            "released_status=not a live status (released already, or not "
            "made by this host)");
}

}  // namespace
}  // namespace fx::host
