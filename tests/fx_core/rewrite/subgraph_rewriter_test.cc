// replace_pattern and SubgraphMatcher on graphs built in C++: torch.fx's
// rewriter behaviours (matches in graph order, overlaps, outside users,
// filters, the replacements returned) and what goes beyond torch.fx
// (literals as wildcards, call_module by module type, meta carried over), and
// the errors. subgraph_rewriter_golden_test compares with torch.fx itself.
#include "fx_core/rewrite/subgraph_rewriter.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>

#include <memory>
#include <string>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/rewrite/subgraph_matcher.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/support/error.h"
#include "tests/testing/graph_helpers.h"

namespace fx {
namespace {

using testing::error_of;
using testing::graph_order;
using testing::Names;
using testing::names_of;

std::shared_ptr<GraphModule> module_of(std::unique_ptr<Graph> g) {
  return std::make_shared<GraphModule>(GraphModule::AttributeMap{},
                                       std::move(g));
}

// x -> sigmoid x n -> output
std::unique_ptr<Graph> sigmoid_chain(int n) {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  for (int i = 0; i < n; ++i) x = g->call_function("torch.sigmoid", {x});
  g->output(x);
  return g;
}

std::unique_ptr<Graph> unary(const char* target) {
  auto g = std::make_unique<Graph>();
  g->output(g->call_function(target, {g->placeholder("x")}));
  return g;
}

TEST(ReplacePattern, FourSigmoidsAndATwoSigmoidPatternMakeTwoReplacements) {
  auto gm = module_of(sigmoid_chain(4));
  auto pattern = sigmoid_chain(2);
  auto replacement = unary("torch.exp");
  std::vector<ReplacedPatterns> r =
      replace_pattern(*gm, *pattern, *replacement);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(graph_order(gm->graph()), (Names{"x", "exp", "exp_1", "output"}));
  // What each replacement matched and made.
  EXPECT_EQ(r[0].anchor->name(), "sigmoid_1");  // the pattern's anchor
  EXPECT_EQ(r[0].matched_anchor->name(), "sigmoid_1");
  EXPECT_TRUE(r[0].matched_anchor->erased());
  EXPECT_EQ(r[1].matched_anchor->name(), "sigmoid_3");
  EXPECT_EQ(names_of(r[0].replacements), (Names{"exp"}));
  EXPECT_EQ(names_of(r[1].replacements), (Names{"exp_1"}));
  // The second match's placeholder now maps to the first replacement.
  const Node* px = pattern->first();
  for (const auto& [pn, v] : r[1].nodes_map) {
    if (pn == px) {
      EXPECT_EQ(v.as_node(), r[0].replacements[0]);
    }
  }
  EXPECT_EQ(gm->code(),
            "\n\n\ndef forward(self, x):\n"
            "    exp = torch.exp(x);  x = None\n"
            "    exp_1 = torch.exp(exp);  exp = None\n"
            "    return exp_1\n    ");
}

// Rewrites compose: a second rewrite sees the first one's nodes, before and
// after the erased nodes are purged.
TEST(ReplacePattern, RewritesCompose) {
  auto gm = module_of(sigmoid_chain(8));
  EXPECT_EQ(replace_pattern(*gm, *sigmoid_chain(2), *unary("torch.exp")).size(),
            4u);
  auto exp2 = std::make_unique<Graph>();
  Node* x = exp2->placeholder("x");
  exp2->output(exp2->call_function("torch.exp",
                                   {exp2->call_function("torch.exp", {x})}));
  EXPECT_EQ(replace_pattern(*gm, *exp2, *unary("torch.tanh")).size(), 2u);
  gm->graph().purge_erased_nodes();
  auto tanh2 = std::make_unique<Graph>();
  Node* y = tanh2->placeholder("x");
  tanh2->output(tanh2->call_function(
      "torch.tanh", {tanh2->call_function("torch.tanh", {y})}));
  EXPECT_EQ(replace_pattern(*gm, *tanh2, *unary("torch.relu")).size(), 1u);
  EXPECT_EQ(graph_order(gm->graph()), (Names{"x", "relu", "output"}));
  at::Tensor in = at::randn({4});
  EXPECT_TRUE(at::allclose(gm->forward({in}).toTensor(), at::relu(in)));
}

TEST(SubgraphMatcher, KeepsOverlappingMatchesWhenAskedTo) {
  auto g = sigmoid_chain(4);
  auto pattern = sigmoid_chain(2);
  MatcherOptions options;
  options.remove_overlapping_matches = false;
  EXPECT_EQ(SubgraphMatcher(*pattern, options).match(*g).size(), 3u);
  EXPECT_EQ(SubgraphMatcher(*pattern).match(*g).size(), 2u);
}

TEST(SubgraphMatcher, MatchesAreInGraphOrderAndHoldTheirPlaceholders) {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  Node* a = g->call_function("operator.add", {x, y});
  Node* b = g->call_function("operator.add", {a, Argument(3)});
  g->output(b);
  auto p = std::make_unique<Graph>();
  Node* pu = p->placeholder("u");
  Node* pv = p->placeholder("v");
  p->output(p->call_function("operator.add", {pu, pv}));
  std::vector<InternalMatch> m = SubgraphMatcher(*p).match(*g);
  // add(add(x, y), 3) contains add(x, y) as an internal node used outside
  // the first match? No: `add` is returned by its own match, and the second
  // match uses it as a placeholder value. Both matches are contained, the
  // second overlaps nothing (placeholders do not count).
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].returning_nodes, (std::vector<Node*>{a}));
  EXPECT_EQ(m[0].placeholder_nodes, (ArgumentList{x, y}));
  EXPECT_EQ(m[1].placeholder_nodes, (ArgumentList{a, Argument(3)}));
  EXPECT_EQ(m[1].node_for(pu), a);
  EXPECT_EQ(m[1].node_for(pv), nullptr);  // matched a literal
  EXPECT_EQ(*m[1].value_for(pv), Argument(3));
}

