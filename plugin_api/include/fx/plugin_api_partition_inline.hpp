// The inline bodies of the wrapper's partitioning: Support rules,
// Partitions, propose_partitions, fuse_partitions and
// delegate_partitions.
//
// Part of the wrapper declared (and documented) in fx/plugin_api.hpp,
// which includes it through fx/plugin_api_inline.hpp. Include
// fx/plugin_api.hpp, not this file. Every definition here is inline (or a
// template), so the wrapper stays header-only.
#ifndef FX_PLUGIN_API_PARTITION_INLINE_HPP_
#define FX_PLUGIN_API_PARTITION_INLINE_HPP_

// Makes this header self-contained for tools that parse it alone; when
// plugin_api.hpp is the includer its guard makes this a no-op.
#include "fx/plugin_api.hpp"

namespace fxp {

// ------------------------------------------------------------- partitioning

inline Support::Support(FxSupport* rule,
                        std::vector<std::shared_ptr<void>> keep)
    : rule_(rule, [](FxSupport* r) { api()->ReleaseSupport(r); }),
      keep_(std::move(keep)) {}

inline Support Support::targets(FxOpcode op,
                                const std::vector<std::string>& names) {
  require_api_version(3, "SupportTargets");
  std::vector<const char*> c;
  for (const std::string& n : names) c.push_back(n.c_str());
  FxSupport* out = nullptr;
  check(api()->SupportTargets(op, c.data(), c.size(), &out));
  return Support(out, {});
}

inline Support Support::functions(const std::vector<std::string>& targets) {
  return Support::targets(FX_OP_CALL_FUNCTION, targets);
}
inline Support Support::methods(const std::vector<std::string>& names) {
  return targets(FX_OP_CALL_METHOD, names);
}
inline Support Support::module_types(const std::vector<std::string>& types) {
  return targets(FX_OP_CALL_MODULE, types);
}

inline Support Support::tensor_meta(FxTensorRule rule) {
  require_api_version(3, "SupportTensorMeta");
  rule.struct_size = sizeof(FxTensorRule);
  FxSupport* out = nullptr;
  check(api()->SupportTensorMeta(&rule, &out));
  return Support(out, {});
}

inline Support Support::opcodes(const std::vector<FxOpcode>& ops) {
  require_api_version(3, "SupportOpcodes");
  FxSupport* out = nullptr;
  check(api()->SupportOpcodes(ops.data(), ops.size(), &out));
  return Support(out, {});
}

inline Support Support::node_names(const std::vector<std::string>& names) {
  require_api_version(3, "SupportNodeNames");
  std::vector<const char*> c;
  for (const std::string& n : names) c.push_back(n.c_str());
  FxSupport* out = nullptr;
  check(api()->SupportNodeNames(c.data(), c.size(), &out));
  return Support(out, {});
}

namespace detail {
inline int call_support_predicate(const FxNode* node, void* data) {
  try {
    auto& fn = *static_cast<std::function<bool(Node)>*>(data);
    return fn(Node(const_cast<FxNode*>(node))) ? 1 : 0;
  } catch (...) {
    return -1;
  }
}
}  // namespace detail

inline Support Support::predicate(std::function<bool(Node)> fn) {
  require_api_version(3, "SupportCallback");
  auto held = std::make_shared<std::function<bool(Node)>>(std::move(fn));
  FxSupport* out = nullptr;
  check(api()->SupportCallback(&detail::call_support_predicate, held.get(),
                               &out));
  return Support(out, {held});
}

inline Support Support::combined(const std::vector<Support>& rules, bool all) {
  require_api_version(3, all ? "SupportAllOf" : "SupportAnyOf");
  std::vector<const FxSupport*> c;
  std::vector<std::shared_ptr<void>> keep;
  for (const Support& r : rules) {
    c.push_back(r.get());
    keep.insert(keep.end(), r.keep_.begin(), r.keep_.end());
  }
  FxSupport* out = nullptr;
  check(all ? api()->SupportAllOf(c.data(), c.size(), &out)
            : api()->SupportAnyOf(c.data(), c.size(), &out));
  return Support(out, std::move(keep));
}

inline Support Support::all_of(const std::vector<Support>& rules) {
  return combined(rules, true);
}
inline Support Support::any_of(const std::vector<Support>& rules) {
  return combined(rules, false);
}

inline Support Support::operator!() const {
  require_api_version(3, "SupportNot");
  FxSupport* out = nullptr;
  check(api()->SupportNot(get(), &out));
  return Support(out, keep_);
}

inline bool Support::is_node_supported(Node node) const {
  require_api_version(3, "SupportIsNodeSupported");
  int out = 0;
  check(api()->SupportIsNodeSupported(get(), node.get(), &out));
  return out != 0;
}

inline Partitions::Partitions(FxPartitions* p)
    : partitions_(p, [](FxPartitions* q) { api()->ReleasePartitions(q); }) {}

inline size_t Partitions::size() const { return api()->PartitionsCount(get()); }

inline std::vector<Node> Partitions::operator[](size_t index) const {
  std::vector<Node> out;
  size_t n = api()->PartitionSize(get(), index);
  for (size_t j = 0; j < n; ++j) {
    out.emplace_back(api()->PartitionNode(get(), index, j));
  }
  return out;
}

inline Partitions propose_partitions(const Graph& graph, const Support& rule,
                                     const PartitionOptions& options) {
  require_api_version(3, "GraphProposePartitions");
  FxPartitionOptions o{};
  o.struct_size = sizeof(o);
  o.allows_single_node_partition = options.allows_single_node_partition;
  o.min_partition_size = options.min_partition_size;
  FxPartitions* out = nullptr;
  check(api()->GraphProposePartitions(graph.get(), rule.get(), &o, &out));
  return Partitions(out);
}

inline void fuse_partitions(Graph& graph, const Partitions& partitions,
                            const char* prefix) {
  require_api_version(3, "GraphFusePartitions");
  check(api()->GraphFusePartitions(graph.get(), partitions.get(), prefix));
}

inline void delegate_partitions(Graph& graph, const Partitions& partitions,
                                const char* backend, const char* prefix) {
  require_api_version(5, "GraphDelegatePartitions");
  check(api()->GraphDelegatePartitions(graph.get(), partitions.get(), backend,
                                       prefix));
}

}  // namespace fxp

#endif  // FX_PLUGIN_API_PARTITION_INLINE_HPP_
