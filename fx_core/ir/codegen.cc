#include "fx_core/ir/codegen.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/graph_namespace.h"
#include "fx_core/ir/python_repr.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

struct OperatorForm {
  std::string_view name;
  std::string_view format;  // {} placeholders, filled with repr(arg)
};

// torch.fx's magic_methods (reflectable included).
constexpr OperatorForm kMagicMethods[] = {
    {"eq", "{} == {}"},       {"ne", "{} != {}"},     {"lt", "{} < {}"},
    {"gt", "{} > {}"},        {"le", "{} <= {}"},     {"ge", "{} >= {}"},
    {"pos", "+{}"},           {"neg", "-{}"},         {"invert", "~{}"},
    {"add", "{} + {}"},       {"sub", "{} - {}"},     {"mul", "{} * {}"},
    {"floordiv", "{} // {}"}, {"truediv", "{} / {}"}, {"div", "{} / {}"},
    {"mod", "{} % {}"},       {"pow", "{} ** {}"},    {"lshift", "{} << {}"},
    {"rshift", "{} >> {}"},   {"and_", "{} & {}"},    {"or_", "{} | {}"},
    {"xor", "{} ^ {}"},       {"getitem", "{}[{}]"},  {"matmul", "{} @ {}"},
};

// torch.fx's inplace_methods.
constexpr OperatorForm kInplaceMethods[] = {
    {"iadd", "{} += {}"},       {"iand", "{} &= {}"},
    {"ifloordiv", "{} //= {}"}, {"ilshift", "{} <<= {}"},
    {"imod", "{} %= {}"},       {"imul", "{} *= {}"},
    {"imatmul", "{} @= {}"},    {"ior", "{} |= {}"},
    {"ipow", "{} **= {}"},      {"irshift", "{} >>= {}"},
    {"isub", "{} -= {}"},       {"itruediv", "{} /= {}"},
    {"ixor", "{} ^= {}"},       {"setitem", "{}[{}] = {}"},
};

const OperatorForm* find_form(const OperatorForm* begin,
                              const OperatorForm* end, std::string_view name) {
  for (const OperatorForm* f = begin; f != end; ++f) {
    if (f->name == name) return f;
  }
  return nullptr;
}

void append_fill(std::string& out, std::string_view format,
                 const Node::Args& args) {
  size_t arg = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] == '{' && i + 1 < format.size() && format[i + 1] == '}') {
      if (arg < args.size()) append_repr(out, args[arg]);
      ++arg;
      ++i;
    } else {
      out.push_back(format[i]);
    }
  }
}

// An atom written as `.atom`: an ASCII identifier and no keyword. (Python
// also takes non-ASCII letters, which torch.fx writes as `.atom`; getattr is
// the same attribute, and needs no Unicode tables to be safe.)
bool is_attribute_name(std::string_view atom) {
  for (char c : atom) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return is_python_identifier(atom) && !Namespace::is_keyword(atom);
}

// `"atom"`: a double-quoted Python literal, with quotes, backslashes and
// control characters escaped, so no text ends it early.
void append_quoted(std::string& out, std::string_view atom) {
  static const char kDigits[] = "0123456789abcdef";
  out += '"';
  for (char ch : atom) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      append(&out, "\\x", kDigits[c >> 4], kDigits[c & 15]);
    } else {
      out += ch;
    }
  }
  out += '"';
}

// torch.fx's _format_target, appended: each atom of `target` that is not an
// identifier wraps the path so far in getattr(..., "atom"), so the
// "getattr(" prefixes are written first. Unlike torch.fx, the atom is an
// escaped literal (torch.fx 1.13 writes it unescaped: a target holding
// `x"), print("` runs code).
void append_target(std::string& out, std::string_view base,
                   std::string_view target) {
  auto for_each_atom = [&](auto&& fn) {
    size_t start = 0;
    while (true) {
      size_t dot = target.find('.', start);
      fn(target.substr(start,
                       dot == std::string_view::npos ? dot : dot - start));
      if (dot == std::string_view::npos) return;
      start = dot + 1;
    }
  };
  for_each_atom([&](std::string_view atom) {
    if (!is_attribute_name(atom)) out += "getattr(";
  });
  out += base;
  for_each_atom([&](std::string_view atom) {
    if (is_attribute_name(atom)) {
      append(&out, ".", atom);
    } else {
      out += ", ";
      append_quoted(out, atom);
      out += ")";
    }
  });
}

