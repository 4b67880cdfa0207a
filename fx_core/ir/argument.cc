#include "fx_core/ir/argument.h"

#include <atomic>
#include <charconv>
#include <cstdint>
#include <utility>

#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {

std::string_view kind_name(Argument::Kind kind) {
  switch (kind) {
    case Argument::Kind::kNone:
      return "None";
    case Argument::Kind::kBool:
      return "bool";
    case Argument::Kind::kInt:
      return "int";
    case Argument::Kind::kFloat:
      return "float";
    case Argument::Kind::kString:
      return "str";
    case Argument::Kind::kNode:
      return "Node";
    case Argument::Kind::kList:
      return "list";
    case Argument::Kind::kTuple:
      return "tuple";
    case Argument::Kind::kDict:
      return "dict";
    case Argument::Kind::kSlice:
      return "slice";
    case Argument::Kind::kEllipsis:
      return "ellipsis";
    case Argument::Kind::kDtype:
      return "torch.dtype";
    case Argument::Kind::kDevice:
      return "torch.device";
    case Argument::Kind::kMemoryFormat:
      return "torch.memory_format";
    case Argument::Kind::kLayout:
      return "torch.layout";
    case Argument::Kind::kSymInt:
      return "torch.SymInt";
    case Argument::Kind::kQScheme:
      return "torch.qscheme";
  }
  return "?";
}

struct Argument::NamedTupleData {
  ArgumentList items;
  std::shared_ptr<const NamedTupleType> type;
};

struct Argument::KeyedDictData {
  ArgumentDict items;  // each key's label and its value
  ArgumentList keys;
};

template <typename T>
struct Argument::Shared {
  template <typename... Args>
  explicit Shared(Args&&... args) : value(std::forward<Args>(args)...) {}
  std::atomic<uint32_t> refs{1};
  T value;
};

namespace {

template <typename T>
T* share(T* payload) {
  payload->refs.fetch_add(1, std::memory_order_relaxed);
  return payload;
}

template <typename T>
void unshare(T* payload) {
  if (payload->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    delete payload;
  }
}

// The payload made this Argument's own (copied when shared), for writing.
template <typename T>
T* own(T*& payload) {
  if (payload->refs.load(std::memory_order_acquire) != 1) {
    T* copy = new T(payload->value);
    unshare(payload);
    payload = copy;
  }
  return payload;
}

}  // namespace

std::string_view NamedTupleType::qualified_name() const {
  std::string_view n = name;
  return n.substr(0, n.find('#'));
}

std::string_view NamedTupleType::short_name() const {
  std::string_view n = qualified_name();
  size_t dot = n.rfind('.');
  return dot == std::string_view::npos ? n : n.substr(dot + 1);
}

namespace {

[[noreturn]] void wrong_kind(std::string_view wanted, Argument::Kind actual) {
  throw FxError(cat("expected an argument of type ", wanted, " but got ",
                    kind_name(actual)));
}

bool holds_string(Argument::Kind k) {
  return k == Argument::Kind::kString || k == Argument::Kind::kDtype ||
         k == Argument::Kind::kDevice || k == Argument::Kind::kMemoryFormat ||
         k == Argument::Kind::kLayout || k == Argument::Kind::kSymInt ||
         k == Argument::Kind::kQScheme;
}

bool holds_list(Argument::Kind k) {
  return k == Argument::Kind::kList || k == Argument::Kind::kTuple ||
         k == Argument::Kind::kSlice;
}

}  // namespace

Argument::Argument(std::string s) : kind_(Kind::kString) {
  payload_.str = new Shared<std::string>(std::move(s));
}

Argument::Argument(std::initializer_list<Argument> items) : kind_(Kind::kList) {
  payload_.list = new Shared<ArgumentList>(items);
}

Argument Argument::list(ArgumentList items) {
  Argument a(Kind::kList);
  a.payload_.list = new Shared<ArgumentList>(std::move(items));
  return a;
}

