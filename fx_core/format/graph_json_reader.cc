// Reading fx-graph JSON files (docs/fx-graph-json.md): the checks of every
// field, node, module spec, pytree and shape environment, and the graph
// built only when the whole file is valid (graph_json.h).
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "fx_core/format/code_names.h"
#include "fx_core/format/graph_json.h"
#include "fx_core/format/graph_json_internal.h"
#include "fx_core/format/json_text.h"
#include "fx_core/io/regular_file.h"
#include "fx_core/ir/python_repr.h"
#include "fx_core/ir/pytree_codegen.h"
#include "fx_core/ir/torch_names.h"
#include "fx_core/ir/tree_spec.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "fx_core/symbolic/sym_parser.h"

namespace fx {
namespace {

using Json = nlohmann::ordered_json;

// A parse failure, carrying the place it happened.
struct ParseError {
  std::string message;
};

// Where an argument is read: its node or module, and the path of the field
// inside it (`args[1]`, `kwargs.other[0]`, `args[0].tuple[1]`).
struct Field {
  std::string_view owner;
  std::string path;

  Field operator+(std::string_view suffix) const {
    return Field{owner, cat(path, suffix)};
  }
  std::string where() const { return cat(owner, " field '", path, "'"); }
};

// A class as a NamedTuple argument or a pytree spec names it: a qualified
// name with a module (`test_fx.Pair`, `m.f.<locals>.P#7fa0`).
bool is_class_name(std::string_view name) {
  return name.find('.') != std::string_view::npos &&
         is_qualified_name(name, /*class_suffix=*/true);
}

// What an attribute path is (code_names.h), for errors.
constexpr std::string_view kAttributePath =
    "an attribute path (module names of printable ASCII joined by dots, no "
    "quotes, backslashes or dunder names)";

// Why `target` is not what a node of `op` names, or empty when it is
// (code_names.h): each opcode's target reaches code in its own way.
std::string target_problem(Opcode op, std::string_view target) {
  switch (op) {
    case Opcode::kPlaceholder:
      if (is_parameter_name(target)) return "";
      return "is not a parameter name (x, *args or **kwargs)";
    case Opcode::kCallFunction:
      if (is_qualified_name(target)) return "";
      return "is not a qualified Python name (dotted ASCII identifiers such "
             "as operator.add or torch.relu, no dunder attributes)";
    case Opcode::kCallMethod:
      if (is_method_name(target)) return "";
      return "is not a method name (an ASCII identifier, not a dunder name "
             "but the data model's operators such as __call__ or __add__)";
    case Opcode::kGetAttr:
    case Opcode::kCallModule:
      if (is_attribute_path(target)) return "";
      return cat("is not ", kAttributePath);
    case Opcode::kOutput:
      if (is_ascii_identifier(target)) return "";
      return "is not the output node's target (output)";
  }
  return "";
}

// A dict key a TreeSpec may hold: a hashable constant.
bool is_key(const Argument& a) {
  return a.is_none() || a.is_bool() || a.is_int() || a.is_float() ||
         a.is_string();
}

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  absl::StatusOr<GraphFile> read(const Json& root) {
    try {
      return read_root(root);
    } catch (const ParseError& e) {
      return absl::InvalidArgumentError(cat(source_, ": ", e.message));
    } catch (const FxError& e) {
      return absl::InvalidArgumentError(cat(source_, ": ", e.what()));
    }
  }

 private:
  [[noreturn]] void fail(std::string_view where, std::string_view what) {
    throw ParseError{cat(where, ": ", what)};
  }

