// fx_sdk._C._forward_code(src, filename): the code object of the forward
// function that torch.fx's generated code `src` defines, made without
// Python's compiler: the same code object that compile(src, filename,
// "exec") holds for it (bytecode, constants, names, locals, stack size,
// location table), for sources in the forms below; None for any other
// source (the caller then compiles it). CPython 3.11 only (its bytecode and
// location-table format); None on other versions.
//
// Forms (what torch.fx's python_code writes for most graphs):
//   def forward(self, x, y):           parameters without annotations or
//                                      defaults
//       NAME = EXPR                    optionally followed by
//       ...;  NAME = NAME = None      (torch.fx's freeing of dead values)
//       return EXPR
//   EXPR: a name, a constant (None, True, False, an int or float, optionally
//   negated, a '...' or "..." string without escapes or quotes), attribute
//   loads (self.w, torch.float32), calls of a global or of an attribute
//   (torch.relu(x), self.conv1(x), x.view(-1)) with positional and keyword
//   arguments, subscripts by a name or constant (getitem = x[0]); a statement's
//   value may be two of these joined by a binary operator (add = x + y).
// Everything else (annotations, defaults, tuples, lists, slices, comments,
// wrapped functions, non-ASCII text) gives None.
//
// A name the forward binds (a parameter, an assignment target, a name freed
// with `= None`) must be one CPython's compiler would bind: not a keyword,
// not None / True / False, not __debug__, and no parameter twice. Otherwise
// ValueError names the node (placeholders are the parameters, the other
// nodes the assignment targets) and why: CPython refuses such a source, and
// a code object built for it anyway would run wrongly (a parameter `None`
// reads the constant, not the argument).
//
// Each instruction gets the location the 3.11 compiler gives it (the
// expression's line and columns), so tracebacks and the location table are
// compile()'s; tests/python/forward_bytecode_test.py checks every field of
// the code object against compile()'s.
#include <Python.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "python/bindings.h"

namespace py = pybind11;

