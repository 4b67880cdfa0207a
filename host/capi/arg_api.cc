// The argument entries of the C function table: FxArg construction
// (CreateNone .. ReleaseArg) and inspection (ArgKind .. ArgEqual), and the
// node arguments built from C arrays (make_args, make_kwargs, to_opcode).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <new>
#include <vector>

#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "host/capi/api_internal.h"
#include "host/capi/c_api.h"
#include "host/handles/wrap.h"

namespace fx::host {
namespace internal {

Node::Kwargs make_kwargs(const char* const* keys, const FxArg* const* values,
                         size_t count) {
  Node::Kwargs kwargs;
  if (count > 0) {
    require(keys, "kwarg keys");
    require(values, "kwarg values");
  }
  for (size_t i = 0; i < count; ++i) {
    kwargs.emplace_back(require(keys[i], "kwarg key"),
                        copy_arg(values[i], "kwarg value"));
  }
  return kwargs;
}

Node::Args make_args(const FxArg* const* args, size_t count) {
  Node::Args out;
  if (count > 0) require(args, "args");
  for (size_t i = 0; i < count; ++i) out.push_back(copy_arg(args[i], "arg"));
  return out;
}

Opcode to_opcode(FxOpcode op) {
  if (op < FX_OP_PLACEHOLDER || op > FX_OP_OUTPUT) {
    fail(FX_INVALID_ARGUMENT, cat("unknown opcode ", static_cast<int>(op)));
  }
  return static_cast<Opcode>(op);
}

namespace {

// ------------------------------------------------ arguments: construction

// Stores a new argument, owned by the caller, in *out. Callers compute
// `value` first, so its errors come before a NULL `out`'s.
void give_arg(FxArg** out, Argument value) {
  FxArg** slot = require(out, "out");
  *slot = give(std::move(value));
}

ArgumentList copy_items(const FxArg* const* items, size_t count) {
  ArgumentList list;
  if (count) require(items, "items");
  for (size_t i = 0; i < count; ++i) list.push_back(copy_arg(items[i], "item"));
  return list;
}

Argument torch_value(FxArgKind kind, const char* name) {
  std::string n = require(name, "name");
  switch (kind) {
    case FX_ARG_DTYPE:
      return Argument::dtype(n);
    case FX_ARG_DEVICE:
      return Argument::device(n);
    case FX_ARG_MEMORY_FORMAT:
      return Argument::memory_format(n);
    case FX_ARG_LAYOUT:
      return Argument::layout(n);
    default:
      fail(FX_INVALID_ARGUMENT,
           "kind must be a dtype, device, memory format or layout");
  }
}

}  // namespace

// CreateNone .. CreateNodeRef.
void fill_scalar_arg_entries(FxApi& t) {
  t.CreateNone = [](FxArg** out) {
    return guarded("CreateNone", [&] { give_arg(out, Argument()); });
  };
  t.CreateBool = [](int v, FxArg** out) {
    return guarded("CreateBool", [&] { give_arg(out, Argument(v != 0)); });
  };
  t.CreateInt = [](int64_t v, FxArg** out) {
    return guarded("CreateInt", [&] { give_arg(out, Argument(v)); });
  };
  t.CreateFloat = [](double v, FxArg** out) {
    return guarded("CreateFloat", [&] { give_arg(out, Argument(v)); });
  };
  t.CreateString = [](const char* v, FxArg** out) {
    return guarded("CreateString", [&] {
      give_arg(out, Argument(std::string(require(v, "value"))));
    });
  };
  t.CreateNodeRef = [](FxNode* node, FxArg** out) {
    return guarded("CreateNodeRef", [&] {
      give_arg(out, Argument(unwrap(require(node, "node"))));
    });
  };
}

// CreateList .. ReleaseArg.
void fill_compound_arg_entries(FxApi& t) {
  t.CreateList = [](const FxArg* const* items, size_t count, FxArg** out) {
    return guarded("CreateList", [&] {
      ArgumentList list = copy_items(items, count);
      give_arg(out, Argument::list(std::move(list)));
    });
  };
  t.CreateTuple = [](const FxArg* const* items, size_t count, FxArg** out) {
    return guarded("CreateTuple", [&] {
      ArgumentList list = copy_items(items, count);
      give_arg(out, Argument::tuple(std::move(list)));
    });
  };
  t.CreateDict = [](const char* const* keys, const FxArg* const* values,
                    size_t count, FxArg** out) {
    return guarded("CreateDict", [&] {
      give_arg(out, Argument::dict(make_kwargs(keys, values, count)));
    });
  };
  t.CreateSlice = [](const FxArg* start, const FxArg* stop, const FxArg* step,
                     FxArg** out) {
    return guarded("CreateSlice", [&] {
      give_arg(out,
               Argument::slice(copy_arg(start, "start"), copy_arg(stop, "stop"),
                               copy_arg(step, "step")));
    });
  };
  t.CreateEllipsis = [](FxArg** out) {
    return guarded("CreateEllipsis",
                   [&] { give_arg(out, Argument::ellipsis()); });
  };
  t.CreateTorchValue = [](FxArgKind kind, const char* name, FxArg** out) {
    return guarded("CreateTorchValue", [&] {
      Argument value = torch_value(kind, name);
      give_arg(out, std::move(value));
    });
  };
  t.CloneArg = [](const FxArg* arg, FxArg** out) {
    return guarded("CloneArg", [&] { give_arg(out, copy_arg(arg, "arg")); });
  };
  t.ReleaseArg = release_arg;
}

namespace {

// -------------------------------------------------- arguments: inspection

size_t arg_size(const FxArg* a) {
  const Argument* found = peek(a);
  if (found == nullptr) return 0;
  const Argument& arg = *found;
  if (arg.is_sequence() || arg.is_slice()) return arg.elements().size();
  if (arg.is_dict()) return arg.items().size();
  return 0;
}

const FxArg* arg_item(const FxArg* a, size_t i) { return borrow(a, i); }

}  // namespace

// ArgKind .. ArgEqual.
void fill_arg_inspection_entries(FxApi& t) {
  t.ArgKind = [](const FxArg* a) {
    const Argument* arg = peek(a);
    if (arg == nullptr) return FX_ARG_NONE;
    // Symbolic ints have no FxArgKind (old plugins' switches): a string
    // (ArgGetString: the expression) that ArgIsSymInt (version 8) tells apart.
    // A qscheme (in a module config) likewise reads as its name.
    if (arg->is_symint() || arg->kind() == Argument::Kind::kQScheme) {
      return FX_ARG_STRING;
    }
    return static_cast<FxArgKind>(arg->kind());
  };
  t.ArgGetBool = [](const FxArg* a, int* out) {
    return guarded("ArgGetBool", [&] {
      *require(out, "out") = require(unwrap(a), "arg")->as_bool() ? 1 : 0;
    });
  };
  t.ArgGetInt = [](const FxArg* a, int64_t* out) {
    return guarded("ArgGetInt", [&] {
      *require(out, "out") = require(unwrap(a), "arg")->as_int();
    });
  };
  t.ArgGetFloat = [](const FxArg* a, double* out) {
    return guarded("ArgGetFloat", [&] {
      *require(out, "out") = require(unwrap(a), "arg")->as_float();
    });
  };
  t.ArgGetString = [](const FxArg* a, const char** out) {
    return guarded("ArgGetString", [&] {
      *require(out, "out") = require(unwrap(a), "arg")->as_string().c_str();
    });
  };
  t.ArgGetNode = [](const FxArg* a, FxNode** out) {
    return guarded("ArgGetNode", [&] {
      *require(out, "out") = wrap(require(unwrap(a), "arg")->as_node());
    });
  };
  t.ArgSize = arg_size;
  t.ArgItem = arg_item;
  t.ArgKey = [](const FxArg* a, size_t i) -> const char* {
    const Argument* arg = peek(a);
    if (arg == nullptr || !arg->is_dict() || i >= arg->items().size()) {
      return nullptr;
    }
    return arg->items()[i].first.c_str();
  };
  t.ArgEqual = [](const FxArg* a, const FxArg* b) -> int {
    const Argument* x = peek(a);
    const Argument* y = peek(b);
    if (x == nullptr || y == nullptr) return x == y;
    return *x == *y ? 1 : 0;
  };
}

}  // namespace internal

}  // namespace fx::host
