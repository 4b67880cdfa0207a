#include "host/minimizer/minimizer.h"

#include <ATen/ATen.h>

#include <cmath>
#include <exception>
#include <iomanip>
#include <limits>
#include <memory>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "fx_core/ir/graph.h"
#include "fx_core/partition/fuse_partitions.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/interpreter.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::host {
namespace {

using Outcome = MinimizerStep::Outcome;
using Values = absl::flat_hash_map<std::string, c10::IValue>;
constexpr double kInf = std::numeric_limits<double>::infinity();

bool is_compute(const Node& n) {
  return n.op() == Opcode::kCallFunction || n.op() == Opcode::kCallMethod ||
         n.op() == Opcode::kCallModule;
}

// Every node's value in the host's run of the unchanged graph, by name.
Values reference_values(GraphModule& module,
                        const std::vector<c10::IValue>& inputs) {
  Interpreter interpreter(module, /*garbage_collect_values=*/false);
  interpreter.run(inputs);
  Values values;
  for (const auto& [node, value] : interpreter.env()) {
    values.emplace(std::string(node->name()), value);
  }
  return values;
}

// Whether a node of `names` is used by a node outside it.
bool has_outputs(const std::vector<Node*>& nodes,
                 const absl::flat_hash_set<const Node*>& in_set) {
  for (const Node* n : nodes) {
    for (const Node* user : n->users()) {
      if (!in_set.contains(user)) return true;
    }
  }
  return false;
}

// Compares two outputs; the largest |a - b| goes to *max_diff (inf when their
// structure, shape or dtype differs).
bool close(const c10::IValue& a, const c10::IValue& b, double atol, double rtol,
           double* max_diff) {
  if (a.isTensor() && b.isTensor()) {
    const at::Tensor& x = a.toTensor();
    const at::Tensor& y = b.toTensor();
    if (x.sizes() != y.sizes() || x.scalar_type() != y.scalar_type()) {
      *max_diff = kInf;
      return false;
    }
    if (x.numel() == 0) return true;
    if (!x.is_floating_point() && !x.is_complex()) {
      bool equal = x.equal(y);
      if (!equal) *max_diff = kInf;
      return equal;
    }
    double diff = (x - y).abs().nan_to_num(0, 0, 0).max().item<double>();
    *max_diff = std::max(*max_diff, diff);
    return at::allclose(x, y, rtol, atol, /*equal_nan=*/true);
  }
  bool a_list = a.isList() || a.isTuple(), b_list = b.isList() || b.isTuple();
  if (a_list && b_list) {
    auto items = [](const c10::IValue& v) {
      return v.isList()
                 ? v.toListRef().vec()
                 : std::vector<c10::IValue>(v.toTupleRef().elements().begin(),
                                            v.toTupleRef().elements().end());
    };
    std::vector<c10::IValue> xs = items(a), ys = items(b);
    if (xs.size() != ys.size()) {
      *max_diff = kInf;
      return false;
    }
    bool all = true;
    for (size_t i = 0; i < xs.size(); ++i) {
      all = close(xs[i], ys[i], atol, rtol, max_diff) && all;
    }
    return all;
  }
  if (a == b) return true;
  *max_diff = kInf;
  return false;
}

class Minimizer {
 public:
  Minimizer(GraphModule& module, Values reference, const BackendRun& backend,
            const MinimizerOptions& options)
      : module_(module),
        reference_(std::move(reference)),
        backend_(backend),
        options_(options) {}

  // Checks the nodes named `names`; records the step and returns whether
  // they mismatch.
  bool mismatches(const std::vector<std::string>& names) {
    MinimizerStep step;
    step.nodes = names;
    step.outcome = check(names, step);
    result_.steps.push_back(step);
    return step.outcome != Outcome::kMatch;
  }

  MinimizerResult& result() { return result_; }

 private:
  Outcome check(const std::vector<std::string>& names, MinimizerStep& step) {
    std::unique_ptr<Graph> copy = module_.graph().snapshot();
    absl::flat_hash_map<std::string_view, Node*> by_name;
    for (Node* n : copy->nodes()) by_name.emplace(n->name(), n);
    std::vector<Node*> nodes;
    absl::flat_hash_set<const Node*> in_set;
    for (const std::string& name : names) {
      nodes.push_back(by_name.at(name));
      in_set.insert(nodes.back());
    }
    if (!has_outputs(nodes, in_set)) {
      step.detail = "no outputs (nothing outside uses these nodes)";
      return Outcome::kMatch;
    }
    std::vector<FusedSubgraph> fused =
        fuse_by_partitions(*copy, {nodes}, "minimize_");
    const Graph& child = *fused[0].graph;
    std::vector<c10::IValue> inputs;
    for (const Node* n : child.nodes()) {
      if (n->op() != Opcode::kPlaceholder) continue;
      auto it = reference_.find(std::string(n->name()));
      if (it == reference_.end()) {
        throw FxError(cat("minimize: no reference value for '", n->name(),
                          "', an input of the subgraph"));
      }
      inputs.push_back(it->second);
    }
    GraphModule a(module_, child.snapshot(), "MinimizeSubgraph");
    GraphModule b(module_, child.snapshot(), "MinimizeSubgraph");
    c10::IValue expected = a.forward(inputs);
    absl::StatusOr<c10::IValue> got = run_backend(b, inputs);
    if (!got.ok()) {
      step.max_abs_diff = kInf;
      step.detail = std::string(got.status().message());
      return Outcome::kBackendError;
    }
    if (close(*got, expected, options_.atol, options_.rtol,
              &step.max_abs_diff)) {
      return Outcome::kMatch;
    }
    return Outcome::kMismatch;
  }

