// fx plugin-check's library: first-party plugins pass every check on the
// reference graphs; each pass of the unsound test plugin fails exactly the
// check of the promise it breaks; a crash in any check is that check's
// failure; passes are selected by name, and a pass requiring tensor_meta
// gets shape_prop (or the given prefix) first.
#include "host/plugin_check/plugin_check.h"

#include <gtest/gtest.h>

#include <boost/filesystem.hpp>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "tests/testing/reference.h"

namespace fx::host {
namespace {

std::vector<std::string> reference_bundles() {
  auto bundles = find_graph_bundles(testing::reference_dir());
  EXPECT_TRUE(bundles.ok()) << bundles.status();
  return bundles.ok() ? *bundles : std::vector<std::string>{};
}

PluginCheckReport check(const std::string& library) {
  PluginCheckOptions options;
  options.graphs = reference_bundles();
  auto report = check_plugin(library, options);
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *report : PluginCheckReport{};
}

const PassCheckRow* row(const PluginCheckReport& report,
                        const std::string& pass) {
  for (const PassCheckRow& r : report.rows) {
    if (r.pass == pass) return &r;
  }
  return nullptr;
}

size_t column(std::string_view check) {
  for (size_t c = 0; c < kPluginChecks.size(); ++c) {
    if (kPluginChecks[c] == check) return c;
  }
  ADD_FAILURE() << "no check " << check;
  return 0;
}

TEST(FindGraphBundles, FindsTheReferenceCases) {
  EXPECT_EQ(reference_bundles().size(), testing::reference_cases().size());
  ASSERT_FALSE(testing::reference_cases().empty());
}

TEST(FindGraphBundles, RefusesADirectoryWithoutBundles) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp ? tmp : "/tmp") + "/no_bundles";
  boost::filesystem::create_directories(dir);
  auto bundles = find_graph_bundles(dir);
  ASSERT_FALSE(bundles.ok());
  EXPECT_NE(bundles.status().message().find("no graph bundles"),
            std::string::npos)
      << bundles.status();
  EXPECT_FALSE(find_graph_bundles(dir + "/missing").ok());
}

// Every check ok (the first-party passes checked here declare themselves
// idempotent, so that check runs too).
void expect_all_ok(const PluginCheckReport& report, const std::string& pass) {
  const PassCheckRow* r = row(report, pass);
  ASSERT_NE(r, nullptr) << pass;
  for (size_t c = 0; c < kPluginChecks.size(); ++c) {
    EXPECT_EQ(r->results[c].outcome, CheckOutcome::kOk)
        << pass << " " << kPluginChecks[c] << ": " << r->results[c].reason;
  }
}

// The outcome of one check of one pass, and its reason.
CheckResult result(const PluginCheckReport& report, const std::string& pass,
                   std::string_view check) {
  const PassCheckRow* r = row(report, pass);
  if (r == nullptr) {
    ADD_FAILURE() << "no row for " << pass << "\n" << report.table();
    return {};
  }
  return r->results[column(check)];
}

TEST(CheckPlugin, FirstPartyShapePropPassesEveryCheck) {
  PluginCheckReport report = check("plugins/libfx_shape_prop.so");
  EXPECT_TRUE(report.ok()) << report.table();
  expect_all_ok(report, "shape_prop");
}

TEST(CheckPlugin, FirstPartyPassesPassEveryCheck) {
  PluginCheckReport report = check("plugins/libfx_passes.so");
  EXPECT_TRUE(report.ok()) << report.table();
  for (const char* pass : {"dce", "cse", "const_fold"}) {
    expect_all_ok(report, pass);
  }
  // Without options split_module declines every graph: skipped, not failed.
  const PassCheckRow* split = row(report, "split_module");
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->results[column("runs")].outcome, CheckOutcome::kSkip);
  EXPECT_NE(split->results[column("runs")].reason.find("declined"),
            std::string::npos);
}

