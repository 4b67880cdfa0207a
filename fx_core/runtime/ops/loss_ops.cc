// torch.nn.functional's losses (torch 1.13's torch/nn/functional.py).
//
// Nearly every loss is a Python function that turns `reduction` (or the
// deprecated size_average / reduce pair) into ATen's enum (none 0, mean 1,
// sum 2; torch/nn/_reduction.py), may check or broadcast its arguments, and
// calls one ATen operator positionally. Those are described by a table row
// (signature, operator, the parameters it passes in order) and share one
// kernel; the rest (kl_div's batchmean, binary_cross_entropy's weight
// expansion, multilabel_soft_margin_loss and
// triplet_margin_with_distance_loss, which are Python arithmetic) follow
// their Python source step for step, with Python's error messages.
#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fx_core/runtime/aten/aten_op.h"
#include "fx_core/runtime/ops/builtin_ops.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx::ops {
namespace {

using c10::IValue;

// _Reduction.get_enum.
int64_t reduction_enum(const std::string& reduction) {
  if (reduction == "none") return 0;
  if (reduction == "mean" || reduction == "elementwise_mean") return 1;
  if (reduction == "sum") return 2;
  throw FxError(cat(reduction, " is not a valid value for reduction"));
}

// _Reduction.legacy_get_string: size_average and reduce, None meaning True.
std::string legacy_reduction(OpArgs& a, int size_average, int reduce) {
  bool average = a.is_none(size_average) || a.to_bool(size_average);
  bool reducing = a.is_none(reduce) || a.to_bool(reduce);
  if (average && reducing) return "mean";
  return reducing ? "sum" : "none";
}

// The reduction a loss was asked for, by name (the legacy pair wins when
// either is given, as in Python).
struct ReductionParams {
  int reduction = -1, size_average = -1, reduce = -1;
  explicit ReductionParams(const OpSchema& schema)
      : reduction(schema.index_of("reduction")),
        size_average(schema.index_of("size_average")),
        reduce(schema.index_of("reduce")) {}
  std::string name(OpArgs& a) const {
    if (size_average >= 0 && (!a.is_none(size_average) || !a.is_none(reduce)))
      return legacy_reduction(a, size_average, reduce);
    return a.to_string(reduction);
  }
};

// A loss that is one ATen operator called with `passed` (parameter names in
// the operator's positional order; "reduction" becomes the enum).
struct Loss {
  std::string_view name;
  std::string signature;
  std::string_view aten;
  std::vector<std::string_view> passed;
  bool broadcast = false;  // torch.broadcast_tensors(input, target) first
};

void add_loss(OpRegistry& r, const Loss& loss) {
  OpSchema schema = OpSchema::parse(loss.signature);
  ReductionParams reduction(schema);
  std::vector<int> passed;
  for (std::string_view p : loss.passed) passed.push_back(schema.index_of(p));
  AtenOperator op{std::string(loss.aten)};
  bool broadcast = loss.broadcast;
  r.add(Opcode::kCallFunction, cat("torch.nn.functional.", loss.name),
        loss.signature, [=](OpArgs& a) -> IValue {
          std::vector<IValue> args;
          for (int i : passed) {
            if (i == reduction.reduction) {
              args.emplace_back(reduction_enum(reduction.name(a)));
            } else {
              args.push_back(a[i]);
            }
          }
          if (broadcast) {
            std::vector<at::Tensor> both =
                at::broadcast_tensors({args[0].toTensor(), args[1].toTensor()});
            args[0] = both[0];
            args[1] = both[1];
          }
          return op->call(std::move(args), {});
        });
}

const char* kLegacy = "size_average=None, reduce=None, reduction='mean'";

void add_table_losses(OpRegistry& r) {
  const std::vector<Loss> losses = {
      {"l1_loss",
       cat("input, target, ", kLegacy),
       "l1_loss",
       {"input", "target", "reduction"},
       true},
      {"mse_loss",
       cat("input, target, ", kLegacy),
       "mse_loss",
       {"input", "target", "reduction"},
       true},
      {"smooth_l1_loss",
       cat("input, target, ", kLegacy, ", beta=1.0"),
       "smooth_l1_loss",
       {"input", "target", "reduction", "beta"},
       true},
      {"huber_loss",
       "input, target, reduction='mean', delta=1.0",
       "huber_loss",
       {"input", "target", "reduction", "delta"},
       true},
      {"soft_margin_loss",
       cat("input, target, ", kLegacy),
       "soft_margin_loss",
       {"input", "target", "reduction"}},
      {"multilabel_margin_loss",
       cat("input, target, ", kLegacy),
       "multilabel_margin_loss",
       {"input", "target", "reduction"}},
      {"hinge_embedding_loss",
       cat("input, target, margin=1.0, ", kLegacy),
       "hinge_embedding_loss",
       {"input", "target", "margin", "reduction"}},
      {"cosine_embedding_loss",
       cat("input1, input2, target, margin=0, ", kLegacy),
       "cosine_embedding_loss",
       {"input1", "input2", "target", "margin", "reduction"}},
      {"triplet_margin_loss",
       cat("anchor, positive, negative, margin=1.0, p=2, eps=1e-06, "
           "swap=False, ",
           kLegacy),
       "triplet_margin_loss",
       {"anchor", "positive", "negative", "margin", "p", "eps", "swap",
        "reduction"}},
      {"nll_loss",
       "input, target, weight=None, size_average=None, ignore_index=-100, "
       "reduce=None, reduction='mean'",
       "nll_loss_nd",
       {"input", "target", "weight", "reduction", "ignore_index"}},
      {"cross_entropy",
       "input, target, weight=None, size_average=None, ignore_index=-100, "
       "reduce=None, reduction='mean', label_smoothing=0.0",
       "cross_entropy_loss",
       {"input", "target", "weight", "reduction", "ignore_index",
        "label_smoothing"}},
      {"ctc_loss",
       "log_probs, targets, input_lengths, target_lengths, blank=0, "
       "reduction='mean', zero_infinity=False",
       "ctc_loss",
       {"log_probs", "targets", "input_lengths", "target_lengths", "blank",
        "reduction", "zero_infinity"}},
  };
  for (const Loss& loss : losses) add_loss(r, loss);
}

std::string size_text(const at::Tensor& t) {
  return cat("torch.Size([", join(t.sizes(), ", "), "])");
}

// poisson_nll_loss checks the reduction's name itself.
IValue poisson_nll_loss(OpArgs& a, const ReductionParams& reduction) {
  std::string name = reduction.name(a);
  if (name != "none" && name != "mean" && name != "sum") {
    throw FxError(cat(name, " is not valid"));
  }
  return at::poisson_nll_loss(a.tensor(0), a.tensor(1), a.to_bool(2),
                              a.to_bool(3), a.to_double(5),
                              reduction_enum(name));
}

// kl_div: 'batchmean' sums and divides by the batch size.
IValue kl_div(OpArgs& a, const ReductionParams& reduction) {
  std::string name = reduction.name(a);
  bool batchmean = name == "batchmean";
  const at::Tensor& input = a.tensor(0);
  at::Tensor out =
      at::kl_div(input, a.tensor(1), reduction_enum(batchmean ? "sum" : name),
                 a.to_bool(5));
  if (batchmean && input.dim() != 0) out = out / input.size(0);
  return out;
}

void check_same_size(const at::Tensor& input, const at::Tensor& target,
                     bool with_logits) {
  if (target.sizes() == input.sizes()) return;
  if (with_logits) {
    throw FxError(cat("Target size (", size_text(target),
                      ") must be the same as input size (", size_text(input),
                      ")"));
  }
  throw FxError(cat("Using a target size (", size_text(target),
                    ") that is different to the input size (", size_text(input),
                    ") is deprecated. Please ensure they have the same size."));
}

IValue binary_cross_entropy(OpArgs& a, const ReductionParams& reduction) {
  int64_t mode = reduction_enum(reduction.name(a));
  const at::Tensor& input = a.tensor(0);
  const at::Tensor& target = a.tensor(1);
  check_same_size(input, target, false);
  c10::optional<at::Tensor> weight = a.optional_tensor(2);
  if (weight) {
    weight = weight->expand(at::infer_size(target.sizes(), weight->sizes()));
  }
  return at::binary_cross_entropy(input, target, weight, mode);
}

IValue binary_cross_entropy_with_logits(OpArgs& a,
                                        const ReductionParams& reduction) {
  int64_t mode = reduction_enum(reduction.name(a));
  check_same_size(a.tensor(0), a.tensor(1), true);
  return at::binary_cross_entropy_with_logits(a.tensor(0), a.tensor(1),
                                              a.optional_tensor(2),
                                              a.optional_tensor(6), mode);
}

IValue margin_ranking_loss(OpArgs& a, const ReductionParams& reduction) {
  int64_t mode = reduction_enum(reduction.name(a));
  const at::Tensor& x1 = a.tensor(0);
  const at::Tensor& x2 = a.tensor(1);
  const at::Tensor& target = a.tensor(2);
  if (x1.dim() != x2.dim() || x1.dim() != target.dim()) {
    throw FxError(cat(
        "margin_ranking_loss : All input tensors should have same dimension "
        "but got sizes: input1: ",
        size_text(x1), ", input2: ", size_text(x2),
        ", target: ", size_text(target), " "));
  }
  return at::margin_ranking_loss(x1, x2, target, a.to_double(3), mode);
}

IValue multi_margin_loss(OpArgs& a, const ReductionParams& reduction) {
  int64_t mode = reduction_enum(reduction.name(a));
  at::Scalar p = a.scalar(2);
  if (p.toDouble() != 1 && p.toDouble() != 2) {
    throw FxError("only p == 1 and p == 2 supported");
  }
  c10::optional<at::Tensor> weight = a.optional_tensor(4);
  if (weight && weight->dim() != 1) {
    throw FxError("weight must be one-dimensional");
  }
  return at::multi_margin_loss(a.tensor(0), a.tensor(1), p, a.scalar(3), weight,
                               mode);
}

at::Tensor reduce(const at::Tensor& loss, const std::string& reduction) {
  if (reduction == "none") return loss;
  if (reduction == "mean") return loss.mean();
  if (reduction == "sum") return loss.sum();
  throw FxError(cat(reduction, " is not valid"));
}

IValue multilabel_soft_margin_loss(OpArgs& a,
                                   const ReductionParams& reduction) {
  std::string name = reduction.name(a);
  const at::Tensor& input = a.tensor(0);
  const at::Tensor& target = a.tensor(1);
  at::Tensor loss = -(target * at::log_sigmoid(input) +
                      (1 - target) * at::log_sigmoid(-input));
  if (c10::optional<at::Tensor> weight = a.optional_tensor(2)) {
    loss = loss * *weight;
  }
  int64_t class_dim = input.dim() - 1;
  loss = loss.sum(class_dim) / input.size(class_dim);
  return reduce(loss, name);
}

// triplet_margin_with_distance_loss(anchor, positive, negative, *,
// distance_function=None, margin=1.0, swap=False, reduction='mean'): a graph
// can only name the default distance, pairwise_distance.
IValue triplet_margin_with_distance_loss(OpArgs& a) {
  if (!a.is_none(3)) {
    throw FxError(
        "triplet_margin_with_distance_loss: a distance_function cannot be "
        "given in a graph (only the default, pairwise_distance)");
  }
  auto distance = [](const at::Tensor& x, const at::Tensor& y) {
    return at::pairwise_distance(x, y, 2.0, 1e-6, false);
  };
  at::Tensor positive = distance(a.tensor(0), a.tensor(1));
  at::Tensor negative = distance(a.tensor(0), a.tensor(2));
  if (a.to_bool(5)) {
    negative = at::min(negative, distance(a.tensor(1), a.tensor(2)));
  }
  at::Tensor out = at::clamp(positive - negative + a.scalar(4), 0.0);
  int64_t mode = reduction_enum(a.to_string(6));
  if (mode == 1) return out.mean();
  if (mode == 2) return out.sum();
  return out;
}

using LossKernel = IValue (*)(OpArgs&, const ReductionParams&);

void add_python_loss(OpRegistry& r, std::string_view name,
                     std::string_view signature, LossKernel kernel) {
  ReductionParams reduction(OpSchema::parse(signature));
  r.add(Opcode::kCallFunction, cat("torch.nn.functional.", name), signature,
        [kernel, reduction](OpArgs& a) { return kernel(a, reduction); });
}

}  // namespace

