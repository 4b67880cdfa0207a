// fx plugin-check's library: first-party plugins pass every check on the
// reference graphs; each pass of the unsound test plugin fails exactly the
// check of the promise it breaks.
#include "plugin_api/pipeline/plugin_check.h"

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

TEST(CheckPlugin, ALibraryThatIsNoPluginIsAnError) {
  auto report = check_plugin("tests/plugin_api/plugins/libnot_a_plugin.so",
                             PluginCheckOptions{reference_bundles()});
  EXPECT_FALSE(report.ok());
}

}  // namespace
}  // namespace fx::host
