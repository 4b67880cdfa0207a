// fx_sdk._C.Graph and fx_sdk._C.Node: the SDK's Graph and Node (fx_core/ir)
// for Python scripts, with torch.fx's names: nodes, op, target, name, args,
// kwargs, users, meta, and the edits (create, erase, replace uses, move,
// insertion points, lint, dead code elimination). fx_sdk/graph.py adds what
// needs Python objects: call_function targets as the functions themselves,
// type annotations as types, the insertion-point context managers, meta as
// a dict-like view.
//
// A Graph or Node handle holds the SDK GraphModule that owns the graph, so
// the graph lives as long as a handle does. A pass pipeline or a rollback may
// replace a GraphModule's graph: a handle to the old one then raises
// RuntimeError ("read gm.graph again") instead of reaching freed memory.
// Erased nodes stay readable, as in torch.fx.
//
// Values cross as torch.fx holds them (argument.h): None, bool, int, float,
// str, Node, list, tuple (torch.Size as a tuple), dict with str keys, slice,
// Ellipsis, torch.dtype, torch.device, torch.memory_format, torch.layout.
// Anything else raises ValueError naming where it was given.
#include <Python.h>
#include <pybind11/stl.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fx_core/ir/argument.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/support/error.h"
#include "python/bindings.h"
#include "python/python_values.h"

namespace py = pybind11;

namespace fx_sdk {
namespace {

// How many times each GraphModule's graph was replaced (by a rollback): a
// new graph may be allocated where a freed one was, so the address alone
// cannot tell. Entries of freed GraphModules stay (a few bytes each).
std::unordered_map<const fx::GraphModule*, uint64_t>& replacements() {
  static auto* counts =
      new std::unordered_map<const fx::GraphModule*, uint64_t>();
  return *counts;
}

// The graph of a GraphModule, checked on every use (see above).
struct GraphRef {
  GraphRef() = default;
  explicit GraphRef(std::shared_ptr<fx::GraphModule> module)
      : gm(std::move(module)),
        graph(&gm->graph()),
        generation(replacements()[gm.get()]) {}

  std::shared_ptr<fx::GraphModule> gm;
  fx::Graph* graph = nullptr;
  uint64_t generation = 0;

  fx::Graph& get() const {
    if (&gm->graph() != graph || replacements()[gm.get()] != generation) {
      throw std::runtime_error(
          "this graph is no longer the GraphModule's (a pipeline or "
          "set_graph replaced it): read gm.graph again");
    }
    return *graph;
  }
};

struct PyGraph {
  GraphRef ref;
};

struct PyNode {
  GraphRef ref;
  fx::Node* node = nullptr;