  GraphFile read_root(const Json& root) {
    if (!root.is_object()) fail("file", "the top level must be a JSON object");
    for (auto it = root.begin(); it != root.end(); ++it) {
      const std::string& k = it.key();
      if (k != "format" && k != "version" && k != "nodes" && k != "modules" &&
          k != "weights" && k != "weight_kinds" && k != "shape_env" &&
          k != "pytree") {
        fail("file", cat("unknown top-level field '", k, "'"));
      }
    }
    auto format = root.find("format");
    if (format == root.end() || !format->is_string() ||
        format->get<std::string>() != "fx-graph") {
      fail("file", "field 'format' must be \"fx-graph\"");
    }
    auto version = root.find("version");
    if (version == root.end() || !version->is_number_integer()) {
      fail("file", "field 'version' must be an integer");
    }
    if (version->get<int64_t>() != 1) {
      fail("file", cat("unsupported version ", version->get<int64_t>(),
                       " (this reader knows version 1)"));
    }
    auto nodes = root.find("nodes");
    if (nodes == root.end() || !nodes->is_array()) {
      fail("file", "field 'nodes' must be an array");
    }

    GraphFile file;
    file.graph = std::make_unique<Graph>();
    graph_ = file.graph.get();
    size_t index = 0;
    for (const Json& node : *nodes) {
      read_node(node, index++, nodes->size());
    }
    read_pending_meta();
    if (graph_->output_node() == nullptr) {
      fail("file",
           "the graph has no output node (exactly one, last, is required)");
    }

    if (auto pytree = root.find("pytree"); pytree != root.end()) {
      graph_->set_codegen(
          std::make_unique<PyTreeCodeGen>(read_pytree(*pytree)));
    }
    if (auto modules = root.find("modules"); modules != root.end()) {
      if (!modules->is_object())
        fail("file", "field 'modules' must be an object");
      for (auto it = modules->begin(); it != modules->end(); ++it) {
        file.modules.emplace_back(it.key(), read_module(it.key(), it.value()));
      }
    }
    if (auto weights = root.find("weights"); weights != root.end()) {
      if (!weights->is_string())
        fail("file", "field 'weights' must be a string");
      file.weights = weights->get<std::string>();
    }
    if (auto kinds = root.find("weight_kinds"); kinds != root.end()) {
      file.weight_kinds = read_weight_kinds(*kinds);
    }
    if (auto env = root.find("shape_env"); env != root.end()) {
      file.shape_env = read_shape_env(*env);
    }
    return file;
  }

