// The types of torch 1.13's gradual type checker (torch.fx.tensor_type):
// Dyn, TensorType over dimensions that are integers or Dyn, int, and any
// other annotation kept as the text it is. A node's `type` holds the form
// torch.fx's generated code spells it in: TensorType((1, Dyn)) is
// "torch.fx.tensor_type.TensorType[_1,torch.fx.tensor_type._DynType]" (each
// size a global named after it, Dyn by its class), Dyn alone
// "torch.fx.tensor_type._DynType".
//
// The contract: parse_gradual_type(code_form(t), repr(t)) == t, form
// included: TensorType's tuple, list or torch.Size form, which torch's repr
// shows ("TensorType[(1, Dyn)]", "TensorType[[2, Dyn]]") and the code form
// does not, is read from the repr; repr() prints it as torch does. Where
// the repr shows the sizes, they are read from it too: the code's globals
// are names, not always the sizes they look like (-1 is `_1`).
#ifndef PLUGINS_OPTIMIZATION_GRADUAL_TYPE_H_
#define PLUGINS_OPTIMIZATION_GRADUAL_TYPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/optimization/global_names.h"

namespace fx_optimization {

// One dimension: a size, or Dyn (nullopt).
using Dim = std::optional<int64_t>;

struct GradualType {
  enum class Kind {
    kNone,    // no type (None in torch)
    kDyn,     // Dyn
    kTensor,  // TensorType[dims]
    kInt,     // int
    kOther,   // any other annotation (torch.Tensor, ...)
  };
  // What a TensorType was made from, which its repr shows: a tuple
  // "TensorType[(1, Dyn)]", a list "TensorType[[1, Dyn]]", a tensor's
  // shape "TensorType[torch.Size([1, 2])]".
  enum class Form { kTuple, kList, kSize };
  Kind kind = Kind::kNone;
  std::vector<Dim> dims;     // kTensor
  Form form = Form::kTuple;  // kTensor
  std::string other;         // kOther: the code form

  static GradualType dyn();
  static GradualType tensor(std::vector<Dim> dims, Form form = Form::kTuple);
  bool is_dyn() const { return kind == Kind::kDyn; }
  bool is_tensor() const { return kind == Kind::kTensor; }
  size_t rank() const { return dims.size(); }
};

// TensorType's __eq__ (dimensions compared, tuple or list alike).
bool operator==(const GradualType& a, const GradualType& b);
inline bool operator!=(const GradualType& a, const GradualType& b) {
  return !(a == b);
}

// Reads an int of at most 18 digits, after an optional '-', at
// text[*pos..] into *out and moves *pos past it; false when there is none.
bool read_int(std::string_view text, size_t* pos, int64_t* out);

// Reads the dimensions of a TensorType's graph text in each form torch
// prints: "TensorType[(1, Dyn)]" (and "(3,)" for one), "TensorType[[1,
// Dyn]]", "TensorType[torch.Size([1, 2])]". For each dimension calls
// `read_dim(body, &pos)`, which reads one at body[pos..] and moves pos past
// it, or returns false to refuse the text. False when the text is none of
// these forms or a dimension is refused.
template <typename ReadDim>
bool read_tensor_dims(std::string_view text, ReadDim&& read_dim) {
  constexpr std::string_view kOpenings[] = {"TensorType[(", "TensorType[[",
                                            "TensorType[torch.Size(["};
  constexpr std::string_view kClosings[] = {")]", "]]", "])]"};
  for (size_t k = 0; k < 3; ++k) {
    const std::string_view open = kOpenings[k], close = kClosings[k];
    if (text.size() < open.size() + close.size() ||
        text.substr(0, open.size()) != open ||
        text.substr(text.size() - close.size()) != close) {
      continue;
    }
    const std::string_view body =
        text.substr(open.size(), text.size() - open.size() - close.size());
    size_t pos = 0, count = 0;
    while (pos < body.size()) {
      if (!read_dim(body, &pos)) return false;
      ++count;
      if (pos == body.size()) break;
      if (body.substr(pos, 2) == ", ") {
        pos += 2;
      } else if (k == 0 && count == 1 && body.substr(pos) == ",") {
        pos += 1;  // a tuple of one: (3,)
      } else {
        return false;
      }
    }
    return true;
  }
  return false;
}

// The type a node's code-form `type` stands for ("" is kNone), its form
// read from the node's graph text `text` (repr(t); "" for a tuple).
GradualType parse_gradual_type(std::string_view code,
                               std::string_view text = "");
// The code form of `t` ("" for kNone), each size spelled `_N`.
std::string code_form(const GradualType& t);
// The code form of `t` with each size's global named by `names` (torch.fx's
// code generation names -1 `_1`, and 1 met after it `_2`).
std::string code_form(const GradualType& t, GlobalNames& names);
// repr(t) as torch prints it in messages and the graph text.
std::string repr(const GradualType& t);
std::string repr(const Dim& d);

// torch.fx.tensor_type.is_consistent and is_more_precise, on types and on
// dimensions.
bool is_consistent(const Dim& a, const Dim& b);
bool is_consistent(const GradualType& a, const GradualType& b);
bool is_more_precise(const Dim& a, const Dim& b);
bool is_more_precise(const GradualType& a, const GradualType& b);

}  // namespace fx_optimization

#endif  // PLUGINS_OPTIMIZATION_GRADUAL_TYPE_H_
