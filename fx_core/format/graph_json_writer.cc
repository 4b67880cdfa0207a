// Writing fx-graph JSON files (docs/fx-graph-json.md): graphs, module
// specs, pytree specs, weight kinds and shape environments laid out as
// Python's json.dump(indent=1) lays them out (graph_json.h).
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/io/atomic_file.h"
#include "fx_core/ir/python_repr.h"
#include "fx_core/ir/pytree_codegen.h"
#include "fx_core/ir/torch_names.h"
#include "fx_core/ir/tree_spec.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

// Python's json.dumps(ensure_ascii=True) string form.
void write_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      default:
        break;
    }
    char buf[16];
    if (c < 0x20) {
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else {
      // Decode UTF-8 and escape as \uXXXX (surrogate pairs above U+FFFF).
      uint32_t cp = 0;
      size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
      cp = len == 1 ? c : c & (0xff >> (len + 1));
      for (size_t k = 1; k < len && i + k < s.size(); ++k) {
        cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
      }
      i += len - 1;
      if (cp >= 0x10000) {
        cp -= 0x10000;
        std::snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", 0xd800 + (cp >> 10),
                      0xdc00 + (cp & 0x3ff));
      } else {
        std::snprintf(buf, sizeof(buf), "\\u%04x", cp);
      }
      out += buf;
    }
  }
  out.push_back('"');
}

// Writes JSON the way Python's json.dump(indent=1) lays it out.
class Writer {
 public:
  std::string& out() { return out_; }

  void newline(int depth) {
    out_.push_back('\n');
    out_.append(static_cast<size_t>(depth), ' ');
  }

  // An object from (key, writer) pairs.
  template <typename Fn>
  void object(int depth, size_t count, Fn&& each) {
    if (count == 0) {
      out_ += "{}";
      return;
    }
    out_ += "{";
    for (size_t i = 0; i < count; ++i) {
      if (i) out_ += ",";
      newline(depth + 1);
      each(i, depth + 1);
    }
    newline(depth);
    out_ += "}";
  }

  template <typename Fn>
  void array(int depth, size_t count, Fn&& each) {
    if (count == 0) {
      out_ += "[]";
      return;
    }
    out_ += "[";
    for (size_t i = 0; i < count; ++i) {
      if (i) out_ += ",";
      newline(depth + 1);
      each(i, depth + 1);
    }
    newline(depth);
    out_ += "]";
  }

  void key(std::string_view k) {
    write_string(out_, k);
    out_ += ": ";
  }

  void tagged(int depth, std::string_view tag,
              const std::function<void(int)>& value) {
    object(depth, 1, [&](size_t, int d) {
      key(tag);
      value(d);
    });
  }

  void arg(const Argument& a, int depth) {
    switch (a.kind()) {
      case Argument::Kind::kNone:
        out_ += "null";
        return;
      case Argument::Kind::kBool:
        out_ += a.as_bool() ? "true" : "false";
        return;
      case Argument::Kind::kInt:
        fx::append(&out_, a.as_int());
        return;
      case Argument::Kind::kFloat: {
        double f = a.as_float();
        if (std::isnan(f) || std::isinf(f)) {
          tagged(depth, "float",
                 [&](int) { write_string(out_, python_float_repr(f)); });
        } else {
          out_ += python_float_repr(f);
        }
        return;
      }
      case Argument::Kind::kString:
        write_string(out_, a.as_string());
        return;
      case Argument::Kind::kNode:
        tagged(depth, "node",
               [&](int) { write_string(out_, a.as_node()->name()); });
        return;
      case Argument::Kind::kList:
        list(a.elements(), depth);
        return;
      case Argument::Kind::kTuple:
        if (a.named_tuple_type() != nullptr) {
          tagged(depth, "namedtuple", [&](int d) { named_tuple(a, d); });
          return;
        }
        tagged(depth, "tuple", [&](int d) { list(a.elements(), d); });
        return;
      case Argument::Kind::kSlice:
        tagged(depth, "slice", [&](int d) { list(a.elements(), d); });
        return;
      case Argument::Kind::kDict:
        if (a.dict_keys() != nullptr) {
          tagged(depth, "keyed_dict", [&](int d) { keyed_dict(a, d); });
          return;
        }
        tagged(depth, "dict", [&](int d) { dict(a.items(), d); });
        return;
      case Argument::Kind::kEllipsis:
        tagged(depth, "ellipsis", [&](int) { out_ += "null"; });
        return;
      case Argument::Kind::kDtype:
        tagged(depth, "dtype", [&](int) { write_string(out_, a.as_string()); });
        return;
      case Argument::Kind::kDevice:
        tagged(depth, "device",
               [&](int) { write_string(out_, a.as_string()); });
        return;
      case Argument::Kind::kMemoryFormat:
        tagged(depth, "memory_format",
               [&](int) { write_string(out_, a.as_string()); });
        return;
      case Argument::Kind::kLayout:
        tagged(depth, "layout",
               [&](int) { write_string(out_, a.as_string()); });
        return;
      case Argument::Kind::kQScheme:
        tagged(depth, "qscheme",
               [&](int) { write_string(out_, a.as_string()); });
        return;
      case Argument::Kind::kSymInt:
        tagged(depth, "symint",
               [&](int) { write_string(out_, a.as_string()); });
        return;
    }
  }

