// The types of the submodules call_module nodes call, as the passes of
// libfx_optimization.so that match modules by type (fuse, remove_dropout)
// ask them: of the host once per node in a pass (a fold rebuilds a module
// with its own type), and kept by node: a table keyed by target strings was
// a tenth of fuse. A node's answer holds until the pass forgets it; a
// target that names no submodule is of type "".
#ifndef PLUGINS_OPTIMIZATION_MODULE_TYPES_H_
#define PLUGINS_OPTIMIZATION_MODULE_TYPES_H_

#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"

namespace fx_optimization {

class ModuleTypes {
 public:
  explicit ModuleTypes(const fxp::Graph& g) : g_(g) {
    by_node_.reserve(g.size());
    intern("");  // index 0: no module
  }

  // The type of the submodule `n` calls; "" for other nodes and for
  // targets that name no submodule.
  const std::string& called(const fxp::Node& n) {
    if (n.op() != FX_OP_CALL_MODULE) return names_[0];
    auto [it, added] = by_node_.try_emplace(n.get(), 0);
    if (added) it->second = intern(asked(n));
    return names_[it->second];
  }
  // Before `n` is erased (its handle may be reused).
  void forget(const fxp::Node& n) { by_node_.erase(n.get()); }

 private:
  std::string asked(const fxp::Node& n) const {
    try {
      return g_.module_type(std::string(n.target()).c_str());
    } catch (const fxp::Error&) {
      return "";
    }
  }
  size_t intern(std::string type) {
    auto [it, added] = index_.try_emplace(type, names_.size());
    if (added) names_.push_back(std::move(type));
    return it->second;
  }

  const fxp::Graph& g_;
  std::unordered_map<FxNode*, size_t> by_node_;
  std::unordered_map<std::string, size_t> index_;  // into names_
  std::vector<std::string> names_;
};

}  // namespace fx_optimization

#endif  // PLUGINS_OPTIMIZATION_MODULE_TYPES_H_