Argument Argument::tuple(ArgumentList items) {
  Argument a(Kind::kTuple);
  a.payload_.list = new Shared<ArgumentList>(std::move(items));
  return a;
}

Argument Argument::named_tuple(std::shared_ptr<const NamedTupleType> type,
                               ArgumentList items) {
  if (type == nullptr) throw FxError("a NamedTuple argument needs its class");
  if (type->fields.size() != items.size()) {
    throw FxError(cat("NamedTuple ", type->qualified_name(), " has ",
                      type->fields.size(), " fields, not ", items.size(),
                      " items"));
  }
  Argument a(Kind::kTuple);
  a.extended_ = true;
  a.payload_.named_tuple = new Shared<NamedTupleData>(
      NamedTupleData{std::move(items), std::move(type)});
  return a;
}

Argument Argument::dict(ArgumentDict items) {
  Argument a(Kind::kDict);
  a.payload_.dict = new Shared<ArgumentDict>(std::move(items));
  return a;
}

namespace {

// A label for a dict key that is not a str (items() of a keyed dict):
// Python's spelling of bools and ints, the shortest round-trip digits of a
// float. The text forms print dict_keys() themselves.
std::string key_label(const Argument& key) {
  switch (key.kind()) {
    case Argument::Kind::kString:
      return key.as_string();
    case Argument::Kind::kBool:
      return key.as_bool() ? "True" : "False";
    case Argument::Kind::kInt:
      return std::to_string(key.as_int());
    case Argument::Kind::kFloat: {
      char buf[64];
      auto res = std::to_chars(buf, buf + sizeof(buf), key.as_float());
      return std::string(buf, res.ptr);
    }
    default:
      throw FxError(cat("a dict key must be a bool, int, float or str, not ",
                        kind_name(key.kind())));
  }
}

}  // namespace

Argument Argument::keyed_dict(KeyedArgumentDict items) {
  bool all_str = true;
  ArgumentDict labelled;
  labelled.reserve(items.size());
  for (auto& [key, value] : items) {
    labelled.emplace_back(key_label(key), value);
    all_str &= key.is_string();
  }
  if (all_str) return dict(std::move(labelled));
  Argument a(Kind::kDict);
  a.extended_ = true;
  a.payload_.keyed_dict =
      new Shared<KeyedDictData>(KeyedDictData{std::move(labelled), {}});
  a.payload_.keyed_dict->value.keys.reserve(items.size());
  for (auto& kv : items) {
    a.payload_.keyed_dict->value.keys.push_back(std::move(kv.first));
  }
  return a;
}

Argument Argument::slice(Argument start, Argument stop, Argument step) {
  Argument a(Kind::kSlice);
  a.payload_.list = new Shared<ArgumentList>();
  a.payload_.list->value.reserve(3);
  a.payload_.list->value.push_back(std::move(start));
  a.payload_.list->value.push_back(std::move(stop));
  a.payload_.list->value.push_back(std::move(step));
  return a;
}

Argument Argument::ellipsis() { return Argument(Kind::kEllipsis); }

Argument Argument::dtype(std::string name) {
  Argument a(Kind::kDtype);
  a.payload_.str = new Shared<std::string>(std::move(name));
  return a;
}

Argument Argument::device(std::string name) {
  Argument a(Kind::kDevice);
  a.payload_.str = new Shared<std::string>(std::move(name));
  return a;
}

Argument Argument::memory_format(std::string name) {
  Argument a(Kind::kMemoryFormat);
  a.payload_.str = new Shared<std::string>(std::move(name));
  return a;
}

Argument Argument::layout(std::string name) {
  Argument a(Kind::kLayout);
  a.payload_.str = new Shared<std::string>(std::move(name));
  return a;
}

Argument Argument::qscheme(std::string name) {
  Argument a(Kind::kQScheme);
  a.payload_.str = new Shared<std::string>(std::move(name));
  return a;
}

