#include "plugins/optimization/gradual_type.h"

#include <cctype>
#include <string>
#include <utility>
#include <vector>

namespace fx_optimization {
namespace {

constexpr std::string_view kTensorType = "torch.fx.tensor_type.TensorType";
constexpr std::string_view kDynType = "torch.fx.tensor_type._DynType";

// A size's global in generated code: `_3` for 3.
std::optional<int64_t> size_global(std::string_view name) {
  if (name.size() < 2 || name[0] != '_' || name.size() > 19) {
    return std::nullopt;
  }
  int64_t value = 0;
  for (char c : name.substr(1)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

GradualType other(std::string_view code) {
  GradualType t;
  t.kind = GradualType::Kind::kOther;
  t.other = std::string(code);
  return t;
}

// TensorType[...]'s dimensions, or kOther when one is not a size or Dyn.
GradualType parse_tensor(std::string_view code) {
  std::string_view body = code.substr(kTensorType.size());
  if (body.size() < 2 || body.front() != '[' || body.back() != ']') {
    return other(code);
  }
  body = body.substr(1, body.size() - 2);
  std::vector<Dim> dims;
  while (!body.empty()) {
    const size_t comma = body.find(',');
    std::string_view item = body.substr(0, comma);
    if (item == kDynType) {
      dims.push_back(std::nullopt);
    } else if (auto size = size_global(item)) {
      dims.push_back(*size);
    } else {
      return other(code);
    }
    body = comma == std::string_view::npos ? std::string_view()
                                           : body.substr(comma + 1);
  }
  return GradualType::tensor(std::move(dims));
}

// The dimensions repr() shows in `text`: "TensorType[(1, Dyn)]",
// "TensorType[(3,)]", "TensorType[[1, Dyn]]", "TensorType[torch.Size([1,
// 2])]"; nullopt for any other text (Dyn, unification variables ~N,
// sympy expressions).
std::optional<std::vector<Dim>> dims_of_text(std::string_view text) {
  std::vector<Dim> dims;
  const bool read =
      read_tensor_dims(text, [&](std::string_view body, size_t* pos) {
        int64_t v = 0;
        if (body.substr(*pos, 3) == "Dyn") {
          dims.push_back(std::nullopt);
          *pos += 3;
        } else if (read_int(body, pos, &v)) {
          dims.push_back(v);
        } else {
          return false;
        }
        return true;
      });
  if (!read) return std::nullopt;
  return dims;
}

bool same_dims(const GradualType& a, const GradualType& b) {
  return a.dims == b.dims;
}

}  // namespace

bool read_int(std::string_view text, size_t* pos, int64_t* out) {
  size_t p = *pos;
  const bool negative = p < text.size() && text[p] == '-';
  if (negative) ++p;
  const size_t start = p;
  int64_t v = 0;
  while (p < text.size() && p - start < 18 &&
         std::isdigit(static_cast<unsigned char>(text[p]))) {
    v = v * 10 + (text[p++] - '0');
  }
  if (p == start) return false;
  *pos = p;
  *out = negative ? -v : v;
  return true;
}

GradualType GradualType::dyn() {
  GradualType t;
  t.kind = Kind::kDyn;
  return t;
}

GradualType GradualType::tensor(std::vector<Dim> dims, Form form) {
  GradualType t;
  t.kind = Kind::kTensor;
  t.dims = std::move(dims);
  t.form = form;
  return t;
}

bool operator==(const GradualType& a, const GradualType& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == GradualType::Kind::kTensor) return same_dims(a, b);
  if (a.kind == GradualType::Kind::kOther) return a.other == b.other;
  return true;
}

GradualType::Form form_of(std::string_view text) {
  if (text.substr(0, 12) == "TensorType[[") return GradualType::Form::kList;
  if (text.substr(0, 22) == "TensorType[torch.Size(") {
    return GradualType::Form::kSize;
  }
  return GradualType::Form::kTuple;
}

GradualType parse_gradual_type(std::string_view code, std::string_view text) {
  if (code.empty()) return GradualType{};
  if (code == kDynType) return GradualType::dyn();
  if (code == "int") {
    GradualType t;
    t.kind = GradualType::Kind::kInt;
    return t;
  }
  if (code.substr(0, kTensorType.size()) == kTensorType) {
    GradualType t = parse_tensor(code);
    if (!t.is_tensor()) return t;
    t.form = form_of(text);
    auto shown = dims_of_text(text);
    if (shown && shown->size() == t.dims.size()) t.dims = std::move(*shown);
    return t;
  }
  return other(code);
}

namespace {

template <typename SizeName>
std::string code_form_with(const GradualType& t, SizeName size_name) {
  switch (t.kind) {
    case GradualType::Kind::kNone:
      return "";
    case GradualType::Kind::kDyn:
      return std::string(kDynType);
    case GradualType::Kind::kInt:
      return "int";
    case GradualType::Kind::kOther:
      return t.other;
    case GradualType::Kind::kTensor:
      break;
  }
  std::string out(kTensorType);
  out += '[';
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (i) out += ',';
    out += t.dims[i] ? size_name(*t.dims[i]) : std::string(kDynType);
  }
  out += ']';
  return out;
}

}  // namespace

std::string code_form(const GradualType& t) {
  return code_form_with(
      t, [](int64_t size) { return "_" + std::to_string(size); });
}

std::string code_form(const GradualType& t, GlobalNames& names) {
  return code_form_with(
      t, [&names](int64_t size) { return names.size_name(size); });
}

std::string repr(const Dim& d) { return d ? std::to_string(*d) : "Dyn"; }

std::string repr(const GradualType& t) {
  switch (t.kind) {
    case GradualType::Kind::kNone:
      return "None";
    case GradualType::Kind::kDyn:
      return "Dyn";
    case GradualType::Kind::kInt:
      return "<class 'int'>";
    case GradualType::Kind::kOther:
      return t.other;
    case GradualType::Kind::kTensor:
      break;
  }
  using Form = GradualType::Form;
  std::string out = "TensorType[";
  if (t.form == Form::kSize) out += "torch.Size(";
  out += t.form == Form::kTuple ? '(' : '[';
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (i) out += ", ";
    out += repr(t.dims[i]);
  }
  if (t.form == Form::kTuple && t.dims.size() == 1) out += ',';
  out += t.form == Form::kTuple ? ")" : "]";
  if (t.form == Form::kSize) out += ")";
  return out + "]";
}

bool is_consistent(const Dim& a, const Dim& b) { return !a || !b || a == b; }

bool is_consistent(const GradualType& a, const GradualType& b) {
  if (a == b || a.is_dyn() || b.is_dyn()) return true;
  if (!a.is_tensor() || !b.is_tensor() || a.rank() != b.rank()) return false;
  for (size_t i = 0; i < a.rank(); ++i) {
    if (!is_consistent(a.dims[i], b.dims[i])) return false;
  }
  return true;
}

bool is_more_precise(const Dim& a, const Dim& b) { return a == b || !b; }

bool is_more_precise(const GradualType& a, const GradualType& b) {
  if (a == b || b.is_dyn()) return true;
  if (!a.is_tensor() || !b.is_tensor() || a.rank() != b.rank()) return false;
  for (size_t i = 0; i < a.rank(); ++i) {
    if (!is_more_precise(a.dims[i], b.dims[i])) return false;
  }
  return true;
}

}  // namespace fx_optimization
