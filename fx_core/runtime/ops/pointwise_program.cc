#include "fx_core/runtime/ops/pointwise_program.h"

#include <cctype>
#include <string_view>
#include <vector>

#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

struct OpInfo {
  PointwiseOp op;
  const char* name;
  int arity;
};

constexpr OpInfo kOps[] = {
    {PointwiseOp::kAdd, "add", 2},
    {PointwiseOp::kSub, "sub", 2},
    {PointwiseOp::kMul, "mul", 2},
    {PointwiseOp::kDiv, "div", 2},
    {PointwiseOp::kNeg, "neg", 1},
    {PointwiseOp::kRelu, "relu", 1},
    {PointwiseOp::kSigmoid, "sigmoid", 1},
    {PointwiseOp::kTanh, "tanh", 1},
    {PointwiseOp::kSilu, "silu", 1},
    {PointwiseOp::kHardswish, "hardswish", 1},
    {PointwiseOp::kHardsigmoid, "hardsigmoid", 1},
    {PointwiseOp::kGelu, "gelu", 1},
    {PointwiseOp::kClamp, "clamp", 3},
    {PointwiseOp::kClampMin, "clamp_min", 2},
    {PointwiseOp::kClampMax, "clamp_max", 2},
};

bool is_clamp(PointwiseOp op) {
  return op == PointwiseOp::kClamp || op == PointwiseOp::kClampMin ||
         op == PointwiseOp::kClampMax;
}

// "iK", "tK" or "sK" with K in range; throws `fail(why)` otherwise.
template <typename Fail>
PointwiseOperand parse_operand(const std::string& word, size_t here,
                               size_t num_inputs, size_t num_scalars,
                               Fail&& fail) {
  if (word.size() < 2) fail(cat("bad operand '", word, "'"));
  PointwiseOperand o;
  size_t limit = 0;
  switch (word[0]) {
    case 'i':
      o.kind = PointwiseOperand::Kind::kInput;
      limit = num_inputs;
      break;
    case 't':
      o.kind = PointwiseOperand::Kind::kTemp;
      limit = here;
      break;
    case 's':
      o.kind = PointwiseOperand::Kind::kScalar;
      limit = num_scalars;
      break;
    default:
      fail(cat("bad operand '", word, "' (expected iK, tK or sK)"));
  }
  size_t value = 0;
  for (size_t i = 1; i < word.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(word[i])) || value > 1000000) {
      fail(cat("bad operand '", word, "'"));
    }
    value = value * 10 + static_cast<size_t>(word[i] - '0');
  }
  if (value >= limit) {
    fail(cat("operand '", word, "' out of range (", limit, " available)"));
  }
  o.index = static_cast<int32_t>(value);
  return o;
}

// The words of "OP A [B [C]]": separated by exactly one space, with none
// before the first or after the last. Throws `fail(why)` naming the column
// (0-based) of a stray separator.
template <typename Fail>
std::vector<std::string> split_words(std::string_view text, Fail&& fail) {
  std::vector<std::string> words;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ' ') {
      if (std::isspace(static_cast<unsigned char>(text[i]))) {
        fail(cat("whitespace other than a space at column ", i));
      }
      continue;
    }
    if (i == start) {
      fail(i == text.size() && !text.empty()
               ? cat("a trailing space at column ", i - 1)
               : cat("an empty word at column ", i,
                     " (words are separated by one space)"));
    }
    words.emplace_back(text.substr(start, i - start));
    start = i + 1;
  }
  return words;
}

}  // namespace

const char* pointwise_op_name(PointwiseOp op) {
  for (const OpInfo& info : kOps) {
    if (info.op == op) return info.name;
  }
  return "?";
}

PointwiseProgram parse_pointwise_program(const std::vector<std::string>& text,
                                         std::vector<double> scalars,
                                         size_t num_inputs) {
  PointwiseProgram p;
  p.scalars = std::move(scalars);
  p.num_inputs = num_inputs;
  if (text.empty()) {
    throw FxError("fx_inference.pointwise: the program is empty");
  }
  for (size_t k = 0; k < text.size(); ++k) {
    auto fail = [&](const std::string& why) {
      throw FxError(cat("fx_inference.pointwise: instruction ", k, " '",
                        text[k], "': ", why));
    };
    std::vector<std::string> words = split_words(text[k], fail);
    const std::string& name = words[0];
    const OpInfo* info = nullptr;
    for (const OpInfo& i : kOps) {
      if (name == i.name) info = &i;
    }
    if (info == nullptr) fail(cat("unknown op '", name, "'"));
    PointwiseInstr instr;
    instr.op = info->op;
    instr.arity = info->arity;
    int n = 0;
    for (size_t w = 1; w < words.size(); ++w) {
      const std::string& word = words[w];
      if (n == info->arity) fail(cat("'", name, "' takes ", info->arity));
      instr.operands[n++] =
          parse_operand(word, k, num_inputs, p.scalars.size(), fail);
    }
    if (n != info->arity) fail(cat("'", name, "' takes ", info->arity));
    auto scalar = [&](int i) {
      return instr.operands[i].kind == PointwiseOperand::Kind::kScalar;
    };
    if (scalar(0) && (info->arity != 2 || is_clamp(instr.op) || scalar(1))) {
      fail("needs a tensor operand");
    }
    if (instr.op == PointwiseOp::kDiv && scalar(0)) {
      fail("a scalar divided by a tensor is not supported");
    }
    for (int i = 1; i < info->arity; ++i) {
      if (is_clamp(instr.op) && !scalar(i)) fail("clamp bounds are scalars");
    }
    p.code.push_back(instr);
  }
  return p;
}

}  // namespace fx
