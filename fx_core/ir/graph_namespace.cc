#include "fx_core/ir/graph_namespace.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <string>

#include "fx_core/support/strings.h"

namespace fx {
namespace {

// keyword.kwlist of Python 3.11.
constexpr std::array<std::string_view, 35> kKeywords = {
    "False",  "None",   "True",    "and",      "as",       "assert", "async",
    "await",  "break",  "class",   "continue", "def",      "del",    "elif",
    "else",   "except", "finally", "for",      "from",     "global", "if",
    "import", "in",     "is",      "lambda",   "nonlocal", "not",    "or",
    "pass",   "raise",  "return",  "try",      "while",    "with",   "yield"};

// builtins.__dict__ of Python 3.11 (the interpreter torch 1.13 runs on here).
constexpr std::string_view kBuiltins[] = {"__name__",
                                          "__doc__",
                                          "__package__",
                                          "__loader__",
                                          "__spec__",
                                          "__build_class__",
                                          "__import__",
                                          "abs",
                                          "all",
                                          "any",
                                          "ascii",
                                          "bin",
                                          "breakpoint",
                                          "callable",
                                          "chr",
                                          "compile",
                                          "delattr",
                                          "dir",
                                          "divmod",
                                          "eval",
                                          "exec",
                                          "format",
                                          "getattr",
                                          "globals",
                                          "hasattr",
                                          "hash",
                                          "hex",
                                          "id",
                                          "input",
                                          "isinstance",
                                          "issubclass",
                                          "iter",
                                          "aiter",
                                          "len",
                                          "locals",
                                          "max",
                                          "min",
                                          "next",
                                          "anext",
                                          "oct",
                                          "ord",
                                          "pow",
                                          "print",
                                          "repr",
                                          "round",
                                          "setattr",
                                          "sorted",
                                          "sum",
                                          "vars",
                                          "None",
                                          "Ellipsis",
                                          "NotImplemented",
                                          "False",
                                          "True",
                                          "bool",
                                          "memoryview",
                                          "bytearray",
                                          "bytes",
                                          "classmethod",
                                          "complex",
                                          "dict",
                                          "enumerate",
                                          "filter",
                                          "float",
                                          "frozenset",
                                          "property",
                                          "int",
                                          "list",
                                          "map",
                                          "object",
                                          "range",
                                          "reversed",
                                          "set",
                                          "slice",
                                          "staticmethod",
                                          "str",
                                          "super",
                                          "tuple",
                                          "type",
                                          "zip",
                                          "__debug__",
                                          "BaseException",
                                          "BaseExceptionGroup",
                                          "Exception",
                                          "GeneratorExit",
                                          "KeyboardInterrupt",
                                          "SystemExit",
                                          "ArithmeticError",
                                          "AssertionError",
                                          "AttributeError",
                                          "BufferError",
                                          "EOFError",
                                          "ImportError",
                                          "LookupError",
                                          "MemoryError",
                                          "NameError",
                                          "OSError",
                                          "ReferenceError",
                                          "RuntimeError",
                                          "StopAsyncIteration",
                                          "StopIteration",
                                          "SyntaxError",
                                          "SystemError",
                                          "TypeError",
                                          "ValueError",
                                          "Warning",
                                          "FloatingPointError",
                                          "OverflowError",
                                          "ZeroDivisionError",
                                          "BytesWarning",
                                          "DeprecationWarning",
                                          "EncodingWarning",
                                          "FutureWarning",
                                          "ImportWarning",
                                          "PendingDeprecationWarning",
                                          "ResourceWarning",
                                          "RuntimeWarning",
                                          "SyntaxWarning",
                                          "UnicodeWarning",
                                          "UserWarning",
                                          "BlockingIOError",
                                          "ChildProcessError",
                                          "ConnectionError",
                                          "FileExistsError",
                                          "FileNotFoundError",
                                          "InterruptedError",
                                          "IsADirectoryError",
                                          "NotADirectoryError",
                                          "PermissionError",
                                          "ProcessLookupError",
                                          "TimeoutError",
                                          "IndentationError",
                                          "IndexError",
                                          "KeyError",
                                          "ModuleNotFoundError",
                                          "NotImplementedError",
                                          "RecursionError",
                                          "UnboundLocalError",
                                          "UnicodeError",
                                          "BrokenPipeError",
                                          "ConnectionAbortedError",
                                          "ConnectionRefusedError",
                                          "ConnectionResetError",
                                          "TabError",
                                          "UnicodeDecodeError",
                                          "UnicodeEncodeError",
                                          "UnicodeTranslateError",
                                          "ExceptionGroup",
                                          "EnvironmentError",
                                          "IOError",
                                          "open",
                                          "quit",
                                          "exit",
                                          "copyright",
                                          "credits",
                                          "license",
                                          "help"};

// torch.fx's _custom_builtins: name -> the object it stands for.
constexpr Namespace::CustomBuiltin kCustomBuiltins[] = {
    {"inf", "math.inf"},
    {"nan", "math.nan"},
    {"NoneType", "builtins.NoneType"},
    {"torch", "torch"},
    {"device", "torch.device"},
    {"fx_pytree", "torch.fx._pytree"},
    {"pytree", "torch.utils._pytree"},
};

const absl::flat_hash_set<std::string_view>& builtin_set() {
  static const auto* set = new absl::flat_hash_set<std::string_view>(
      std::begin(kBuiltins), std::end(kBuiltins));
  return *set;
}

// Every name is_illegal may refuse (keywords, builtins, codegen globals):
// one lookup tells most names apart from all of them.
const absl::flat_hash_set<std::string_view>& reserved_set() {
  static const auto* set = [] {
    auto* all = new absl::flat_hash_set<std::string_view>(std::begin(kBuiltins),
                                                          std::end(kBuiltins));
    all->insert(std::begin(kKeywords), std::end(kKeywords));
    for (const auto& [name, obj] : kCustomBuiltins) all->insert(name);
    return all;
  }();
  return *set;
}

bool is_ident_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z') || c == '_';
}

// Splits `name` as the regex (.*)_(\d+)$ does. Returns false when there is no
// numeric suffix (or it does not fit in 18 digits).
bool split_suffix(std::string_view name, std::string_view* base,
                  uint64_t* num) {
  size_t end = name.size();
  size_t i = end;
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') --i;
  if (i == end || i == 0 || name[i - 1] != '_') return false;
  if (end - i > 18) return false;
  uint64_t n = 0;
  for (size_t k = i; k < end; ++k) n = n * 10 + (name[k] - '0');
  *base = name.substr(0, i - 1);
  *num = n;
  return true;
}

}  // namespace