  absl::StatusOr<c10::IValue> run_backend(
      GraphModule& subgraph, const std::vector<c10::IValue>& inputs) {
    try {
      return backend_(subgraph, inputs);
    } catch (const std::exception& e) {
      return absl::InternalError(e.what());
    }
  }

  GraphModule& module_;
  Values reference_;
  const BackendRun& backend_;
  MinimizerOptions options_;
  MinimizerResult result_;
};

using Names = std::vector<std::string>;

// net_min_base's _binary_search_impl over names[begin, end).
Names bisect(Minimizer& m, const Names& names, size_t begin, size_t end,
             bool find_all) {
  Names range(names.begin() + begin, names.begin() + end);
  if (range.empty() || !m.mismatches(range)) return {};
  if (range.size() == 1) return range;
  size_t mid = begin + range.size() / 2;
  Names culprits = bisect(m, names, begin, mid, find_all);
  if (!culprits.empty() && !find_all) return culprits;
  Names second = bisect(m, names, mid, end, find_all);
  culprits.insert(culprits.end(), second.begin(), second.end());
  return culprits;
}

Names sequential(Minimizer& m, const Names& names, bool find_all) {
  Names culprits;
  for (const std::string& name : names) {
    if (!m.mismatches({name})) continue;
    culprits.push_back(name);
    if (!find_all) break;
  }
  return culprits;
}

absl::Status check_inputs(const GraphModule& module,
                          const std::vector<c10::IValue>& inputs) {
  size_t placeholders = 0;
  for (const Node* n : module.graph().nodes()) {
    placeholders += n->op() == Opcode::kPlaceholder;
  }
  if (placeholders == inputs.size()) return absl::OkStatus();
  return absl::InvalidArgumentError(cat("minimize: the graph has ",
                                        placeholders, " placeholders but ",
                                        inputs.size(), " inputs were given"));
}

}  // namespace

absl::StatusOr<MinimizeMode> parse_minimize_mode(std::string_view word) {
  if (word == "bisect") return MinimizeMode::kBisect;
  if (word == "sequential") return MinimizeMode::kSequential;
  return absl::InvalidArgumentError(
      cat("expected \"bisect\" or \"sequential\", got \"", word, "\""));
}

absl::StatusOr<MinimizerResult> minimize(GraphModule& module,
                                         const std::vector<c10::IValue>& inputs,
                                         const BackendRun& backend,
                                         const MinimizerOptions& options) {
  if (absl::Status s = check_inputs(module, inputs); !s.ok()) return s;
  Names candidates;
  for (const Node* n : module.graph().nodes()) {
    if (is_compute(*n)) candidates.emplace_back(n->name());
  }
  try {
    Minimizer m(module, reference_values(module, inputs), backend, options);
    m.result().culprits =
        options.mode == MinimizeMode::kBisect
            ? bisect(m, candidates, 0, candidates.size(), options.find_all)
            : sequential(m, candidates, options.find_all);
    return std::move(m.result());
  } catch (const std::exception& e) {
    return absl::InternalError(cat("minimize: ", e.what()));
  }
}

namespace {

// "0.713", "1e-05", "inf": three significant digits.
std::string number(double x) {
  std::ostringstream out;
  out << std::setprecision(3) << x;
  return out.str();
}

}  // namespace

std::string describe(const MinimizerStep& step) {
  std::string nodes = step.nodes.size() <= 4
                          ? join(step.nodes, ", ")
                          : cat(step.nodes.front(), " .. ", step.nodes.back(),
                                " (", step.nodes.size(), " nodes)");
  switch (step.outcome) {
    case Outcome::kMatch:
      return cat("[", nodes, "] match",
                 step.detail.empty() ? "" : cat(": ", step.detail));
    case Outcome::kMismatch:
      return cat("[", nodes, "] mismatch, max |a-b| ",
                 number(step.max_abs_diff));
    case Outcome::kBackendError:
      return cat("[", nodes, "] backend failed: ", step.detail);
  }
  return "";
}

}  // namespace fx::host