TEST(SubgraphMatcher, TwoPlaceholdersNeverMatchTheSameNode) {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  g->output(g->call_function("operator.add", {x, x}));
  auto p = std::make_unique<Graph>();
  Node* pu = p->placeholder("u");
  Node* pv = p->placeholder("v");
  p->output(p->call_function("operator.add", {pu, pv}));
  EXPECT_TRUE(SubgraphMatcher(*p).match(*g).empty());  // as torch.fx
}

TEST(SubgraphMatcher, KwargsMustHaveTheSameKeys) {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* c1 = g->call_method("clamp", {x}, {{"min", Argument(0.0)}});
  Node* c2 = g->call_method("clamp", {c1}, {{"max", Argument(1.0)}});
  Node* c3 = g->call_method("clamp", {c2}, {{"min", Argument(0.0)}});
  g->output(c3);
  auto p = std::make_unique<Graph>();
  p->output(
      p->call_method("clamp", {p->placeholder("x")}, {{"min", Argument(0.0)}}));
  std::vector<InternalMatch> m = SubgraphMatcher(*p).match(*g);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].returning_nodes[0], c1);
  EXPECT_EQ(m[1].returning_nodes[0], c3);
}

TEST(SubgraphMatcher, ListsMatchElementByElementAndTuplesMatchLists) {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  Node* cat = g->call_function("torch.cat", {Argument::tuple({x, y})});
  Node* cat2 = g->call_function("torch.cat", {Argument{x, y, x}});
  g->output(Argument::tuple({cat, cat2}));
  auto p = std::make_unique<Graph>();
  Node* a = p->placeholder("a");
  Node* b = p->placeholder("b");
  p->output(p->call_function("torch.cat", {Argument{a, b}}));
  std::vector<InternalMatch> m = SubgraphMatcher(*p).match(*g);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].returning_nodes[0], cat);
  // A placeholder matches a whole list too.
  auto q = std::make_unique<Graph>();
  q->output(q->call_function("torch.cat", {q->placeholder("tensors")}));
  m = SubgraphMatcher(*q).match(*g);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[1].placeholder_nodes[0], (Argument{x, y, x}));
}

