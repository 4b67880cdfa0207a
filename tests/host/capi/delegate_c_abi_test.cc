// Delegation through the C ABI (version 5): backends registered as a
// plugin's register_extensions registers them (RegisterBackend), partitions
// handed to them by GraphDelegatePartitions. A backend compiles each
// partition once, when it is delegated, and runs it on every call; an
// unknown backend, a refused compile, an input without tensor_meta leave the
// graph and its module as they were; a failed run names the backend and the
// partition.
#include <ATen/ATen.h>
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "host/capi/c_api.h"
#include "host/capi/extensions.h"

namespace fx::host {
namespace {

// What the test backends saw.
struct Seen {
  int compiles = 0;
  int runs = 0;
  int releases = 0;
  std::string name;
  std::string json;
  std::vector<FxTensorSpec> inputs;
};
Seen seen;

FxStatus* compile_ok(const FxApi* api, FxGraph* partition, const char* name,
                     const char* json, const FxTensorSpec* inputs, size_t n,
                     void*, void** compiled) {
  ++seen.compiles;
  seen.name = name;
  seen.json = json;
  seen.inputs.assign(inputs, inputs + n);
  (void)api;
  *compiled = partition;  // runs it through the host, as the accelerator does
  return nullptr;
}

FxStatus* refuse(const FxApi* api, FxGraph*, const char*, const char*,
                 const FxTensorSpec*, size_t, void*, void**) {
  ++seen.compiles;
  return api->CreateStatus(FX_UNIMPLEMENTED, "no unit for linear");
}

FxStatus* take_output(FxNode* node, const FxValue* value, void* out) {
  const FxApi* api = host::api();
  if (api->NodeOp(node) != FX_OP_OUTPUT) return nullptr;
  return api->ValueToDLPack(value, static_cast<DLManagedTensor**>(out));
}

FxStatus* run_ok(const FxApi* api, void* compiled, const DLTensor* const* in,
                 size_t n, DLManagedTensor** out, size_t num_outputs, void*) {
  ++seen.runs;
  if (num_outputs != 1) return api->CreateStatus(FX_INTERNAL, "one output");
  return api->GraphRun(static_cast<FxGraph*>(compiled), in, n, 0, take_output,
                       out);
}

FxStatus* run_fails(const FxApi* api, void*, const DLTensor* const*, size_t,
                    DLManagedTensor**, size_t, void*) {
  return api->CreateStatus(FX_INTERNAL, "device lost");
}

void release(void*, void*) { ++seen.releases; }

FxBackendInfo backend(const char* name, FxBackendCompileFn compile,
                      FxBackendRunFn run) {
  FxBackendInfo info{};
  info.struct_size = sizeof(info);
  info.name = name;
  info.compile = compile;
  info.run = run;
  info.release = release;
  return info;
}

FxStatus* register_backends(const FxApi* api, FxRegistrar* r) {
  FxBackendInfo all[] = {backend("counting", compile_ok, run_ok),
                         backend("refusing", refuse, run_ok),
                         backend("failing", compile_ok, run_fails)};
  for (const FxBackendInfo& info : all) {
    if (FxStatus* s = api->RegisterBackend(r, &info)) return s;
  }
  // A name taken is refused.
  FxBackendInfo again = backend("counting", compile_ok, run_ok);
  FxStatus* s = api->RegisterBackend(r, &again);
  if (s == nullptr) {
    return api->CreateStatus(FX_INTERNAL, "a backend registered twice");
  }
  bool named = std::string(api->GetStatusMessage(s))
                   .find(
                       "registers backend 'counting', which plugin "
                       "'test_backends' registered") != std::string::npos;
  api->ReleaseStatus(s);
  return named ? nullptr
               : api->CreateStatus(FX_INTERNAL, "the refusal names no plugin");
}

void register_once() {
  static FxPluginInfo info = [] {
    FxPluginInfo i{};
    i.name = "test_backends";
    i.version = "1";
    i.api_version = FX_API_VERSION;
    i.min_api_version = 5;
    i.register_extensions = register_backends;
    return i;
  }();
  absl::Status s = register_extensions(info, "test", "", nullptr);
  ASSERT_TRUE(s.ok()) << s;
}

// out = sigmoid(relu(lin(x)) + x) * 2.0: lin, relu and add are the
// partition; x has tensor_meta when `meta`.
std::shared_ptr<GraphModule> model(bool meta, at::Tensor* w, at::Tensor* b) {
  std::string x_meta =
      meta ? R"(, "meta": {"tensor_meta": {"dict": {"shape": [2, 4],
               "dtype": {"dtype": "torch.float32"}}}})"
           : "";
  std::string json = R"({"format": "fx-graph", "version": 1, "nodes": [
    {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {})" +
                     x_meta + R"(},
    {"name": "lin", "op": "call_module", "target": "lin", "args": [{"node": "x"}], "kwargs": {}},
    {"name": "relu", "op": "call_function", "target": "torch.relu", "args": [{"node": "lin"}], "kwargs": {}},
    {"name": "add", "op": "call_function", "target": "operator.add", "args": [{"node": "relu"}, {"node": "x"}], "kwargs": {}},
    {"name": "sigmoid", "op": "call_function", "target": "torch.sigmoid", "args": [{"node": "add"}], "kwargs": {}},
    {"name": "mul", "op": "call_function", "target": "operator.mul", "args": [{"node": "sigmoid"}, 2.0], "kwargs": {}},
    {"name": "output", "op": "output", "target": "output", "args": [{"node": "mul"}], "kwargs": {}}],
   "modules": {"lin": {"type": "torch.nn.Linear", "config": {"in_features": 4, "out_features": 4}}}})";
  auto file = parse_graph_json(json, "model");
  EXPECT_TRUE(file.ok()) << file.status();
  *w = at::rand({4, 4});
  *b = at::rand({4});
  auto gm = load_graph_module_shared(*std::move(file),
                                     {{"lin.weight", *w}, {"lin.bias", *b}});
  EXPECT_TRUE(gm.ok()) << gm.status();
  return *gm;
}

