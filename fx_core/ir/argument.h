// fx::Argument: the typed value held in a Node's args, kwargs and meta.
//
// Mirrors torch.fx's `Argument` union: None, bool, int, float (inf and nan
// included), str, a Node reference, list, tuple, string-keyed dict, slice,
// Ellipsis, and the torch enum-like values dtype, device, memory format and
// layout. The torch values are held by their Python spelling
// ("torch.float32", "cpu", "torch.contiguous_format", "torch.strided") so the
// IR needs no LibTorch; the interpreter maps them to c10 types.
//
// Two containers carry more than their items, as Python's do: a tuple may be
// a NamedTuple (typing.NamedTuple, collections.namedtuple), which torch.fx
// keeps in args as it is and prints and generates code for by its class
// (`Pair(x=%a, y=1.2)`, `test_fx_Pair(a, 1.2)`): its kind is kTuple (it is a
// tuple everywhere a tuple is taken) and named_tuple_type() says its class.
// A dict may have keys that are not all str (`{0: %x}`): its kind is kDict,
// items() holds each key as torch.fx's graph text prints it (str(key)) and
// dict_keys() the keys themselves.
//
// Beyond torch.fx's union: a symbolic int (torch.SymInt, what make_fx's
// symbolic mode keeps in meta['val'] of size nodes and in tensor_meta's
// shapes), held by its expression as sympy prints it ("2*t0.size(0)",
// "FloorDiv(t0.size(1), 2)"). It only appears in meta: a graph's arguments
// name the nodes that compute sizes instead.
//
// An Argument owns its payload (deep copy on copy, 16 bytes inline). A Node
// reference is a non-owning pointer: the Graph keeps `users` consistent for
// references held in args and kwargs, not for those held in meta.
#ifndef FX_CORE_IR_ARGUMENT_H_
#define FX_CORE_IR_ARGUMENT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fx {

class Node;
class Argument;

// A Python list or tuple's elements (also a slice's start, stop, step).
using ArgumentList = std::vector<Argument>;
// A string-keyed dict in insertion order (kwargs, dict arguments, meta).
using ArgumentDict = std::vector<std::pair<std::string, Argument>>;
// A dict's (key, value) pairs when keys are not all str, in insertion order.
using KeyedArgumentDict = std::vector<std::pair<Argument, Argument>>;

// The class of a NamedTuple argument.
struct NamedTupleType {
  // The class as torch.fx's code names it: its module and __name__
  // ("test_fx.Pair"). In process a "#<hex>" suffix may tell apart classes
  // of one name (fx_sdk's registry); the text forms leave it out.
  std::string name;
  // One per item (`_fields`).
  std::vector<std::string> fields;
  // True when the graph text shows a value as `Pair(x=%a, y=1.2)` (the class
  // defines torch.fx's `_custom_fx_repr_fn` so); false for torch.fx's
  // default, the tuple `(%a, 1.2)`.
  bool fields_repr = false;

  // `name` without the in-process suffix.
  std::string_view qualified_name() const;
  // The class's __name__: the last atom of qualified_name() ("Pair").
  std::string_view short_name() const;

  friend bool operator==(const NamedTupleType& a, const NamedTupleType& b) {
    return a.name == b.name && a.fields == b.fields &&
           a.fields_repr == b.fields_repr;
  }
};

class Argument {
 public:
  enum class Kind : uint8_t {
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kNode,
    kList,
    kTuple,
    kDict,
    kSlice,
    kEllipsis,
    kDtype,         // "torch.float32"
    kDevice,        // "cpu", "cuda:0"
    kMemoryFormat,  // "torch.contiguous_format"
    kLayout,        // "torch.strided"
    kSymInt,        // "2*t0.size(0)": a symbolic int's expression
    kQScheme,       // "torch.per_channel_affine"
  };

  Argument() noexcept : kind_(Kind::kNone) { payload_.i = 0; }
  Argument(std::nullptr_t) noexcept : Argument() {}  // NOLINT: None
  Argument(bool b) noexcept : kind_(Kind::kBool) { payload_.b = b; }  // NOLINT
  Argument(int i) noexcept : kind_(Kind::kInt) { payload_.i = i; }    // NOLINT
  Argument(int64_t i) noexcept : kind_(Kind::kInt) {
    payload_.i = i;
  }  // NOLINT
  Argument(double f) noexcept : kind_(Kind::kFloat) {
    payload_.f = f;
  }                                                           // NOLINT
  Argument(const char* s) : Argument(std::string(s)) {}       // NOLINT
  Argument(std::string_view s) : Argument(std::string(s)) {}  // NOLINT
  Argument(std::string s);                                    // NOLINT
  Argument(Node* n) noexcept : kind_(Kind::kNode) {
    payload_.node = n;
  }  // NOLINT
  // A list: `Argument{a, b}` or `Argument::list({a, b})`.
  Argument(std::initializer_list<Argument> items);