class Globals {
 public:
  explicit Globals(const Namespace* graph_names) : ns_(graph_names) {
    // Modules (torch, torch.fx._pytree, ...) are not "from torch" to
    // add_global, so every custom builtin is a global.
    for (const auto& [name, obj] : Namespace::custom_builtins()) {
      insert(std::string(ns_.create_name(name, obj)), obj);
    }
  }

  // torch.fx's add_global: torch objects keep their qualified name; others
  // get a fresh legal name from the code's namespace.
  std::string add(std::string_view name_hint, std::string_view obj) {
    if (obj.substr(0, 6) == "torch." && obj != "torch.device") {
      return std::string(obj);
    }
    // An annotation named this object first (a user's class, both as a
    // parameter's type and as a call_function target): torch.fx gives one
    // object one global.
    std::string legal = legal_name(name_hint);
    auto it = index_.find(legal);
    if (it != index_.end() &&
        globals_[it->second].second == cat(kAnnotationGlobal, legal)) {
      globals_[it->second].second = std::string(obj);
      return legal;
    }
    if (std::optional<size_t> i = annotation_of_nested_class(name_hint)) {
      globals_[*i].second = std::string(obj);
      return globals_[*i].first;
    }
    std::string name(ns_.create_name(name_hint, obj));
    insert(name, obj);
    return name;
  }

  // What add_type_globals records for a name an annotation uses whose
  // object the code's text does not say ("typing." and the name).
  static constexpr std::string_view kAnnotationGlobal = "typing.";

  std::vector<std::pair<std::string, std::string>> take() {
    return std::move(globals_);
  }

 private:
  // torch.fx's create_name's first step: each run of characters illegal in
  // a name becomes '_' (a leading digit gets '_' in front).
  static std::string legal_name(std::string_view hint) {
    std::string out;
    bool in_illegal = false;
    for (char c : hint) {
      bool legal = c == '_' || (c >= '0' && c <= '9') ||
                   (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
      if (legal) out += c;
      if (!legal && !in_illegal) out += '_';
      in_illegal = !legal;
    }
    if (!out.empty() && out[0] >= '0' && out[0] <= '9') out.insert(0, "_");
    return out;
  }

  // A class defined inside a function or another class is named by an
  // annotation after its __qualname__ (`mod.Test.test.<locals>.Pair` ->
  // mod_Test_test_locals_Pair), by a call_function target after its
  // __name__ (`mod.Pair`): the first annotation-only global of the
  // target's module whose last atom is the target's name, if any.
  std::optional<size_t> annotation_of_nested_class(
      std::string_view qualified) const {
    size_t dot = qualified.rfind('.');
    if (dot == std::string_view::npos) return std::nullopt;
    std::string prefix = cat(legal_name(qualified.substr(0, dot)), "_");
    std::string suffix = cat("_", legal_name(qualified.substr(dot + 1)));
    for (size_t i = 0; i < globals_.size(); ++i) {
      const auto& [name, object] = globals_[i];
      if (name.size() > prefix.size() + suffix.size() &&
          name.compare(0, prefix.size(), prefix) == 0 &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) ==
              0 &&
          object == cat(kAnnotationGlobal, name)) {
        return i;
      }
    }
    return std::nullopt;
  }

  void insert(const std::string& name, std::string_view obj) {
    if (!index_.contains(name)) {
      index_.emplace(name, globals_.size());
      globals_.emplace_back(name, std::string(obj));
    }
  }

  Namespace ns_;
  absl::flat_hash_map<std::string, size_t> index_;
  std::vector<std::pair<std::string, std::string>> globals_;
};

// torch.fx's _format_args' _get_repr: an argument's repr, a NamedTuple's
// as its class's global and its items as a tuple (`test_fx_Pair(x, 1.2)`).
void append_arg(std::string& out, const Argument& arg, Globals& globals) {
  const NamedTupleType* named = arg.named_tuple_type();
  if (named == nullptr) {
    append_repr(out, arg);
    return;
  }
  out += globals.add(named->qualified_name(), named->name);
  append_tuple_repr(out, arg);
}