namespace fx_sdk {
namespace {

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
constexpr bool kSupportedPython = true;
#else
constexpr bool kSupportedPython = false;
#endif

// The opcodes used, with their inline cache entries, read from Python's
// own opcode module.
struct Op {
  int code = 0;
  int caches = 0;
};
struct Opcodes {
  Op resume, load_fast, store_fast, load_const, load_global, load_attr,
      load_method, precall, call, kw_names, copy, return_value, extended_arg,
      binary_op, binary_subscr;
  std::vector<std::string> nb_ops;  // BINARY_OP's operators by oparg
};

const Opcodes& opcodes() {
  static const Opcodes* const kOps = [] {
    py::module_ opcode = py::module_::import("opcode");
    py::dict opmap = opcode.attr("opmap");
    py::list caches = opcode.attr("_inline_cache_entries");
    auto op = [&](const char* name) {
      int code = opmap[name].cast<int>();
      return Op{code, caches[code].cast<int>()};
    };
    auto* ops = new Opcodes{op("RESUME"),        op("LOAD_FAST"),
                            op("STORE_FAST"),    op("LOAD_CONST"),
                            op("LOAD_GLOBAL"),   op("LOAD_ATTR"),
                            op("LOAD_METHOD"),   op("PRECALL"),
                            op("CALL"),          op("KW_NAMES"),
                            op("COPY"),          op("RETURN_VALUE"),
                            op("EXTENDED_ARG"),  op("BINARY_OP"),
                            op("BINARY_SUBSCR"), {}};
    for (py::handle entry : opcode.attr("_nb_ops")) {
      ops->nb_ops.push_back(py::str(entry[py::int_(1)]).cast<std::string>());
    }
    return ops;
  }();
  return *kOps;
}

// ------------------------------------------------------------------ syntax

// A source position: line (1-based), columns (0-based, end exclusive).
struct Loc {
  int line = 0;
  int col = 0;
  int end_col = 0;
};

struct Expr {
  enum class Kind { kName, kConst, kAttr, kCall, kSubscript, kBinOp } kind;
  Loc loc;
  std::string name;            // kName, kAttr's attribute
  py::object value;            // kConst
  std::unique_ptr<Expr> base;  // kAttr's value, kCall's callee
  std::vector<Expr> args;      // kCall
  std::vector<std::pair<std::string, Expr>> kwargs;  // kCall
  int op = 0;  // kBinOp's BINARY_OP oparg (base, args[0]: the operands)
};

struct Stmt {
  enum class Kind { kAssign, kReturn } kind;
  Loc loc;           // the statement (for COPY and RETURN_VALUE)
  Loc target;        // kAssign's name
  std::string name;  // kAssign's name
  Expr value;
  // "a = b = None" after the statement: the names and locations, the
  // None's location, the clearing statement's location.
  std::vector<std::pair<std::string, Loc>> cleared;
  Loc none_loc, clear_loc;
};

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_keyword(std::string_view s) {
  static const char* const kKeywords[] = {
      "and",      "as",       "assert", "async", "await",  "break",  "class",
      "continue", "def",      "del",    "elif",  "else",   "except", "finally",
      "for",      "from",     "global", "if",    "import", "in",     "is",
      "lambda",   "nonlocal", "not",    "or",    "pass",   "raise",  "return",
      "try",      "while",    "with",   "yield"};
  for (const char* k : kKeywords) {
    if (s == k) return true;
  }
  return false;
}

// Why CPython would refuse to bind `n` (nullptr: it would bind it).
const char* unbindable(std::string_view n) {
  if (is_keyword(n)) return "a Python keyword";
  if (n == "None" || n == "True" || n == "False") {
    return "a Python constant, which cannot be assigned";
  }
  if (n == "__debug__") return "a name Python does not let code assign";
  return nullptr;
}

// Throws ValueError when `name`, bound by node `name`, is unbindable.
void check_binding(const std::string& name, const char* what) {
  if (const char* why = unbindable(name)) {
    throw py::value_error("node '" + name + "' (" + what +
                          ") cannot be a Python name in the forward: '" + name +
                          "' is " + why);
  }
}

// The parameters as CPython's rules allow them: bindable, each once.
void check_parameters(const std::vector<std::string>& params) {
  for (size_t i = 0; i < params.size(); ++i) {
    check_binding(params[i], i == 0 ? "the module, self" : "placeholder");
    for (size_t j = 0; j < i; ++j) {
      if (params[j] == params[i]) {
        throw py::value_error("node '" + params[i] +
                              "' (placeholder): the forward would have two "
                              "parameters named '" +
                              params[i] + "', which Python refuses");
      }
    }
  }
}

// One line's parser; each parse_* returns false for what it does not take.
class LineParser {
 public:
  LineParser(std::string_view text, int line) : s_(text), line_(line) {}

  bool at_end() const { return p_ == s_.size(); }
  size_t pos() const { return p_; }
  bool literal(std::string_view t) {
    if (s_.substr(p_, t.size()) != t) return false;
    p_ += t.size();
    return true;
  }
  bool name(std::string* out) {
    if (p_ >= s_.size() || !is_name_start(s_[p_])) return false;
    size_t start = p_;
    while (p_ < s_.size() && is_name_char(s_[p_])) ++p_;
    *out = std::string(s_.substr(start, p_ - start));
    return true;
  }
  Loc loc(size_t start) const {
    return Loc{line_, static_cast<int>(start), static_cast<int>(p_)};
  }