  // The graph's nodes as an array of NODE objects; `as_arg`: each written as
  // a dict ARG (a child GraphModule's config).
  void nodes(const Graph& graph, int depth, bool as_arg) {
    std::vector<Node*> all = graph.nodes().to_vector();
    array(depth, all.size(), [&](size_t n, int d) {
      if (as_arg) {
        tagged(d, "dict", [&](int dd) { node(*all[n], dd, true); });
      } else {
        node(*all[n], d, false);
      }
    });
  }

  // Modules by path: a `modules` object, or with `as_arg` a child
  // GraphModule's `root` (each MODULE a dict ARG).
  void modules(const std::vector<std::pair<std::string, ModuleSpec>>& specs,
               int depth, bool as_arg) {
    object(depth, specs.size(), [&](size_t m, int d) {
      key(specs[m].first);
      if (as_arg) {
        tagged(d, "dict", [&](int dd) { module(specs[m].second, dd, true); });
      } else {
        module(specs[m].second, d, false);
      }
    });
  }

 private:
  // Wraps what `body` writes in a dict ARG when `as_arg`.
  void maybe_dict(int depth, bool as_arg,
                  const std::function<void(int)>& body) {
    if (as_arg) {
      tagged(depth, "dict", body);
    } else {
      body(depth);
    }
  }

  void node(const Node& node, int depth, bool as_arg) {
    ArgumentDict meta = node.meta();
    if (node.op() == Opcode::kCallFunction &&
        is_wrapped_by_default(node.target())) {
      // Leave out what the reader infers.
      for (auto it = meta.begin(); it != meta.end(); ++it) {
        if (it->first == "is_wrapped" && it->second == Argument(true)) {
          meta.erase(it);
          break;
        }
      }
    }
    // The optional fields present, in file order.
    std::vector<std::string_view> optional;
    if (!node.type().empty()) optional.push_back("type");
    if (!node.type_text_override().empty()) optional.push_back("type_text");
    if (!meta.empty()) optional.push_back("meta");
    object(depth, 5 + optional.size(), [&](size_t f, int fd) {
      switch (f) {
        case 0:
          key("name");
          write_string(out_, node.name());
          break;
        case 1:
          key("op");
          write_string(out_, opcode_name(node.op()));
          break;
        case 2:
          key("target");
          write_string(out_, node.target());
          break;
        case 3:
          key("args");
          list(node.args(), fd);
          break;
        case 4:
          key("kwargs");
          maybe_dict(fd, as_arg, [&](int d) { dict(node.kwargs(), d); });
          break;
        default:
          key(optional[f - 5]);
          if (optional[f - 5] == "type") {
            write_string(out_, node.type());
          } else if (optional[f - 5] == "type_text") {
            write_string(out_, node.type_text_override());
          } else {
            maybe_dict(fd, as_arg, [&](int d) { dict(meta, d); });
          }
      }
    });
  }