TEST(SubgraphMatcher, MatchOutputMatchesTheWholeGraph) {
  auto g = sigmoid_chain(2);
  auto p = sigmoid_chain(2);
  MatcherOptions options;
  options.match_output = true;
  EXPECT_EQ(SubgraphMatcher(*p, options).match(*g).size(), 1u);
  auto g3 = sigmoid_chain(3);
  // The output returns sigmoid_2, whose input chain is longer than two; the
  // pattern's placeholder takes sigmoid, so it still matches once.
  EXPECT_EQ(SubgraphMatcher(*p, options).match(*g3).size(), 1u);
}

TEST(SubgraphMatcher, RefusesEmptyPatternsAndDeadCode) {
  Graph empty;
  EXPECT_EQ(error_of([&] { SubgraphMatcher m(empty); }),
            "SubgraphMatcher cannot be initialized with an empty pattern");
  Graph dead;
  Node* x = dead.placeholder("x");
  dead.call_function("torch.relu", {x});
  dead.output(x);
  EXPECT_EQ(error_of([&] { SubgraphMatcher m(dead); }),
            "SubgraphMatcher cannot be initialized with an pattern with dead "
            "code");
}

// A pattern parameter the pattern does not use is dead code to torch.fx's
// matcher too (its placeholder has no users).
TEST(SubgraphMatcher, RefusesAPatternWithAnUnusedParameter) {
  Graph p;
  Node* x = p.placeholder("x");
  p.placeholder("unused");
  p.output(p.call_function("torch.relu", {x}));
  EXPECT_EQ(error_of([&] { SubgraphMatcher m(p); }),
            "SubgraphMatcher cannot be initialized with an pattern with dead "
            "code");
}

// The plain-graph entry point (what the C ABI calls): no GraphModule, no
// recompile.
TEST(ReplacePatternInGraph, RewritesABareGraph) {
  auto g = sigmoid_chain(3);
  std::vector<ReplacedPatterns> r = replace_pattern_in_graph(
      *g, *unary("torch.sigmoid"), *unary("torch.tanh"));
  EXPECT_EQ(r.size(), 3u);
  EXPECT_EQ(graph_order(*g),
            (Names{"x", "tanh", "tanh_1", "tanh_2", "output"}));
  g->lint();
}

// torch.fx's test_replace_pattern_with_filters: the same op sequence twice,
// the second add's input a node, not a scalar; the filter keeps the first.
struct FilterCase {
  std::shared_ptr<GraphModule> gm;
  std::unique_ptr<Graph> pattern = std::make_unique<Graph>();
  std::unique_ptr<Graph> replacement = std::make_unique<Graph>();

  FilterCase() {
    auto g = std::make_unique<Graph>();
    Node* x = g->placeholder("x");
    Node* scale = g->placeholder("scale");
    Node* zp = g->placeholder("zero_point");
    auto block = [&](Node* in, Argument num) {
      Node* d = g->call_method("dequantize", {in});
      Node* a = g->call_function("torch.add", {d, std::move(num)});
      Node* r = g->call_method("relu", {a});
      return g->call_function("torch.quantize_per_tensor",
                              {r, scale, zp, Argument::dtype("torch.quint8")});
    };
    x = block(x, Argument(2));
    Node* y = g->call_function("operator.add", {x, Argument(1)});
    x = block(x, y);
    g->output(x);
    gm = module_of(std::move(g));

    Graph& p = *pattern;
    Node* px = p.placeholder("x");
    Node* num = p.placeholder("num");
    Node* ps = p.placeholder("scale");
    Node* pz = p.placeholder("zero_point");
    Node* d = p.call_method("dequantize", {px});
    Node* a = p.call_function("torch.add", {d, num});
    Node* r = p.call_method("relu", {a});
    p.output(p.call_function("torch.quantize_per_tensor",
                             {r, ps, pz, Argument::dtype("torch.quint8")}));

    Graph& q = *replacement;
    Node* qx = q.placeholder("x");
    Node* qn = q.placeholder("num");
    q.placeholder("scale");
    q.placeholder("zero_point");
    q.output(q.call_function("torch.mul", {qx, qn}));
  }
};