Argument Argument::symint(std::string expression) {
  Argument a(Kind::kSymInt);
  a.payload_.str = new Shared<std::string>(std::move(expression));
  return a;
}

Argument::Argument(const Argument& other) : kind_(Kind::kNone) {
  payload_.i = 0;
  copy_from(other);
}

Argument::Argument(Argument&& other) noexcept
    : kind_(other.kind_), extended_(other.extended_), payload_(other.payload_) {
  other.kind_ = Kind::kNone;
  other.extended_ = false;
  other.payload_.i = 0;
}

Argument& Argument::operator=(const Argument& other) {
  if (this != &other) {
    Argument copy(other);
    *this = std::move(copy);
  }
  return *this;
}

Argument& Argument::operator=(Argument&& other) noexcept {
  if (this != &other) {
    destroy();
    kind_ = other.kind_;
    extended_ = other.extended_;
    payload_ = other.payload_;
    other.kind_ = Kind::kNone;
    other.extended_ = false;
    other.payload_.i = 0;
  }
  return *this;
}

Argument::~Argument() { destroy(); }

void Argument::destroy() noexcept {
  if (extended_ && kind_ == Kind::kTuple) {
    unshare(payload_.named_tuple);
  } else if (extended_) {
    unshare(payload_.keyed_dict);
  } else if (holds_string(kind_)) {
    unshare(payload_.str);
  } else if (holds_list(kind_)) {
    unshare(payload_.list);
  } else if (kind_ == Kind::kDict) {
    unshare(payload_.dict);
  }
  kind_ = Kind::kNone;
  extended_ = false;
  payload_.i = 0;
}

void Argument::copy_from(const Argument& other) {
  // Called on a None value only. The payload is shared, not copied.
  payload_ = other.payload_;
  if (other.extended_ && other.kind_ == Kind::kTuple) {
    share(payload_.named_tuple);
  } else if (other.extended_) {
    share(payload_.keyed_dict);
  } else if (holds_string(other.kind_)) {
    share(payload_.str);
  } else if (holds_list(other.kind_)) {
    share(payload_.list);
  } else if (other.kind_ == Kind::kDict) {
    share(payload_.dict);
  }
  kind_ = other.kind_;
  extended_ = other.extended_;
}

bool Argument::as_bool() const {
  if (kind_ != Kind::kBool) wrong_kind("bool", kind_);
  return payload_.b;
}

int64_t Argument::as_int() const {
  if (kind_ != Kind::kInt) wrong_kind("int", kind_);
  return payload_.i;
}

double Argument::as_float() const {
  if (kind_ == Kind::kInt) return static_cast<double>(payload_.i);
  if (kind_ != Kind::kFloat) wrong_kind("float", kind_);
  return payload_.f;
}

const std::string& Argument::as_string() const {
  if (!holds_string(kind_)) wrong_kind("str", kind_);
  return payload_.str->value;
}

Node* Argument::as_node() const {
  if (kind_ != Kind::kNode) wrong_kind("Node", kind_);
  return payload_.node;
}

const ArgumentList& Argument::elements() const {
  if (!holds_list(kind_)) wrong_kind("list or tuple", kind_);
  return extended_ ? payload_.named_tuple->value.items : payload_.list->value;
}

ArgumentList& Argument::mutable_elements() {
  if (!holds_list(kind_)) wrong_kind("list or tuple", kind_);
  return extended_ ? own(payload_.named_tuple)->value.items
                   : own(payload_.list)->value;
}

const ArgumentDict& Argument::items() const {
  if (kind_ != Kind::kDict) wrong_kind("dict", kind_);
  return extended_ ? payload_.keyed_dict->value.items : payload_.dict->value;
}

ArgumentDict& Argument::mutable_items() {
  if (kind_ != Kind::kDict) wrong_kind("dict", kind_);
  return extended_ ? own(payload_.keyed_dict)->value.items
                   : own(payload_.dict)->value;
}