TEST(CheckPlugin, EachUnsoundPassFailsItsOwnCheck) {
  PluginCheckReport report =
      check("tests/plugin_api/plugins/libunsound_plugin.so");
  EXPECT_FALSE(report.ok());
  const std::map<std::string, std::string> broken = {
      {"nondeterministic", "deterministic"},
      {"changes_numbers", "numbers"},
      {"breaks_lint", "lint"},
      {"hides_change", "contract"}};
  ASSERT_EQ(report.rows.size(), broken.size()) << report.table();
  for (const auto& [pass, check_name] : broken) {
    const PassCheckRow* r = row(report, pass);
    ASSERT_NE(r, nullptr) << pass;
    for (size_t c = 0; c < kPluginChecks.size(); ++c) {
      bool should_fail = kPluginChecks[c] == check_name;
      EXPECT_EQ(r->results[c].outcome == CheckOutcome::kFail, should_fail)
          << pass << " " << kPluginChecks[c] << ": " << r->results[c].reason;
    }
  }
  EXPECT_NE(row(report, "nondeterministic")
                ->results[column("deterministic")]
                .reason.find("two runs differ"),
            std::string::npos);
  EXPECT_NE(row(report, "breaks_lint")
                ->results[column("lint")]
                .reason.find("used before it has been defined"),
            std::string::npos);
  EXPECT_NE(row(report, "hides_change")
                ->results[column("contract")]
                .reason.find("changed=0"),
            std::string::npos);
}

// API version 6: a declared tolerance replaces the options' for that pass,
// and idempotence is checked where declared (the passes are described in
// declaring_plugin.cc).
TEST(CheckPlugin, DeclaredToleranceAndIdempotenceAreHonoured) {
  PluginCheckOptions options;
  // MyModule returns one tensor, which the scaling passes scale.
  options.graphs = {testing::reference_dir() + "/seed_mymodule"};
  options.rtol = 1e-9;  // far below scale_output's 1e-3 change
  options.atol = 1e-12;
  auto checked =
      check_plugin("tests/plugin_api/plugins/libdeclaring_plugin.so", options);
  ASSERT_TRUE(checked.ok()) << checked.status();
  const PluginCheckReport& report = *checked;
  EXPECT_EQ(result(report, "scale_output", "numbers").outcome,
            CheckOutcome::kOk)
      << report.table();
  CheckResult too_far = result(report, "scale_too_far", "numbers");
  EXPECT_EQ(too_far.outcome, CheckOutcome::kFail) << report.table();
  EXPECT_NE(too_far.reason.find("the pass declares rtol=1e-04, atol=1e-06"),
            std::string::npos)
      << too_far.reason;
  EXPECT_EQ(result(report, "stamp_once", "idempotent").outcome,
            CheckOutcome::kOk)
      << report.table();
  CheckResult again = result(report, "stamp_again", "idempotent");
  EXPECT_EQ(again.outcome, CheckOutcome::kFail) << report.table();
  EXPECT_NE(again.reason.find("declared idempotent, but a second run changed "
                              "its output: the fx-graph JSON differs"),
            std::string::npos)
      << again.reason;
  // Undeclared: not checked.
  CheckResult undeclared = result(report, "scale_output", "idempotent");
  EXPECT_EQ(undeclared.outcome, CheckOutcome::kSkip);
  EXPECT_NE(undeclared.reason.find("does not declare itself idempotent"),
            std::string::npos)
      << undeclared.reason;
  // Each pass breaks at most what it declares.
  for (const char* pass : {"scale_output", "stamp_once"}) {
    const PassCheckRow* r = row(report, pass);
    ASSERT_NE(r, nullptr);
    for (const CheckResult& c : r->results) {
      EXPECT_NE(c.outcome, CheckOutcome::kFail) << pass << ": " << c.reason;
    }
  }
}