  void module(const ModuleSpec& spec, int depth, bool as_arg) {
    object(depth, 3, [&](size_t f, int fd) {
      if (f == 0) {
        key("type");
        write_string(out_, spec.type);
      } else if (f == 1) {
        key("config");
        maybe_dict(fd, as_arg, [&](int d) {
          if (spec.graph_module) {
            child_config(*spec.graph_module, d);
          } else {
            dict(spec.config, d);
          }
        });
      } else {
        key("training");
        out_ += spec.training ? "true" : "false";
      }
    });
  }

  void child_config(const ChildGraphModule& child, int depth) {
    object(depth, 3, [&](size_t f, int fd) {
      if (f == 0) {
        key("root");
        tagged(fd, "dict",
               [&](int d) { modules(child.modules, d, /*as_arg=*/true); });
      } else if (f == 1) {
        key("graph");
        nodes(*child.graph, fd, /*as_arg=*/true);
      } else {
        key("class_name");
        write_string(out_, child.class_name);
      }
    });
  }

 public:
  template <typename Seq>
  void list(const Seq& items, int depth) {
    array(depth, items.size(), [&](size_t i, int d) { arg(items[i], d); });
  }

  void dict(const ArgumentDict& items, int depth) {
    object(depth, items.size(), [&](size_t i, int d) {
      key(items[i].first);
      arg(items[i].second, d);
    });
  }

  // {"class": NAME, "fields": [..], "items": [ARG, ..]} and, when the graph
  // text shows the value by its fields, "repr": "fields".
  void named_tuple(const Argument& a, int depth) {
    const NamedTupleType& type = *a.named_tuple_type();
    object(depth, type.fields_repr ? 4 : 3, [&](size_t f, int d) {
      if (f == 0) {
        key("class");
        write_string(out_, type.name);
      } else if (f == 1) {
        key("fields");
        array(d, type.fields.size(),
              [&](size_t i, int) { write_string(out_, type.fields[i]); });
      } else if (f == 2) {
        key("items");
        list(a.elements(), d);
      } else {
        key("repr");
        write_string(out_, "fields");
      }
    });
  }

  // [[KEY, ARG], ...]
  void keyed_dict(const Argument& a, int depth) {
    const ArgumentList& keys = *a.dict_keys();
    const ArgumentDict& items = a.items();
    array(depth, items.size(), [&](size_t i, int d) {
      array(d, 2, [&](size_t k, int dd) {
        arg(k == 0 ? keys[i] : items[i].second, dd);
      });
    });
  }

 private:
  std::string out_;
};

// Whether a guard was printed otherwise than its relation's text.
bool has_printed_guards(const sym::ShapeEnv& env) {
  for (size_t g = 0; g < env.guards().size(); ++g) {
    if (env.guard_text(g) != env.guards()[g].str()) return true;
  }
  return false;
}

// The file's "shape_env": {"hints": {..}, "guards": [..]}, and
// "printed_guards": [..] when a guard was printed otherwise.
void write_shape_env(Writer& w, const sym::ShapeEnv& env, int depth) {
  const auto& guards = env.guards();
  w.object(depth, has_printed_guards(env) ? 3 : 2, [&](size_t i, int d) {
    if (i == 0) {
      w.key("hints");
      const auto& hints = env.hints();
      w.object(d, hints.size(), [&](size_t h, int) {
        w.key(hints[h].first);
        w.out() += std::to_string(hints[h].second);
      });
    } else if (i == 1) {
      w.key("guards");
      w.array(d, guards.size(),
              [&](size_t g, int) { write_string(w.out(), guards[g].str()); });
    } else {
      w.key("printed_guards");
      w.array(d, guards.size(),
              [&](size_t g, int) { write_string(w.out(), env.guard_text(g)); });
    }
  });
}

// A TreeSpec: "*" or {"type": .., "context": .. (when it has one),
// "children": [..]}.
void write_tree_spec(Writer& w, const TreeSpec& spec, int depth) {
  if (spec.is_leaf()) {
    write_string(w.out(), "*");
    return;
  }
  bool has_context =
      spec.type() == TreeType::kNamedTuple || is_dict_tree_type(spec.type());
  w.object(depth, has_context ? 3 : 2, [&](size_t i, int d) {
    if (i == 0) {
      w.key("type");
      write_string(w.out(), tree_type_name(spec.type()));
    } else if (i + 1 == (has_context ? 3u : 2u)) {
      w.key("children");
      const auto& children = spec.children();
      w.array(d, children.size(),
              [&](size_t c, int cd) { write_tree_spec(w, children[c], cd); });
    } else if (spec.type() == TreeType::kNamedTuple) {
      w.key("context");
      w.object(d, 2, [&](size_t f, int fd) {
        w.key(f == 0 ? "class" : "fields");
        if (f == 0) {
          write_string(w.out(), spec.class_name());
        } else {
          const auto& fields = spec.fields();
          w.array(fd, fields.size(),
                  [&](size_t k, int) { write_string(w.out(), fields[k]); });
        }
      });
    } else {
      w.key("context");
      w.list(spec.keys(), d);
    }
  });
}