const NamedTupleType* Argument::named_tuple_type() const {
  return extended_ && kind_ == Kind::kTuple
             ? payload_.named_tuple->value.type.get()
             : nullptr;
}

const std::shared_ptr<const NamedTupleType>& Argument::shared_named_tuple_type()
    const {
  static const std::shared_ptr<const NamedTupleType> kNone;
  return extended_ && kind_ == Kind::kTuple ? payload_.named_tuple->value.type
                                            : kNone;
}

const ArgumentList* Argument::dict_keys() const {
  return extended_ && kind_ == Kind::kDict ? &payload_.keyed_dict->value.keys
                                           : nullptr;
}

const Argument* Argument::find(std::string_view key) const {
  return find_item(items(), key);
}

bool operator==(const Argument& a, const Argument& b) {
  if (a.kind_ != b.kind_ || a.extended_ != b.extended_) return false;
  if (a.extended_ && a.kind_ == Argument::Kind::kTuple) {
    const Argument::NamedTupleData& x = a.payload_.named_tuple->value;
    const Argument::NamedTupleData& y = b.payload_.named_tuple->value;
    return &x == &y || (*x.type == *y.type && x.items == y.items);
  }
  if (a.extended_) {
    const Argument::KeyedDictData& x = a.payload_.keyed_dict->value;
    const Argument::KeyedDictData& y = b.payload_.keyed_dict->value;
    return &x == &y || (x.keys == y.keys && x.items == y.items);
  }
  switch (a.kind_) {
    case Argument::Kind::kNone:
    case Argument::Kind::kEllipsis:
      return true;
    case Argument::Kind::kBool:
      return a.payload_.b == b.payload_.b;
    case Argument::Kind::kInt:
      return a.payload_.i == b.payload_.i;
    case Argument::Kind::kFloat:
      // nan equals nan here: structural identity, not IEEE comparison.
      return a.payload_.f == b.payload_.f ||
             (a.payload_.f != a.payload_.f && b.payload_.f != b.payload_.f);
    case Argument::Kind::kNode:
      return a.payload_.node == b.payload_.node;
    case Argument::Kind::kDict:
      return a.payload_.dict == b.payload_.dict ||
             a.payload_.dict->value == b.payload_.dict->value;
    default:
      if (holds_string(a.kind_)) {
        return a.payload_.str == b.payload_.str ||
               a.payload_.str->value == b.payload_.str->value;
      }
      return a.payload_.list == b.payload_.list ||
             a.payload_.list->value == b.payload_.list->value;
  }
}

Argument map_arg(const Argument& arg,
                 const std::function<Argument(Node*)>& fn) {
  switch (arg.kind()) {
    case Argument::Kind::kNode:
      return fn(arg.as_node());
    case Argument::Kind::kList:
    case Argument::Kind::kTuple:
    case Argument::Kind::kSlice: {
      Argument out = arg;
      for (Argument& a : out.mutable_elements()) a = map_arg(a, fn);
      return out;
    }
    case Argument::Kind::kDict: {
      Argument out = arg;
      for (auto& kv : out.mutable_items()) kv.second = map_arg(kv.second, fn);
      return out;
    }
    default:
      return arg;
  }
}

const Argument* find_item(const ArgumentDict& dict, std::string_view key) {
  for (const auto& kv : dict) {
    if (kv.first == key) return &kv.second;
  }
  return nullptr;
}

void set_item(ArgumentDict& dict, std::string_view key, Argument value) {
  for (auto& kv : dict) {
    if (kv.first == key) {
      kv.second = std::move(value);
      return;
    }
  }
  // Meta dicts hold a few entries (tensor_meta, type, partition, ...): room
  // for four at the first one saves growing one entry at a time.
  if (dict.empty()) dict.reserve(4);
  dict.emplace_back(std::string(key), std::move(value));
}

}  // namespace fx