bool Namespace::is_keyword(std::string_view name) {
  for (std::string_view k : kKeywords) {
    if (k == name) return true;
  }
  return false;
}

bool Namespace::is_builtin(std::string_view name) {
  return builtin_set().contains(name);
}

const std::vector<Namespace::CustomBuiltin>& Namespace::custom_builtins() {
  static const auto* all = new std::vector<CustomBuiltin>(
      std::begin(kCustomBuiltins), std::end(kCustomBuiltins));
  return *all;
}

std::string_view Namespace::custom_builtin_object(std::string_view name) {
  for (const auto& [n, obj] : kCustomBuiltins) {
    if (n == name) return obj;
  }
  return {};
}

bool Namespace::is_used(std::string_view name) const {
  for (const Namespace* ns = this; ns != nullptr; ns = ns->parent_) {
    if (ns->used_.contains(name)) return true;
  }
  return false;
}

bool Namespace::is_illegal(std::string_view name, std::string_view obj) const {
  if (!reserved_set().contains(name)) return false;
  if (is_keyword(name)) return true;
  if (is_builtin(name)) {
    // Legal only for the builtin itself ("builtins.len" may be named len).
    return !(obj.size() == name.size() + 9 && obj.substr(0, 9) == "builtins." &&
             obj.substr(9) == name);
  }
  std::string_view custom = custom_builtin_object(name);
  if (!custom.empty()) return obj != custom;
  return false;
}

std::string_view Namespace::claim(std::string_view name) {
  auto it = used_.find(name);
  if (it != used_.end()) return stored_view(*it);
  std::string_view stored = store(name);
  used_.insert(stored.data());
  return stored;
}

void Namespace::forget_names() {
  used_.clear();
  watermark_.clear();
  obj_to_name_.clear();
  ++generation_;
}

bool Namespace::is_legal_node_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    if (!is_ident_char(c)) return false;
  }
  return !is_keyword(name) && !is_builtin(name) &&
         custom_builtin_object(name).empty();
}