// The file's "pytree": {"orig_args": [..], "in_spec": SPEC, "out_spec":
// SPEC or null}.
void write_pytree(Writer& w, const PyTreeInfo& info, int depth) {
  w.object(depth, 3, [&](size_t i, int d) {
    if (i == 0) {
      w.key("orig_args");
      w.array(d, info.orig_args.size(),
              [&](size_t a, int) { write_string(w.out(), info.orig_args[a]); });
    } else if (i == 1) {
      w.key("in_spec");
      write_tree_spec(w, info.in_spec, d);
    } else {
      w.key("out_spec");
      if (info.out_spec) {
        write_tree_spec(w, *info.out_spec, d);
      } else {
        w.out() += "null";
      }
    }
  });
}

// The file's "weight_kinds": {"KEY": "parameter", ...}.
void write_weight_kinds(Writer& w, const WeightKinds& kinds, int depth) {
  w.object(depth, kinds.size(), [&](size_t i, int) {
    w.key(kinds[i].first);
    write_string(w.out(), weight_kind_name(kinds[i].second));
  });
}

}  // namespace

std::string to_graph_json(
    const Graph& graph,
    const std::vector<std::pair<std::string, ModuleSpec>>& modules,
    std::string_view weights, const sym::ShapeEnv* shape_env,
    const WeightKinds& weight_kinds) {
  Writer w;
  bool with_env = shape_env != nullptr &&
                  (!shape_env->guards().empty() || !shape_env->hints().empty());
  // The top-level fields, each written at `depth` after its key.
  std::vector<std::function<void(int)>> fields;
  fields.push_back([&](int) {
    w.key("format");
    write_string(w.out(), "fx-graph");
  });
  fields.push_back([&](int) {
    w.key("version");
    w.out() += "1";
  });
  fields.push_back([&](int d) {
    w.key("nodes");
    w.nodes(graph, d, /*as_arg=*/false);
  });
  if (const PyTreeInfo* info = pytree_info(graph.codegen())) {
    fields.push_back([&w, info](int d) {
      w.key("pytree");
      write_pytree(w, *info, d);
    });
  }
  if (!modules.empty()) {
    fields.push_back([&](int d) {
      w.key("modules");
      w.modules(modules, d, /*as_arg=*/false);
    });
  }
  // Before "weights", as tools/torchfx_export.py writes it (its callers
  // name the weights file last).
  if (!weight_kinds.empty()) {
    fields.push_back([&](int d) {
      w.key("weight_kinds");
      write_weight_kinds(w, weight_kinds, d);
    });
  }
  if (!weights.empty()) {
    fields.push_back([&](int) {
      w.key("weights");
      write_string(w.out(), weights);
    });
  }
  if (with_env) {
    fields.push_back([&](int d) {
      w.key("shape_env");
      write_shape_env(w, *shape_env, d);
    });
  }
  w.object(0, fields.size(), [&](size_t i, int d) { fields[i](d); });
  return std::move(w.out());
}

std::string to_graph_json(const GraphFile& file) {
  return to_graph_json(*file.graph, file.modules, file.weights,
                       file.shape_env.get(), file.weight_kinds);
}

absl::Status write_graph_file(const std::string& path, const GraphFile& file) {
  return write_file_atomically(path, to_graph_json(file));
}

absl::Status check_reads_back(std::string_view text, std::string_view path) {
  absl::StatusOr<GraphFile> back = parse_graph_json(text, path);
  if (back.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      cat("not writing '", path, "': the graph would not read back (",
          std::string(back.status().message()), ")"));
}

}  // namespace fx
