// replace_pattern against torch.fx: rewrite_cases.py traces each case (ports
// of torch.fx's test_subgraph_rewriter.py and the docs' basic usage), writes
// the original, pattern and replacement graphs and applies torch.fx's own
// subgraph_rewriter.replace_pattern; here the same graphs are read and
// rewritten in C++, and the code, the graph text and the matches must be
// torch.fx's. Needs python3-torch at /usr/bin/python3 (skipped otherwise).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/ir/graph.h"
#include "fx_core/rewrite/pattern_function.h"
#include "fx_core/rewrite/subgraph_rewriter.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/support/strings.h"
#include "tests/testing/python.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

using testing::runfile;

// Runs rewrite_cases.py once for the whole suite.
class RewriteGolden : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") !=
        0) {
      skip_reason_ = "python3-torch is not installed";
      return;
    }
    dir_ = std::string(std::getenv("TEST_TMPDIR")) + "/rewrite_cases";
    std::string log = dir_ + ".log";
    std::string command = "PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 " +
                          runfile("tests/fx_core/rewrite/rewrite_cases.py") +
                          " " + runfile("tools/torchfx_export.py") + " " +
                          dir_ + " > " + log + " 2>&1";
    if (std::system(command.c_str()) != 0) {
      failure_ = "rewrite_cases.py failed:\n" + testing::read_file(log);
    }
  }
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ASSERT_TRUE(failure_.empty()) << failure_;
  }

  static std::string skip_reason_;
  static std::string failure_;
  static std::string dir_;
};
std::string RewriteGolden::skip_reason_;
std::string RewriteGolden::failure_;
std::string RewriteGolden::dir_;

std::unique_ptr<Graph> read_graph(const std::string& path) {
  absl::StatusOr<GraphFile> file = read_graph_file(path);
  if (!file.ok())
    throw std::runtime_error(std::string(file.status().message()));
  return std::move(file->graph);
}

// A graph file as a GraphModule: with its modules and weights when it has
// modules (load_graph_module), else with just its get_attr tensors (so
// graphs with targets the op registry lacks still load).
std::shared_ptr<GraphModule> read_module(const std::string& path) {
  absl::StatusOr<GraphFile> file = read_graph_file(path);
  if (!file.ok())
    throw std::runtime_error(std::string(file.status().message()));
  if (!file->modules.empty()) {
    auto gm = load_graph_module(std::move(*file));
    if (!gm.ok()) throw std::runtime_error(std::string(gm.status().message()));
    return *gm;
  }
  GraphModule::AttributeMap attrs;
  if (!file->weights.empty()) {
    auto weights = read_tensor_dict(file->directory + "/" + file->weights);
    if (!weights.ok()) {
      throw std::runtime_error(std::string(weights.status().message()));
    }
    for (auto& [name, tensor] : *weights) {
      GraphModule::Attribute a;
      a.tensor = tensor;
      a.is_parameter = true;
      attrs.emplace_back(name, a);
    }
  }
  return std::make_shared<GraphModule>(attrs, std::move(file->graph));
}