// The partition {lin, relu, add}, proposed through the C ABI.
FxPartitions* partitions_of(GraphModule& gm) {
  const FxApi* api = host::api();
  const char* functions[] = {"torch.relu", "operator.add"};
  const char* modules[] = {"torch.nn.Linear"};
  FxSupport* parts[2] = {nullptr, nullptr};
  EXPECT_EQ(api->SupportTargets(FX_OP_CALL_FUNCTION, functions, 2, &parts[0]),
            nullptr);
  EXPECT_EQ(api->SupportTargets(FX_OP_CALL_MODULE, modules, 1, &parts[1]),
            nullptr);
  FxSupport* rule = nullptr;
  EXPECT_EQ(api->SupportAnyOf(parts, 2, &rule), nullptr);
  FxPartitions* out = nullptr;
  EXPECT_EQ(
      api->GraphProposePartitions(to_handle(&gm.graph()), rule, nullptr, &out),
      nullptr);
  api->ReleaseSupport(parts[0]);
  api->ReleaseSupport(parts[1]);
  api->ReleaseSupport(rule);
  return out;
}

// GraphDelegatePartitions' status message ("" on success).
std::string delegate(GraphModule& gm, const char* backend,
                     FxStatusCode* code = nullptr) {
  const FxApi* api = host::api();
  FxPartitions* partitions = partitions_of(gm);
  EXPECT_EQ(api->PartitionsCount(partitions), 1u);
  FxStatus* s = api->GraphDelegatePartitions(to_handle(&gm.graph()), partitions,
                                             backend, nullptr);
  api->ReleasePartitions(partitions);
  if (s == nullptr) return "";
  std::string message = api->GetStatusMessage(s);
  if (code) *code = api->GetStatusCode(s);
  api->ReleaseStatus(s);
  return message;
}

at::Tensor eager(const at::Tensor& x, const at::Tensor& w,
                 const at::Tensor& b) {
  return at::sigmoid(at::relu(at::linear(x, w, b)) + x) * 2.0;
}

class Delegation : public ::testing::Test {
 protected:
  void SetUp() override {
    register_once();
    seen = Seen();
  }
};

