// What cannot be traced raises torch.fx's errors, pointing at the user's
// code where possible.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>

#include "fx_core/tracer/functions.h"
#include "fx_core/tracer/tracer.h"
#include "tests/testing/graph_helpers.h"

namespace fx {
namespace {

using testing::error_of;

// torch.fx 1.13's messages (torch/fx/proxy.py, TracerBase.to_bool/iter and
// Proxy.__len__).
constexpr const char* kControlFlow =
    "symbolically traced variables cannot be used as inputs to control flow";
constexpr const char* kIteration =
    "Proxy object cannot be iterated. This can be attempted when the Proxy is "
    "used in a loop or as a *args or **kwargs function argument. See the "
    "torch.fx docs on pytorch.org for a more detailed explanation of what "
    "types of control flow can be traced, and check out the Proxy docstring "
    "for help troubleshooting Proxy iteration errors";
constexpr const char* kLen =
    "'len' is not supported in symbolic tracing by default. If you want this "
    "call to be recorded, please call torch.fx.wrap('len') at module scope";

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

template <typename Fn>
std::string trace_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const TraceError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a TraceError: ") + e.what();
  }
  return "";
}

struct DataDependentIf : fx::Module<DataDependentIf> {
  Value forward(Value x) {
    if (x.sum() > 0) return x.relu();
    return x;
  }
};

TEST(TraceErrors, ConditionOnTracedValue) {
  DataDependentIf m;
  std::string e = trace_error_of([&] { symbolic_trace(m); });
  EXPECT_TRUE(starts_with(e, kControlFlow)) << e;
  EXPECT_NE(e.find("%gt"), std::string::npos) << e;  // the condition's node
  EXPECT_NE(e.find("DataDependentIf.forward"), std::string::npos) << e;
}

TEST(TraceErrors, ConditionEagerlyIsFine) {
  DataDependentIf m;
  at::Tensor x = at::ones({3});
  EXPECT_TRUE(at::equal(m.forward(x).tensor(), x));
}

constexpr int kLoopLine = __LINE__ + 4;
struct LoopOverTracedValue : fx::Module<LoopOverTracedValue> {
  Value forward(Value x) {
    Value out = x;
    for (Value row : x) out = out + row;
    return out;
  }
};

TEST(TraceErrors, IteratingTracedValueNamesTheLoop) {
  LoopOverTracedValue m;
  std::string e = trace_error_of([&] { symbolic_trace(m); });
  EXPECT_TRUE(starts_with(e, kIteration)) << e;
  EXPECT_NE(e.find("errors_test.cc:" + std::to_string(kLoopLine)),
            std::string::npos)
      << e;
}

struct UsesLen : fx::Module<UsesLen> {
  Value forward(Value x) { return x / builtins::len(x); }
};

TEST(TraceErrors, LenWithoutWrap) {
  UsesLen m;
  std::string e;
  try {
    symbolic_trace(m);
  } catch (const FxError& err) {
    e = err.what();
  }
  EXPECT_EQ(e, kLen);
  wrap("builtins.len");
  auto gm = symbolic_trace(m);
  EXPECT_EQ(
      gm->graph().find_nodes(Opcode::kCallFunction, "builtins.len").size(), 1u);
}

struct BoolParameter : fx::Module<BoolParameter> {
  BoolParameter() : fx::Module<BoolParameter>("x, flag") {}
  Value forward(Value x, bool flag) { return flag ? x : -x; }
};

TEST(TraceErrors, CppParameterWithoutConcreteArgs) {
  BoolParameter m;
  std::string e = trace_error_of([&] { symbolic_trace(m); });
  EXPECT_TRUE(starts_with(e, kControlFlow)) << e;
  EXPECT_NE(e.find("'flag'"), std::string::npos) << e;
  EXPECT_NE(e.find("concrete_args"), std::string::npos) << e;
}

struct UsesLinear : fx::Module<UsesLinear> {
  UsesLinear() { linear = register_module("linear", torch::nn::Linear(2, 2)); }
  Value forward(Value x) { return linear(x); }
  Submodule<torch::nn::Linear> linear;
};

struct NothingIsALeaf : Tracer {
  bool is_leaf_module(const torch::nn::Module&,
                      std::string_view) const override {
    return false;
  }
};

TEST(TraceErrors, TracingThroughLibTorchModule) {
  UsesLinear m;
  NothingIsALeaf tracer;
  std::string e = trace_error_of([&] { tracer.trace(m); });
  EXPECT_TRUE(starts_with(e, "cannot trace through module torch::nn::Linear"))
      << e;
}

struct CallsForeignModule : fx::Module<CallsForeignModule> {
  Value forward(Value x) { return foreign(x); }
  Submodule<torch::nn::Linear> foreign{torch::nn::Linear(2, 2)};
};

TEST(TraceErrors, ModuleNotInstalledAsSubmodule) {
  CallsForeignModule m;
  EXPECT_TRUE(starts_with(error_of([&] { symbolic_trace(m); }),
                          "module is not installed as a submodule"));
}

struct TensorOfProxy : fx::Module<TensorOfProxy> {
  Value forward(Value x) { return at::relu(x.tensor()); }
};

TEST(TraceErrors, RealTensorOfTracedValue) {
  TensorOfProxy m;
  std::string e = trace_error_of([&] { symbolic_trace(m); });
  EXPECT_TRUE(starts_with(e,
                          "a traced value (x) cannot be used as a real "
                          "at::Tensor"))
      << e;
}

struct UsesSqrt : fx::Module<UsesSqrt> {
  Value forward(Value x) { return x / math::sqrt(x.size(0)); }
};

TEST(TraceErrors, MathWithoutAutowrap) {
  UsesSqrt m;
  Tracer tracer;
  tracer.autowrap_modules.clear();
  std::string e = trace_error_of([&] { tracer.trace(m); });
  EXPECT_TRUE(starts_with(e, "math.sqrt(): must be real number, not Proxy"))
      << e;
}

TEST(TraceErrors, UnknownConcreteArg) {
  UsesSqrt m;
  EXPECT_EQ(error_of([&] {
              symbolic_trace(m, {{"y", 1}});
            }),
            "concrete_args: " + m.name() + ".forward has no parameter 'y'");
}

TEST(TraceErrors, UnnamedParametersOfMultiInputForward) {
  struct TwoInputs : fx::Module<TwoInputs> {
    Value forward(Value x, Value y) { return x + y; }
  };
  TwoInputs m;
  EXPECT_NE(error_of([&] {
              symbolic_trace(m);
            }).find("name them in the module's signature"),
            std::string::npos);
}

}  // namespace
}  // namespace fx
