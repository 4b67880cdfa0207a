// fx::AtenOp and fx::aten_target: targets torch.fx records, bound to ATen's
// schemas, against Python torch making the same calls (aten_cases.py, run at
// test time; skipped without python3-torch).
#include "fx_core/runtime/aten/aten_op.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/aten/aten_target.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "tests/testing/python.h"

namespace fx {
namespace {

using Kwargs = AtenOp::Kwargs;

c10::IValue call(Opcode op, const std::string& target,
                 std::vector<c10::IValue> args, const Kwargs& kwargs = {}) {
  std::optional<AtenTarget> t = aten_target(op, target);
  if (!t) throw FxError("not an ATen target: " + target);
  std::shared_ptr<const AtenOp> aten = AtenOp::find(*t);
  if (!aten) throw FxError("no ATen operator for " + target);
  return aten->call(std::move(args), kwargs);
}

c10::IValue fn(const std::string& target, std::vector<c10::IValue> args,
               const Kwargs& kwargs = {}) {
  return call(Opcode::kCallFunction, target, std::move(args), kwargs);
}

c10::IValue method(const std::string& target, std::vector<c10::IValue> args,
                   const Kwargs& kwargs = {}) {
  return call(Opcode::kCallMethod, target, std::move(args), kwargs);
}

c10::IValue dtype_value(c10::ScalarType t) { return static_cast<int64_t>(t); }

using Inputs = std::map<std::string, at::Tensor>;
using Case = std::function<c10::IValue(const Inputs&)>;

// The same calls as aten_cases.py, by name.
std::map<std::string, Case> cases() {
  std::map<std::string, Case> c;
  c["logsumexp"] = [](const Inputs& i) {
    return fn("torch.logsumexp", {i.at("x"), 1});
  };
  c["std"] = [](const Inputs& i) { return method("std", {i.at("x")}); };
  c["std_dim"] = [](const Inputs& i) { return method("std", {i.at("x"), 0}); };
  c["std_dim_keepdim"] = [](const Inputs& i) {
    return method("std", {i.at("x")}, {{"dim", 1}, {"keepdim", true}});
  };
  c["std_unbiased"] = [](const Inputs& i) {
    return method("std", {i.at("x"), 1}, {{"unbiased", false}});
  };
  c["std_correction"] = [](const Inputs& i) {
    return method("std", {i.at("x")}, {{"dim", 1}, {"correction", 0}});
  };
  c["gelu"] = [](const Inputs& i) {
    return fn("torch._C._nn.gelu", {i.at("x")});
  };
  c["gelu_tanh"] = [](const Inputs& i) {
    return fn("torch._C._nn.gelu", {i.at("x")},
              {{"approximate", std::string("tanh")}});
  };
  c["linalg_det"] = [](const Inputs& i) {
    return fn("torch._C._linalg.linalg_det", {i.at("m")});
  };
  c["special_erf"] = [](const Inputs& i) {
    return fn("torch._C._special.special_erf", {i.at("x")});
  };
  c["fft_rfft"] = [](const Inputs& i) {
    return fn("torch._C._fft.fft_rfft", {i.at("x")});
  };
  c["aten_add_Tensor"] = [](const Inputs& i) {
    return fn("torch.ops.aten.add.Tensor", {i.at("x"), i.at("y")});
  };
  c["aten_add_packet"] = [](const Inputs& i) {
    return fn("torch.ops.aten.add", {i.at("x"), 2});
  };
  c["add_alpha"] = [](const Inputs& i) {
    return fn("torch.add", {i.at("x"), 2}, {{"alpha", 3}});
  };
  c["mul_number"] = [](const Inputs& i) {
    return fn("torch.mul", {i.at("x"), 2.5});
  };
  c["rsub"] = [](const Inputs& i) { return fn("torch.rsub", {i.at("x"), 1}); };
  c["pow_number_base"] = [](const Inputs& i) {
    return fn("torch.pow", {2, i.at("x")});
  };
  c["view_varargs"] = [](const Inputs& i) {
    return method("view", {i.at("x"), 2, 6});
  };
  c["view_tuple"] = [](const Inputs& i) {
    return method("view", {i.at("x"), make_tuple({4, 3})});
  };
  c["permute"] = [](const Inputs& i) {
    return method("permute", {i.at("x"), 1, 0});
  };
  c["zeros_dtype"] = [](const Inputs&) {
    return fn("torch.zeros", {make_tuple({2, 3})},
              {{"dtype", dtype_value(at::kDouble)}});
  };
  c["zeros_varargs"] = [](const Inputs&) { return fn("torch.zeros", {2, 3}); };
  c["max_dim"] = [](const Inputs& i) { return method("max", {i.at("x"), 1}); };
  c["max"] = [](const Inputs& i) { return fn("torch.max", {i.at("x")}); };
  c["topk"] = [](const Inputs& i) { return fn("torch.topk", {i.at("x"), 2}); };
  c["add_"] = [](const Inputs& i) {
    return method("add_", {method("clone", {i.at("x")}), 1});
  };
  c["where"] = [](const Inputs& i) {
    return fn("torch.where", {i.at("cond"), i.at("x"), i.at("y")});
  };
  c["cat"] = [](const Inputs& i) {
    return fn("torch.cat", {make_list({i.at("x"), i.at("y")}), 1});
  };
  c["size"] = [](const Inputs& i) { return method("size", {i.at("x"), 1}); };
  c["clamp_min"] = [](const Inputs& i) {
    return fn("torch.clamp", {i.at("x")}, {{"min", 0.1}});
  };
  c["sum_dtype"] = [](const Inputs& i) {
    return fn("torch.sum", {i.at("x")}, {{"dtype", dtype_value(at::kDouble)}});
  };
  c["mean_dims"] = [](const Inputs& i) {
    return method("mean", {i.at("x"), make_tuple({0, 1})}, {{"keepdim", true}});
  };
  // Only `self` given: overloads whose required keyword-only arguments are
  // missing (diagonal.Dimname, sort.stable) are not candidates.
  c["diagonal"] = [](const Inputs& i) {
    return fn("torch.diagonal", {i.at("x")});
  };
  c["sort"] = [](const Inputs& i) { return fn("torch.sort", {i.at("x")}); };
  c["argsort"] = [](const Inputs& i) {
    return fn("torch.argsort", {i.at("x")});
  };
  c["count_nonzero"] = [](const Inputs& i) {
    return fn("torch.count_nonzero", {i.at("x")});
  };
  // Tensor[] results are tuples, as in Python.
  c["split"] = [](const Inputs& i) {
    return fn("torch.split", {i.at("x"), 2, 1});
  };
  // Factories take Python's requires_grad= beside the schema.
  c["eye_requires_grad"] = [](const Inputs&) {
    c10::IValue t =
        fn("torch.eye", {3, 2},
           {{"device", std::string("cpu")}, {"requires_grad", true}});
    EXPECT_TRUE(t.toTensor().requires_grad());
    return c10::IValue(t.toTensor().detach());
  };
  c["unbind"] = [](const Inputs& i) {
    return method("unbind", {i.at("x"), 1});
  };
  return c;
}

void expect_same(const c10::IValue& got, const c10::IValue& want,
                 const std::string& where) {
  if (want.isTensor()) {
    ASSERT_TRUE(got.isTensor()) << where << ": got " << value_type_name(got);
    const at::Tensor& g = got.toTensor();
    const at::Tensor& w = want.toTensor();
    EXPECT_EQ(g.scalar_type(), w.scalar_type()) << where;
    EXPECT_EQ(g.sizes(), w.sizes()) << where;
    EXPECT_TRUE(at::allclose(g, w, 1e-4, 1e-5)) << where;
  } else if (is_sequence(want)) {
    ASSERT_TRUE(is_sequence(got)) << where << ": got " << value_type_name(got);
    EXPECT_EQ(got.isTuple(), want.isTuple()) << where << ": tuple or list";
    std::vector<c10::IValue> g = sequence_elements(got);
    std::vector<c10::IValue> w = sequence_elements(want);
    ASSERT_EQ(g.size(), w.size()) << where;
    for (size_t k = 0; k < w.size(); ++k) {
      expect_same(g[k], w[k], where + "[" + std::to_string(k) + "]");
    }
  } else {
    EXPECT_EQ(got, want) << where;
  }
}

TEST(AtenOp, CallsMatchPythonTorch) {
  if (!testing::have_python_torch()) GTEST_SKIP() << "no python3-torch";
  std::string out = std::string(std::getenv("TEST_TMPDIR")) + "/aten.pt";
  testing::run_python("tests/fx_core/runtime/aten/aten_cases.py", {out});
  absl::StatusOr<c10::IValue> golden = read_value_file(out);
  ASSERT_TRUE(golden.ok()) << golden.status();
  c10::Dict<c10::IValue, c10::IValue> dict = golden->toGenericDict();
  Inputs inputs;
  for (const auto& e : dict.at("inputs").toGenericDict()) {
    inputs[e.key().toStringRef()] = e.value().toTensor();
  }
  std::map<std::string, Case> calls = cases();
  size_t checked = 0;
  for (const auto& e : dict.at("cases").toGenericDict()) {
    const std::string& name = e.key().toStringRef();
    auto it = calls.find(name);
    ASSERT_NE(it, calls.end()) << "no C++ call for case " << name;
    expect_same(it->second(inputs), e.value(), name);
    ++checked;
  }
  EXPECT_EQ(checked, calls.size());
}

TEST(AtenTarget, SpellingsTorchFxRecords) {
  auto t = aten_target(Opcode::kCallFunction, "torch.ops.aten.std.correction");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->name, "aten::std");
  EXPECT_TRUE(t->exact_overload);
  EXPECT_EQ(t->overload, "correction");
  t = aten_target(Opcode::kCallFunction, "torch.ops.aten.relu.default");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->overload, "");
  t = aten_target(Opcode::kCallFunction, "torch._C._linalg.linalg_det");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->name, "aten::linalg_det");
  t = aten_target(Opcode::kCallMethod, "add_");
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->method);
  EXPECT_EQ(t->name, "aten::add_");
}

