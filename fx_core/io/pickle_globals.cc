// The globals a torch.save pickle program may name (is_allowed_pickle_global,
// pickle_rewriter.h) and the storage types among them (pickle_ops.h).
#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "fx_core/io/pickle_ops.h"
#include "fx_core/io/pickle_rewriter.h"
#include "fx_core/ir/torch_names.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace pickle {

// The bytes of one element of the storage type `global` ("torch
// FloatStorage"), 0 for anything else.
size_t storage_element_size(const std::string& global) {
  static const std::pair<std::string_view, size_t> kSizes[] = {
      {"DoubleStorage", 8},       {"FloatStorage", 4},
      {"HalfStorage", 2},         {"BFloat16Storage", 2},
      {"LongStorage", 8},         {"IntStorage", 4},
      {"ShortStorage", 2},        {"CharStorage", 1},
      {"ByteStorage", 1},         {"BoolStorage", 1},
      {"ComplexFloatStorage", 8}, {"ComplexDoubleStorage", 16},
      {"QInt8Storage", 1},        {"QUInt8Storage", 1},
      {"QInt32Storage", 4},       {"QUInt4x2Storage", 1},
      {"QUInt2x4Storage", 1}};
  if (global.rfind("torch ", 0) != 0) return 0;
  std::string_view name = std::string_view(global).substr(6);
  for (const auto& [type, size] : kSizes) {
    if (type == name) return size;
  }
  return 0;
}

}  // namespace pickle

bool is_allowed_pickle_global(const std::string& global) {
  size_t space = global.find(' ');
  if (space == std::string::npos) return false;
  std::string_view module(global.data(), space);
  std::string_view name = std::string_view(global).substr(space + 1);
  auto one_of = [&](std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  if (module == "collections") return name == "OrderedDict";
  if (module == "torch._utils") {
    return one_of({"_rebuild_tensor", "_rebuild_tensor_v2",
                   "_rebuild_parameter", "_rebuild_qtensor",
                   "_rebuild_sparse_tensor", "_rebuild_sparse_csr_tensor"});
  }
  if (module == "torch.serialization") return name == "_get_layout";
  if (module == "torch.nn.modules.adaptive") return name == "_ASMoutput";
  if (module == "torch.jit._pickle") {
    return one_of({"restore_type_tag", "build_intlist", "build_tensorlist",
                   "build_doublelist", "build_boollist"});
  }
  if (module == "torch.return_types") {
    // A Python identifier, as every class there is named (a NUL in the
    // name read, but the writer could not write it back: tests/fuzz
    // crashes/torch_save/return_types_nul_name).
    auto word = [](char c) {
      return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
             (c >= '0' && c <= '9');
    };
    return !name.empty() && !(name[0] >= '0' && name[0] <= '9') &&
           std::all_of(name.begin(), name.end(), word);
  }
  if (module != "torch") return false;
  if (one_of({"Size", "device", "per_tensor_affine", "per_channel_affine",
              "per_channel_affine_float_qparams"})) {
    return true;
  }
  if (is_dtype_name(cat("torch.", name))) return true;
  return pickle::storage_element_size(global) != 0;  // the storage types
}

}  // namespace fx