  // {"KEY": "parameter" | "frozen_parameter" | "buffer" |
  //  "non_persistent_buffer" | "tensor"}
  WeightKinds read_weight_kinds(const Json& j) {
    const char* where = "field 'weight_kinds'";
    if (!j.is_object()) fail(where, "must be an object");
    WeightKinds kinds;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!is_attribute_path(it.key())) {
        fail(where, cat("weight ", python_string_repr(it.key()), " is not ",
                        kAttributePath));
      }
      std::optional<WeightKind> kind;
      if (it->is_string()) kind = parse_weight_kind(it->get<std::string>());
      if (!kind) {
        fail(where, cat("weight '", it.key(),
                        "': the kind must be \"parameter\", "
                        "\"frozen_parameter\", \"buffer\", "
                        "\"non_persistent_buffer\" or \"tensor\""));
      }
      kinds.emplace_back(it.key(), *kind);
    }
    return kinds;
  }

  // {"orig_args": ["NAME", ...], "in_spec": SPEC, "out_spec": SPEC | null}
  PyTreeInfo read_pytree(const Json& j) {
    const char* where = "field 'pytree'";
    if (!j.is_object()) fail(where, "must be an object");
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() != "orig_args" && it.key() != "in_spec" &&
          it.key() != "out_spec") {
        fail(where, cat("unknown entry '", it.key(),
                        "' (expected orig_args, in_spec, out_spec)"));
      }
    }
    PyTreeInfo info;
    auto args = j.find("orig_args");
    if (args == j.end() || !args->is_array()) {
      fail(where, "orig_args must be an array of parameter names");
    }
    for (const Json& a : *args) {
      if (!a.is_string() || !is_plain_name(a.get<std::string>())) {
        fail(where, "orig_args must be an array of parameter names");
      }
      info.orig_args.push_back(a.get<std::string>());
    }
    auto in_spec = j.find("in_spec");
    if (in_spec == j.end()) fail(where, "in_spec is missing");
    info.in_spec = read_tree_spec(*in_spec, "in_spec");
    if (auto out = j.find("out_spec"); out != j.end() && !out->is_null()) {
      info.out_spec = read_tree_spec(*out, "out_spec");
    }
    return info;
  }

  // SPEC: "*" (a leaf) or {"type": TYPE, "context": CONTEXT (dict types:
  // the keys as ARGs; namedtuple: {"class": "mod.Name", "fields": [..]}),
  // "children": [SPEC, ...]}.
  TreeSpec read_tree_spec(const Json& j, const std::string& path) {
    std::string where = cat("field 'pytree' ", path);
    if (j.is_string() && j.get<std::string>() == "*") return TreeSpec();
    if (!j.is_object()) {
      fail(where, "a TreeSpec is \"*\" (a leaf) or an object");
    }
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() != "type" && it.key() != "context" &&
          it.key() != "children") {
        fail(where, cat("unknown entry '", it.key(),
                        "' (expected type, context, children)"));
      }
    }
    auto type_field = j.find("type");
    std::optional<TreeType> type;
    if (type_field != j.end() && type_field->is_string()) {
      type = parse_tree_type(type_field->get<std::string>());
    }
    if (!type || *type == TreeType::kLeaf) {
      fail(where,
           "type must be tuple, list, namedtuple, dict, OrderedDict, "
           "immutable_list or immutable_dict (a user's pytree node type "
           "cannot be read from a file: its flatten and unflatten functions "
           "are Python)");
    }
    auto children_field = j.find("children");
    if (children_field == j.end() || !children_field->is_array()) {
      fail(where, "children must be an array");
    }
    std::vector<TreeSpec> children;
    for (size_t i = 0; i < children_field->size(); ++i) {
      children.push_back(read_tree_spec((*children_field)[i],
                                        cat(path, ".children[", i, "]")));
    }
    auto context = j.find("context");
    const Json null_context;
    const Json& ctx = context == j.end() ? null_context : *context;
    try {
      return make_tree_spec(*type, ctx, std::move(children), where, path);
    } catch (const FxError& e) {
      fail(where, e.what());
    }
  }

  TreeSpec make_tree_spec(TreeType type, const Json& context,
                          std::vector<TreeSpec> children,
                          const std::string& where, const std::string& path) {
    if (is_dict_tree_type(type)) {
      if (!context.is_array()) {
        fail(where, "context must be the keys, an array");
      }
      ArgumentList keys;
      for (size_t i = 0; i < context.size(); ++i) {
        Field field{"pytree", cat(path, ".context[", i, "]")};
        keys.push_back(read_arg(context[i], field));
        if (!is_key(keys.back())) {
          fail(field.where(), "a key must be None, a bool, int, float or str");
        }
      }
      return TreeSpec::dict(type, std::move(keys), std::move(children));
    }
    if (type == TreeType::kNamedTuple) {
      std::string cls = named_tuple_class(context, where);
      return TreeSpec::named_tuple(std::move(cls),
                                   named_tuple_fields(context, where),
                                   std::move(children));
    }
    if (!context.is_null()) fail(where, "this type has no context");
    return TreeSpec::sequence(type, std::move(children));
  }

  std::string named_tuple_class(const Json& context, const std::string& where) {
    auto cls = context.is_object() ? context.find("class") : context.end();
    if (!context.is_object() || context.size() != 2 || cls == context.end() ||
        !cls->is_string()) {
      fail(where,
           "a namedtuple's context is {\"class\": NAME, \"fields\": [..]}");
    }
    if (!is_class_name(cls->get<std::string>())) {
      fail(where, cat("a namedtuple's class ",
                      python_string_repr(cls->get<std::string>()),
                      " is not a qualified Python name (module.Name)"));
    }
    return cls->get<std::string>();
  }

  std::vector<std::string> named_tuple_fields(const Json& context,
                                              const std::string& where) {
    auto fields = context.find("fields");
    std::vector<std::string> names;
    if (fields != context.end() && fields->is_array()) {
      for (const Json& f : *fields) {
        if (!f.is_string() || !is_plain_name(f.get<std::string>())) {
          break;
        }
        names.push_back(f.get<std::string>());
      }
    }
    if (fields == context.end() || names.size() != fields->size()) {
      fail(where, "a namedtuple's fields must be an array of names");
    }
    return names;
  }

  // {"hints": {"SYMBOL": INT}, "guards": ["RELATION", ...],
  //  "printed_guards": ["TEXT", ...] (optional: one per guard, how the
  //  capture printed it, torch 1.13's format_guards() lines)}
  std::shared_ptr<const sym::ShapeEnv> read_shape_env(const Json& j) {
    const char* where = "field 'shape_env'";
    if (!j.is_object()) fail(where, "must be an object");
    std::vector<std::pair<std::string, int64_t>> hints;
    std::vector<std::string> guards;
    std::vector<std::string> printed;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "hints" && it->is_object()) {
        for (auto h = it->begin(); h != it->end(); ++h) {
          if (!h->is_number_integer()) {
            fail(where, cat("hint '", h.key(), "' must be an integer"));
          }
          hints.emplace_back(h.key(), h->get<int64_t>());
        }
      } else if ((it.key() == "guards" || it.key() == "printed_guards") &&
                 it->is_array()) {
        auto& texts = it.key() == "guards" ? guards : printed;
        for (const Json& g : *it) {
          if (!g.is_string()) fail(where, cat(it.key(), " must be strings"));
          texts.push_back(g.get<std::string>());
        }
      } else {
        fail(where, cat("unknown or malformed entry '", it.key(),
                        "' (expected hints, an object, and guards and "
                        "printed_guards, arrays)"));
      }
    }
    if (j.contains("printed_guards") && printed.size() != guards.size()) {
      fail(where, cat("printed_guards has ", printed.size(), " texts for ",
                      guards.size(), " guards"));
    }
    absl::StatusOr<sym::ShapeEnv> env =
        sym::declared_shape_env(hints, guards, printed);
    if (!env.ok()) fail(where, std::string(env.status().message()));
    return std::make_shared<const sym::ShapeEnv>(*std::move(env));
  }

  ModuleSpec read_module(const std::string& path, const Json& j) {
    std::string where = cat("module '", path, "'");
    if (!is_attribute_path(path)) {
      fail(cat("module ", python_string_repr(path)),
           cat("the path is not ", kAttributePath));
    }
    if (!j.is_object()) fail(where, "must be an object");
    ModuleSpec spec;
    auto type = j.find("type");
    if (type == j.end() || !type->is_string()) {
      fail(where, "field 'type' must be a string");
    }
    spec.type = type->get<std::string>();
    if (!is_qualified_name(spec.type, /*class_suffix=*/true)) {
      fail(where, cat("field 'type': ", python_string_repr(spec.type),
                      " is not a qualified Python name (dotted ASCII "
                      "identifiers, no dunder attributes)"));
    }
    if (auto config = j.find("config"); config != j.end()) {
      if (!config->is_object()) fail(where, "field 'config' must be an object");
      if (spec.type == kGraphModuleType) {
        spec.graph_module = read_child(where, *config);
      } else {
        read_config(where, *config, spec);
      }
    } else if (spec.type == kGraphModuleType) {
      fail(where, "a GraphModule needs 'config' with its 'graph'");
    }
    if (auto training = j.find("training"); training != j.end()) {
      if (!training->is_boolean())
        fail(where, "field 'training' must be a boolean");
      spec.training = training->get<bool>();
    }
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() != "type" && it.key() != "config" &&
          it.key() != "training") {
        fail(where, cat("unknown field '", it.key(), "'"));
      }
    }
    return spec;
  }

  void read_config(const std::string& where, const Json& config,
                   ModuleSpec& spec) {
    for (auto it = config.begin(); it != config.end(); ++it) {
      spec.config.emplace_back(
          it.key(),
          read_arg(it.value(), Field{where, cat("config.", it.key())}));
    }
  }

  // The object a dict ARG (`{"dict": {..}}`) holds.
  const Json& dict_arg(const Json& j, const std::string& where) {
    if (!j.is_object() || j.size() != 1 || j.begin().key() != "dict" ||
        !j.begin().value().is_object()) {
      fail(where, "must be a dict ARG ({\"dict\": {...}})");
    }
    return j.begin().value();
  }

  // A copy of `j` (an object) with the dict ARGs under `keys` unwrapped.
  Json unwrapped(const Json& j, std::initializer_list<const char*> keys,
                 const std::string& where) {
    Json out = j;
    for (const char* key : keys) {
      if (auto it = j.find(key); it != j.end()) {
        out[key] = dict_arg(*it, cat(where, " field '", key, "'"));
      }
    }
    return out;
  }

  // A child GraphModule's config (ChildGraphModule in the header), read by
  // a reader of its own: its node names are its own.
  std::shared_ptr<ChildGraphModule> read_child(const std::string& where,
                                               const Json& config) {
    auto child = std::make_shared<ChildGraphModule>();
    for (auto it = config.begin(); it != config.end(); ++it) {
      if (it.key() != "root" && it.key() != "graph" &&
          it.key() != "class_name") {
        fail(where, cat("config: unknown GraphModule argument '", it.key(),
                        "' (expected root, graph, class_name)"));
      }
    }
    auto graph = config.find("graph");
    if (graph == config.end() || !graph->is_array()) {
      fail(where, "config.graph must be an array of nodes");
    }
    if (auto name = config.find("class_name"); name != config.end()) {
      if (!name->is_string() || !is_plain_name(name->get<std::string>())) {
        fail(where, "config.class_name must be a Python identifier");
      }
      child->class_name = name->get<std::string>();
    }
    Reader nested(source_);
    child->graph = std::make_shared<Graph>();
    nested.graph_ = child->graph.get();
    try {
      nested.read_child_nodes(*graph);
    } catch (const ParseError& e) {
      fail(where, cat("config.graph: ", e.message));
    }
    if (auto root = config.find("root"); root != config.end()) {
      try {
        nested.read_child_modules(*root, child->modules);
      } catch (const ParseError& e) {
        fail(where, cat("config.root: ", e.message));
      }
    }
    return child;
  }

  void read_child_modules(
      const Json& root,
      std::vector<std::pair<std::string, ModuleSpec>>& modules) {
    const Json& entries = dict_arg(root, "root");
    for (auto it = entries.begin(); it != entries.end(); ++it) {
      std::string at = cat("module '", it.key(), "'");
      modules.emplace_back(
          it.key(), read_module(it.key(), unwrapped(dict_arg(it.value(), at),
                                                    {"config"}, at)));
    }
  }

  void read_child_nodes(const Json& nodes) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      std::string at = cat("node #", i);
      read_node(unwrapped(dict_arg(nodes[i], at), {"kwargs", "meta"}, at), i,
                nodes.size());
    }
    read_pending_meta();
    if (graph_->output_node() == nullptr) {
      fail("graph", "no output node (exactly one, last, is required)");
    }
  }

  void read_node(const Json& j, size_t index, size_t count) {
    std::string where = cat("node #", index);
    if (!j.is_object()) fail(where, "must be an object");
    auto name_it = j.find("name");
    if (name_it == j.end() || !name_it->is_string() ||
        name_it->get<std::string>().empty()) {
      fail(where, "field 'name' must be a non-empty string");
    }
    std::string name = name_it->get<std::string>();
    where = cat("node '", name, "'");
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& k = it.key();
      if (k != "name" && k != "op" && k != "target" && k != "args" &&
          k != "kwargs" && k != "type" && k != "type_text" && k != "meta") {
        fail(where, cat("unknown field '", k, "'"));
      }
    }
    auto op_it = j.find("op");
    if (op_it == j.end() || !op_it->is_string()) {
      fail(where, "field 'op' must be a string");
    }
    std::optional<Opcode> op = parse_opcode(op_it->get<std::string>());
    if (!op) {
      fail(where, cat("field 'op': unknown opcode '", op_it->get<std::string>(),
                      "' (expected placeholder, get_attr, call_function, "
                      "call_method, call_module or output)"));
    }
    auto target_it = j.find("target");
    if (target_it == j.end() || !target_it->is_string()) {
      fail(where, "field 'target' must be a string");
    }
    std::string target = target_it->get<std::string>();
    if (target.empty()) fail(where, "field 'target' must not be empty");

    if (std::string problem = target_problem(*op, target); !problem.empty()) {
      fail(where,
           cat("field 'target': ", python_string_repr(target), " ", problem));
    }
    Node::Args args;
    if (auto a = j.find("args"); a != j.end()) {
      if (!a->is_array()) fail(where, "field 'args' must be an array");
      for (size_t i = 0; i < a->size(); ++i) {
        args.push_back(read_arg((*a)[i], Field{where, cat("args[", i, "]")}));
      }
    } else {
      fail(where, "field 'args' is missing");
    }
    Node::Kwargs kwargs;
    if (auto k = j.find("kwargs"); k != j.end()) {
      if (!k->is_object()) fail(where, "field 'kwargs' must be an object");
      for (auto it = k->begin(); it != k->end(); ++it) {
        if (!is_plain_name(it.key())) {
          fail(where, cat("field 'kwargs': ", python_string_repr(it.key()),
                          " is not a Python identifier"));
        }
        kwargs.emplace_back(
            it.key(),
            read_arg(it.value(), Field{where, cat("kwargs.", it.key())}));
      }
    } else {
      fail(where, "field 'kwargs' is missing");
    }
    std::string type;
    if (auto t = j.find("type"); t != j.end()) {
      if (!t->is_string()) fail(where, "field 'type' must be a string");
      type = t->get<std::string>();
      if (!is_type_expression(type)) {
        fail(where, cat("field 'type': ", python_string_repr(type),
                        " is not a type expression (dotted ASCII names, [ ] "
                        "and commas)"));
      }
    }
    std::string type_text;
    if (auto t = j.find("type_text"); t != j.end()) {
      if (!t->is_string() || type.empty()) {
        fail(where, "field 'type_text' must be a string beside a 'type'");
      }
      type_text = t->get<std::string>();
      if (!is_printable_text(type_text)) {
        fail(where, "field 'type_text' must be printable ASCII on one line");
      }
    }
    auto meta = j.find("meta");
    if (meta != j.end() && !meta->is_object()) {
      fail(where, "field 'meta' must be an object");
    }

    if (*op == Opcode::kOutput) {
      if (index + 1 != count) {
        fail(where, "the output node must be the last node");
      }
      if (args.size() != 1 || !kwargs.empty()) {
        fail(where,
             "an output node has exactly one arg (the returned value) and no "
             "kwargs");
      }
    } else if (*op == Opcode::kPlaceholder && args.size() > 1) {
      fail(where, "a placeholder has at most one arg (its default)");
    } else if (*op == Opcode::kCallMethod && args.empty()) {
      fail(where, "a call_method node needs the object as its first arg");
    }
    if (index + 1 == count && *op != Opcode::kOutput) {
      fail(where, "the last node must be the output node");
    }
    if (by_name_.contains(name)) fail(where, "duplicate node name");

    Node* node = graph_->create_node(*op, target, std::move(args),
                                     std::move(kwargs), name, type);
    if (node->name() != name) {
      fail(where, cat("'", name,
                      "' is not a legal Python name for a node (torch.fx would "
                      "name it '",
                      node->name(), "')"));
    }
    if (!type_text.empty()) node->set_type(type, type_text);
    // Meta may name a node defined later: read once all nodes are.
    pending_meta_.push_back(
        {node, meta == j.end() ? Json::object() : *meta, where});
    by_name_.emplace(std::string(node->name()), node);
  }

  // Each node's meta, and is_wrapped where the reader infers it.
  void read_pending_meta() {
    for (PendingMeta& p : pending_meta_) {
      ArgumentDict meta;
      for (auto it = p.meta.begin(); it != p.meta.end(); ++it) {
        meta.emplace_back(
            it.key(),
            read_arg(it.value(), Field{p.where, cat("meta.", it.key())},
                     /*in_meta=*/true));
      }
      Node* node = p.node;
      if (node->op() == Opcode::kCallFunction &&
          is_wrapped_by_default(node->target()) &&
          find_item(meta, "is_wrapped") == nullptr) {
        meta.emplace_back("is_wrapped", Argument(true));
      }
      if (!meta.empty()) node->mutable_meta() = std::move(meta);
    }
    pending_meta_.clear();
  }

  Argument read_arg(const Json& j, const Field& field, bool in_meta = false) {
    switch (j.type()) {
      case Json::value_t::null:
        return Argument();
      case Json::value_t::boolean:
        return Argument(j.get<bool>());
      case Json::value_t::number_integer:
        return Argument(j.get<int64_t>());
      case Json::value_t::number_unsigned: {
        uint64_t u = j.get<uint64_t>();
        if (u > static_cast<uint64_t>(INT64_MAX)) {
          fail(
              field.where(),
              cat("integer ", u, " out of range (beyond a 64-bit signed int)"));
        }
        return Argument(static_cast<int64_t>(u));
      }
      case Json::value_t::number_float:
        return Argument(j.get<double>());
      case Json::value_t::string:
        return Argument(j.get<std::string>());
      case Json::value_t::array: {
        ArgumentList items;
        items.reserve(j.size());
        for (size_t i = 0; i < j.size(); ++i) {
          items.push_back(read_arg(j[i], field + cat("[", i, "]"), in_meta));
        }
        return Argument::list(std::move(items));
      }
      case Json::value_t::object:
        return read_tagged(j, field, in_meta);
      default:
        fail(field.where(), "unsupported JSON value");
    }
  }

  // `name` when `known(name)`; otherwise the error names the field.
  std::string known_name(const std::string& where, std::string name,
                         std::string_view tag, bool (*known)(std::string_view),
                         std::string_view example) {
    if (!known(name)) {
      fail(where, cat("unknown ", tag, " '", name, "' (torch 1.13 has no such ",
                      tag, "; expected e.g. ", example, ")"));
    }
    return name;
  }

  // A symbolic int's expression, checked by the expression parser.
  std::string symint_text(const std::string& where, std::string text) {
    absl::StatusOr<sym::Expr> expr = sym::parse_sym_expr(text);
    if (!expr.ok()) {
      fail(where, cat("'symint' \"", text, "\" is not a symbolic int: ",
                      std::string(expr.status().message())));
    }
    return text;
  }

  Argument read_tagged(const Json& j, const Field& field, bool in_meta) {
    const std::string where = field.where();

    if (j.size() != 1) {
      fail(where,
           "an object argument must have exactly one key (node, tuple, dict, "
           "slice, ellipsis, dtype, device, memory_format, layout, float, "
           "namedtuple, keyed_dict)");
    }
    const std::string& tag = j.begin().key();
    const Json& v = j.begin().value();
    auto need_string = [&]() -> std::string {
      if (!v.is_string()) fail(where, cat("'", tag, "' must hold a string"));
      return v.get<std::string>();
    };
    if (tag == "node") {
      std::string ref = need_string();
      auto it = by_name_.find(ref);
      if (it == by_name_.end()) {
        fail(where, cat("reference to node '", ref,
                        in_meta ? "', which is not a node of this graph"
                                : "', which is not defined before this node"));
      }
      return Argument(it->second);
    }
    if (tag == "tuple" || tag == "slice") {
      if (!v.is_array()) fail(where, cat("'", tag, "' must hold an array"));
      ArgumentList items;
      for (size_t i = 0; i < v.size(); ++i) {
        items.push_back(
            read_arg(v[i], field + cat(".", tag, "[", i, "]"), in_meta));
      }
      if (tag == "tuple") return Argument::tuple(std::move(items));
      if (items.size() != 3)
        fail(where, "'slice' must hold [start, stop, step]");
      return Argument::slice(items[0], items[1], items[2]);
    }
    if (tag == "dict") {
      if (!v.is_object()) fail(where, "'dict' must hold an object");
      ArgumentDict items;
      for (auto it = v.begin(); it != v.end(); ++it) {
        items.emplace_back(
            it.key(),
            read_arg(it.value(), field + cat(".", it.key()), in_meta));
      }
      return Argument::dict(std::move(items));
    }
    if (tag == "namedtuple") return read_named_tuple(v, field, in_meta);
    if (tag == "keyed_dict") return read_keyed_dict(v, field, in_meta);
    if (tag == "ellipsis") {
      if (!v.is_null()) fail(where, "'ellipsis' must hold null");
      return Argument::ellipsis();
    }
    if (tag == "dtype") {
      return Argument::dtype(known_name(where, need_string(), tag,
                                        is_dtype_name, "\"torch.float32\""));
    }
    if (tag == "device") {
      return Argument::device(known_name(
          where, need_string(), tag, is_device_name, "\"cpu\" or \"cuda:0\""));
    }
    if (tag == "memory_format") {
      return Argument::memory_format(known_name(where, need_string(), tag,
                                                is_memory_format_name,
                                                "\"torch.contiguous_format\""));
    }
    if (tag == "layout") {
      return Argument::layout(known_name(where, need_string(), tag,
                                         is_layout_name, "\"torch.strided\""));
    }
    if (tag == "qscheme") {
      return Argument::qscheme(known_name(where, need_string(), tag,
                                          is_qscheme_name,
                                          "\"torch.per_tensor_affine\""));
    }
    if (tag == "symint") {
      if (!in_meta) fail(where, "a symbolic int can only appear in meta");
      return Argument::symint(symint_text(where, need_string()));
    }
    if (tag == "float") {
      std::string s = need_string();
      if (s == "inf") return Argument(std::numeric_limits<double>::infinity());
      if (s == "-inf")
        return Argument(-std::numeric_limits<double>::infinity());
      if (s == "nan") return Argument(std::numeric_limits<double>::quiet_NaN());
      fail(where, cat("'float' must be \"inf\", \"-inf\" or \"nan\", not \"", s,
                      "\""));
    }
    fail(where, cat("unknown argument tag '", tag, "'"));
  }

  // {"class": "mod.Name", "fields": ["a", ..], "items": [ARG, ..],
  //  "repr": "fields" | "tuple" (optional)}
  Argument read_named_tuple(const Json& v, const Field& field, bool in_meta) {
    const std::string where = field.where();
    const char* form =
        "'namedtuple' must hold {\"class\": NAME, \"fields\": [NAME, ..], "
        "\"items\": [ARG, ..]} and optionally \"repr\": \"fields\" or "
        "\"tuple\"";
    if (!v.is_object()) fail(where, form);
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it.key() != "class" && it.key() != "fields" && it.key() != "items" &&
          it.key() != "repr") {
        fail(where, cat("'namedtuple': unknown entry '", it.key(), "'"));
      }
    }
    auto cls = v.find("class");
    auto fields = v.find("fields");
    auto items = v.find("items");
    if (cls == v.end() || !cls->is_string() || fields == v.end() ||
        !fields->is_array() || items == v.end() || !items->is_array()) {
      fail(where, form);
    }
    auto type = std::make_shared<NamedTupleType>();
    type->name = cls->get<std::string>();
    if (!is_class_name(type->name)) {
      fail(where, cat("'namedtuple': class \"", type->name,
                      "\" is not a qualified Python name (module.Name)"));
    }
    for (const Json& f : *fields) {
      if (!f.is_string() || !is_plain_name(f.get<std::string>())) {
        fail(where, "'namedtuple': fields must be Python names");
      }
      type->fields.push_back(f.get<std::string>());
    }
    if (type->fields.size() != items->size()) {
      fail(where, cat("'namedtuple': ", type->fields.size(), " fields for ",
                      items->size(), " items"));
    }
    if (auto repr = v.find("repr"); repr != v.end()) {
      if (!repr->is_string() || (repr->get<std::string>() != "fields" &&
                                 repr->get<std::string>() != "tuple")) {
        fail(where, "'namedtuple': repr must be \"fields\" or \"tuple\"");
      }
      type->fields_repr = repr->get<std::string>() == "fields";
    }
    ArgumentList values;
    for (size_t i = 0; i < items->size(); ++i) {
      values.push_back(read_arg(
          (*items)[i], field + cat(".namedtuple.items[", i, "]"), in_meta));
    }
    return Argument::named_tuple(std::move(type), std::move(values));
  }

  // [[KEY, ARG], ...], KEY a bool, int, float or str.
  Argument read_keyed_dict(const Json& v, const Field& field, bool in_meta) {
    const std::string where = field.where();
    if (!v.is_array()) {
      fail(where, "'keyed_dict' must hold an array of [KEY, VALUE] pairs");
    }
    KeyedArgumentDict items;
    for (size_t i = 0; i < v.size(); ++i) {
      Field at = field + cat(".keyed_dict[", i, "]");
      if (!v[i].is_array() || v[i].size() != 2) {
        fail(at.where(), "must be a [KEY, VALUE] pair");
      }
      Argument key = read_arg(v[i][0], at + "[0]", in_meta);
      if (!key.is_bool() && !key.is_int() && !key.is_float() &&
          !key.is_string()) {
        fail(at.where(), "a key must be a bool, int, float or str");
      }
      for (const auto& [k, unused] : items) {
        if (k == key) fail(at.where(), "a key appears twice");
      }
      items.emplace_back(std::move(key),
                         read_arg(v[i][1], at + "[1]", in_meta));
    }
    return Argument::keyed_dict(std::move(items));
  }

  std::string source_;
  Graph* graph_ = nullptr;
  absl::flat_hash_map<std::string, Node*> by_name_;
  struct PendingMeta {
    Node* node;
    Json meta;
    std::string where;
  };
  std::vector<PendingMeta> pending_meta_;
};

}  // namespace

absl::StatusOr<GraphFile> parse_graph_json(std::string_view text,
                                           std::string_view source) {
  absl::StatusOr<Json> root = parse_json_text(text, source);
  if (!root.ok()) return root.status();
  // One budget for all the file's symbolic expressions: each text alone
  // may cost a fixed allowance, the file as a whole no more than one.
  sym::WorkBudget budget(sym::parse_work_limit(text.size()));
  return Reader(source).read(*root);
}

std::string read_weights_name(const std::string& path) {
  absl::StatusOr<std::string> text = read_regular_file(path);
  if (!text.ok()) return "";
  absl::StatusOr<Json> root = parse_json_text(*text, path);
  if (!root.ok() || !root->is_object()) return "";
  auto weights = root->find("weights");
  if (weights == root->end() || !weights->is_string()) return "";
  return weights->get<std::string>();
}

absl::StatusOr<GraphFile> read_graph_file(const std::string& path) {
  absl::StatusOr<std::string> text = read_regular_file(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<GraphFile> file = parse_graph_json(*text, path);
  if (file.ok()) {
    size_t slash = path.rfind('/');
    file->directory = slash == std::string::npos ? "." : path.substr(0, slash);
  }
  return file;
}

}  // namespace fx