TEST(AtenTarget, PythonFunctionsAreNotAtenTargets) {
  EXPECT_FALSE(aten_target(Opcode::kCallFunction, "torch.nn.functional.relu"));
  EXPECT_FALSE(aten_target(Opcode::kCallFunction, "operator.add"));
  EXPECT_FALSE(aten_target(Opcode::kCallFunction, "torch._assert"));
  EXPECT_FALSE(aten_target(Opcode::kCallMethod, "__getitem__"));
  EXPECT_FALSE(aten_target(Opcode::kCallModule, "linear"));
}

TEST(AtenOp, AnUnknownOperatorIsNotFound) {
  auto t = aten_target(Opcode::kCallFunction, "torch.not_an_operator");
  ASSERT_TRUE(t);
  EXPECT_EQ(AtenOp::find(*t), nullptr);
  t = aten_target(Opcode::kCallFunction, "torch.ops.aten.std.no_such");
  ASSERT_TRUE(t);
  EXPECT_EQ(AtenOp::find(*t), nullptr);
}

TEST(AtenOp, OutVariantsAndTorchScriptOnlyOverloadsAreDropped) {
  auto t = aten_target(Opcode::kCallFunction, "torch.add");
  std::shared_ptr<const AtenOp> add = AtenOp::find(*t);
  ASSERT_NE(add, nullptr);
  for (const AtenOp::Overload& ov : add->overloads()) {
    EXPECT_NE(ov.overload_name, "out");
    EXPECT_NE(ov.overload_name, "t");  // add.t(t[] a, t[] b): list concat
  }
  // Python's order: the Tensor overload before the Scalar one.
  ASSERT_GE(add->overloads().size(), 2u);
  EXPECT_EQ(add->overloads()[0].overload_name, "Tensor");
}

TEST(AtenOp, ACallNoOverloadAcceptsSaysWhatWasGivenAndExpected) {
  at::Tensor x = at::ones({2, 2});
  try {
    fn("torch.std", {x}, {{"foo", 1}});
    FAIL() << "no error";
  } catch (const FxError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("std() received an invalid combination of arguments "
                        "- got (Tensor, foo=int), but expected one of:"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find(" * (Tensor input, bool unbiased)"), std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace fx