  fx::Node& get() const {
    ref.get();
    return *node;
  }
};

// The Python Node of each fx::Node while one is alive, so that Python sees
// one object per node (`is`, as torch.fx's users compare nodes).
std::unordered_map<const fx::Node*, py::weakref>& node_objects() {
  static auto* objects = new std::unordered_map<const fx::Node*, py::weakref>();
  return *objects;
}

py::object wrap_node(const GraphRef& ref, fx::Node* node) {
  auto& objects = node_objects();
  auto it = objects.find(node);
  if (it != objects.end()) {
    py::object alive = it->second();
    if (!alive.is_none()) {
      const PyNode& cached = alive.cast<const PyNode&>();
      if (cached.ref.gm == ref.gm && cached.ref.graph == ref.graph &&
          cached.ref.generation == ref.generation) {
        return alive;
      }
    }
  }
  py::object object = py::cast(PyNode{ref, node});
  py::cpp_function forget([node](py::handle weakref) {
    auto& objects = node_objects();
    auto it = objects.find(node);
    if (it != objects.end() && it->second.is(weakref)) objects.erase(it);
  });
  objects[node] = py::weakref(object, forget);
  return object;
}

py::object torch_attribute(const std::string& dotted) {
  // "torch.float32" -> torch.float32
  py::object value = py::module_::import("torch");
  size_t start = dotted.find('.') + 1;
  while (start != 0 && start <= dotted.size()) {
    size_t end = dotted.find('.', start);
    value = value.attr(
        dotted.substr(start, end == std::string::npos ? end : end - start)
            .c_str());
    start = end + 1;
  }
  return value;
}

// fx_sdk's function `name` (the package's Python half).
py::object fx_sdk_function(const char* name) {
  return py::module_::import("fx_sdk").attr(name);
}

py::object to_python(const fx::Argument& arg, const GraphRef& ref) {
  if (py::object scalar = scalar_to_python(arg)) return scalar;
  using Kind = fx::Argument::Kind;
  switch (arg.kind()) {
    case Kind::kNode:
      return wrap_node(ref, arg.as_node());
    case Kind::kList: {
      py::list items;
      for (const fx::Argument& a : arg.elements()) {
        items.append(to_python(a, ref));
      }
      return std::move(items);
    }
    case Kind::kTuple: {
      py::list items;
      for (const fx::Argument& a : arg.elements()) {
        items.append(to_python(a, ref));
      }
      if (const fx::NamedTupleType* named = arg.named_tuple_type()) {
        return fx_sdk_function("_namedtuple_class")(named->name)(*items);
      }
      return py::tuple(items);
    }
    case Kind::kDict: {
      py::dict items;
      const fx::ArgumentList* keys = arg.dict_keys();
      size_t i = 0;
      for (const auto& [key, value] : arg.items()) {
        py::object k = keys ? to_python((*keys)[i], ref) : py::str(key);
        items[k] = to_python(value, ref);
        ++i;
      }
      return std::move(items);
    }
    case Kind::kSlice: {
      const fx::ArgumentList& e = arg.elements();
      return py::reinterpret_steal<py::object>(
          PySlice_New(to_python(e[0], ref).ptr(), to_python(e[1], ref).ptr(),
                      to_python(e[2], ref).ptr()));
    }
    case Kind::kEllipsis:
      return py::ellipsis();
    case Kind::kDevice:
      return py::module_::import("torch").attr("device")(arg.as_string());
    case Kind::kDtype:
    case Kind::kMemoryFormat:
    case Kind::kLayout:
    case Kind::kQScheme:
      return torch_attribute(arg.as_string());
    case Kind::kSymInt:
      return symint(arg.as_string());
    default:  // the scalars, converted above
      break;
  }
  return py::none();
}

bool is_torch_instance(py::handle value, const char* type_name) {
  return py::isinstance(value, py::module_::import("torch").attr(type_name));
}

// A NamedTuple of `items`, its class named by fx_sdk._named_tuple_info.
fx::Argument named_tuple_from_python(py::handle value, fx::ArgumentList items,
                                     const std::string& where) {
  py::tuple info;
  try {
    info = fx_sdk_function("_named_tuple_info")(value);
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_ValueError)) throw;
    throw py::value_error(where + ": " + std::string(py::str(e.value())));
  }
  auto type = std::make_shared<fx::NamedTupleType>();
  type->name = info[0].cast<std::string>();
  type->fields = info[1].cast<std::vector<std::string>>();
  type->fields_repr = info[2].cast<bool>();
  try {
    return fx::Argument::named_tuple(std::move(type), std::move(items));
  } catch (const fx::FxError& e) {
    throw py::value_error(where + ": " + e.what());
  }
}

fx::Argument from_python(py::handle value, const GraphRef& ref,
                         const std::string& where) {
  if (value.is_none()) return fx::Argument();
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) {
    try {
      return value.cast<int64_t>();
    } catch (const py::cast_error&) {
      throw py::value_error(where + ": the int does not fit in 64 bits");
    }
  }
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<PyNode>(value)) {
    const PyNode& node = value.cast<const PyNode&>();
    fx::Node& live = node.get();  // raises for a replaced graph's node
    if (node.ref.graph != ref.graph) {
      throw py::value_error(where + ": node '" + std::string(live.name()) +
                            "' belongs to another graph");
    }
    return &live;
  }
  if (py::isinstance<py::tuple>(value) || py::isinstance<py::list>(value)) {
    fx::ArgumentList items;
    for (py::handle item : value)
      items.push_back(from_python(item, ref, where));
    if (py::isinstance<py::list>(value)) {
      return fx::Argument::list(std::move(items));
    }
    if (py::hasattr(value.get_type(), "_fields")) {
      return named_tuple_from_python(value, std::move(items), where);
    }
    return fx::Argument::tuple(std::move(items));
  }
  if (py::isinstance<py::dict>(value)) {
    fx::KeyedArgumentDict items;
    for (auto [key, item] : value.cast<py::dict>()) {
      PyObject* k = key.ptr();
      if (!PyUnicode_Check(k) && !PyBool_Check(k) && !PyLong_Check(k) &&
          !PyFloat_Check(k)) {
        throw py::value_error(
            where + ": a dict key must be a str, bool, int or float, not " +
            std::string(py::str(key.get_type().attr("__name__"))));
      }
      items.emplace_back(from_python(key, ref, where),
                         from_python(item, ref, where));
    }
    return fx::Argument::keyed_dict(std::move(items));
  }
  if (PySlice_Check(value.ptr())) {
    return fx::Argument::slice(from_python(value.attr("start"), ref, where),
                               from_python(value.attr("stop"), ref, where),
                               from_python(value.attr("step"), ref, where));
  }
  if (value.ptr() == Py_Ellipsis) return fx::Argument::ellipsis();
  std::string text = py::str(value);
  if (is_torch_instance(value, "dtype")) return fx::Argument::dtype(text);
  if (is_torch_instance(value, "device")) return fx::Argument::device(text);
  if (is_torch_instance(value, "memory_format")) {
    return fx::Argument::memory_format(text);
  }
  if (is_torch_instance(value, "layout")) return fx::Argument::layout(text);
  if (is_torch_instance(value, "qscheme")) return fx::Argument::qscheme(text);
  throw py::value_error(
      where + ": the SDK's graphs cannot hold a " +
      std::string(py::str(value.get_type().attr("__qualname__"))) +
      " (None, bool, int, float, str, Node, list, tuple, dict, slice, "
      "Ellipsis, torch.dtype/device/memory_format/layout/qscheme)");
}