void append_args(std::string& out, const Argument* args, size_t n,
                 const Node::Kwargs& kwargs, Globals& globals) {
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    append_arg(out, args[i], globals);
  }
  bool first = true;
  for (const auto& kv : kwargs) {
    if (n > 0 || !first) out += ", ";
    first = false;
    append(&out, kv.first, " = ");
    append_arg(out, kv.second, globals);
  }
}

// The name torch.fx's codegen looks a call_function target up by
// (_get_qualified_name), from the printed target: builtins lose their module,
// operator functions live in _operator.
std::string qualified_name(std::string_view target) {
  if (target.substr(0, 9) == "builtins.") return std::string(target.substr(9));
  if (target.substr(0, 9) == "operator.") {
    return cat("_operator.", target.substr(9));
  }
  return std::string(target);
}

// Registers the globals an annotation in code form mentions, in the order
// torch.fx's type_repr adds them: builtin types (int) as themselves, typing's
// generics (typing_List) as typing.List; torch types and the custom builtins
// (NoneType) need no entry.
void add_type_globals(Globals& globals, std::string_view type) {
  size_t i = 0;
  while (i < type.size()) {
    char c = type[i];
    if (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      size_t j = i;
      while (j < type.size() && (type[j] == '_' || type[j] == '.' ||
                                 (type[j] >= 'a' && type[j] <= 'z') ||
                                 (type[j] >= 'A' && type[j] <= 'Z') ||
                                 (type[j] >= '0' && type[j] <= '9'))) {
        ++j;
      }
      std::string_view word = type.substr(i, j - i);
      // torch.Tensor keeps its qualified name; NoneType is predefined.
      if (word.find('.') == std::string_view::npos &&
          Namespace::custom_builtin_object(word).empty()) {
        std::string_view generic = word;
        if (generic.substr(0, 7) == "typing_") generic.remove_prefix(7);
        globals.add(word,
                    cat(Namespace::is_builtin(word) ? "builtins." : "typing.",
                        generic));
      }
      i = j;
    } else {
      ++i;
    }
  }
}

// Each node's last use, found walking backwards (torch.fx's
// node_to_last_use / user_to_last_uses): (user position, value) pairs, in
// decreasing user position, each user's values in the order recorded.
std::vector<std::pair<size_t, const Node*>> last_uses(
    const std::vector<Node*>& order) {
  std::vector<std::pair<size_t, const Node*>> frees;
  frees.reserve(order.size());
  absl::flat_hash_set<const Node*> has_last_use;
  has_last_use.reserve(order.size());
  for (size_t i = order.size(); i-- > 0;) {
    auto record = [&](Node* n) {
      if (has_last_use.insert(n).second) frees.emplace_back(i, n);
    };
    for (const Argument& a : order[i]->args()) for_each_node(a, record);
    for (const auto& kv : order[i]->kwargs()) for_each_node(kv.second, record);
  }
  return frees;
}

// The body of forward (torch.fx's emit_node for every node, one statement a
// line, each followed by the frees of the values it used last), and what
// the prologue and the wrap statements need.
class BodyEmitter {
 public:
  BodyEmitter(const CodeGen& codegen, Globals& globals,
              std::string_view root_module)
      : codegen_(codegen), globals_(globals), root_module_(root_module) {}

  void emit(const Graph& graph) {
    body.reserve(graph.size() * 96);  // ~60 bytes a node is typical
    std::vector<Node*> order = graph.nodes().to_vector();
    frees_ = last_uses(order);
    frees_end_ = frees_.size();
    for (size_t pos = 0; pos < order.size(); ++pos) {
      const Node& node = *order[pos];
      std::string ann;
      if (!node.type().empty() && node.op() != Opcode::kOutput) {
        ann = cat(" : ", type_repr(node.type()));
      }
      switch (node.op()) {
        case Opcode::kPlaceholder:
          emit_placeholder(node, ann);
          continue;  // placeholders free nothing
        case Opcode::kCallMethod:
          emit_call_method(node, ann);
          break;
        case Opcode::kCallFunction:
          emit_call_function(node, ann);
          break;
        case Opcode::kCallModule:
          emit_call_module(node, ann);
          break;
        case Opcode::kGetAttr:
          append(&body, node.name(), ann, " = ");
          append_target(body, root_module_, node.target());
          break;
        case Opcode::kOutput:
          emit_output(node);
          continue;
      }
      emitted_ = true;
      free_last_uses(pos);
    }
    if (!emitted_) body = "pass\n";
  }

