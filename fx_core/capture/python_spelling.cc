// How Python's bindings spell an ATen call (python_spelling.h): the C++-only
// overloads and Python's choice for them, TensorOptions, `int[N]` lists,
// layout and memory format names.
#include "fx_core/capture/python_spelling.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fx_core/support/error.h"

namespace fx {
namespace capture {
namespace {

// The C++-only overloads (native_functions.yaml: "For C++ only") a number
// reaches from C++ (`x + 2`), and the overload Python's argument parser
// picks for the same call (a number wrapped as a tensor).
const absl::flat_hash_map<std::string, std::string>& python_overloads() {
  static const auto* overloads =
      new absl::flat_hash_map<std::string, std::string>{
          {"aten::add.Scalar", "Tensor"},
          {"aten::add_.Scalar", "Tensor"},
          {"aten::sub.Scalar", "Tensor"},
          {"aten::sub_.Scalar", "Tensor"},
          {"aten::mul.Scalar", "Tensor"},
          {"aten::mul_.Scalar", "Tensor"},
          {"aten::div.Scalar", "Tensor"},
          {"aten::div_.Scalar", "Tensor"},
          {"aten::div.Scalar_mode", "Tensor_mode"},
          {"aten::div_.Scalar_mode", "Tensor_mode"},
      };
  return *overloads;
}

}  // namespace

std::string layout_name(c10::Layout layout) {
  switch (layout) {
    case c10::kStrided:
      return "torch.strided";
    case c10::kSparse:
      return "torch.sparse_coo";
    case c10::kSparseCsr:
      return "torch.sparse_csr";
    case c10::kMkldnn:
      return "torch._mkldnn";
    default:
      throw FxError("make_fx: cannot record layout " +
                    std::string(c10::toString(layout)));
  }
}

std::string memory_format_name(c10::MemoryFormat format) {
  switch (format) {
    case c10::MemoryFormat::Contiguous:
      return "torch.contiguous_format";
    case c10::MemoryFormat::Preserve:
      return "torch.preserve_format";
    case c10::MemoryFormat::ChannelsLast:
      return "torch.channels_last";
    case c10::MemoryFormat::ChannelsLast3d:
      return "torch.channels_last_3d";
    default:
      throw FxError("make_fx: cannot record this memory format");
  }
}

// True when the schema argument's type (or its Optional's element) is `kind`.
bool has_kind(const c10::Argument& arg, c10::TypeKind kind) {
  const auto& type = arg.real_type();
  if (type->kind() == kind) return true;
  if (auto optional = type->cast<c10::OptionalType>()) {
    return optional->getElementType()->kind() == kind;
  }
  return false;
}

// A factory's TensorOptions as Python's bindings pass them: `device`
// (the default device, CPU) and `pin_memory` (False) always; for a
// `*_like` factory also `dtype` and `layout`, and `device` from `self`.
// C++ leaves them None. The values are the kernel's own defaults, so the
// call computes the same.
void fill_tensor_options(const c10::FunctionSchema& schema,
                         torch::jit::Stack* stack, size_t base) {
  const auto& params = schema.arguments();
  auto at = [&](const char* name) -> c10::IValue* {
    auto i = schema.argumentIndexWithName(name);
    if (!i.has_value() || !params[*i].kwarg_only()) return nullptr;
    return &(*stack)[base + static_cast<size_t>(*i)];
  };
  c10::IValue* dtype = at("dtype");
  c10::IValue* layout = at("layout");
  c10::IValue* device = at("device");
  c10::IValue* pin_memory = at("pin_memory");
  if (!dtype || !layout || !device || !pin_memory) return;
  const c10::IValue& first = (*stack)[base];
  const bool like =
      !params.empty() && params[0].name() == "self" && first.isTensor();
  if (like) {
    const at::Tensor& self = first.toTensor();
    if (dtype->isNone()) *dtype = static_cast<int64_t>(self.scalar_type());
    if (layout->isNone()) *layout = static_cast<int64_t>(self.layout());
    if (device->isNone()) *device = self.device();
  } else if (device->isNone()) {
    *device = c10::Device(c10::kCPU);
  }
  if (pin_memory->isNone()) *pin_memory = false;
}

// For a C++-only overload, the schema Python's parser would have picked
// and where each of its arguments is in `schema`'s; else `&schema`.
const c10::FunctionSchema* python_spelling(const c10::FunctionSchema& schema,
                                           std::vector<size_t>* index) {
  const auto& overloads = python_overloads();
  auto found = overloads.find(schema.name() + "." + schema.overload_name());
  if (found == overloads.end()) return &schema;
  auto handle =
      c10::Dispatcher::singleton().findOp({schema.name(), found->second});
  if (!handle.has_value()) return &schema;
  const auto& python = handle->schema();
  index->clear();
  for (const auto& param : python.arguments()) {
    auto at = schema.argumentIndexWithName(param.name());
    if (!at.has_value()) return &schema;
    index->push_back(static_cast<size_t>(*at));
  }
  return &python;
}

void expand_int_list(c10::IValue& value, const c10::Argument& param) {
  if (!param.N().has_value() || *param.N() < 2 || !value.isIntList()) return;
  auto list = value.toIntList();
  if (list.size() != 1) return;
  std::vector<int64_t> expanded(static_cast<size_t>(*param.N()), list.get(0));
  value = c10::IValue(std::move(expanded));
}

}  // namespace capture
}  // namespace fx
