#include "fx_core/ir/argument.h"

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
  }
  return "?";
}

namespace {

[[noreturn]] void wrong_kind(std::string_view wanted, Argument::Kind actual) {
  throw FxError(cat("expected an argument of type ", wanted, " but got ",
                    kind_name(actual)));
}

bool holds_string(Argument::Kind k) {
  return k == Argument::Kind::kString || k == Argument::Kind::kDtype ||
         k == Argument::Kind::kDevice || k == Argument::Kind::kMemoryFormat ||
         k == Argument::Kind::kLayout || k == Argument::Kind::kSymInt;
}

bool holds_list(Argument::Kind k) {
  return k == Argument::Kind::kList || k == Argument::Kind::kTuple ||
         k == Argument::Kind::kSlice;
}

}  // namespace

Argument::Argument(std::string s) : kind_(Kind::kString) {
  payload_.str = new std::string(std::move(s));
}

Argument::Argument(std::initializer_list<Argument> items) : kind_(Kind::kList) {
  payload_.list = new ArgumentList(items);
}

Argument Argument::list(ArgumentList items) {
  Argument a(Kind::kList);
  a.payload_.list = new ArgumentList(std::move(items));
  return a;
}

Argument Argument::tuple(ArgumentList items) {
  Argument a(Kind::kTuple);
  a.payload_.list = new ArgumentList(std::move(items));
  return a;
}

Argument Argument::dict(ArgumentDict items) {
  Argument a(Kind::kDict);
  a.payload_.dict = new ArgumentDict(std::move(items));
  return a;
}

Argument Argument::slice(Argument start, Argument stop, Argument step) {
  Argument a(Kind::kSlice);
  a.payload_.list = new ArgumentList();
  a.payload_.list->reserve(3);
  a.payload_.list->push_back(std::move(start));
  a.payload_.list->push_back(std::move(stop));
  a.payload_.list->push_back(std::move(step));
  return a;
}

Argument Argument::ellipsis() { return Argument(Kind::kEllipsis); }

Argument Argument::dtype(std::string name) {
  Argument a(Kind::kDtype);
  a.payload_.str = new std::string(std::move(name));
  return a;
}

Argument Argument::device(std::string name) {
  Argument a(Kind::kDevice);
  a.payload_.str = new std::string(std::move(name));
  return a;
}

Argument Argument::memory_format(std::string name) {
  Argument a(Kind::kMemoryFormat);
  a.payload_.str = new std::string(std::move(name));
  return a;
}

Argument Argument::layout(std::string name) {
  Argument a(Kind::kLayout);
  a.payload_.str = new std::string(std::move(name));
  return a;
}

Argument Argument::symint(std::string expression) {
  Argument a(Kind::kSymInt);
  a.payload_.str = new std::string(std::move(expression));
  return a;
}

Argument::Argument(const Argument& other) : kind_(Kind::kNone) {
  payload_.i = 0;
  copy_from(other);
}

Argument::Argument(Argument&& other) noexcept
    : kind_(other.kind_), payload_(other.payload_) {
  other.kind_ = Kind::kNone;
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
    payload_ = other.payload_;
    other.kind_ = Kind::kNone;
    other.payload_.i = 0;
  }
  return *this;
}

Argument::~Argument() { destroy(); }

void Argument::destroy() noexcept {
  if (holds_string(kind_)) {
    delete payload_.str;
  } else if (holds_list(kind_)) {
    delete payload_.list;
  } else if (kind_ == Kind::kDict) {
    delete payload_.dict;
  }
  kind_ = Kind::kNone;
  payload_.i = 0;
}

void Argument::copy_from(const Argument& other) {
  // Called on a None value only.
  if (holds_string(other.kind_)) {
    payload_.str = new std::string(*other.payload_.str);
  } else if (holds_list(other.kind_)) {
    payload_.list = new ArgumentList(*other.payload_.list);
  } else if (other.kind_ == Kind::kDict) {
    payload_.dict = new ArgumentDict(*other.payload_.dict);
  } else {
    payload_ = other.payload_;
  }
  kind_ = other.kind_;
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
  return *payload_.str;
}

Node* Argument::as_node() const {
  if (kind_ != Kind::kNode) wrong_kind("Node", kind_);
  return payload_.node;
}

const ArgumentList& Argument::elements() const {
  if (!holds_list(kind_)) wrong_kind("list or tuple", kind_);
  return *payload_.list;
}

ArgumentList& Argument::mutable_elements() {
  if (!holds_list(kind_)) wrong_kind("list or tuple", kind_);
  return *payload_.list;
}

const ArgumentDict& Argument::items() const {
  if (kind_ != Kind::kDict) wrong_kind("dict", kind_);
  return *payload_.dict;
}

ArgumentDict& Argument::mutable_items() {
  if (kind_ != Kind::kDict) wrong_kind("dict", kind_);
  return *payload_.dict;
}

const Argument* Argument::find(std::string_view key) const {
  return find_item(items(), key);
}

bool operator==(const Argument& a, const Argument& b) {
  if (a.kind_ != b.kind_) return false;
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
      return *a.payload_.dict == *b.payload_.dict;
    default:
      if (holds_string(a.kind_)) return *a.payload_.str == *b.payload_.str;
      return *a.payload_.list == *b.payload_.list;
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
  dict.emplace_back(std::string(key), std::move(value));
}

}  // namespace fx
