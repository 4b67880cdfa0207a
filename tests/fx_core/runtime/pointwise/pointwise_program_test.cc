// parse_pointwise_program: the instruction text's syntax, one space between
// words (issue 41: `relu  t0` was accepted).
#include "fx_core/runtime/ops/pointwise_program.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fx_core/support/error.h"

namespace fx {
namespace {

// The FxError message parsing `program` gives, or "" when it parses.
std::string error_of(const std::vector<std::string>& program,
                     size_t num_inputs = 2) {
  try {
    parse_pointwise_program(program, {0.5}, num_inputs);
  } catch (const FxError& e) {
    return e.what();
  }
  return "";
}

TEST(PointwiseProgram, ParsesWellFormedInstructions) {
  PointwiseProgram p = parse_pointwise_program(
      {"sigmoid i1", "mul i0 t0", "clamp t1 s0 s0"}, {0.5}, 2);
  ASSERT_EQ(p.code.size(), 3u);
  EXPECT_EQ(p.code[1].op, PointwiseOp::kMul);
  EXPECT_EQ(p.code[1].operands[1].kind, PointwiseOperand::Kind::kTemp);
  EXPECT_EQ(p.code[1].operands[1].index, 0);
}

TEST(PointwiseProgram, RefusesTwoSpacesNamingTheColumn) {
  EXPECT_EQ(error_of({"relu i0", "relu  t0"}),
            "fx_inference.pointwise: instruction 1 'relu  t0': an empty word "
            "at column 5 (words are separated by one space)");
}

TEST(PointwiseProgram, RefusesLeadingTrailingAndOtherWhitespace) {
  EXPECT_EQ(error_of({" relu i0"}),
            "fx_inference.pointwise: instruction 0 ' relu i0': an empty word "
            "at column 0 (words are separated by one space)");
  EXPECT_EQ(error_of({"relu i0 "}),
            "fx_inference.pointwise: instruction 0 'relu i0 ': a trailing "
            "space at column 7");
  EXPECT_EQ(error_of({"relu\ti0"}),
            "fx_inference.pointwise: instruction 0 'relu\ti0': whitespace "
            "other than a space at column 4");
  EXPECT_EQ(error_of({""}),
            "fx_inference.pointwise: instruction 0 '': an empty word at "
            "column 0 (words are separated by one space)");
}

TEST(PointwiseProgram, StillRefusesBadOperands) {
  EXPECT_EQ(error_of({"relu t0"}),
            "fx_inference.pointwise: instruction 0 'relu t0': operand 't0' "
            "out of range (0 available)");
  EXPECT_EQ(error_of({"add i0"}),
            "fx_inference.pointwise: instruction 0 'add i0': 'add' takes 2");
}

}  // namespace
}  // namespace fx