bool second_input_is_scalar(const InternalMatch& match, const Graph&,
                            const Graph& pattern) {
  const Node* num = pattern.nodes().to_vector()[1];
  const Argument* v = match.value_for(num);
  return v != nullptr && (v->is_int() || v->is_float());
}

TEST(ReplacePatternWithFilters, ReplacesOnlyTheMatchesEveryFilterAccepts) {
  FilterCase c;
  std::vector<ReplacedPatterns> r = replace_pattern_with_filters(
      *c.gm, *c.pattern, *c.replacement, {second_input_is_scalar});
  ASSERT_EQ(r.size(), 1u);
  // The replacements returned are the torch.mul nodes in the graph.
  std::vector<Node*> muls =
      c.gm->graph().find_nodes(Opcode::kCallFunction, "torch.mul");
  EXPECT_EQ(r[0].replacements, muls);
  EXPECT_EQ(muls.size(), 1u);
  EXPECT_EQ(c.gm->graph().find_nodes(Opcode::kCallMethod, "dequantize").size(),
            1u);

  FilterCase unfiltered;
  EXPECT_EQ(replace_pattern(*unfiltered.gm, *unfiltered.pattern,
                            *unfiltered.replacement)
                .size(),
            2u);
}

TEST(ReplacePatternWithFilters, AFilterSeesTheOriginalAndPatternGraphs) {
  FilterCase c;
  int calls = 0;
  MatchFilter count = [&](const InternalMatch&, const Graph& original,
                          const Graph& pattern) {
    EXPECT_EQ(&original, &c.gm->graph());
    EXPECT_EQ(&pattern, c.pattern.get());
    ++calls;
    return false;
  };
  EXPECT_TRUE(
      replace_pattern_with_filters(*c.gm, *c.pattern, *c.replacement, {count})
          .empty());
  EXPECT_EQ(calls, 2);
}

// x + 1 then relu, three times with different literals.
std::unique_ptr<Graph> add_relu_graph() {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  for (Argument lit : {Argument(1), Argument(3), Argument(2.5)}) {
    x = g->call_function("torch.relu",
                         {g->call_function("operator.add", {x, lit})});
  }
  x = g->call_function("torch.relu",
                       {g->call_function("operator.add", {x, y})});
  g->output(x);
  return g;
}

TEST(ReplacePattern, LiteralsAreWildcardsWhenAsked) {
  auto pattern = std::make_unique<Graph>();
  pattern->output(pattern->call_function(
      "torch.relu", {pattern->call_function("operator.add",
                                            {pattern->placeholder("x"), 1})}));
  auto replacement = unary("torch.sigmoid");

  auto exact = module_of(add_relu_graph());
  EXPECT_EQ(replace_pattern(*exact, *pattern, *replacement).size(), 1u);

  auto loose = module_of(add_relu_graph());
  RewriteOptions options;
  options.ignore_literals = true;
  // 1, 3 and 2.5 match; y (a node) does not.
  EXPECT_EQ(replace_pattern(*loose, *pattern, *replacement, options).size(),
            3u);
  EXPECT_EQ(
      loose->graph().find_nodes(Opcode::kCallFunction, "torch.sigmoid").size(),
      3u);
  EXPECT_EQ(
      loose->graph().find_nodes(Opcode::kCallFunction, "operator.add").size(),
      1u);
}

// torch.add(x, y) written four ways; the last adds twice.
std::unique_ptr<Graph> adds_graph() {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  Node* a = g->call_function("torch.add", {x, y});
  Node* b = g->call_function("torch.add", {a}, {{"other", Argument(y)}});
  Node* c = g->call_function("torch.add", {b, y}, {{"alpha", Argument(1)}});
  Node* d = g->call_function("torch.add", {c, y}, {{"alpha", Argument(2)}});
  Node* e = g->call_method("clamp", {d, Argument(0.0)});
  g->output(g->call_method("clamp", {e}, {{"min", Argument(0.0)}}));
  return g;
}