fx::Node::Args args_from_python(py::handle args, const GraphRef& ref,
                                const std::string& where) {
  fx::Node::Args out;
  if (args.is_none()) return out;
  if (!py::isinstance<py::tuple>(args) && !py::isinstance<py::list>(args)) {
    throw py::type_error(where + ": args must be a tuple or list");
  }
  for (py::handle a : args) out.push_back(from_python(a, ref, where));
  return out;
}

fx::Node::Kwargs kwargs_from_python(py::handle kwargs, const GraphRef& ref,
                                    const std::string& where) {
  if (kwargs.is_none()) return {};
  if (!py::isinstance<py::dict>(kwargs)) {
    throw py::type_error(where + ": kwargs must be a dict");
  }
  return from_python(kwargs, ref, where).items();
}

py::tuple args_to_python(const PyNode& n) {
  py::list items;
  for (const fx::Argument& a : n.get().args()) {
    items.append(to_python(a, n.ref));
  }
  return py::tuple(items);
}

py::dict kwargs_to_python(const PyNode& n) {
  py::dict items;
  for (const auto& [key, value] : n.get().kwargs()) {
    items[py::str(key)] = to_python(value, n.ref);
  }
  return items;
}

py::object node_or_none(const GraphRef& ref, fx::Node* node) {
  if (node == nullptr) return py::none();
  return wrap_node(ref, node);
}

std::string where(const PyNode& n, const char* what) {
  return "node '" + std::string(n.get().name()) + "' " + what;
}

void set_meta(const PyNode& n, const std::string& key, py::handle value) {
  n.get().set_meta(
      key, from_python(value, n.ref, where(n, "meta") + " '" + key + "'"));
}

void del_meta(const PyNode& n, const std::string& key) {
  fx::ArgumentDict& meta = n.get().mutable_meta();
  for (auto it = meta.begin(); it != meta.end(); ++it) {
    if (it->first == key) {
      meta.erase(it);
      return;
    }
  }
  throw py::key_error(key);
}

py::list replace_all_uses_with(const PyNode& n, const PyNode& replacement,
                               const py::object& delete_user_cb,
                               bool propagate_meta) {
  std::function<bool(fx::Node*)> filter;
  if (!delete_user_cb.is_none()) {
    filter = [&](fx::Node* user) {
      return py::bool_(delete_user_cb(wrap_node(n.ref, user))).cast<bool>();
    };
  }
  fx::Node* with =
      from_python(py::cast(replacement), n.ref, where(n, "replacement"))
          .as_node();
  py::list changed;
  for (fx::Node* user :
       n.get().replace_all_uses_with(with, filter, propagate_meta)) {
    changed.append(wrap_node(n.ref, user));
  }
  return changed;
}