// A plugin built against the version-1 header has no declarations: the
// options' tolerance applies and idempotence is not checked. Its pass turns
// relu into sigmoid, so the numbers differ on graphs with a relu.
TEST(CheckPlugin, AVersionOnePluginIsCheckedWithTheDefaults) {
  PluginCheckReport report =
      check("tests/plugin_api/abi/plugins/libv1_plugin.so");
  EXPECT_EQ(result(report, "v1_mark", "runs").outcome, CheckOutcome::kOk)
      << report.table();
  EXPECT_EQ(result(report, "v1_mark", "idempotent").outcome,
            CheckOutcome::kSkip);
  CheckResult numbers = result(report, "v1_mark", "numbers");
  EXPECT_EQ(numbers.outcome, CheckOutcome::kFail) << report.table();
  EXPECT_EQ(numbers.reason.find("declares"), std::string::npos)
      << numbers.reason;
}

TEST(CheckPlugin, ACrashingPassFailsRunsAndPluginCheckSurvives) {
  PluginCheckOptions options;
  options.graphs = {reference_bundles().at(0)};
  options.pass_timeout_seconds = 5;
  options.pass_memory_limit_mib = 256;
  auto report =
      check_plugin("tests/plugin_api/plugins/libcrash_plugin.so", options);
  ASSERT_TRUE(report.ok()) << report.status();
  for (const char* pass : {"segfault", "abort", "hang", "hog", "exit"}) {
    const PassCheckRow* r = row(*report, pass);
    ASSERT_NE(r, nullptr) << pass;
    EXPECT_EQ(r->results[column("runs")].outcome, CheckOutcome::kFail) << pass;
    EXPECT_EQ(r->results[column("rollback")].outcome, CheckOutcome::kSkip)
        << pass;
  }
  EXPECT_NE(
      row(*report, "segfault")->results[column("runs")].reason.find("SIGSEGV"),
      std::string::npos);
}

const char kCrashPlugin[] = "tests/plugin_api/plugins/libcrash_plugin.so";
const char kTestPasses[] = "tests/plugin_api/plugins/libtest_passes.so";

std::string reference_case(const std::string& name) {
  return testing::reference_dir() + "/" + name;
}

// Exactly `check` of `pass` failed, with a reason containing `why`.
void expect_fails_only(const PluginCheckReport& report, const std::string& pass,
                       std::string_view check, const std::string& why) {
  const PassCheckRow* r = row(report, pass);
  ASSERT_NE(r, nullptr) << pass << "\n" << report.table();
  for (size_t c = 0; c < kPluginChecks.size(); ++c) {
    const CheckResult& got = r->results[c];
    if (kPluginChecks[c] != check) {
      EXPECT_NE(got.outcome, CheckOutcome::kFail)
          << pass << " " << kPluginChecks[c] << ": " << got.reason;
      continue;
    }
    EXPECT_EQ(got.outcome, CheckOutcome::kFail) << report.table();
    EXPECT_NE(got.reason.find(why), std::string::npos) << got.reason;
  }
}

// Issue 39 item 5: every check runs the plugin's code in a worker process.
// A pass that crashes only on its second run in a process fails
// `deterministic` (two runs in one worker), one that crashes on its own
// output fails `idempotent`, and every other check still has its result.
TEST(CheckPlugin, ACrashInALaterCheckIsThatChecksFailure) {
  PluginCheckOptions options;
  options.graphs = {reference_case("seed_mymodule")};
  options.passes = {"second_run_segfault", "segfault_on_own_mark"};
  auto report = check_plugin(kCrashPlugin, options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->rows.size(), 2u) << report->table();
  const std::string killed =
      "seed_mymodule: the worker process was killed by SIGSEGV";
  expect_fails_only(*report, "second_run_segfault", "deterministic", killed);
  expect_fails_only(*report, "segfault_on_own_mark", "idempotent", killed);
  for (const char* pass : {"second_run_segfault", "segfault_on_own_mark"}) {
    for (const char* check :
         {"runs", "lint", "numbers", "rollback", "contract"}) {
      EXPECT_EQ(result(*report, pass, check).outcome, CheckOutcome::kOk)
          << pass << " " << check << "\n"
          << report->table();
    }
  }
}

