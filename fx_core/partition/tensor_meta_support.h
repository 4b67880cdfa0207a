// fx::tensor_meta_support: support by the tensors a node computes or reads,
// from meta['tensor_meta'] (what shape propagation records: a dict with
// "shape" and "dtype", or a tuple/list of them for a node returning several
// tensors).
//
// A node is supported when every tensor the rule looks at passes every limit:
//   dtypes        one of these ("torch.float32"; "torch.float" and the other
//                 aliases torch has are the same dtype); empty: any dtype
//   min_rank,     the number of dimensions, within [min_rank, max_rank]
//   max_rank      (max_rank < 0: no upper limit)
//   max_dim_size  every dimension at most this (< 0: no limit)
// The rule looks at the node's own tensor_meta (check_output) and at its input
// nodes' (check_inputs; get_attr inputs are skipped, as torch.fx's
// decline_if_input_dtype skips them). A node the rule looks at without
// tensor_meta is not supported. torch.fx's OpSupports.decline_if_input_dtype
// is negation(tensor_meta_support({dtypes = {D}, check_output = false,
// check_inputs = true, any_input = true})).
#ifndef FX_CORE_PARTITION_TENSOR_META_SUPPORT_H_
#define FX_CORE_PARTITION_TENSOR_META_SUPPORT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fx_core/partition/operator_support.h"

namespace fx {

struct TensorRule {
  std::vector<std::string> dtypes;
  int64_t min_rank = 0;
  int64_t max_rank = -1;
  int64_t max_dim_size = -1;
  bool check_output = true;
  bool check_inputs = false;
  // With check_inputs: one passing input suffices (else every input must).
  bool any_input = false;
};

// Throws FxError naming an unknown dtype.
OperatorSupport tensor_meta_support(TensorRule rule);

// "torch.float" -> "torch.float32" (torch's aliases); other names unchanged.
std::string canonical_dtype(std::string_view name);

}  // namespace fx

#endif  // FX_CORE_PARTITION_TENSOR_META_SUPPORT_H_