  std::vector<std::string> free_vars;
  std::vector<std::string> wrapped_fns;
  std::string return_annotation;
  std::string body;

 private:
  std::string type_repr(std::string_view type) {
    add_type_globals(globals_, type);
    return std::string(type);
  }

  void emit_placeholder(const Node& node, const std::string& ann) {
    const std::string& target = node.target();
    std::string var = cat(target, ann);
    if (!node.args().empty()) append(&var, " = ", repr(node.args()[0]));
    free_vars.push_back(std::move(var));
    std::string raw_name = target;
    raw_name.erase(std::remove(raw_name.begin(), raw_name.end(), '*'),
                   raw_name.end());
    if (raw_name != node.name()) {
      append(&body, node.name(), " = ", raw_name, "\n");
      emitted_ = true;
    }
  }

  void emit_call_method(const Node& node, const std::string& ann) {
    const Node::Args& args = node.args();
    append(&body, node.name(), ann, " = ");
    if (args.empty()) {
      append_target(body, "None", node.target());
    } else if (args[0].is_node()) {
      append_target(body, args[0].as_node()->name(), node.target());
    } else {
      append_target(body, repr(args[0]), node.target());
    }
    body += "(";
    append_args(body, args.data() + (args.empty() ? 0 : 1),
                args.empty() ? 0 : args.size() - 1, node.kwargs(), globals_);
    body += ")";
  }

  void emit_call_function(const Node& node, const std::string& ann) {
    if (emit_operator(node, ann)) return;
    const Node::Args& args = node.args();
    const std::string& target = node.target();
    auto [it, inserted] = global_names_.try_emplace(std::string_view(target));
    if (inserted) it->second = globals_.add(qualified_name(target), target);
    const std::string& global_name = it->second;
    if (global_name == "getattr" && args.size() == 2 && args[1].is_string() &&
        is_attribute_name(args[1].as_string())) {
      append(&body, node.name(), ann, " = ");
      append_target(body, repr(args[0]), args[1].as_string());
      return;
    }
    append(&body, node.name(), ann, " = ", global_name, "(");
    append_args(body, args.data(), args.size(), node.kwargs(), globals_);
    body += ")";
    const Argument* wrapped = node.meta_value("is_wrapped");
    if (wrapped && wrapped->is_bool() && wrapped->as_bool() &&
        std::find(wrapped_fns.begin(), wrapped_fns.end(), global_name) ==
            wrapped_fns.end()) {
      wrapped_fns.push_back(global_name);
    }
  }

  // operator.* targets written as Python operators; false for the others.
  bool emit_operator(const Node& node, const std::string& ann) {
    std::string_view t = node.target();
    if (t.substr(0, 9) != "operator.") return false;
    const Node::Args& args = node.args();
    std::string_view op = t.substr(9);
    if (const OperatorForm* f =
            find_form(std::begin(kMagicMethods), std::end(kMagicMethods), op)) {
      append(&body, node.name(), ann, " = ");
      append_fill(body, f->format, args);
      return true;
    }
    if (const OperatorForm* f = find_form(std::begin(kInplaceMethods),
                                          std::end(kInplaceMethods), op)) {
      append_fill(body, f->format, args);
      append(&body, ";  ", node.name(), ann, " = ");
      if (args.empty()) {
        body += "None";
      } else {
        append_repr(body, args[0]);
      }
      return true;
    }
    return false;
  }

  void emit_call_module(const Node& node, const std::string& ann) {
    append(&body, node.name(), ann, " = ");
    append_target(body, root_module_, node.target());
    body += "(";
    append_args(body, node.args().data(), node.args().size(), node.kwargs(),
                globals_);
    body += ")";
  }

  void emit_output(const Node& node) {
    if (!node.type().empty()) {
      return_annotation = cat(" -> ", type_repr(node.type()));
    }
    const Node::Args& args = node.args();
    body += codegen_.generate_output(args.empty() ? Argument() : args[0]);
    body += "\n";
    emitted_ = true;
  }