std::shared_ptr<GraphModule> read_original(const std::string& dir) {
  return read_module(dir + "/original.fx.json");
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// One line per match: pattern=graph names, in the order matched. With
// compute_only, placeholders are left out.
template <typename Match>
std::string matches_text(const std::vector<Match>& matches,
                         bool compute_only = false) {
  std::string out;
  for (const Match& m : matches) {
    std::string line;
    for (const auto& [pn, value] : m.nodes_map) {
      if (compute_only && pn->op() == Opcode::kPlaceholder) continue;
      if (!line.empty()) line += " ";
      line += std::string(pn->name()) + "=";
      line += value.is_node() ? std::string(value.as_node()->name()) : "?";
    }
    out += line + "\n";
  }
  return out;
}

void check_case(const std::string& dir, const std::string& name) {
  SCOPED_TRACE(name);
  const std::string d = dir + "/" + name;
  std::shared_ptr<GraphModule> gm = read_original(d);
  std::shared_ptr<GraphModule> pattern = read_module(d + "/pattern.fx.json");
  std::shared_ptr<GraphModule> replacement =
      read_module(d + "/replacement.fx.json");
  // The matcher finds what torch.fx's finds, in the same order.
  std::vector<InternalMatch> found =
      SubgraphMatcher(pattern->graph()).match(gm->graph());
  const std::string expected = testing::read_file(d + "/matches.txt");
  EXPECT_EQ(matches_text(found), expected);
  const std::string found_compute = matches_text(found, true);
  // And with torch.fx's other matcher options.
  MatcherOptions overlapping;
  overlapping.remove_overlapping_matches = false;
  MatcherOptions whole;
  whole.match_output = true;
  EXPECT_EQ(
      cat("overlapping ",
          SubgraphMatcher(pattern->graph(), overlapping)
              .match(gm->graph())
              .size(),
          "\nmatch_output ",
          SubgraphMatcher(pattern->graph(), whole).match(gm->graph()).size(),
          "\n"),
      testing::read_file(d + "/matcher.txt"));
  // Patterns with modules go in as modules (torch.fx copies what the
  // replacement calls), the others as graphs.
  std::vector<ReplacedPatterns> matches =
      pattern->named_children().is_empty()
          ? replace_pattern(*gm, pattern->graph(), replacement->graph())
          : replace_pattern(*gm, *pattern, *replacement);
  // The returned matches hold the same compute nodes (placeholders map to
  // their current value, as torch.fx 2 reports them, where torch.fx 1.13
  // keeps a node an earlier replacement erased).
  EXPECT_EQ(matches_text(matches, true), found_compute);
  EXPECT_EQ(gm->code(), testing::read_file(d + "/code.py"));
  EXPECT_EQ(trim(gm->graph().str()),
            trim(testing::read_file(d + "/graph.txt")));
  gm->graph().lint();
  // Every module the graph calls is there (copied from the replacement when
  // the graph lacked it).
  for (const Node* n : gm->graph().nodes()) {
    if (n->op() == Opcode::kCallModule) {
      EXPECT_NE(gm->get_submodule(n->target()), nullptr) << n->target();
    }
  }
}

#define GOLDEN_CASE(name) \
  TEST_F(RewriteGolden, name) { check_case(dir_, #name); }

GOLDEN_CASE(docs_basic_usage)
GOLDEN_CASE(oneliner_pattern)
GOLDEN_CASE(single_pattern_match)
GOLDEN_CASE(graph_argument_order)
GOLDEN_CASE(correct_output_replacement)
GOLDEN_CASE(pattern_is_entire_graph)
GOLDEN_CASE(returned_node_used_outside)
GOLDEN_CASE(internal_node_used_outside)
GOLDEN_CASE(overlapping_matches)
GOLDEN_CASE(trivial_replacement)
GOLDEN_CASE(call_method)
GOLDEN_CASE(multiple_outputs)
GOLDEN_CASE(duplicated_outputs)
GOLDEN_CASE(unused_args)
GOLDEN_CASE(kwargs)
GOLDEN_CASE(list_literal)
GOLDEN_CASE(scalar_literal)
GOLDEN_CASE(replaces_referenced_submodules)

// Random graphs (shared inputs, outside uses, several outputs) with patterns
// that overlap, share inputs, return several values or their input: the
// matches, the code and the graph text are torch.fx's on every one.
TEST_F(RewriteGolden, RandomGraphs) {
  std::istringstream cases(testing::read_file(dir_ + "/random_cases.txt"));
  int n = 0;
  for (std::string name; std::getline(cases, name);) {
    if (name.empty()) continue;
    check_case(dir_, name);
    ++n;
  }
  EXPECT_EQ(n, 80);
}

// The same rewrites with the pattern and replacement written as C++
// functions of fx::Value: they trace to torch.fx's pattern and replacement
// graphs, and the rewrite gives torch.fx's code.
template <typename P, typename R>
void check_function_case(const std::string& dir, const std::string& name,
                         const P& pattern, const R& replacement,
                         const std::string& pattern_signature,
                         const std::string& replacement_signature) {
  SCOPED_TRACE(name);
  const std::string d = dir + "/" + name;
  EXPECT_EQ(trace_pattern(pattern, pattern_signature)->graph().str(),
            read_graph(d + "/pattern.fx.json")->str());
  EXPECT_EQ(trace_pattern(replacement, replacement_signature)->graph().str(),
            read_graph(d + "/replacement.fx.json")->str());
  std::shared_ptr<GraphModule> gm = read_original(d);
  std::vector<ReplacedPatterns> matches =
      replace_pattern(*gm, pattern, replacement);
  std::istringstream expected(testing::read_file(d + "/matches.txt"));
  size_t lines = 0;
  for (std::string line; std::getline(expected, line);) ++lines;
  EXPECT_EQ(matches.size(), lines);
  EXPECT_EQ(gm->code(), testing::read_file(d + "/code.py"));
}

TEST_F(RewriteGolden, FunctionPatternsDocsBasicUsage) {
  check_function_case(
      dir_, "docs_basic_usage",
      [](Value w1, Value w2) {
        return th::cat({w1, w2}).sum();
      },
      [](Value w1, Value w2) {
        return th::stack({w1, w2});
      },
      "w1, w2", "w1, w2");
}

TEST_F(RewriteGolden, FunctionPatternsOverlappingMatches) {
  check_function_case(
      dir_, "overlapping_matches",
      [](Value x) { return th::sigmoid(th::sigmoid(x)); },
      [](Value x) { return th::exp(x); }, "x", "x");
}

TEST_F(RewriteGolden, FunctionPatternsMultipleOutputs) {
  check_function_case(
      dir_, "multiple_outputs",
      [](Value a) {
        return Value::tuple({th::sigmoid(a), th::relu(a)});
      },
      [](Value x) {
        return Value::tuple({th::exp(x), th::abs(x)});
      },
      "a", "x");
}

TEST_F(RewriteGolden, FunctionPatternsScalarLiteral) {
  check_function_case(
      dir_, "scalar_literal", [](Value x) { return th::relu(x + 1); },
      [](Value x) { return th::sigmoid(x); }, "x", "x");
}

TEST_F(RewriteGolden, FunctionPatternsWithFilters) {
  const std::string d = dir_ + "/docs_basic_usage";
  auto pattern = [](Value w1, Value w2) { return th::cat({w1, w2}).sum(); };
  auto replacement = [](Value w1, Value w2) { return th::stack({w1, w2}); };
  std::shared_ptr<GraphModule> gm = read_original(d);
  const std::string before = gm->code();
  MatchFilter none = [](const InternalMatch&, const Graph&, const Graph&) {
    return false;
  };
  EXPECT_TRUE(
      replace_pattern_with_filters(*gm, pattern, replacement, {none}).empty());
  EXPECT_EQ(gm->code(), before);
  MatchFilter all = [](const InternalMatch& m, const Graph&, const Graph& p) {
    return m.placeholder_nodes.size() == 2 && p.size() == 5;
  };
  EXPECT_EQ(
      replace_pattern_with_filters(*gm, pattern, replacement, {all}).size(),
      2u);
  EXPECT_EQ(gm->code(), testing::read_file(d + "/code.py"));
}

// A tensor the replacement function uses becomes its `_tensor_constant0`,
// copied into the rewritten module; the traced pattern outlives the call.
TEST_F(RewriteGolden, FunctionPatternsCarryTheReplacementsTensors) {
  std::shared_ptr<GraphModule> gm = read_original(dir_ + "/scalar_literal");
  const at::Tensor scale = at::full({1}, 3.0);
  std::vector<ReplacedPatterns> r = replace_pattern(
      *gm, [](Value x) { return th::relu(x + 1); },
      [&scale](Value x) { return x * scale; });
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].anchor->name(), "relu");  // a node of the traced pattern
  EXPECT_TRUE(gm->get_attr("_tensor_constant0").equal(scale));
  at::Tensor x = at::randn({5});
  at::Tensor a = x * 3.0;
  at::Tensor b = at::relu(a + 2);
  EXPECT_TRUE(at::allclose(gm->forward({x}).toTensor(), at::relu(b + 1.0)));
}

// Every case the script wrote has a test above.
TEST_F(RewriteGolden, EveryScriptCaseIsChecked) {
  std::istringstream cases(testing::read_file(dir_ + "/cases.txt"));
  std::string name;
  int n = 0;
  while (std::getline(cases, name)) {
    if (!name.empty()) ++n;
  }
  EXPECT_EQ(n, 18);
}

}  // namespace
}  // namespace fx