  // EXPR, or EXPR OP EXPR with one of BINARY_OP's operators (not both
  // constants: the compiler would fold them).
  bool value(Expr* e) {
    size_t start = p_;
    if (!expr(e)) return false;
    if (!literal(" ")) return true;
    const std::vector<std::string>& ops = opcodes().nb_ops;
    int op = -1;
    for (size_t i = 0; i < ops.size() && op < 0; ++i) {
      if (ops[i].back() != '=' &&
          s_.substr(p_, ops[i].size() + 1) == ops[i] + " ") {
        op = static_cast<int>(i);
      }
    }
    // Longest match first ("**" before "*", "//" before "/").
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].back() != '=' && ops[i].size() == 2 &&
          s_.substr(p_, 3) == ops[i] + " ") {
        op = static_cast<int>(i);
      }
    }
    if (op < 0) return false;
    p_ += ops[op].size() + 1;
    Expr bin{Expr::Kind::kBinOp, {}, {}, {}, {}, {}, {}};
    bin.op = op;
    bin.base = std::make_unique<Expr>(std::move(*e));
    Expr right;
    if (!expr(&right)) return false;
    if (bin.base->kind == Expr::Kind::kConst &&
        right.kind == Expr::Kind::kConst) {
      return false;
    }
    bin.args.push_back(std::move(right));
    bin.loc = loc(start);
    *e = std::move(bin);
    return true;
  }

  bool expr(Expr* e) {
    size_t start = p_;
    if (!atom(e)) return false;
    while (p_ < s_.size() &&
           (s_[p_] == '.' || s_[p_] == '(' || s_[p_] == '[')) {
      if (s_[p_] == '[') {
        // value[index]: an index that is a name or a constant.
        // (A constant's subscript the compiler would fold.)
        if (e->kind == Expr::Kind::kConst) return false;
        ++p_;
        Expr sub{Expr::Kind::kSubscript, {}, {}, {}, {}, {}, {}};
        sub.base = std::make_unique<Expr>(std::move(*e));
        Expr index;
        if (!atom(&index) || !literal("]")) return false;
        sub.args.push_back(std::move(index));
        sub.loc = loc(start);
        *e = std::move(sub);
      } else if (s_[p_] == '.') {
        ++p_;
        Expr attr{Expr::Kind::kAttr, {}, {}, {}, {}, {}, {}};
        if (!name(&attr.name) || is_keyword(attr.name)) return false;
        attr.base = std::make_unique<Expr>(std::move(*e));
        attr.loc = loc(start);
        *e = std::move(attr);
      } else {
        ++p_;
        Expr call{Expr::Kind::kCall, {}, {}, {}, {}, {}, {}};
        call.base = std::make_unique<Expr>(std::move(*e));
        if (!call_args(&call)) return false;
        call.loc = loc(start);
        *e = std::move(call);
      }
    }
    return true;
  }

 private:
  // After "(": arguments, then ")".
  bool call_args(Expr* call) {
    if (literal(")")) return true;
    while (true) {
      size_t save = p_;
      std::string key;
      // torch.fx writes keyword arguments as `key = value`.
      if (name(&key) && (literal(" = ") || literal("="))) {
        if (is_keyword(key)) return false;
        Expr v;
        if (!expr(&v)) return false;
        call->kwargs.emplace_back(std::move(key), std::move(v));
      } else {
        p_ = save;
        if (!call->kwargs.empty()) return false;
        Expr v;
        if (!expr(&v)) return false;
        call->args.push_back(std::move(v));
      }
      if (literal(")")) return true;
      if (!literal(", ")) return false;
    }
  }

  bool atom(Expr* e) {
    size_t start = p_;
    if (p_ >= s_.size()) return false;
    char c = s_[p_];
    if (is_name_start(c)) {
      std::string n;
      name(&n);
      if (n == "None" || n == "True" || n == "False") {
        PyObject* v = n == "None" ? Py_None : n == "True" ? Py_True : Py_False;
        *e = constant(py::reinterpret_borrow<py::object>(v), start);
        return true;
      }
      if (is_keyword(n)) return false;
      *e = Expr{Expr::Kind::kName, loc(start), std::move(n), {}, {}, {}, {}};
      return true;
    }
    if (c == '-' || is_digit(c)) {
      bool negative = c == '-';
      if (negative) ++p_;
      py::object v = number();
      if (!v) return false;
      if (negative)
        v = py::reinterpret_steal<py::object>(PyNumber_Negative(v.ptr()));
      if (!v) throw py::error_already_set();
      *e = constant(std::move(v), start);
      return true;
    }
    if (c == '\'' || c == '"') {
      size_t end = s_.find(c, p_ + 1);
      if (end == std::string_view::npos) return false;
      std::string_view body = s_.substr(p_ + 1, end - p_ - 1);
      if (body.find_first_of("\\'\"") != std::string_view::npos) {
        return false;
      }
      p_ = end + 1;
      *e = constant(py::str(std::string(body)), start);
      return true;
    }
    return false;
  }

  Expr constant(py::object v, size_t start) {
    return Expr{Expr::Kind::kConst, loc(start), {}, std::move(v), {}, {}, {}};
  }

  // A decimal int or a float (digits, '.', exponent); Python's own
  // conversions give the value.
  py::object number() {
    size_t start = p_;
    bool is_float = false;
    while (p_ < s_.size() && is_digit(s_[p_])) ++p_;
    if (p_ < s_.size() && s_[p_] == '.') {
      is_float = true;
      ++p_;
      while (p_ < s_.size() && is_digit(s_[p_])) ++p_;
    }
    if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E')) {
      is_float = true;
      ++p_;
      if (p_ < s_.size() && (s_[p_] == '+' || s_[p_] == '-')) ++p_;
      if (p_ >= s_.size() || !is_digit(s_[p_])) return py::object();
      while (p_ < s_.size() && is_digit(s_[p_])) ++p_;
    }
    std::string text(s_.substr(start, p_ - start));
    if (text.empty() || text[0] == '.') return py::object();
    if (p_ < s_.size() && (is_name_char(s_[p_]) || s_[p_] == '.')) {
      return py::object();  // 0x10, 1j, 1_000, ...
    }
    if (!is_float) {
      if (text.size() > 1 && text[0] == '0') return py::object();
      return py::reinterpret_steal<py::object>(
          PyLong_FromString(text.c_str(), nullptr, 10));
    }
    py::object str = py::str(text);
    return py::reinterpret_steal<py::object>(PyFloat_FromString(str.ptr()));
  }

  std::string_view s_;
  size_t p_ = 0;
  int line_;
};

