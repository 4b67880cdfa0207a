// A user's torch.fx CodeGen subclass, in process (issue 32, item 5): the
// SDK's graph keeps the Python object as its code generator and asks it for
// what torch.fx asks it for (bindings.h's python_codegen):
//   gen_fn_def(free_vars, maybe_return_annotation)  the prologue;
//   generate_output(output_args)                    the return statement,
//       output_args as torch.fx holds them, each node a stand-in whose repr
//       is its name (what Node.__repr__ gives), other leaves as Python values
//       or, for torch values, stand-ins whose repr is the SDK's;
//   additional_globals()                            names the code needs;
//   process_inputs(*inputs) / process_outputs(out)  at run time.
// Every call takes the GIL. A Python exception raises FxError naming the
// method and the exception.
#include <pybind11/stl.h>
#include <torch/extension.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fx_core/ir/argument.h"
#include "fx_core/ir/node.h"
#include "fx_core/ir/python_repr.h"
#include "fx_core/runtime/runtime_codegen.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "python/bindings.h"
#include "python/python_values.h"

namespace py = pybind11;

namespace fx_sdk {
namespace {

// A Python object kept alive by C++ owners, released with the GIL taken
// (leaked while Python finalises).
std::shared_ptr<py::object> keep(py::object object) {
  return std::shared_ptr<py::object>(new py::object(std::move(object)),
                                     [](py::object* o) {
                                       if (Py_IsInitialized() != 0) {
                                         py::gil_scoped_acquire gil;
                                         delete o;
                                       }
                                     });
}

py::object fx_sdk_attr(const char* name) {
  return py::module_::import("fx_sdk").attr(name);
}

class PythonCodeGen : public fx::RuntimeCodeGen {
 public:
  explicit PythonCodeGen(std::shared_ptr<py::object> codegen)
      : codegen_(std::move(codegen)) {}

  const py::object& object() const { return *codegen_; }

  std::unique_ptr<fx::CodeGen> clone() const override {
    return std::make_unique<PythonCodeGen>(*this);
  }

  std::string generate_prologue(
      std::vector<std::string> free_vars,
      std::string_view return_annotation) const override {
    py::gil_scoped_acquire gil;
    return call("gen_fn_def", [&] {
      return codegen_
          ->attr("gen_fn_def")(py::cast(free_vars),
                               py::str(std::string(return_annotation)))
          .cast<std::string>();
    });
  }

  std::string generate_output(const fx::Argument& output_args) const override {
    py::gil_scoped_acquire gil;
    return call("generate_output", [&] {
      return codegen_->attr("generate_output")(code_value(output_args))
          .cast<std::string>();
    });
  }

  std::vector<std::pair<std::string, std::string>> additional_globals()
      const override {
    py::gil_scoped_acquire gil;
    return call("additional_globals", [&] {
      std::vector<std::pair<std::string, std::string>> out;
      py::object remember = fx_sdk_attr("_codegen_global");
      for (py::handle entry : codegen_->attr("additional_globals")()) {
        py::tuple pair = py::reinterpret_borrow<py::tuple>(entry);
        out.emplace_back(pair[0].cast<std::string>(),
                         remember(pair[1]).cast<std::string>());
      }
      return out;
    });
  }

  std::vector<c10::IValue> process_inputs(
      std::vector<c10::IValue> inputs) const override {
    py::gil_scoped_acquire gil;
    return call("process_inputs", [&] {
      py::tuple args(inputs.size());
      for (size_t i = 0; i < inputs.size(); ++i) {
        args[i] = to_python(std::move(inputs[i]));
      }
      py::object flat = codegen_->attr("process_inputs")(*args);
      if (!py::isinstance<py::list>(flat) && !py::isinstance<py::tuple>(flat)) {
        flat = py::make_tuple(flat);
      }
      return to_ivalues(flat);
    });
  }

  c10::IValue process_outputs(c10::IValue outputs) const override {
    py::gil_scoped_acquire gil;
    return call("process_outputs", [&] {
      py::object out =
          codegen_->attr("process_outputs")(to_python(std::move(outputs)));
      return to_ivalues(py::make_tuple(out))[0];
    });
  }

 private:
  template <typename Fn>
  auto call(const char* method, Fn&& fn) const -> decltype(fn()) {
    try {
      return fn();
    } catch (py::error_already_set& e) {
      throw fx::FxError(
          fx::cat("the graph's CodeGen (",
                  py::str(codegen_->get_type().attr("__qualname__"))
                      .cast<std::string>(),
                  ").", method, " raised ",
                  py::str(e.type().attr("__name__")).cast<std::string>(), ": ",
                  py::str(e.value()).cast<std::string>()));
    } catch (const py::cast_error& e) {
      throw fx::FxError(
          fx::cat("the graph's CodeGen.", method,
                  " returned a value of the wrong type: ", e.what()));
    }
  }

  // output_args as generate_output sees them in torch.fx.
  static py::object code_value(const fx::Argument& arg) {
    if (py::object scalar = scalar_to_python(arg)) return scalar;
    using Kind = fx::Argument::Kind;
    switch (arg.kind()) {
      case Kind::kNode:
        return fx_sdk_attr("_CodeName")(std::string(arg.as_node()->name()));
      case Kind::kList:
      case Kind::kTuple: {
        if (arg.named_tuple_type() != nullptr) break;
        py::list items;
        for (const fx::Argument& a : arg.elements())
          items.append(code_value(a));
        if (arg.is_list()) return std::move(items);
        return py::tuple(items);
      }
      case Kind::kDict: {
        if (arg.dict_keys() != nullptr) break;
        py::dict items;
        for (const auto& [key, value] : arg.items()) {
          items[py::str(key)] = code_value(value);
        }
        return std::move(items);
      }
      default:
        break;
    }
    return fx_sdk_attr("_CodeName")(fx::repr(arg));
  }

  std::shared_ptr<py::object> codegen_;
};

}  // namespace

std::unique_ptr<fx::CodeGen> python_codegen(py::handle codegen) {
  return std::make_unique<PythonCodeGen>(
      keep(py::reinterpret_borrow<py::object>(codegen)));
}

py::object python_codegen_object(const fx::CodeGen& codegen) {
  const auto* held = dynamic_cast<const PythonCodeGen*>(&codegen);
  return held ? held->object() : py::none();
}

}  // namespace fx_sdk
