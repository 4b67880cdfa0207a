#include "plugins/optimization/global_names.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace fx_optimization {
namespace {

// The repr made a legal name: each run of characters outside [0-9a-zA-Z_]
// one '_', and '_' before a leading digit.
std::string legal(std::string_view text) {
  std::string out;
  bool in_illegal = false;
  for (char c : text) {
    const bool ok = c == '_' || std::isalnum(static_cast<unsigned char>(c));
    if (ok) out += c;
    if (!ok && !in_illegal) out += '_';
    in_illegal = !ok;
  }
  if (!out.empty() && std::isdigit(static_cast<unsigned char>(out[0]))) {
    out.insert(0, "_");
  }
  return out;
}

}  // namespace

GlobalNames::GlobalNames(const fxp::Graph& g) {
  for (const char* builtin :
       {"inf", "nan", "NoneType", "torch", "device", "fx_pytree", "pytree"}) {
    used_.emplace(builtin);
  }
  node_names_.reserve(g.size());
  for (fxp::Node n : g) node_names_.emplace_back(n.name());
  std::sort(node_names_.begin(), node_names_.end());
}

bool GlobalNames::is_used(const std::string& name) const {
  return used_.count(name) > 0 ||
         std::binary_search(node_names_.begin(), node_names_.end(),
                            std::string_view(name));
}

const std::string& GlobalNames::name_of(std::string_view kind,
                                        std::string_view text) {
  std::string key(kind);
  key += ':';
  key += text;
  auto [it, added] = by_object_.try_emplace(std::move(key));
  if (added) it->second = create_name(legal(text));
  return it->second;
}

const std::string& GlobalNames::size_name(int64_t value) {
  return name_of("int", std::to_string(value));
}

// _Namespace.create_name: a candidate ending in `_N` is `base_N`, and when
// taken, `base_N+1`, `base_N+2`, ... are tried.
std::string GlobalNames::create_name(const std::string& candidate) {
  std::string base = candidate, name = candidate;
  int64_t num = 0;
  const size_t underscore = candidate.rfind('_');
  if (underscore != std::string::npos && underscore + 1 < candidate.size() &&
      candidate.size() - underscore - 1 <= 18 &&
      candidate.find_first_not_of("0123456789", underscore + 1) ==
          std::string::npos) {
    base = candidate.substr(0, underscore);
    num = std::stoll(candidate.substr(underscore + 1));
    name = base + "_" + std::to_string(num);
  }
  while (is_used(name)) name = base + "_" + std::to_string(++num);
  used_.insert(name);
  return name;
}

}  // namespace fx_optimization