TEST(ReplacePattern, NormalizedArgumentsMatchWhateverTheCallSpelling) {
  auto pattern = std::make_unique<Graph>();
  Node* px = pattern->placeholder("x");
  Node* py = pattern->placeholder("y");
  pattern->output(pattern->call_function("torch.add", {px, py}));
  auto replacement = std::make_unique<Graph>();
  Node* rx = replacement->placeholder("x");
  Node* ry = replacement->placeholder("y");
  replacement->output(replacement->call_function("torch.sub", {rx, ry}));

  // As written (torch.fx): only the call spelled like the pattern.
  auto plain = module_of(adds_graph());
  EXPECT_EQ(replace_pattern(*plain, *pattern, *replacement).size(), 1u);

  // Bound to torch.add's signature: positional, keyword and default-valued
  // alpha all match; alpha=2 does not.
  auto normalized = module_of(adds_graph());
  RewriteOptions options;
  options.normalize_arguments = true;
  EXPECT_EQ(
      replace_pattern(*normalized, *pattern, *replacement, options).size(), 3u);
  EXPECT_EQ(
      normalized->graph().find_nodes(Opcode::kCallFunction, "torch.add").size(),
      1u);

  // Methods too: x.clamp(0.0) and x.clamp(min=0.0).
  auto clamp = std::make_unique<Graph>();
  clamp->output(clamp->call_method("clamp", {clamp->placeholder("x")},
                                   {{"min", Argument(0.0)}}));
  auto relu = unary("torch.relu");
  auto g = module_of(adds_graph());
  EXPECT_EQ(replace_pattern(*g, *clamp, *relu).size(), 1u);
  auto h = module_of(adds_graph());
  EXPECT_EQ(replace_pattern(*h, *clamp, *relu, options).size(), 2u);
}

TEST(ReplacePattern, CarriesTheReplacedNodesMetaToTheReplacement) {
  auto g = sigmoid_chain(1);
  Node* s = g->find_nodes(Opcode::kCallFunction, "torch.sigmoid")[0];
  s->set_meta("tensor_meta", Argument::dict({{"shape", Argument{2, 3}}}));
  s->set_meta("stack_trace", "line 3");
  auto gm = module_of(std::move(g));
  auto pattern = unary("torch.sigmoid");
  auto replacement = unary("torch.exp");
  // The replacement's own meta wins over the replaced node's.
  replacement->find_nodes(Opcode::kCallFunction, "torch.exp")[0]->set_meta(
      "stack_trace", "replacement");
  std::vector<ReplacedPatterns> r =
      replace_pattern(*gm, *pattern, *replacement);
  ASSERT_EQ(r.size(), 1u);
  const Node* exp = r[0].replacements[0];
  ASSERT_NE(exp->meta_value("tensor_meta"), nullptr);
  EXPECT_EQ(*exp->meta_value("tensor_meta"),
            Argument::dict({{"shape", Argument{2, 3}}}));
  EXPECT_EQ(*exp->meta_value("stack_trace"), Argument("replacement"));

  // Every replacement node learns where the code came from (the anchor's
  // stack_trace), not its shape.
  auto g3 = sigmoid_chain(1);
  Node* s3 = g3->find_nodes(Opcode::kCallFunction, "torch.sigmoid")[0];
  s3->set_meta("stack_trace", "model.py:7");
  s3->set_meta("tensor_meta", 1);
  auto gm3 = module_of(std::move(g3));
  auto two = std::make_unique<Graph>();
  Node* tx = two->placeholder("x");
  two->output(
      two->call_function("torch.exp", {two->call_function("torch.neg", {tx})}));
  r = replace_pattern(*gm3, *pattern, *two);
  ASSERT_EQ(r[0].replacements.size(), 2u);
  const Node* neg = r[0].replacements[0];
  EXPECT_EQ(*neg->meta_value("stack_trace"), Argument("model.py:7"));
  EXPECT_EQ(neg->meta_value("tensor_meta"), nullptr);
  EXPECT_EQ(*r[0].replacements[1]->meta_value("tensor_meta"), Argument(1));

  auto g2 = sigmoid_chain(1);
  g2->find_nodes(Opcode::kCallFunction, "torch.sigmoid")[0]->set_meta("k", 1);
  auto gm2 = module_of(std::move(g2));
  RewriteOptions options;
  options.propagate_meta = false;
  r = replace_pattern(*gm2, *pattern, *unary("torch.exp"), options);
  EXPECT_EQ(r[0].replacements[0]->meta_value("k"), nullptr);
}