TEST(CheckPlugin, PassesAreSelectedByOwnOrQualifiedName) {
  PluginCheckOptions options;
  options.graphs = {reference_case("seed_mymodule")};
  options.passes = {"fx_passes.cse", "dce"};
  auto report = check_plugin("plugins/libfx_passes.so", options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->rows.size(), 2u) << report->table();
  EXPECT_EQ(report->rows[0].pass, "dce");  // the plugin's order
  EXPECT_EQ(report->rows[1].pass, "cse");
  options.passes = {"dce", "no_such_pass"};
  auto unknown = check_plugin("plugins/libfx_passes.so", options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find(
                "has no pass 'no_such_pass' (its passes: dce, cse, "),
            std::string::npos)
      << unknown.status();
}

// Issue 39 item 5: read_meta requires tensor_meta, which the reference
// graphs lack: shape_prop runs first on each graph with input.pt, and a
// bundle without one is skipped, saying so.
TEST(CheckPlugin, APassRequiringTensorMetaGetsShapePropFirst) {
  PluginCheckOptions options;
  options.graphs = reference_bundles();
  options.passes = {"read_meta"};
  auto report = check_plugin(kTestPasses, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->ok()) << report->table();
  for (const char* check :
       {"runs", "lint", "numbers", "deterministic", "rollback", "contract"}) {
    EXPECT_EQ(result(*report, "read_meta", check).outcome, CheckOutcome::kOk)
        << check << "\n"
        << report->table();
  }
  options.graphs = {reference_case("seed_dropout_functional")};
  auto no_inputs = check_plugin(kTestPasses, options);
  ASSERT_TRUE(no_inputs.ok()) << no_inputs.status();
  CheckResult runs = result(*no_inputs, "read_meta", "runs");
  EXPECT_EQ(runs.outcome, CheckOutcome::kSkip);
  EXPECT_NE(runs.reason.find("it requires 'tensor_meta', which this graph "
                             "lacks, and the bundle has no input.pt"),
            std::string::npos)
      << runs.reason;
}

// The prefix given replaces the automatic shape_prop: a prefix that does
// not make tensor_meta leaves the requirement unmet; one naming an unknown
// pass is an error.
TEST(CheckPlugin, APrefixPipelineRunsBeforeThePass) {
  PluginCheckOptions options;
  options.graphs = {reference_case("seed_mymodule")};
  options.passes = {"read_meta"};
  options.before = "shape_prop,dce";
  auto report = check_plugin(kTestPasses, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(result(*report, "read_meta", "runs").outcome, CheckOutcome::kOk)
      << report->table();
  EXPECT_EQ(result(*report, "read_meta", "numbers").outcome, CheckOutcome::kOk)
      << report->table();
  options.before = "dce";
  auto unmet = check_plugin(kTestPasses, options);
  ASSERT_TRUE(unmet.ok()) << unmet.status();
  CheckResult runs = result(*unmet, "read_meta", "runs");
  EXPECT_EQ(runs.outcome, CheckOutcome::kSkip);
  EXPECT_NE(runs.reason.find("requires 'tensor_meta', which does not hold"),
            std::string::npos)
      << runs.reason;
  options.before = "shape_prop,no_such_pass";
  auto unknown = check_plugin(kTestPasses, options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(
      unknown.status().message().find("the pipeline to run before each pass "
                                      "('shape_prop,no_such_pass')"),
      std::string::npos)
      << unknown.status();
  EXPECT_NE(unknown.status().message().find("no_such_pass'"), std::string::npos)
      << unknown.status();
}

TEST(CheckPlugin, ALibraryThatIsNoPluginIsAnError) {
  PluginCheckOptions options;
  options.graphs = reference_bundles();
  auto report =
      check_plugin("tests/plugin_api/plugins/libnot_a_plugin.so", options);
  EXPECT_FALSE(report.ok());
}

}  // namespace
}  // namespace fx::host
