// The globals torch.fx 1.13's code generation names the objects of type
// annotations with (graph.py's add_global through _Namespace.create_name),
// in the order it meets them: the object's repr made a legal name (each run
// of other characters one '_', '_' before a leading digit), and when that
// is taken, the next free `base_N`. Equal objects share one name.
//
// So the size 3 is `_3`, -1 is `_1` (and 1, met after it, the next free
// `_2`), the symbol ~3 is `_3` unless the int 3 has it, and
// floor(~0/2 - 1/2) + 1 is `floor_0_2_1_2_1`. The namespace starts with the
// graph's node names and torch.fx's custom builtins.
#ifndef PLUGINS_OPTIMIZATION_GLOBAL_NAMES_H_
#define PLUGINS_OPTIMIZATION_GLOBAL_NAMES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "fx/plugin_api.hpp"

namespace fx_optimization {

class GlobalNames {
 public:
  // Reads g's node names as views of the host's: the pass must not rename
  // g's nodes while this object is alive.
  explicit GlobalNames(const fxp::Graph& g);

  // The global of the object of class `kind` (objects of two classes with
  // one repr are two globals: the int 3 and the symbol 3) whose repr is
  // `text`, named when first asked.
  const std::string& name_of(std::string_view kind, std::string_view text);
  // name_of for an int.
  const std::string& size_name(int64_t value);

 private:
  std::string create_name(const std::string& candidate);
  bool is_used(const std::string& name) const;

  // The graph's node names, sorted (one allocation for a graph of any size).
  std::vector<std::string_view> node_names_;
  // The custom builtins and the names handed out.
  std::unordered_set<std::string> used_;
  std::unordered_map<std::string, std::string> by_object_;
};

}  // namespace fx_optimization

#endif  // PLUGINS_OPTIMIZATION_GLOBAL_NAMES_H_