TEST(ReplacePattern, AReturnedNodeWithoutUsersIsReplacedAfterTheMatch) {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  g->call_function("torch.neg", {x});  // dead, but matched
  g->output(g->call_function("torch.relu", {x}));
  auto gm = module_of(std::move(g));
  std::vector<ReplacedPatterns> r =
      replace_pattern(*gm, *unary("torch.neg"), *unary("torch.abs"));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(graph_order(gm->graph()), (Names{"x", "abs_1", "relu", "output"}));
}

TEST(ReplacePattern, RefusesAReplacementThatDoesNotFitThePattern) {
  auto gm = module_of(sigmoid_chain(2));
  auto two = std::make_unique<Graph>();
  Node* a = two->placeholder("a");
  two->placeholder("b");
  two->output(two->call_function("torch.exp", {a}));
  EXPECT_EQ(
      error_of([&] { replace_pattern(*gm, *unary("torch.sigmoid"), *two); }),
      "replace_pattern: the replacement has 2 placeholders, the "
      "pattern 1");
  auto pair = std::make_unique<Graph>();
  Node* x = pair->placeholder("x");
  pair->output(Argument::tuple({x, pair->call_function("torch.exp", {x})}));
  EXPECT_EQ(
      error_of([&] { replace_pattern(*gm, *unary("torch.sigmoid"), *pair); }),
      "replace_pattern: the replacement returns 2 values, the pattern 1");
  auto literal = std::make_unique<Graph>();
  literal->placeholder("x");
  literal->output(Argument(1));
  EXPECT_EQ(error_of([&] {
              replace_pattern(*gm, *unary("torch.sigmoid"), *literal);
            }),
            "replace_pattern: the replacement's output must return nodes");
  // Nothing changed.
  EXPECT_EQ(graph_order(gm->graph()),
            (Names{"x", "sigmoid", "sigmoid_1", "output"}));
}

// conv -> bn -> relu twice, at module paths the pattern does not use.
struct ConvBnNet {
  std::shared_ptr<GraphModule> gm;
  ConvBnNet() {
    auto g = std::make_unique<Graph>();
    Node* x = g->placeholder("x");
    for (const char* block : {"block1", "block2"}) {
      x = g->call_module(std::string(block) + ".conv", {x});
      x = g->call_module(std::string(block) + ".bn", {x});
      x = g->call_module(std::string(block) + ".act", {x});
    }
    g->output(x);
    GraphModule::AttributeMap attrs;
    for (const char* block : {"block1", "block2"}) {
      GraphModule::Attribute conv, bn, act;
      conv.module =
          torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 3, 3).padding(1)).ptr();
      bn.module = torch::nn::BatchNorm2d(3).ptr();
      act.module = torch::nn::ReLU().ptr();
      attrs.emplace_back(std::string(block) + ".conv", conv);
      attrs.emplace_back(std::string(block) + ".bn", bn);
      attrs.emplace_back(std::string(block) + ".act", act);
    }
    gm = std::make_shared<GraphModule>(attrs, std::move(g));
  }
};

