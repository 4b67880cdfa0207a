// A built-in decomposition table for fx::make_fx (MakeFxOptions::
// decompositions): C++ ports of torch 1.13's Python decompositions
// (torch._decomp) for common operators, each making the calls the Python one
// makes, so make_fx(fn, decomposition_table=get_decompositions([...])) and
// fx::make_fx with the same operators record the same graph.
//
//   fx::MakeFxOptions options;
//   options.decompositions = fx::get_decompositions({"aten::gelu"});
//   // or every built-in one:
//   options.decompositions = fx::core_aten_decompositions();
//
// Operators: aten::addmm, aten::gelu, aten::silu, aten::hardtanh,
// aten::hardswish, aten::hardsigmoid, aten::leaky_relu, aten::elu,
// aten::_softmax, aten::_log_softmax, aten::t, aten::mish, aten::softplus,
// aten::relu. Python wraps addmm, silu, hardswish, hardsigmoid and elu in
// pw_cast_for_opmath: half and bfloat16 computed in float, converted with
// `_to_copy` both ways, as these ports do too. Python's other ports convert
// half and bfloat16 with prims.convert_element_type, which LibTorch's C++
// build does not have: gelu, hardtanh, leaky_relu, mish, softplus and relu
// leave half and bfloat16 tensors whole (the operator is recorded, where
// make_fx records convert_element_type and the decomposition).
// _softmax and _log_softmax convert as Python does; t has no dtype.
// The opmath ports leave integer tensors whole.
#ifndef FX_CORE_CAPTURE_DECOMPOSITIONS_H_
#define FX_CORE_CAPTURE_DECOMPOSITIONS_H_

#include <map>
#include <string>
#include <vector>

#include "fx_core/capture/make_fx.h"

namespace fx {

using DecompositionTable = std::map<std::string, Decomposition>;

// Every built-in decomposition, keyed by operator ("aten::gelu").
DecompositionTable core_aten_decompositions();

// The built-in decompositions of `ops` (torch._decomp.get_decompositions).
// Throws fx::FxError naming an operator the table does not have.
DecompositionTable get_decompositions(const std::vector<std::string>& ops);

}  // namespace fx

#endif  // FX_CORE_CAPTURE_DECOMPOSITIONS_H_
