// Process-wide extensions of fx::make_fx that plugins register when they are
// loaded (the C ABI's RegisterDecomposition / RegisterLeafOp, plugin_api.h
// version 4): decompositions (an ATen operator and the calls recorded in its
// place) and leaf operators (recorded whole). Each remembers who registered
// it (`origin`, the plugin's name) for error messages.
//
// make_fx applies them to every capture unless MakeFxOptions::
// registered_extensions is false; a decomposition or leaf operator given in
// MakeFxOptions takes precedence over a registered one of the same
// operator. Registrations stay for the life of the process.
//
// Thread safety: every function may be called from any thread.
#ifndef FX_CORE_CAPTURE_CAPTURE_EXTENSIONS_H_
#define FX_CORE_CAPTURE_CAPTURE_EXTENSIONS_H_

#include <map>
#include <string>
#include <vector>

#include "fx_core/capture/make_fx.h"

namespace fx::capture {

// The canonical name of operator `op` ("aten::relu", "aten::add.Tensor";
// "aten::relu.default" is "aten::relu"). Throws fx::FxError naming `op`
// when LibTorch has no such operator.
std::string canonical_op_name(const std::string& op);

// One registration: a decomposition of `op`, or (no decomposition) `op` as
// a leaf operator.
struct CaptureExtension {
  std::string op;
  Decomposition decomposition;
};

// Registers all of `extensions` or, throwing fx::FxError, none: when an
// operator does not exist, appears twice, or already has a registered
// decomposition or leaf rule. Errors from a decomposition (c10::Error,
// fx::FxError, ...) reach the capture as fx::FxError naming the operator
// and `origin`.
void register_capture_extensions(
    const std::vector<CaptureExtension>& extensions, const std::string& origin);

// Throws fx::FxError naming `op` and who registered it when it is taken.
void check_unregistered(const std::string& op, const std::string& origin);

// register_capture_extensions of one decomposition, one leaf operator.
void register_decomposition(const std::string& op, Decomposition decomposition,
                            const std::string& origin);
void register_leaf_op(const std::string& op, const std::string& origin);

// What is registered: decompositions by canonical name, leaf operators.
struct RegisteredExtensions {
  std::map<std::string, Decomposition> decompositions;
  std::vector<std::string> leaf_ops;
};
RegisteredExtensions registered_extensions();

// Who registered `op`'s decomposition or leaf rule, or "" when nobody.
std::string registered_origin(const std::string& op);

}  // namespace fx::capture

#endif  // FX_CORE_CAPTURE_CAPTURE_EXTENSIONS_H_
