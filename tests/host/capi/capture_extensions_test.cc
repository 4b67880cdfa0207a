// The C ABI's capture extensions (version 4: RegisterDecomposition,
// RegisterLeafOp) called as plugins call them, through the C++ wrapper, from
// in-process plugins: errors name the plugin and the operator with the
// status code the header promises, a plugin registers all or nothing, a
// plugin handed an older table gets FX_UNIMPLEMENTED, and a replacement
// failing during a capture fails it with a clear error and leaves the
// thread able to capture again.
#include "fx_core/capture/capture_extensions.h"

#include <ATen/ATen.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fx/plugin_api.hpp"
#include "fx_core/capture/make_fx.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/support/error.h"
#include "host/capi/extensions.h"
#include "tests/testing/status_matchers.h"

namespace fx {
namespace {

using Tensors = std::vector<at::Tensor>;

// The code of the last failed wrapper call in a registration.
FxStatusCode last_code = FX_OK;

// Runs `body`, noting the code of the fxp::Error it throws (rethrown).
template <typename Body>
void noting_code(Body body) {
  last_code = FX_OK;
  try {
    body();
  } catch (const fxp::Error& e) {
    last_code = e.code();
    throw;
  }
}

// A replacement graph of `placeholders` inputs returning `target`(inputs).
fxp::OwnedGraph replacement(int placeholders, const char* target) {
  fxp::OwnedGraph g;
  std::vector<fxp::Arg> args;
  for (int i = 0; i < placeholders; ++i) {
    args.push_back(g.placeholder(("x" + std::to_string(i)).c_str()));
  }
  g.output(fxp::call(g.view(), target, args));
  return g;
}

// Loads the in-process plugin `name` whose registration is Fn, handed the
// table of `api_version`; the loader's error message or "".
template <fxp::RegisterFn Fn>
std::string load(const char* name, uint32_t api_version = FX_API_VERSION) {
  static FxPluginInfo info{};
  info.name = name;
  info.version = "1";
  info.api_version = api_version;
  info.min_api_version = 1;
  info.register_extensions = &fxp::registration<Fn>;
  return testing::error_of(host::register_extensions(info, "built in", "", {}));
}

void unknown_op(fxp::Registrar& r) {
  noting_code([&] {
    r.decomposition("aten::no_such_op",
                    replacement(1, "torch.ops.aten.relu.default"));
  });
}
void unknown_leaf(fxp::Registrar& r) {
  noting_code([&] { r.leaf_op("aten::no_such_leaf"); });
}

TEST(CaptureExtensions, AnUnknownOperatorIsNotFoundNamingPluginAndOperator) {
  EXPECT_EQ(load<unknown_op>("unknown_op"),
            "plugin 'unknown_op' (built in) failed to register its "
            "extensions: RegisterDecomposition: plugin 'unknown_op' registers "
            "a decomposition of 'aten::no_such_op': no ATen operator "
            "aten::no_such_op (spell it aten::NAME or aten::NAME.OVERLOAD)");
  EXPECT_EQ(last_code, FX_NOT_FOUND);
  EXPECT_EQ(load<unknown_leaf>("unknown_leaf"),
            "plugin 'unknown_leaf' (built in) failed to register its "
            "extensions: RegisterLeafOp: plugin 'unknown_leaf' registers the "
            "leaf operator 'aten::no_such_leaf': no ATen operator "
            "aten::no_such_leaf (spell it aten::NAME or aten::NAME.OVERLOAD)");
  EXPECT_EQ(last_code, FX_NOT_FOUND);
}

void two_placeholders(fxp::Registrar& r) {
  noting_code([&] {
    r.decomposition("aten::frac", replacement(2, "torch.ops.aten.add.Tensor"));
  });
}
void unknown_target(fxp::Registrar& r) {
  noting_code([&] {
    r.decomposition("aten::frac",
                    replacement(1, "torch.ops.aten.no_such.default"));
  });
}
void too_many_results(fxp::Registrar& r) {
  fxp::OwnedGraph g;
  fxp::Value x = g.placeholder("self");
  g.output(fxp::Arg::list({fxp::Arg(x), fxp::Arg(x)}));
  noting_code([&] { r.decomposition("aten::frac", g); });
}

TEST(CaptureExtensions, AReplacementThatDoesNotFitTheSchemaIsInvalid) {
  EXPECT_EQ(load<two_placeholders>("two_placeholders"),
            "plugin 'two_placeholders' (built in) failed to register its "
            "extensions: RegisterDecomposition: plugin 'two_placeholders' "
            "registers a decomposition of 'aten::frac': the replacement of "
            "aten::frac has 2 placeholders, but aten::frac's schema has 1 "
            "arguments (self): one placeholder each");
  EXPECT_EQ(last_code, FX_INVALID_ARGUMENT);
  EXPECT_NE(load<unknown_target>("unknown_target")
                .find("the replacement of aten::frac calls "
                      "torch.ops.aten.no_such.default (node no_such_default), "
                      "which no kernel runs"),
            std::string::npos);
  EXPECT_EQ(last_code, FX_INVALID_ARGUMENT);
  EXPECT_NE(load<too_many_results>("too_many_results")
                .find("the replacement of aten::frac returns 2 values, but "
                      "aten::frac returns 1"),
            std::string::npos);
  EXPECT_EQ(last_code, FX_INVALID_ARGUMENT);
  EXPECT_EQ(capture::registered_origin("aten::frac"), "");
}

// A leaf registered, then a failure: neither is registered.
void leaf_then_failure(fxp::Registrar& r) {
  r.leaf_op("aten::erfinv");
  r.leaf_op("aten::no_such_leaf");
}

TEST(CaptureExtensions, APluginRegistersAllOrNothing) {
  EXPECT_NE(load<leaf_then_failure>("leaf_then_failure"), "");
  EXPECT_EQ(capture::registered_origin("aten::erfinv"), "");
}

void first_i0(fxp::Registrar& r) { r.leaf_op("aten::i0"); }
void second_i0(fxp::Registrar& r) {
  noting_code([&] {
    r.decomposition("aten::i0", replacement(1, "torch.ops.aten.relu.default"));
  });
}
void twice(fxp::Registrar& r) {
  r.leaf_op("aten::sinc");
  noting_code([&] { r.leaf_op("aten::sinc.default"); });
}

TEST(CaptureExtensions, AnOperatorIsRegisteredOnce) {
  EXPECT_EQ(load<first_i0>("first_i0"), "");
  EXPECT_EQ(load<second_i0>("second_i0"),
            "plugin 'second_i0' (built in) failed to register its extensions: "
            "RegisterDecomposition: plugin 'second_i0' registers aten::i0 for "
            "make_fx, but plugin 'first_i0' already registered a "
            "decomposition or leaf rule for it");
  EXPECT_EQ(last_code, FX_FAILED_PRECONDITION);
  EXPECT_EQ(capture::registered_origin("aten::i0"), "first_i0");
  EXPECT_EQ(load<twice>("twice"),
            "plugin 'twice' (built in) failed to register its extensions: "
            "RegisterLeafOp: plugin 'twice' registers aten::sinc for make_fx "
            "twice");
  EXPECT_EQ(last_code, FX_FAILED_PRECONDITION);
  EXPECT_EQ(capture::registered_origin("aten::sinc"), "");
}

void on_version_3(fxp::Registrar& r) {
  noting_code([&] { r.leaf_op("aten::expm1"); });
}

TEST(CaptureExtensions, APluginHandedAVersion3TableIsToldWhy) {
  EXPECT_EQ(load<on_version_3>("on_version_3", 3),
            "plugin 'on_version_3' (built in) failed to register its "
            "extensions: RegisterLeafOp needs fx plugin API version 4, but "
            "the host's table is version 3 (use a newer fx host)");
  EXPECT_EQ(last_code, FX_UNIMPLEMENTED);
}

// frac(self) -> mm(self, self): fails on a 1-d tensor.
void throwing(fxp::Registrar& r) {
  fxp::OwnedGraph g;
  fxp::Value x = g.placeholder("self");
  g.output(fxp::call(g.view(), "torch.ops.aten.mm.default", {x, x}));
  r.decomposition("aten::frac", g);
}

TEST(CaptureExtensions, AFailingReplacementFailsTheCaptureNamingPluginAndOp) {
  ASSERT_EQ(load<throwing>("throwing"), "");
  auto frac = [](const Tensors& in) -> Tensors {
    return {at::frac(at::relu(in[0]))};
  };
  Tensors inputs = {at::randn({3})};
  try {
    make_fx(frac, inputs);
    FAIL() << "expected the capture to fail";
  } catch (const FxError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(
                  "make_fx: the decomposition of aten::frac registered by "
                  "plugin 'throwing' failed: while running node 'mm_default' "
                  "(call_function torch.ops.aten.mm.default): self must be a "
                  "matrix",
                  0),
              0u)
        << e.what();
  }
  // The thread's capture state is as it was: no mode left active, and the
  // next captures record as usual.
  EXPECT_EQ(c10::impl::TorchDispatchModeTLS::get_mode(), nullptr);
  at::Tensor square = at::randn({3, 3});
  auto gm = make_fx(frac, {square});
  EXPECT_EQ(gm->graph().str(),
            "graph():\n"
            "    %arg0_1 : [num_users=1] = placeholder[target=arg0_1]\n"
            "    %relu : [num_users=1] = call_function[target=torch.ops.aten."
            "relu.default](args = (%arg0_1,), kwargs = {})\n"
            "    %mm : [num_users=1] = call_function[target=torch.ops.aten.mm."
            "default](args = (%relu, %relu), kwargs = {})\n"
            "    return [mm]");
  MakeFxOptions own;
  own.registered_extensions = false;
  gm = make_fx(frac, inputs, own);
  EXPECT_NE(gm->graph().str().find("torch.ops.aten.frac.default"),
            std::string::npos);
}

}  // namespace
}  // namespace fx