// "    NAME = EXPR[;  NAME = ... = None]" or "    return EXPR".
bool parse_statement(std::string_view text, int line, Stmt* out) {
  LineParser p(text, line);
  if (!p.literal("    ")) return false;
  size_t start = p.pos();
  if (p.literal("return ")) {
    out->kind = Stmt::Kind::kReturn;
    if (!p.value(&out->value)) return false;
    out->loc = p.loc(start);
    return p.at_end();
  }
  out->kind = Stmt::Kind::kAssign;
  if (!p.name(&out->name)) return false;  // bindable: checked by the caller
  out->target = p.loc(start);
  if (!p.literal(" = ") || !p.value(&out->value)) return false;
  out->loc = p.loc(start);
  if (p.at_end()) return true;
  if (!p.literal(";  ")) return false;
  size_t clear_start = p.pos();
  while (true) {
    size_t at = p.pos();
    std::string n;
    if (p.name(&n)) {
      if (n == "None") {
        out->none_loc = p.loc(at);
        out->clear_loc = p.loc(clear_start);
        return !out->cleared.empty() && p.at_end();
      }
      out->cleared.emplace_back(n, p.loc(at));  // checked by the caller
    } else {
      return false;
    }
    if (!p.literal(" = ")) return false;
  }
}

// "def forward(self, x):" -> the parameter names.
bool parse_header(std::string_view text, std::vector<std::string>* params) {
  LineParser p(text, 0);
  if (!p.literal("def forward(")) return false;
  if (p.literal("):")) return p.at_end();
  while (true) {
    std::string n;
    if (!p.name(&n)) return false;  // bindable: checked by the caller
    params->push_back(std::move(n));
    if (p.literal("):")) return p.at_end();
    if (!p.literal(", ")) return false;
  }
}

// --------------------------------------------------------------- assembler

