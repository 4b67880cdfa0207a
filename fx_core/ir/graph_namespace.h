// fx::Namespace: unique, legal Python names for a graph's nodes and for the
// globals its generated code refers to (torch.fx's `_Namespace`).
//
// Rules, exactly as torch.fx 1.13 applies them:
//  - runs of characters outside [0-9a-zA-Z_] become one `_`; a leading digit
//    gets a `_` prefix; an empty candidate becomes `_unnamed`;
//  - a trailing `_N` is the candidate's counter (`add_3` is base `add`, 3);
//  - a name already used, a Python keyword, a Python builtin (`sum`, `input`,
//    `getattr`) or one of torch.fx's code generation globals (`torch`, `inf`,
//    `nan`, `device`, `NoneType`, `fx_pytree`, `pytree`) is skipped by counting
//    up: `sum` -> `sum_1`; a builtin is legal only for that builtin itself;
//  - names are never reused, not even after the node that had one is erased.
// Cost: O(1) amortised per name (a per-base watermark replaces torch.fx's
// linear probe, giving the same names).
//
// Names live in an arena owned by the namespace, so the string_views it hands
// out stay valid for its whole lifetime; each is followed by a NUL, so
// `view.data()` is also a C string.
#ifndef FX_CORE_IR_GRAPH_NAMESPACE_H_
#define FX_CORE_IR_GRAPH_NAMESPACE_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"

namespace fx {

class Namespace {
 public:
  Namespace() = default;
  // A child namespace sees every name of `parent` as used and adds its own
  // without changing the parent (code generation's globals use this instead
  // of torch.fx's deep copy of the graph's namespace). `parent` must outlive
  // the child.
  explicit Namespace(const Namespace* parent) : parent_(parent) {}
  Namespace(const Namespace&) = delete;
  Namespace& operator=(const Namespace&) = delete;

  // Creates a unique legal name from `candidate`. `obj` identifies the object
  // being named (a global's qualified name such as "builtins.len" or
  // "math.sqrt"); the same `obj` always gets the same name, and a builtin's
  // own name is legal for it. Node names pass an empty `obj`.
  std::string_view create_name(std::string_view candidate,
                               std::string_view obj = {});

  // Marks every name `other` has handed out as used here too, so the same
  // candidates get the same names from now on. This namespace's own names
  // stay valid (nodes hold views of them).
  void merge_from(const Namespace& other);

  // Makes this namespace a copy of `other`: the same names used, the same
  // counters (what it had used before is forgotten; views it handed out stay
  // valid). The names' storage is shared, not copied, so every view `other`
  // handed out is also a view this namespace owns (Graph::snapshot gives its
  // copies the original nodes' names). Names created afterwards on either
  // side are that side's only.
  void copy_from(const Namespace& other);

  // Makes room for `n` more names without rehashing (Graph::graph_copy).
  void reserve(size_t n) { used_.reserve(used_.size() + n); }

  // True when `name` has been handed out here or in a parent.
  bool is_used(std::string_view name) const;

  // Marks exactly `name` as used (no legalising, no counting up; it may be
  // used already) and returns its stable view: a node renamed on purpose
  // (Graph::rename_nodes). The caller checks is_legal_node_name.
  std::string_view claim(std::string_view name);
  // Forgets every name handed out: afterwards this namespace is a fresh
  // one's (Graph::reset_namespace claims the live names again). Views handed
  // out earlier stay valid.
  void forget_names();
  // How many times forget_names ran (a worker process tells its host that a
  // pass reset the graph's names).
  uint64_t generation() const { return generation_; }
  // A name a node may have: an ASCII Python identifier that is not a
  // keyword, a builtin or one of the code generation globals.
  static bool is_legal_node_name(std::string_view name);

  // Python keywords, builtins and torch.fx's codegen globals.
  static bool is_keyword(std::string_view name);
  static bool is_builtin(std::string_view name);
  // The object a codegen global stands for ("torch" -> "torch",
  // "inf" -> "math.inf"), or empty when `name` is not one.
  static std::string_view custom_builtin_object(std::string_view name);
  // torch.fx's _custom_builtins, in its order: (name, object) pairs every
  // generated module has in scope.
  using CustomBuiltin = std::pair<std::string_view, std::string_view>;
  static const std::vector<CustomBuiltin>& custom_builtins();

 private:
  bool is_illegal(std::string_view name, std::string_view obj) const;
  uint64_t watermark(std::string_view base) const;
  std::string_view store(std::string_view name);

  const Namespace* parent_ = nullptr;
  uint64_t generation_ = 0;
  // Stable storage for names and keys: chars in blocks that never move,
  // shared with copies (copy_from). Only the last block is written, and only
  // by the namespace that made it: a copy starts a block of its own.
  std::vector<std::shared_ptr<char[]>> blocks_;
  size_t block_used_ = 0;
  size_t block_size_ = 0;
  // Every name in the arena is a uint32_t length, the chars, then a NUL, and
  // the arena hands out a pointer to the chars: a C string that also knows
  // its length. The set below hashes and compares such pointers by content
  // without strlen, and looks up a string_view without a copy. Only arena
  // pointers may be used as keys.
  static std::string_view stored_view(const char* p) {
    uint32_t len;
    std::memcpy(&len, p - sizeof(len), sizeof(len));
    return {p, len};
  }
  struct CStrHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
      return absl::Hash<std::string_view>{}(s);
    }
    size_t operator()(const char* p) const { return (*this)(stored_view(p)); }
  };
  struct CStrEq {
    using is_transparent = void;
    static std::string_view view(std::string_view s) { return s; }
    static std::string_view view(const char* p) { return stored_view(p); }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return view(a) == view(b);
    }
  };
  // The used names, as arena pointers: a slot is 8 bytes, half a
  // string_view's, and a node name is in this set for the graph's lifetime.
  absl::flat_hash_set<const char*, CStrHash, CStrEq> used_;
  // For each base, every `base_K` with K below the watermark is used.
  absl::flat_hash_map<std::string_view, uint64_t> watermark_;
  absl::flat_hash_map<std::string_view, std::string_view> obj_to_name_;
};

}  // namespace fx

#endif  // FX_CORE_IR_GRAPH_NAMESPACE_H_