void register_loss_ops(OpRegistry& r) {
  add_table_losses(r);
  add_python_loss(r, "poisson_nll_loss",
                  "input, target, log_input=True, full=False, "
                  "size_average=None, eps=1e-08, reduce=None, "
                  "reduction='mean'",
                  poisson_nll_loss);
  add_python_loss(r, "kl_div",
                  cat("input, target, ", kLegacy, ", log_target=False"),
                  kl_div);
  add_python_loss(r, "binary_cross_entropy",
                  cat("input, target, weight=None, ", kLegacy),
                  binary_cross_entropy);
  add_python_loss(
      r, "binary_cross_entropy_with_logits",
      cat("input, target, weight=None, ", kLegacy, ", pos_weight=None"),
      binary_cross_entropy_with_logits);
  add_python_loss(r, "margin_ranking_loss",
                  cat("input1, input2, target, margin=0, ", kLegacy),
                  margin_ranking_loss);
  add_python_loss(r, "multi_margin_loss",
                  cat("input, target, p=1, margin=1.0, weight=None, ", kLegacy),
                  multi_margin_loss);
  add_python_loss(r, "multilabel_soft_margin_loss",
                  cat("input, target, weight=None, ", kLegacy),
                  multilabel_soft_margin_loss);
  r.add(Opcode::kCallFunction,
        "torch.nn.functional.triplet_margin_with_distance_loss",
        "anchor, positive, negative, *, distance_function=None, margin=1.0, "
        "swap=False, reduction='mean'",
        triplet_margin_with_distance_loss);
}

}  // namespace fx::ops