// Instructions into 3.11's bytecode and location table, tracking the
// constants, names, locals and stack depth as the compiler does.
class Assembler {
 public:
  Assembler(int first_line, const std::vector<std::string>& params,
            size_t num_lines)
      : table_line_(first_line) {
    code_.reserve(num_lines * 64);
    table_.reserve(num_lines * 24);
    varnames_.reserve(num_lines);
    varname_index_.reserve(num_lines);
    add_const(py::none());  // no docstring: None is the first constant
    for (const std::string& p : params) varname(p);
  }

  void emit(const Op& op, int arg, Loc loc, int stack_effect) {
    int size = 1 + op.caches;
    for (int shift = 24; shift > 0; shift -= 8) {
      if (arg >= (1 << shift)) {
        put(opcodes().extended_arg.code, (arg >> shift) & 0xFF);
        ++size;
      }
    }
    put(op.code, arg & 0xFF);
    for (int i = 0; i < op.caches; ++i) put(0, 0);
    while (size > 8) {
      location(loc, 8);
      size -= 8;
    }
    location(loc, size);
    depth_ += stack_effect;
    if (depth_ > max_depth_) max_depth_ = depth_;
  }

  int add_const(py::object value) {
    // Constants are told apart by type and value (1, 1.0, True; 0.0, -0.0).
    std::string key =
        py::str(value.get_type().attr("__name__")).cast<std::string>() + ":";
    if (PyFloat_Check(value.ptr())) {
      double d = PyFloat_AsDouble(value.ptr());
      key.append(reinterpret_cast<const char*>(&d), sizeof d);
    } else {
      key += py::repr(value).cast<std::string>();
    }
    auto [it, added] = const_index_.emplace(key, consts_.size());
    if (added) consts_.push_back(std::move(value));
    return static_cast<int>(it->second);
  }
  int name(const std::string& n) { return index(names_, name_index_, n); }
  int varname(const std::string& n) {
    return index(varnames_, varname_index_, n);
  }

  int depth() const { return depth_; }
  int max_depth() const { return max_depth_; }
  const std::string& code() const { return code_; }
  const std::string& table() const { return table_; }
  py::tuple consts() const { return to_tuple(consts_); }
  py::tuple names() const { return strings(names_); }
  py::tuple varnames() const { return strings(varnames_); }
  size_t num_varnames() const { return varnames_.size(); }

 private:
  static int index(std::vector<std::string>& list,
                   std::unordered_map<std::string, int>& index,
                   const std::string& n) {
    auto [it, added] = index.emplace(n, static_cast<int>(list.size()));
    if (added) list.push_back(n);
    return it->second;
  }
  static py::tuple to_tuple(const std::vector<py::object>& items) {
    py::tuple t(items.size());
    for (size_t i = 0; i < items.size(); ++i) t[i] = items[i];
    return t;
  }
  static py::tuple strings(const std::vector<std::string>& items) {
    py::tuple t(items.size());
    for (size_t i = 0; i < items.size(); ++i) t[i] = py::str(items[i]);
    return t;
  }

  void put(int opcode, int arg) {
    code_.push_back(static_cast<char>(opcode));
    code_.push_back(static_cast<char>(arg));
  }
  void byte(int b) { table_.push_back(static_cast<char>(b)); }
  void first_byte(int code, int length) {
    byte(0x80 | (code << 3) | (length - 1));
  }
  void varint(unsigned v) {
    while (v >= 64) {
      byte(64 | (v & 63));
      v >>= 6;
    }
    byte(static_cast<int>(v));
  }
  void signed_varint(int v) {
    varint(v < 0 ? ((static_cast<unsigned>(-v) << 1) | 1)
                 : (static_cast<unsigned>(v) << 1));
  }

  // One location-table entry for `length` code units at `loc`
  // (3.11's short, one-line and long forms, chosen as the compiler does).
  void location(Loc loc, int length) {
    int line_delta = loc.line - table_line_;
    if (line_delta == 0 && loc.col < 80 && loc.end_col - loc.col < 16 &&
        loc.end_col >= loc.col) {
      first_byte(loc.col >> 3, length);
      byte(((loc.col & 7) << 4) | (loc.end_col - loc.col));
      return;
    }
    if (line_delta >= 0 && line_delta < 3 && loc.col < 128 &&
        loc.end_col < 128) {
      first_byte(10 + line_delta, length);
      byte(loc.col);
      byte(loc.end_col);
    } else {
      first_byte(14, length);
      signed_varint(line_delta);
      varint(0);  // one line
      varint(loc.col + 1);
      varint(loc.end_col + 1);
    }
    table_line_ = loc.line;
  }