uint64_t Namespace::watermark(std::string_view base) const {
  for (const Namespace* ns = this; ns != nullptr; ns = ns->parent_) {
    auto it = ns->watermark_.find(base);
    if (it != ns->watermark_.end()) return it->second;
  }
  return 1;
}

void Namespace::merge_from(const Namespace& other) {
  if (&other == this) return;
  used_.reserve(used_.size() + other.used_.size());
  for (const char* name : other.used_) {
    if (!used_.contains(name)) used_.insert(store(stored_view(name)).data());
  }
  for (const auto& [base, mark] : other.watermark_) {
    auto it = watermark_.find(base);
    if (it == watermark_.end()) {
      watermark_.emplace(store(base), mark);
    } else if (it->second < mark) {
      it->second = mark;
    }
  }
  for (const auto& [obj, name] : other.obj_to_name_) {
    if (obj_to_name_.contains(obj)) continue;
    auto it = used_.find(name);
    std::string_view copied =
        it != used_.end() ? stored_view(*it) : store(name);
    obj_to_name_.emplace(store(obj), copied);
  }
}

void Namespace::copy_from(const Namespace& other) {
  if (&other == this) return;
  // Appended, not replaced: views this namespace handed out stay valid.
  blocks_.insert(blocks_.end(), other.blocks_.begin(), other.blocks_.end());
  block_used_ = block_size_ = 0;  // the shared last block stays other's
  used_ = other.used_;
  watermark_ = other.watermark_;
  obj_to_name_ = other.obj_to_name_;
  generation_ = other.generation_;
}

std::string_view Namespace::store(std::string_view name) {
  // Each name is stored after its length and with a terminating NUL, so it
  // can be handed out as a C string (the plugin C API does) and hashed
  // without strlen.
  const uint32_t len = static_cast<uint32_t>(name.size());
  const size_t need = sizeof(len) + name.size() + 1;
  if (blocks_.empty() || block_used_ + need > block_size_) {
    block_size_ = std::max<size_t>(need, 16 * 1024);
    blocks_.emplace_back(new char[block_size_]);
    block_used_ = 0;
  }
  char* dst = blocks_.back().get() + block_used_;
  std::memcpy(dst, &len, sizeof(len));
  dst += sizeof(len);
  std::copy(name.begin(), name.end(), dst);
  dst[name.size()] = '\0';
  block_used_ += need;
  return std::string_view(dst, name.size());
}

std::string_view Namespace::create_name(std::string_view candidate_in,
                                        std::string_view obj) {
  if (!obj.empty()) {
    for (const Namespace* ns = this; ns != nullptr; ns = ns->parent_) {
      auto it = ns->obj_to_name_.find(obj);
      if (it != ns->obj_to_name_.end()) return it->second;
    }
  }

  // Replace each run of illegal characters with one underscore.
  std::string candidate;
  candidate.reserve(candidate_in.size() + 1);
  bool in_run = false;
  for (char c : candidate_in) {
    if (is_ident_char(c)) {
      candidate.push_back(c);
      in_run = false;
    } else if (!in_run) {
      candidate.push_back('_');
      in_run = true;
    }
  }
  if (candidate.empty()) candidate = "_unnamed";
  if (candidate[0] >= '0' && candidate[0] <= '9') candidate.insert(0, "_");

  std::string_view base = candidate;
  uint64_t num = 0;
  bool has_num = split_suffix(candidate, &base, &num);
  std::string name = has_num ? cat(base, "_", num) : candidate;

  if (is_used(name) || is_illegal(name, obj)) {
    // torch.fx probes base_{num+1}, base_{num+2}, ...; every base_K below the
    // watermark is known to be used, so the probe may start there.
    uint64_t mark = watermark(base);
    uint64_t k = num + 1 > mark ? num + 1 : mark;
    const bool from_mark = k == mark;
    for (;; ++k) {
      name = cat(base, "_", k);
      if (!is_used(name) && !is_illegal(name, obj)) break;
    }
    if (from_mark) {
      // base_mark .. base_{k-1} were all used; base_k is taken now.
      std::string_view key = base;
      auto it = watermark_.find(key);
      if (it == watermark_.end()) {
        watermark_.emplace(store(base), k + 1);
      } else {
        it->second = k + 1;
      }
    }
  }

  std::string_view stored = store(name);
  used_.insert(stored.data());
  if (!obj.empty()) obj_to_name_.emplace(store(obj), stored);
  return stored;
}

}  // namespace fx