  // Free the values whose last use the node at `pos` was (users that emit
  // no statement, such as placeholders, are skipped over); ends the line.
  void free_last_uses(size_t pos) {
    while (frees_end_ > 0 && frees_[frees_end_ - 1].first < pos) --frees_end_;
    size_t first_free = frees_end_;
    while (first_free > 0 && frees_[first_free - 1].first == pos) {
      --first_free;
    }
    if (first_free < frees_end_) {
      body += ";  ";
      for (size_t k = first_free; k < frees_end_; ++k) {
        append(&body, frees_[k].second->name(), " = ");
      }
      body += "None\n";
    } else {
      body += "\n";
    }
    frees_end_ = first_free;
  }

  const CodeGen& codegen_;
  Globals& globals_;
  std::string_view root_module_;
  std::vector<std::pair<size_t, const Node*>> frees_;
  size_t frees_end_ = 0;  // frees_[frees_end_..) are consumed
  // call_function targets' global names (add_global), computed once each.
  absl::flat_hash_map<std::string_view, std::string> global_names_;
  bool emitted_ = false;
};

// torch.fx's wrap("fn") statements for the wrapped functions called.
std::string wrap_statements(Globals& globals,
                            const std::vector<std::string>& wrapped_fns) {
  std::string wrap_stmts;
  if (!wrapped_fns.empty()) {
    std::string wrap_name =
        globals.add("wrap", "torch.fx._symbolic_trace.wrap");
    for (size_t i = 0; i < wrapped_fns.size(); ++i) {
      append(&wrap_stmts, i ? "\n" : "", wrap_name, "(\"", wrapped_fns[i],
             "\")");
    }
  }
  return wrap_stmts;
}

// The source: header, then the body with each line indented, written
// straight into one buffer (large temporaries cost page faults).
void append_source(std::string& src, std::string_view wrap_stmts,
                   std::string_view prologue, const std::string& body) {
  const size_t lines = std::count(body.begin(), body.end(), '\n') + 1;
  src.reserve(wrap_stmts.size() + prologue.size() + 4 + body.size() +
              4 * lines);
  append(&src, "\n", wrap_stmts, "\n\n", prologue, "\n");
  size_t start = 0;
  while (true) {
    size_t nl = body.find('\n', start);
    src += "    ";
    if (nl == std::string::npos) {
      src.append(body, start, std::string::npos);
      break;
    }
    src.append(body, start, nl - start + 1);
    start = nl + 1;
  }
}

}  // namespace

std::string format_target(std::string_view base, std::string_view target) {
  std::string r;
  append_target(r, base, target);
  return r;
}

CodeGen::~CodeGen() = default;

std::unique_ptr<CodeGen> CodeGen::clone() const {
  return std::make_unique<CodeGen>(*this);
}

std::string CodeGen::generate_prologue(
    std::vector<std::string> free_vars,
    std::string_view return_annotation) const {
  if (free_vars.empty() || free_vars[0] != "self") {
    free_vars.insert(free_vars.begin(), "self");
  }
  return cat("def forward(", join(free_vars, ", "), ")", return_annotation,
             ":");
}

std::string CodeGen::generate_output(const Argument& output_args) const {
  return cat("return ", repr(output_args));
}

std::vector<std::pair<std::string, std::string>> CodeGen::additional_globals()
    const {
  return {};
}

PythonCode CodeGen::gen_python_code(const Graph& graph,
                                    std::string_view root_module) const {
  Globals globals(&graph.graph_namespace());
  BodyEmitter emitter(*this, globals, root_module);
  emitter.emit(graph);
  std::string wrap_stmts = wrap_statements(globals, emitter.wrapped_fns);
  for (const auto& [n, obj] : additional_globals()) globals.add(n, obj);
  std::string prologue = generate_prologue(std::move(emitter.free_vars),
                                           emitter.return_annotation);
  PythonCode result;
  append_source(result.src, wrap_stmts, prologue, emitter.body);
  result.globals = globals.take();
  return result;
}

bool is_inplace_operator(std::string_view target) {
  constexpr std::string_view kPrefix = "operator.";
  if (target.substr(0, kPrefix.size()) != kPrefix) return false;
  return find_form(std::begin(kInplaceMethods), std::end(kInplaceMethods),
                   target.substr(kPrefix.size())) != nullptr;
}

}  // namespace fx