  std::string code_, table_;
  int table_line_;
  int depth_ = 0, max_depth_ = 0;
  std::vector<py::object> consts_;
  std::unordered_map<std::string, size_t> const_index_;
  std::vector<std::string> names_, varnames_;
  std::unordered_map<std::string, int> name_index_, varname_index_;
};

// 3.11's limit for the method-call form (STACK_USE_GUIDELINE).
constexpr size_t kStackUseGuideline = 30;

class Emitter {
 public:
  Emitter(Assembler& a, const std::unordered_map<std::string, bool>& locals)
      : a_(a), locals_(locals), ops_(opcodes()) {}

  bool expr(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::kName:
        if (locals_.count(e.name) > 0) {
          a_.emit(ops_.load_fast, a_.varname(e.name), e.loc, 1);
        } else {
          a_.emit(ops_.load_global, a_.name(e.name) << 1, e.loc, 1);
        }
        return true;
      case Expr::Kind::kConst:
        a_.emit(ops_.load_const, a_.add_const(e.value), e.loc, 1);
        return true;
      case Expr::Kind::kAttr:
        if (!expr(*e.base)) return false;
        a_.emit(ops_.load_attr, a_.name(e.name), e.loc, 0);
        return true;
      case Expr::Kind::kCall:
        return call(e);
      case Expr::Kind::kSubscript:
        if (!expr(*e.base) || !expr(e.args[0])) return false;
        a_.emit(ops_.binary_subscr, 0, e.loc, -1);
        return true;
      case Expr::Kind::kBinOp:
        if (!expr(*e.base) || !expr(e.args[0])) return false;
        a_.emit(ops_.binary_op, e.op, e.loc, -1);
        return true;
    }
    return false;
  }

  void store(const std::string& name, Loc loc) {
    a_.emit(ops_.store_fast, a_.varname(name), loc, -1);
  }
  void load_none(Loc loc) { a_.emit(ops_.load_const, 0, loc, 1); }
  void copy(Loc loc) { a_.emit(ops_.copy, 1, loc, 1); }
  void return_value(Loc loc) { a_.emit(ops_.return_value, 0, loc, -1); }

 private:
  bool call(const Expr& e) {
    const Expr& callee = *e.base;
    size_t n = e.args.size() + e.kwargs.size();
    if (n + (e.kwargs.empty() ? 0 : 1) >= kStackUseGuideline) return false;
    Loc kw_names_loc = e.loc;
    if (callee.kind == Expr::Kind::kAttr) {
      // The method-call form: LOAD_METHOD (and KW_NAMES) at the attribute's
      // location.
      kw_names_loc = callee.loc;
      if (!expr(*callee.base)) return false;
      a_.emit(ops_.load_method, a_.name(callee.name), callee.loc, 1);
    } else if (callee.kind == Expr::Kind::kName &&
               locals_.count(callee.name) == 0 &&
               e.args.size() + 2 * e.kwargs.size() <= kStackUseGuideline) {
      // (Past the guideline the compiler calls through CALL_FUNCTION_EX.)
      // PUSH_NULL folded into LOAD_GLOBAL's low bit.
      a_.emit(ops_.load_global, (a_.name(callee.name) << 1) | 1, callee.loc, 2);
    } else {
      return false;
    }
    for (const Expr& arg : e.args) {
      if (!expr(arg)) return false;
    }
    if (!e.kwargs.empty()) {
      py::tuple keys(e.kwargs.size());
      for (size_t i = 0; i < e.kwargs.size(); ++i) {
        if (!expr(e.kwargs[i].second)) return false;
        keys[i] = py::str(e.kwargs[i].first);
      }
      a_.emit(ops_.kw_names, a_.add_const(keys), kw_names_loc, 0);
    }
    a_.emit(ops_.precall, static_cast<int>(n), e.loc, -static_cast<int>(n));
    a_.emit(ops_.call, static_cast<int>(n), e.loc, -1);
    return true;
  }

  Assembler& a_;
  const std::unordered_map<std::string, bool>& locals_;
  const Opcodes& ops_;
};