TEST(ReplacePattern, MatchesCallModuleByModuleTypeWhenAsked) {
  ConvBnNet net;
  auto pattern = std::make_unique<Graph>();
  Node* c =
      pattern->call_module("torch.nn.Conv2d", {pattern->placeholder("x")});
  pattern->output(pattern->call_module("torch.nn.BatchNorm2d", {c}));
  // The replacement calls the conv the match found.
  auto replacement = std::make_unique<Graph>();
  replacement->output(replacement->call_module(
      "torch.nn.Conv2d", {replacement->placeholder("x")}));

  // By target, nothing matches.
  EXPECT_TRUE(replace_pattern(*net.gm, *pattern, *replacement).empty());

  RewriteOptions options;
  options.match_modules_by_type = true;
  std::vector<ReplacedPatterns> r =
      replace_pattern(*net.gm, *pattern, *replacement, options);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].replacements[0]->target(), "block1.conv");
  EXPECT_EQ(r[1].replacements[0]->target(), "block2.conv");
  EXPECT_EQ(net.gm->code(),
            "\n\n\ndef forward(self, x):\n"
            "    block1_conv_1 = self.block1.conv(x);  x = None\n"
            "    block1_act = self.block1.act(block1_conv_1);  block1_conv_1 = "
            "None\n"
            "    block2_conv_1 = self.block2.conv(block1_act);  block1_act = "
            "None\n"
            "    block2_act = self.block2.act(block2_conv_1);  block2_conv_1 = "
            "None\n"
            "    return block2_act\n    ");
  // The type comes from the pattern's own module when it has one.
  ConvBnNet again;
  auto by_path = std::make_unique<Graph>();
  Node* pc = by_path->call_module("conv", {by_path->placeholder("x")});
  by_path->output(by_path->call_module("bn", {pc}));
  GraphModule::AttributeMap pattern_attrs;
  GraphModule::Attribute conv, bn;
  conv.module = torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 1, 1)).ptr();
  bn.module = torch::nn::BatchNorm2d(1).ptr();
  pattern_attrs.emplace_back("conv", conv);
  pattern_attrs.emplace_back("bn", bn);
  GraphModule pattern_module(pattern_attrs, std::move(by_path));
  auto conv_only = std::make_unique<Graph>();
  conv_only->output(
      conv_only->call_module("conv", {conv_only->placeholder("x")}));
  options.pattern_module = &pattern_module;
  r = replace_pattern(*again.gm, pattern_module.graph(), *conv_only, options);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].replacements[0]->target(), "block2.conv");
}

// Patterns with several outputs: candidates for later anchors come from the
// nodes already matched; every pair is still found.
TEST(SubgraphMatcher, FindsEveryMultiOutputMatchInALongGraph) {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  for (int i = 0; i < 200; ++i) {
    Node* s = g->call_function("torch.sigmoid", {x});
    Node* r = g->call_function("torch.relu", {x});
    x = g->call_function("operator.add", {s, r});
  }
  g->output(x);
  auto p = std::make_unique<Graph>();
  Node* a = p->placeholder("a");
  p->output(Argument::tuple({p->call_function("torch.sigmoid", {a}),
                             p->call_function("torch.relu", {a})}));
  std::vector<InternalMatch> m = SubgraphMatcher(*p).match(*g);
  ASSERT_EQ(m.size(), 200u);
  EXPECT_EQ(m[199].returning_nodes[0]->name(), "sigmoid_199");
  EXPECT_EQ(m[199].returning_nodes[1]->name(), "relu_199");
}

// A match whose fusion would create a cycle (a path leaves the match and
// comes back in) is refused, as torch.fx's validate_partition refuses it.
TEST(SubgraphMatcher, RefusesMatchesThatWouldFormACycle) {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* a = g->call_function("torch.relu", {x});
  Node* outside = g->call_function("torch.neg", {a});
  Node* b = g->call_function("operator.add", {a, outside});
  g->output(Argument::tuple({a, b}));
  // Pattern: relu(x) returned, and add(relu, y) returned.
  auto p = std::make_unique<Graph>();
  Node* px = p->placeholder("x");
  Node* py = p->placeholder("y");
  Node* pr = p->call_function("torch.relu", {px});
  p->output(Argument::tuple({pr, p->call_function("operator.add", {pr, py})}));
  // relu -> neg -> add leaves the match and comes back.
  EXPECT_TRUE(SubgraphMatcher(*p).match(*g).empty());
}

}  // namespace
}  // namespace fx