TEST_F(Delegation, CompilesEachPartitionOnceAndRunsItOnEveryCall) {
  at::Tensor w, b;
  auto gm = model(/*meta=*/true, &w, &b);
  ASSERT_EQ(delegate(*gm, "counting"), "");
  gm->recompile();
  EXPECT_EQ(seen.compiles, 1);
  EXPECT_EQ(seen.name, "counting_0");
  ASSERT_EQ(seen.inputs.size(), 1u);
  EXPECT_EQ(seen.inputs[0].ndim, 2);
  EXPECT_EQ(seen.inputs[0].shape[1], 4);
  EXPECT_EQ(seen.inputs[0].dtype.code, kDLFloat);
  EXPECT_EQ(seen.inputs[0].dtype.bits, 32);
  // The JSON is the partition's graph in the file format.
  auto file = parse_graph_json(seen.json, "compile's graph_json");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->graph->str(),
            "graph():\n"
            "    %x : [num_users=2] = placeholder[target=x]\n"
            "    %lin : [num_users=1] = call_module[target=lin](args = (%x,), "
            "kwargs = {})\n"
            "    %relu : [num_users=1] = call_function[target=torch.relu]("
            "args = (%lin,), kwargs = {})\n"
            "    %add : [num_users=1] = call_function[target=operator.add]("
            "args = (%relu, %x), kwargs = {})\n"
            "    return add");
  EXPECT_NE(gm->code().find("counting_0 = self.counting_0(x)"),
            std::string::npos)
      << gm->code();
  for (int i = 0; i < 3; ++i) {
    at::Tensor x = at::rand({2, 4});
    EXPECT_TRUE(at::allclose((*gm)(x).toTensor(), eager(x, w, b)));
  }
  EXPECT_EQ(seen.runs, 3);
  EXPECT_EQ(seen.compiles, 1);
  EXPECT_EQ(seen.releases, 0);
  gm.reset();
  EXPECT_EQ(seen.releases, 1);
}

TEST_F(Delegation, AnUnknownBackendChangesNothing) {
  at::Tensor w, b;
  auto gm = model(true, &w, &b);
  std::string before = gm->graph().str();
  FxStatusCode code = FX_OK;
  EXPECT_EQ(delegate(*gm, "nosuch", &code),
            "GraphDelegatePartitions: no backend 'nosuch' is registered "
            "(registered: counting, failing, refusing)");
  EXPECT_EQ(code, FX_NOT_FOUND);
  EXPECT_EQ(gm->graph().str(), before);
  EXPECT_EQ(seen.compiles, 0);
}

TEST_F(Delegation, ARefusedCompileNamesBackendAndPartitionAndChangesNothing) {
  at::Tensor w, b;
  auto gm = model(true, &w, &b);
  std::string before = gm->graph().str();
  FxStatusCode code = FX_OK;
  EXPECT_EQ(delegate(*gm, "refusing", &code),
            "GraphDelegatePartitions: backend 'refusing', partition "
            "'refusing_0': compile failed: no unit for linear");
  EXPECT_EQ(code, FX_FAILED_PRECONDITION);
  EXPECT_EQ(seen.compiles, 1);
  EXPECT_EQ(seen.releases, 0);
  EXPECT_EQ(gm->graph().str(), before);
  EXPECT_EQ(gm->get_submodule("refusing_0"), nullptr);
  at::Tensor x = at::rand({2, 4});
  EXPECT_TRUE(at::allclose((*gm)(x).toTensor(), eager(x, w, b)));
}

TEST_F(Delegation, AnInputWithoutTensorMetaIsNamedAndChangesNothing) {
  at::Tensor w, b;
  auto gm = model(/*meta=*/false, &w, &b);
  std::string before = gm->graph().str();
  EXPECT_EQ(delegate(*gm, "counting"),
            "GraphDelegatePartitions: backend 'counting', partition "
            "'counting_0': input 'x' has no tensor_meta (run shape_prop "
            "first)");
  EXPECT_EQ(gm->graph().str(), before);
  EXPECT_EQ(seen.compiles, 0);
}

TEST_F(Delegation, AFailedRunNamesBackendAndPartition) {
  at::Tensor w, b;
  auto gm = model(true, &w, &b);
  ASSERT_EQ(delegate(*gm, "failing"), "");
  gm->recompile();
  try {
    (*gm)(at::rand({2, 4}));
    ADD_FAILURE() << "the run did not fail";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("backend 'failing', partition "
                                         "'failing_0': run failed: device "
                                         "lost"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(Delegation, ADelegatedModuleCannotBeWrittenToAFile) {
  at::Tensor w, b;
  auto gm = model(true, &w, &b);
  ASSERT_EQ(delegate(*gm, "counting"), "");
  auto bundle = describe_graph_module(*gm, "w.pt");
  ASSERT_FALSE(bundle.ok());
  EXPECT_NE(bundle.status().message().find(
                "module 'counting_0' (fx.host.DelegatedModule) cannot be "
                "written to a file"),
            std::string::npos)
      << bundle.status();
}

}  // namespace
}  // namespace fx::host
