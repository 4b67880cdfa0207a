#include "fx_core/partition/capability_partitioner.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "fx_core/partition/graph_index.h"
#include "fx_core/partition/target_support.h"

namespace fx {
namespace {

bool is_getitem(const Node& n) {
  return n.op() == Opcode::kCallFunction &&
         canonical_function_target(n.target()) == "operator.getitem";
}

// A call_function node torch.fx counts as computing something.
bool is_compute(const Node& n) {
  if (n.op() != Opcode::kCallFunction) return false;
  std::string t = canonical_function_target(n.target());
  return t != "operator.getitem" && t != "torch.ops.aten.view";
}

// Step 1 of the header: the greedy grouping in reverse graph order. Groups
// are buckets of node indices merged small-into-large; each carries torch.fx's
// partition id and its first and last position in the graph.
class Grouping {
 public:
  explicit Grouping(const GraphIndex& index)
      : index_(index), bucket_of_(index.size(), -1), mark_(index.size(), 0) {}

  void visit(int v) {
    collect_user_groups(v);
    std::vector<int> kept = upstream_buckets();
    if (kept.empty()) {
      buckets_.push_back(Bucket{{v}, next_id_++, v, v});
      bucket_of_[v] = static_cast<int>(buckets_.size()) - 1;
      return;
    }
    int into = kept[0];
    add(into, v);
    for (size_t k = 1; k < kept.size(); ++k) into = merge(into, kept[k]);
  }

  // Each node's partition id, or -1.
  std::vector<int64_t> ids() const {
    std::vector<int64_t> out(index_.size(), -1);
    for (int i = 0; i < index_.size(); ++i) {
      if (bucket_of_[i] >= 0) out[i] = buckets_[bucket_of_[i]].id;
    }
    return out;
  }

 private:
  struct Bucket {
    std::vector<int> nodes;
    int64_t id;
    int lo, hi;  // first and last position
  };
  // A user's group: a bucket, or (bucket < 0) the unsupported user alone.
  struct Group {
    int bucket;
    int node;
  };

  // The groups of v's users, each once, in users order.
  void collect_user_groups(int v) {
    groups_.clear();
    bucket_stamp_.resize(buckets_.size(), 0);
    ++stamp_;
    for (int u : index_.users(v)) {
      int b = bucket_of_[u];
      if (b < 0) {
        groups_.push_back({-1, u});
      } else if (bucket_stamp_[b] != stamp_) {
        bucket_stamp_[b] = stamp_;
        groups_.push_back({b, u});
      }
    }
  }

  // torch.fx's pairwise filter: a group downstream of another is dropped.
  // Returns the buckets left, in users order.
  std::vector<int> upstream_buckets() {
    std::vector<char> dropped(groups_.size(), 0);
    for (size_t i = 0; i < groups_.size(); ++i) {
      for (size_t j = i + 1; j < groups_.size(); ++j) {
        if (dropped[i] && dropped[j]) continue;
        if (reaches(groups_[i], groups_[j])) {
          dropped[j] = 1;
        } else if (reaches(groups_[j], groups_[i])) {
          dropped[i] = 1;
        }
      }
    }
    std::vector<int> kept;
    for (size_t i = 0; i < groups_.size(); ++i) {
      if (!dropped[i] && groups_[i].bucket >= 0) {
        kept.push_back(groups_[i].bucket);
      }
    }
    return kept;
  }

  size_t group_size(const Group& g) const {
    return g.bucket < 0 ? 1 : buckets_[g.bucket].nodes.size();
  }
  int lo(const Group& g) const {
    return g.bucket < 0 ? g.node : buckets_[g.bucket].lo;
  }
  int hi(const Group& g) const {
    return g.bucket < 0 ? g.node : buckets_[g.bucket].hi;
  }
  bool contains(const Group& g, int n) const {
    return g.bucket < 0 ? n == g.node : bucket_of_[n] == g.bucket;
  }
  template <typename Fn>
  void for_each_member(const Group& g, Fn&& fn) const {
    if (g.bucket < 0) {
      fn(g.node);
    } else {
      for (int n : buckets_[g.bucket].nodes) fn(n);
    }
  }

  // Whether some node of `b` depends on some node of `a`: a search from the
  // smaller group, inside the positions between the two.
  bool reaches(const Group& a, const Group& b) {
    int from = lo(a), to = hi(b);
    if (to <= from) return false;
    bool backward = group_size(b) <= group_size(a);
    ++stamp_;
    stack_.clear();
    auto push = [&](int n) {
      if (mark_[n] != stamp_) {
        mark_[n] = stamp_;
        stack_.push_back(n);
      }
    };
    if (backward) {
      for_each_member(b, [&](int n) {
        if (n > from) push(n);
      });
    } else {
      for_each_member(a, [&](int n) {
        if (n < to) push(n);
      });
    }
    while (!stack_.empty()) {
      int n = stack_.back();
      stack_.pop_back();
      auto next = backward ? index_.inputs(n) : index_.users(n);
      for (int m : next) {
        if (backward ? m < from : m > to) continue;
        if (backward ? contains(a, m) : contains(b, m)) return true;
        push(m);
      }
    }
    return false;
  }

  void add(int b, int v) {
    Bucket& bucket = buckets_[b];
    bucket.nodes.push_back(v);
    bucket.lo = std::min(bucket.lo, v);
    bucket.hi = std::max(bucket.hi, v);
    bucket_of_[v] = b;
  }

