#include "host/pipeline/pass_ordering.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "fx_core/support/strings.h"

namespace fx::host {
namespace {

bool contains(const FxNameList& list, std::string_view name) {
  for (size_t i = 0; i < list.count; ++i) {
    if (name == list.names[i]) return true;
  }
  return false;
}

std::string quoted(std::string_view s) { return cat("'", s, "'"); }

// Why one pass must run before another.
struct Edge {
  size_t to;
  std::string reason;
};

// Edges between positions of `passes` from run_after / run_before and from
// producers to the passes requiring what they produce.
std::vector<std::vector<Edge>> constraint_edges(
    const std::vector<const FxPassInfo*>& passes) {
  const size_t n = passes.size();
  std::vector<std::vector<Edge>> edges(n);
  for (size_t a = 0; a < n; ++a) {
    const FxPassInfo& A = *passes[a];
    for (size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      const FxPassInfo& B = *passes[b];
      if (contains(A.run_after, B.name)) {
        edges[b].push_back(
            {a, cat(quoted(A.name), " declares run_after ", quoted(B.name))});
      }
      if (contains(A.run_before, B.name)) {
        edges[a].push_back(
            {b, cat(quoted(A.name), " declares run_before ", quoted(B.name))});
      }
      for (size_t r = 0; r < A.required.count; ++r) {
        std::string_view p = A.required.names[r];
        if (contains(B.produces, p) && !contains(B.required, p)) {
          edges[b].push_back({a, cat(quoted(A.name), " requires ", quoted(p),
                                     ", which ", quoted(B.name), " produces")});
        }
      }
    }
  }
  return edges;
}

// A cycle through the edges, as an error, or OK.
absl::Status find_cycle(const std::vector<const FxPassInfo*>& passes,
                        const std::vector<std::vector<Edge>>& edges) {
  const size_t n = passes.size();
  std::vector<int> state(n, 0);  // 0 new, 1 on the stack, 2 done
  std::vector<std::pair<size_t, const Edge*>> stack;  // node, edge into it
  std::string message;
  std::function<bool(size_t)> visit = [&](size_t v) {
    state[v] = 1;
    for (const Edge& e : edges[v]) {
      if (state[e.to] == 1) {
        // The cycle is the stack from e.to to v, then back to e.to.
        std::vector<std::string> names, reasons;
        size_t start = 0;
        while (stack[start].first != e.to) ++start;
        for (size_t i = start; i < stack.size(); ++i) {
          names.push_back(quoted(passes[stack[i].first]->name));
          if (i > start) reasons.push_back(stack[i].second->reason);
        }
        names.push_back(quoted(passes[e.to]->name));
        reasons.push_back(e.reason);
        message =
            cat("the ordering constraints form a cycle: ", join(names, " -> "),
                " (", join(reasons, "; "), ")");
        return true;
      }
      if (state[e.to] == 0) {
        stack.push_back({e.to, &e});
        if (visit(e.to)) return true;
        stack.pop_back();
      }
    }
    state[v] = 2;
    return false;
  };
  for (size_t v = 0; v < n; ++v) {
    if (state[v] != 0) continue;
    stack.assign(1, {v, nullptr});
    if (visit(v)) return absl::FailedPreconditionError(message);
  }
  return absl::OkStatus();
}

std::string producers_hint(std::string_view property,
                           const std::vector<const FxPassInfo*>& known) {
  std::set<std::string> names;
  for (const FxPassInfo* p : known) {
    if (contains(p->produces, property)) names.insert(quoted(p->name));
  }
  if (names.empty()) return "no loaded pass produces it";
  return cat("passes that produce it: ", join(names, ", "));
}

// run_after / run_before between positions of an explicit order.
absl::Status check_pairwise_order(const std::vector<const FxPassInfo*>& order) {
  const size_t n = order.size();
  for (size_t a = 0; a < n; ++a) {
    const FxPassInfo& A = *order[a];
    for (size_t b = 0; b < n; ++b) {
      const FxPassInfo& B = *order[b];
      if (b > a && contains(A.run_after, B.name)) {
        return absl::FailedPreconditionError(
            cat("pass ", quoted(A.name), " (position ", a + 1,
                ") must run after ", quoted(B.name), " (position ", b + 1,
                "): ", quoted(A.name), " declares run_after ", quoted(B.name)));
      }
      if (b < a && contains(A.run_before, B.name)) {
        return absl::FailedPreconditionError(cat(
            "pass ", quoted(A.name), " (position ", a + 1, ") must run before ",
            quoted(B.name), " (position ", b + 1, "): ", quoted(A.name),
            " declares run_before ", quoted(B.name)));
      }
    }
  }
  return absl::OkStatus();
}

// Why property `p`, required by the pass at position `a`, does not hold:
// `invalidated_by` lists (property, position) of earlier invalidations.
absl::Status unmet_requirement(
    const std::vector<const FxPassInfo*>& order, size_t a, std::string_view p,
    const std::vector<std::pair<std::string, size_t>>& invalidated_by,
    const std::vector<const FxPassInfo*>& known) {
  std::string prefix = cat("pass ", quoted(order[a]->name), " (position ",
                           a + 1, ") requires ", quoted(p));
  for (auto it = invalidated_by.rbegin(); it != invalidated_by.rend(); ++it) {
    if (it->first == p) {
      return absl::FailedPreconditionError(cat(
          prefix, ", which ", quoted(order[it->second]->name), " (position ",
          it->second + 1, ") invalidates and no pass after it produces again"));
    }
  }
  for (size_t later = a + 1; later < order.size(); ++later) {
    if (contains(order[later]->produces, p)) {
      return absl::FailedPreconditionError(
          cat(prefix, ", but ", quoted(order[later]->name),
              " that produces it runs later (position ", later + 1, ")"));
    }
  }
  return absl::FailedPreconditionError(cat(prefix,
                                           ", which no earlier pass produces (",
                                           producers_hint(p, known), ")"));
}

// Properties through an explicit order: each requirement holds when needed.
absl::Status check_requirements(const std::vector<const FxPassInfo*>& order,
                                const std::vector<std::string>& assumed,
                                const std::vector<const FxPassInfo*>& known) {
  absl::flat_hash_set<std::string> holds(assumed.begin(), assumed.end());
  std::vector<std::pair<std::string, size_t>> invalidated_by;
  for (size_t a = 0; a < order.size(); ++a) {
    const FxPassInfo& A = *order[a];
    for (size_t r = 0; r < A.required.count; ++r) {
      std::string_view p = A.required.names[r];
      if (holds.contains(std::string(p))) continue;
      return unmet_requirement(order, a, p, invalidated_by, known);
    }
    for (size_t i = 0; i < A.invalidates.count; ++i) {
      if (contains(A.produces, A.invalidates.names[i])) continue;
      holds.erase(A.invalidates.names[i]);
      invalidated_by.emplace_back(A.invalidates.names[i], a);
    }
    for (size_t i = 0; i < A.produces.count; ++i) {
      holds.insert(A.produces.names[i]);
    }
  }
  return absl::OkStatus();
}

// Requirements that nothing in the pipeline (and nothing assumed) can meet.
absl::Status check_producible(const std::vector<const FxPassInfo*>& passes,
                              const std::vector<std::string>& assumed,
                              const std::vector<const FxPassInfo*>& known) {
  const size_t n = passes.size();
  for (size_t a = 0; a < n; ++a) {
    for (size_t r = 0; r < passes[a]->required.count; ++r) {
      std::string_view p = passes[a]->required.names[r];
      if (std::find(assumed.begin(), assumed.end(), p) != assumed.end()) {
        continue;
      }
      bool produced = false;
      for (size_t b = 0; b < n; ++b) {
        produced = produced || (b != a && contains(passes[b]->produces, p));
      }
      if (!produced) {
        return absl::FailedPreconditionError(
            cat("pass ", quoted(passes[a]->name), " requires ", quoted(p),
                ", which no pass in the pipeline produces (",
                producers_hint(p, known), ")"));
      }
    }
  }
  return absl::OkStatus();
}

// Passes that destroy a property run after the passes that need it, when
// that adds no cycle: adds those edges.
void add_invalidation_edges(const std::vector<const FxPassInfo*>& passes,
                            std::vector<std::vector<Edge>>& edges) {
  const size_t n = passes.size();
  auto reaches = [&](size_t from, size_t to) {
    std::vector<bool> seen(n, false);
    std::vector<size_t> todo{from};
    while (!todo.empty()) {
      size_t v = todo.back();
      todo.pop_back();
      if (v == to) return true;
      if (seen[v]) continue;
      seen[v] = true;
      for (const Edge& e : edges[v]) todo.push_back(e.to);
    }
    return false;
  };
  for (size_t a = 0; a < n; ++a) {
    for (size_t r = 0; r < passes[a]->required.count; ++r) {
      std::string_view p = passes[a]->required.names[r];
      for (size_t y = 0; y < n; ++y) {
        if (y == a || !contains(passes[y]->invalidates, p) ||
            contains(passes[y]->produces, p) || reaches(y, a)) {
          continue;
        }
        edges[a].push_back({y, ""});
      }
    }
  }
}

// Kahn's algorithm, taking the earliest written pass among the ready ones.
std::vector<size_t> topological_order(
    const std::vector<std::vector<Edge>>& edges) {
  const size_t n = edges.size();
  std::vector<size_t> indegree(n, 0);
  for (const auto& out : edges) {
    for (const Edge& e : out) ++indegree[e.to];
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t v = 0; v < n; ++v) {
    if (indegree[v] == 0) ready.push(v);
  }
  std::vector<size_t> order;
  while (!ready.empty()) {
    size_t v = ready.top();
    ready.pop();
    order.push_back(v);
    for (const Edge& e : edges[v]) {
      if (--indegree[e.to] == 0) ready.push(e.to);
    }
  }
  return order;
}

}  // namespace

absl::Status check_pass_order(const std::vector<const FxPassInfo*>& order,
                              const std::vector<std::string>& assumed,
                              const std::vector<const FxPassInfo*>& known) {
  absl::Status cycle = find_cycle(order, constraint_edges(order));
  if (!cycle.ok()) return cycle;
  absl::Status pairwise = check_pairwise_order(order);
  if (!pairwise.ok()) return pairwise;
  return check_requirements(order, assumed, known);
}

absl::StatusOr<std::vector<size_t>> auto_pass_order(
    const std::vector<const FxPassInfo*>& passes,
    const std::vector<std::string>& assumed,
    const std::vector<const FxPassInfo*>& known) {
  std::vector<std::vector<Edge>> edges = constraint_edges(passes);
  absl::Status cycle = find_cycle(passes, edges);
  if (!cycle.ok()) return cycle;
  absl::Status producible = check_producible(passes, assumed, known);
  if (!producible.ok()) return producible;
  add_invalidation_edges(passes, edges);
  std::vector<size_t> order = topological_order(edges);
  std::vector<const FxPassInfo*> ordered;
  for (size_t i : order) ordered.push_back(passes[i]);
  absl::Status ok = check_pass_order(ordered, assumed, known);
  if (!ok.ok()) {
    return absl::FailedPreconditionError(cat(
        "automatic ordering found no order that satisfies every constraint: ",
        std::string(ok.message())));
  }
  return order;
}

}  // namespace fx::host