void bind_node(py::module_& m) {
  py::class_<PyNode>(m, "Node",
                     "A node of an SDK graph (fx::Node), as torch.fx.Node.")
      .def_property_readonly(
          "name", [](const PyNode& n) { return std::string(n.get().name()); })
      .def_property_readonly(
          "op",
          [](const PyNode& n) {
            return std::string(fx::opcode_name(n.get().op()));
          })
      .def_property(
          "_target", [](const PyNode& n) { return n.get().target(); },
          [](const PyNode& n, const std::string& target) {
            n.get().set_target(target);
          },
          "The target as the SDK holds it (a call_function target as its "
          "qualified name).")
      .def_property(
          "args", &args_to_python,
          [](const PyNode& n, py::handle args) {
            n.get().set_args(args_from_python(args, n.ref, where(n, "args")));
          })
      .def_property("kwargs", &kwargs_to_python,
                    [](const PyNode& n, py::handle kwargs) {
                      n.get().set_kwargs(kwargs_from_python(
                          kwargs, n.ref, where(n, "kwargs")));
                    })
      .def_property_readonly("users",
                             [](const PyNode& n) {
                               py::dict users;  // torch.fx's Dict[Node, None]
                               for (fx::Node* user : n.get().users()) {
                                 users[wrap_node(n.ref, user)] = py::none();
                               }
                               return users;
                             })
      .def_property_readonly(
          "all_input_nodes",
          [](const PyNode& n) {
            py::list inputs;
            for (fx::Node* input : n.get().all_input_nodes()) {
              inputs.append(wrap_node(n.ref, input));
            }
            return inputs;
          })
      .def_property_readonly(
          "prev",
          [](const PyNode& n) { return node_or_none(n.ref, n.get().prev()); },
          "The node before, or None at the start.")
      .def_property_readonly(
          "next",
          [](const PyNode& n) { return node_or_none(n.ref, n.get().next()); },
          "The node after, or None at the end.")
      .def_property_readonly("graph",
                             [](const PyNode& n) { return PyGraph{n.ref}; })
      .def_property(
          "_type",
          [](const PyNode& n) -> py::object {
            std::string_view type = n.get().type();
            if (type.empty()) return py::none();
            return py::str(std::string(type));
          },
          [](const PyNode& n, const std::string& type) {
            n.get().set_type(type);
          })
      .def("_meta_keys",
           [](const PyNode& n) {
             std::vector<std::string> keys;
             for (const auto& kv : n.get().meta()) keys.push_back(kv.first);
             return keys;
           })
      .def("_meta_get",
           [](const PyNode& n, const std::string& key) {
             const fx::Argument* value = n.get().meta_value(key);
             if (value == nullptr) throw py::key_error(key);
             return to_python(*value, n.ref);
           })
      .def("_meta_set", &set_meta)
      .def("_meta_del", &del_meta)
      .def("replace_all_uses_with", &replace_all_uses_with,
           py::arg("replace_with"), py::arg("delete_user_cb") = py::none(),
           py::kw_only(), py::arg("propagate_meta") = false,
           "Makes the users (those delete_user_cb accepts) use replace_with; "
           "returns the users that changed.")
      .def(
          "replace_input_with",
          [](const PyNode& n, const PyNode& old_input,
             const PyNode& new_input) {
            fx::Argument with =
                from_python(py::cast(new_input), n.ref, where(n, "input"));
            fx::Argument old =
                from_python(py::cast(old_input), n.ref, where(n, "input"));
            n.get().replace_input_with(old.as_node(), with.as_node());
          },
          py::arg("old_input"), py::arg("new_input"))
      .def(
          "update_arg",
          [](const PyNode& n, size_t index, py::handle arg) {
            n.get().update_arg(index,
                               from_python(arg, n.ref, where(n, "args")));
          },
          py::arg("idx"), py::arg("arg"))
      .def(
          "update_kwarg",
          [](const PyNode& n, const std::string& key, py::handle arg) {
            n.get().update_kwarg(key,
                                 from_python(arg, n.ref, where(n, "kwargs")));
          },
          py::arg("key"), py::arg("arg"))
      .def(
          "prepend",
          [](const PyNode& n, const PyNode& x) {
            n.get().prepend(
                from_python(py::cast(x), n.ref, where(n, "prepend")).as_node());
          },
          py::arg("x"), "Moves x to just before this node.")
      .def(
          "append",
          [](const PyNode& n, const PyNode& x) {
            n.get().append(
                from_python(py::cast(x), n.ref, where(n, "append")).as_node());
          },
          py::arg("x"), "Moves x to just after this node.")
      .def("format_node", [](const PyNode& n) { return n.get().format_node(); })
      .def_property_readonly("_erased",
                             [](const PyNode& n) { return n.get().erased(); })
      .def("__repr__",
           [](const PyNode& n) {
             try {
               return std::string(n.get().name());
             } catch (const std::runtime_error&) {
               return std::string("<node of a replaced graph>");
             }
           })
      .def("__eq__",
           [](const PyNode& a, py::handle b) {
             if (!py::isinstance<PyNode>(b)) return false;
             const PyNode& other = b.cast<const PyNode&>();
             return other.node == a.node &&
                    other.ref.generation == a.ref.generation;
           })
      .def("__hash__", [](const PyNode& n) {
        return std::hash<const fx::Node*>()(n.node);
      });
}