  static Argument list(ArgumentList items);
  static Argument tuple(ArgumentList items);
  // A NamedTuple of class `type`: a tuple carrying it. Throws FxError when
  // the items are not one per field or `type` is null.
  static Argument named_tuple(std::shared_ptr<const NamedTupleType> type,
                              ArgumentList items);
  static Argument dict(ArgumentDict items);
  // A dict with any constant keys (bool, int, float, str). When every key is
  // a str this is dict(); otherwise items() names each key by str(key).
  // Throws FxError for another kind of key.
  static Argument keyed_dict(KeyedArgumentDict items);
  static Argument slice(Argument start, Argument stop, Argument step);
  static Argument ellipsis();
  static Argument dtype(std::string name);
  static Argument device(std::string name);
  static Argument memory_format(std::string name);
  static Argument layout(std::string name);
  static Argument qscheme(std::string name);
  static Argument symint(std::string expression);

  Argument(const Argument& other);
  Argument(Argument&& other) noexcept;
  Argument& operator=(const Argument& other);
  Argument& operator=(Argument&& other) noexcept;
  ~Argument();

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_node() const { return kind_ == Kind::kNode; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_tuple() const { return kind_ == Kind::kTuple; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_slice() const { return kind_ == Kind::kSlice; }
  bool is_ellipsis() const { return kind_ == Kind::kEllipsis; }
  bool is_symint() const { return kind_ == Kind::kSymInt; }
  // True for list and tuple (the sequences torch.fx's map_arg walks).
  bool is_sequence() const {
    return kind_ == Kind::kList || kind_ == Kind::kTuple;
  }
  // True for dtype, device, memory_format, layout and qscheme.
  bool is_torch_enum() const {
    return (kind_ >= Kind::kDtype && kind_ <= Kind::kLayout) ||
           kind_ == Kind::kQScheme;
  }

  // Accessors throw fx::FxError naming the expected and actual kinds.
  bool as_bool() const;
  int64_t as_int() const;
  // An int is accepted and converted, as Python would.
  double as_float() const;
  // The text of a string, dtype, device, memory_format, layout, qscheme or
  // symbolic int.
  const std::string& as_string() const;
  Node* as_node() const;
  // The elements of a list, tuple or slice (start, stop, step).
  const ArgumentList& elements() const;
  ArgumentList& mutable_elements();
  const ArgumentDict& items() const;
  ArgumentDict& mutable_items();
  // For a dict: the value under `key`, or nullptr.
  const Argument* find(std::string_view key) const;
  // A NamedTuple's class; nullptr for a plain tuple and any other kind.
  const NamedTupleType* named_tuple_type() const;
  const std::shared_ptr<const NamedTupleType>& shared_named_tuple_type() const;
  // A dict's keys, one per item, when they are not all str; nullptr for a
  // str-keyed dict and any other kind. mutable_items() of such a dict must
  // keep the items one per key.
  const ArgumentList* dict_keys() const;

  // Structural equality; Node references compare by identity.
  friend bool operator==(const Argument& a, const Argument& b);
  friend bool operator!=(const Argument& a, const Argument& b) {
    return !(a == b);
  }

 private:
  struct NamedTupleData;
  struct KeyedDictData;
  // A heap payload (string, list, dict, ...) shared by copies of an
  // Argument: copying one bumps a count, and a mutable_*() accessor copies
  // the payload first when another Argument still shares it (copy on
  // write). Meta dicts (shape_prop's tensor_meta) are copied by every graph
  // snapshot and every node copy; this makes each such copy O(1).
  template <typename T>
  struct Shared;

  explicit Argument(Kind kind) noexcept : kind_(kind) { payload_.i = 0; }
  void destroy() noexcept;
  void copy_from(const Argument& other);

  Kind kind_;
  // A tuple holding named_tuple, a dict holding keyed_dict.
  bool extended_ = false;
  union Payload {
    bool b;
    int64_t i;
    double f;
    Node* node;
    Shared<std::string>* str;
    Shared<ArgumentList>* list;
    Shared<ArgumentDict>* dict;
    Shared<NamedTupleData>* named_tuple;
    Shared<KeyedDictData>* keyed_dict;
  } payload_;
};

// The Python name of a kind, for messages ("int", "Node", "tuple", ...).
std::string_view kind_name(Argument::Kind kind);

// Calls `fn` on every Node referenced by `arg`, depth first, in order
// (torch.fx's map_arg traversal: lists, tuples, dicts and slices).
// A template so that hot paths (codegen, setting args) pay no std::function
// call per node.
template <typename Fn>
void for_each_node(const Argument& arg, Fn&& fn) {
  switch (arg.kind()) {
    case Argument::Kind::kNode:
      fn(arg.as_node());
      return;
    case Argument::Kind::kList:
    case Argument::Kind::kTuple:
    case Argument::Kind::kSlice:
      for (const Argument& a : arg.elements()) for_each_node(a, fn);
      return;
    case Argument::Kind::kDict:
      for (const auto& kv : arg.items()) for_each_node(kv.second, fn);
      return;
    default:
      return;
  }
}

// Returns a copy of `arg` with every Node reference replaced by `fn(node)`.
Argument map_arg(const Argument& arg, const std::function<Argument(Node*)>& fn);

// Looks up `key` in an ordered dict; nullptr when absent.
const Argument* find_item(const ArgumentDict& dict, std::string_view key);
// Sets `key` (appending when new, keeping its place when present).
void set_item(ArgumentDict& dict, std::string_view key, Argument value);

}  // namespace fx

#endif  // FX_CORE_IR_ARGUMENT_H_