// The lines of `src` ("\n"-separated, as Python reads them).
std::vector<std::string_view> split_lines(std::string_view src) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= src.size()) {
    size_t end = src.find('\n', start);
    if (end == std::string_view::npos) end = src.size();
    lines.push_back(src.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool is_ascii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80 || c == '\r' || c == '\t' ||
        c == '\\') {
      return false;
    }
  }
  return true;
}

py::object forward_code(const std::string& src, py::str filename) {
  if (!kSupportedPython || !is_ascii(src)) return py::none();
  std::vector<std::string_view> lines = split_lines(src);
  size_t i = 0;
  while (i < lines.size() && lines[i].empty()) ++i;
  std::vector<std::string> params;
  if (i == lines.size() || !parse_header(lines[i], &params)) {
    return py::none();
  }
  check_parameters(params);
  int first_line = static_cast<int>(i) + 1;
  std::vector<Stmt> body;
  std::unordered_map<std::string, bool> locals;
  locals.reserve(2 * lines.size());
  body.reserve(lines.size());
  for (const std::string& p : params) locals.emplace(p, true);
  for (++i; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (line.find_first_not_of(' ') == std::string_view::npos) {
      continue;  // blank (the source ends in "\n    ")
    }
    if (!body.empty() && body.back().kind == Stmt::Kind::kReturn) {
      return py::none();
    }
    Stmt& s = body.emplace_back();
    if (!parse_statement(line, static_cast<int>(i) + 1, &s)) {
      return py::none();
    }
    if (s.kind == Stmt::Kind::kAssign) {
      check_binding(s.name, "an assignment in the forward");
      locals.emplace(s.name, true);
    }
    for (const auto& c : s.cleared) {
      check_binding(c.first, "freed with '= None'");
      locals.emplace(c.first, true);
    }
  }
  if (body.empty() || body.back().kind != Stmt::Kind::kReturn) {
    return py::none();
  }

  Assembler a(first_line, params, lines.size());
  a.emit(opcodes().resume, 0, Loc{first_line, 0, 0}, 0);
  Emitter e(a, locals);
  for (const Stmt& s : body) {
    if (!e.expr(s.value)) return py::none();
    if (s.kind == Stmt::Kind::kReturn) {
      e.return_value(s.loc);
      break;
    }
    e.store(s.name, s.target);
    if (s.cleared.empty()) continue;
    e.load_none(s.none_loc);
    for (size_t c = 0; c < s.cleared.size(); ++c) {
      if (c + 1 < s.cleared.size()) e.copy(s.clear_loc);
      e.store(s.cleared[c].first, s.cleared[c].second);
    }
  }

  py::bytes code(a.code());
  py::bytes table(a.table());
  py::bytes no_exceptions("");
  py::tuple empty(0);
  py::str name("forward");
  PyCodeObject* made = PyCode_NewWithPosOnlyArgs(
      static_cast<int>(params.size()), 0, 0, static_cast<int>(a.num_varnames()),
      a.max_depth(), CO_OPTIMIZED | CO_NEWLOCALS, code.ptr(), a.consts().ptr(),
      a.names().ptr(), a.varnames().ptr(), empty.ptr(), empty.ptr(),
      filename.ptr(), name.ptr(), name.ptr(), first_line, table.ptr(),
      no_exceptions.ptr());
  if (made == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(made));
}

}  // namespace

void bind_forward_bytecode(py::module_& m) {
  m.def("_forward_code", &forward_code, py::arg("src"), py::arg("filename"));
}

}  // namespace fx_sdk