py::object create_node(const PyGraph& g, const std::string& op,
                       const std::string& target, py::handle args,
                       py::handle kwargs, std::optional<std::string> name,
                       const std::string& type) {
  std::optional<fx::Opcode> opcode = fx::parse_opcode(op);
  if (!opcode) throw py::value_error("unknown op '" + op + "'");
  std::string at = "new " + op + " node '" + target + "'";
  fx::Node::Args a = args_from_python(args, g.ref, at + " args");
  fx::Node::Kwargs k = kwargs_from_python(kwargs, g.ref, at + " kwargs");
  fx::Graph& graph = g.ref.get();
  std::optional<std::string_view> node_name;
  if (name) node_name = *name;
  return wrap_node(g.ref, graph.create_node(*opcode, target, std::move(a),
                                            std::move(k), node_name, type));
}

void bind_graph_class(py::module_& m) {
  py::class_<PyGraph>(m, "Graph",
                      "A GraphModule's graph (fx::Graph), as torch.fx.Graph.")
      .def_property_readonly(
          "nodes",
          [](const PyGraph& g) {
            py::list nodes;  // a snapshot: edits while iterating are safe
            for (fx::Node* n : g.ref.get().nodes()) {
              nodes.append(wrap_node(g.ref, n));
            }
            return nodes;
          })
      .def_property_readonly("owning_module",
                             [](const PyGraph& g) { return g.ref.gm; })
      .def("_create_node", &create_node, py::arg("op"), py::arg("target"),
           py::arg("args"), py::arg("kwargs"), py::arg("name"), py::arg("type"))
      .def("_placeholder",
           [](const PyGraph& g, const std::string& name,
              const std::string& type, py::args default_value) {
             // default_value: empty, or the one default (which may be None).
             std::optional<fx::Argument> value;
             if (!default_value.empty()) {
               value = from_python(default_value[0], g.ref,
                                   "placeholder '" + name + "' default");
             }
             return wrap_node(g.ref,
                              g.ref.get().placeholder(name, type, value));
           })
      .def("_output",
           [](const PyGraph& g, py::handle result, const std::string& type) {
             fx::Argument value = from_python(result, g.ref, "output");
             return wrap_node(g.ref,
                              g.ref.get().output(std::move(value), type));
           })
      .def(
          "erase_node",
          [](const PyGraph& g, const PyNode& node) {
            fx::Argument n = from_python(py::cast(node), g.ref, "erase_node");
            g.ref.get().erase_node(n.as_node());
          },
          py::arg("to_erase"))
      .def("_insert_point",
           [](const PyGraph& g) {
             auto [anchor, after] = g.ref.get().insert_point();
             return py::make_tuple(node_or_none(g.ref, anchor), after);
           })
      .def("_set_insert_point",
           [](const PyGraph& g, py::handle anchor, bool after) {
             fx::Node* node =
                 anchor.is_none()
                     ? nullptr
                     : from_python(anchor, g.ref, "insertion point").as_node();
             g.ref.get().set_insert_point(node, after);
           })
      .def(
          "lint", [](const PyGraph& g) { g.ref.get().lint(); },
          "Checks the graph as torch.fx's lint does; raises RuntimeError.")
      .def(
          "eliminate_dead_code",
          [](const PyGraph& g) { return g.ref.get().eliminate_dead_code(); },
          "Erases unused pure nodes; returns whether anything changed.")
      .def("__str__", [](const PyGraph& g) { return g.ref.get().str(); })
      .def("__repr__", [](const PyGraph& g) {
        return "<fx_sdk.Graph of " + std::to_string(g.ref.get().size()) +
               " nodes>";
      });
}

}  // namespace

void graph_replaced(const fx::GraphModule& gm) { ++replacements()[&gm]; }

void bind_graph(py::module_& m, GraphModuleClass& graph_module) {
  bind_node(m);
  bind_graph_class(m);
  graph_module
      .def_property_readonly(
          "graph",
          [](const std::shared_ptr<fx::GraphModule>& gm) {
            return PyGraph{GraphRef(gm)};
          },
          "The graph, to read and edit in place; recompile() after edits.")
      .def(
          "recompile", [](fx::GraphModule& gm) { gm.recompile(); },
          "Regenerates code and the executable plan from the graph.");
}

}  // namespace fx_sdk