  // Moves `from`'s nodes into `into` (keeping `into`'s id), the smaller list
  // into the larger; returns the bucket that holds them.
  int merge(int into, int from) {
    int64_t id = buckets_[into].id;
    if (buckets_[into].nodes.size() < buckets_[from].nodes.size()) {
      std::swap(into, from);
    }
    Bucket& big = buckets_[into];
    Bucket& small = buckets_[from];
    for (int n : small.nodes) {
      big.nodes.push_back(n);
      bucket_of_[n] = into;
    }
    big.lo = std::min(big.lo, small.lo);
    big.hi = std::max(big.hi, small.hi);
    big.id = id;
    small.nodes.clear();
    small.nodes.shrink_to_fit();
    return into;
  }

  const GraphIndex& index_;
  std::vector<Bucket> buckets_;
  std::vector<int> bucket_of_;
  std::vector<uint32_t> mark_;
  std::vector<uint32_t> bucket_stamp_;
  uint32_t stamp_ = 0;
  std::vector<Group> groups_;
  std::vector<int> stack_;
  int64_t next_id_ = 0;
};

// Partition ids per node, with torch.fx's dict order of partitions: a
// partition emptied and started again goes to the end.
class Assignment {
 public:
  explicit Assignment(std::vector<int64_t> ids) : ids_(std::move(ids)) {
    for (int64_t id : ids_) {
      if (id < 0) continue;
      auto [it, inserted] = parts_.try_emplace(id, Part{0, id});
      ++it->second.size;
      next_order_ = std::max(next_order_, id + 1);
    }
  }

  int64_t id(int n) const { return ids_[n]; }

  void assign(int n, int64_t id) {
    if (ids_[n] >= 0) {
      auto it = parts_.find(ids_[n]);
      if (--it->second.size == 0) parts_.erase(it);
    }
    ids_[n] = id;
    if (id < 0) return;
    auto [it, inserted] = parts_.try_emplace(id, Part{0, next_order_});
    if (inserted) ++next_order_;
    ++it->second.size;
  }

  // Live partition ids in torch.fx's order.
  std::vector<int64_t> ordered_ids() const {
    std::vector<std::pair<int64_t, int64_t>> order;
    for (const auto& [id, part] : parts_) order.emplace_back(part.order, id);
    std::sort(order.begin(), order.end());
    std::vector<int64_t> out;
    for (const auto& o : order) out.push_back(o.second);
    return out;
  }

 private:
  struct Part {
    size_t size;
    int64_t order;
  };
  std::vector<int64_t> ids_;
  absl::flat_hash_map<int64_t, Part> parts_;
  int64_t next_order_ = 0;
};

// Step 2: getitem users follow a node whose users are all getitems.
void reassign_getitems(const GraphIndex& index, Assignment& assignment) {
  std::vector<std::pair<int, int64_t>> moves;
  absl::flat_hash_map<int, size_t> move_of;
  for (int n = 0; n < index.size(); ++n) {
    auto users = index.users(n);
    bool all_getitem = std::all_of(users.begin(), users.end(), [&](int u) {
      return is_getitem(*index.node(u));
    });
    if (!all_getitem) continue;
    for (int u : users) {
      if (assignment.id(u) == assignment.id(n)) continue;
      auto [it, inserted] = move_of.try_emplace(u, moves.size());
      if (inserted) {
        moves.emplace_back(u, assignment.id(n));
      } else {
        moves[it->second].second = assignment.id(n);
      }
    }
  }
  for (const auto& [u, id] : moves) assignment.assign(u, id);
}

// Step 3 and the output: partitions in order, nodes in graph order.
std::vector<Partition> collect(const GraphIndex& index,
                               const Assignment& assignment,
                               const PartitionOptions& options) {
  std::vector<int64_t> order = assignment.ordered_ids();
  absl::flat_hash_map<int64_t, size_t> slot;
  std::vector<Partition> parts(order.size());
  std::vector<size_t> compute(order.size(), 0);
  for (size_t k = 0; k < order.size(); ++k) {
    slot[order[k]] = k;
    parts[k].id = static_cast<size_t>(order[k]);
  }
  for (int n = 0; n < index.size(); ++n) {
    if (assignment.id(n) < 0) continue;
    size_t k = slot[assignment.id(n)];
    parts[k].nodes.push_back(index.node(n));
    if (is_compute(*index.node(n))) ++compute[k];
  }
  std::vector<Partition> out;
  for (size_t k = 0; k < parts.size(); ++k) {
    if (!options.allows_single_node_partition && compute[k] <= 1) continue;
    if (parts[k].nodes.size() < options.min_partition_size) continue;
    out.push_back(std::move(parts[k]));
  }
  return out;
}

}  // namespace

std::vector<Partition> propose_partitions(const Graph& graph,
                                          const OperatorSupport& support,
                                          const PartitionOptions& options) {
  GraphIndex index(graph);
  std::vector<int> candidates;
  for (int n = 0; n < index.size(); ++n) {
    const Node& node = *index.node(n);
    if (node.op() == Opcode::kPlaceholder || node.op() == Opcode::kOutput) {
      continue;
    }
    if (support.is_node_supported(node)) candidates.push_back(n);
  }
  Grouping grouping(index);
  for (auto it = candidates.rbegin(); it != candidates.rend(); ++it) {
    grouping.visit(*it);
  }
  Assignment assignment(grouping.ids());
  reassign_getitems(index, assignment);
  return collect(index, assignment, options);
}

}  // namespace fx
