// A toy "accelerator" backend as a plugin, built against plugin_api/include
// only: it runs float32 conv2d, linear, relu and add. Its support rule goes
// through the C ABI's support entries (fxp::Support); the host proposes the
// largest partitions of supported nodes that fuse without a cycle (torch.fx's
// CapabilityBasedPartitioner).
//
// The backend ("accelerator", registered when the plugin loads) compiles a
// partition once, when it is delegated: it checks that every node is one it
// runs and that its inputs are float32, and keeps the partition's graph. Its
// run executes that graph through the host (GraphRun: the toy's "kernels"
// are the host's ATen).
//
// Passes (all need tensor_meta: run shape_prop first):
//   accelerator_mark      meta['partition'] = index of each partition's nodes
//                         (draw it with dot{color_by=partition})
//   accelerator_fuse      fuses each partition into a child GraphModule
//                         ("accelerator_0", ...), which the host runs
//   accelerator_delegate  replaces each partition by one call_module node
//                         whose module runs the backend named by its option
//                         `backend` (default "accelerator")
// Option of all three: allows_single (bool, true): torch.fx's
// allows_single_node_partition. On by default: torch.fx 1.13 counts only
// call_function nodes as compute nodes, so without it every partition of
// call_module nodes alone (conv -> relu in a traced resnet18) is dropped.
//
// accelerator_compile_count() and accelerator_release_count() say how often
// the backend compiled and released a partition (for tests).
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>

#include "fx/plugin_api.hpp"

namespace {

// What the accelerator runs, in every spelling a graph may hold.
fxp::Support supported_ops() {
  return fxp::Support::any_of({
      fxp::Support::module_types(
          {"torch.nn.Conv2d", "torch.nn.Linear", "torch.nn.ReLU"}),
      fxp::Support::functions({"torch.conv2d", "torch.nn.functional.conv2d",
                               "torch.nn.functional.linear", "torch.relu",
                               "torch.nn.functional.relu", "operator.add",
                               "torch.add"}),
      fxp::Support::methods({"relu", "add"}),
  });
}

// ... producing float32 tensors only.
fxp::Support accelerator_support() {
  static const char* const kFloat32[] = {"torch.float32"};
  FxTensorRule float32{};
  float32.flags = FX_TENSOR_RULE_OUTPUT;
  float32.dtypes = kFloat32;
  float32.num_dtypes = 1;
  float32.min_rank = 0;
  float32.max_rank = -1;
  float32.max_dim_size = -1;
  return fxp::Support::all_of(
      {supported_ops(), fxp::Support::tensor_meta(float32)});
}

fxp::Partitions propose(const fxp::Graph& g, const fxp::Options& options) {
  fxp::PartitionOptions o;
  o.allows_single_node_partition = options.get_bool("allows_single");
  return fxp::propose_partitions(g, accelerator_support(), o);
}

bool accelerator_mark(fxp::Graph& g, const fxp::Options& options) {
  fxp::Partitions partitions = propose(g, options);
  for (size_t i = 0; i < partitions.size(); ++i) {
    for (fxp::Node n : partitions[i]) {
      n.set_meta("partition", fxp::Arg(static_cast<int64_t>(i)));
    }
  }
  return partitions.size() > 0;
}

bool accelerator_fuse(fxp::Graph& g, const fxp::Options& options) {
  fxp::Partitions partitions = propose(g, options);
  if (partitions.size() == 0) return false;
  fxp::fuse_partitions(g, partitions, "accelerator_");
  return true;
}

bool accelerator_delegate(fxp::Graph& g, const fxp::Options& options) {
  fxp::Partitions partitions = propose(g, options);
  if (partitions.size() == 0) return false;
  std::string backend = options.get_string("backend");
  fxp::delegate_partitions(g, partitions, backend.c_str(), "accelerator_");
  return true;
}

// ------------------------------------------------------------ the backend

std::atomic<int> compiles{0};
std::atomic<int> releases{0};

// What the backend keeps of a partition: its graph (borrowed until release).
struct Compiled {
  FxGraph* graph;
};

bool is_one_of(const char* s, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (std::strcmp(s, name) == 0) return true;
  }
  return false;
}

// Whether the accelerator runs `node` (a node of `graph`); *why says what
// it does not run otherwise.
bool runs(const FxApi* api, FxGraph* graph, FxNode* node, std::string* why) {
  const char* target = api->NodeTarget(node);
  switch (api->NodeOp(node)) {
    case FX_OP_PLACEHOLDER:
    case FX_OP_OUTPUT:
    case FX_OP_GET_ATTR:
      return true;
    case FX_OP_CALL_FUNCTION:
      if (is_one_of(target, {"torch.conv2d", "torch.nn.functional.conv2d",
                             "torch.nn.functional.linear", "torch.relu",
                             "torch.nn.functional.relu", "operator.add",
                             "torch.add"})) {
        return true;
      }
      break;
    case FX_OP_CALL_METHOD:
      if (is_one_of(target, {"relu", "add"})) return true;
      break;
    case FX_OP_CALL_MODULE: {
      char* type = nullptr;
      FxStatus* s = api->GraphModuleType(graph, target, &type);
      if (s != nullptr) {
        *why = api->GetStatusMessage(s);
        api->ReleaseStatus(s);
        return false;
      }
      bool ok = is_one_of(
          type, {"torch.nn.Conv2d", "torch.nn.Linear", "torch.nn.ReLU"});
      if (!ok) *why = std::string("module type ") + type;
      api->ReleaseString(type);
      if (ok) return true;
      break;
    }
  }
  if (why->empty()) *why = target;
  return false;
}

FxStatus* compile(const FxApi* api, FxGraph* partition, const char* name,
                  const char* graph_json, const FxTensorSpec* inputs,
                  size_t num_inputs, void* user_data, void** compiled) {
  (void)graph_json;
  (void)user_data;
  for (size_t i = 0; i < num_inputs; ++i) {
    if (inputs[i].dtype.code != kDLFloat || inputs[i].dtype.bits != 32) {
      std::string message =
          "input " + std::to_string(i) + " of " + name + " is not float32";
      return api->CreateStatus(FX_INVALID_ARGUMENT, message.c_str());
    }
  }
  for (FxNode* n = api->GraphFirstNode(partition); n != nullptr;
       n = api->NodeNext(n)) {
    std::string why;
    if (!runs(api, partition, n, &why)) {
      std::string message = std::string("node '") + api->NodeName(n) +
                            "' is not something it runs (" + why + ")";
      return api->CreateStatus(FX_UNIMPLEMENTED, message.c_str());
    }
  }
  *compiled = new Compiled{partition};
  ++compiles;
  return nullptr;
}

// Where GraphRun's output value goes.
struct RunState {
  const FxApi* api;
  DLManagedTensor** outputs;
  size_t num_outputs;
};

FxStatus* take_outputs(FxNode* node, const FxValue* value, void* data) {
  auto* state = static_cast<RunState*>(data);
  const FxApi* api = state->api;
  if (api->NodeOp(node) != FX_OP_OUTPUT) return nullptr;
  if (api->ValueKind(value) == FX_VALUE_TENSOR) {
    return api->ValueToDLPack(value, &state->outputs[0]);
  }
  for (size_t i = 0; i < state->num_outputs; ++i) {
    const FxValue* item = api->ValueItem(value, i);
    if (item == nullptr) {
      return api->CreateStatus(FX_INTERNAL, "fewer outputs than expected");
    }
    FxStatus* s = api->ValueToDLPack(item, &state->outputs[i]);
    if (s != nullptr) return s;
  }
  return nullptr;
}

FxStatus* run(const FxApi* api, void* compiled, const DLTensor* const* inputs,
              size_t num_inputs, DLManagedTensor** outputs, size_t num_outputs,
              void* user_data) {
  (void)user_data;
  RunState state{api, outputs, num_outputs};
  return api->GraphRun(static_cast<Compiled*>(compiled)->graph, inputs,
                       num_inputs, /*meta=*/0, take_outputs, &state);
}

void release(void* compiled, void* user_data) {
  (void)user_data;
  delete static_cast<Compiled*>(compiled);
  ++releases;
}

FxStatus* register_backend(const FxApi* api, FxRegistrar* registrar) {
  if (api->version < 5) {
    return api->CreateStatus(FX_UNIMPLEMENTED,
                             "the accelerator backend needs API version 5");
  }
  FxBackendInfo info{};
  info.struct_size = sizeof(info);
  info.name = "accelerator";
  info.compile = compile;
  info.run = run;
  info.release = release;
  return api->RegisterBackend(registrar, &info);
}

}  // namespace

extern "C" FX_PLUGIN_EXPORT int accelerator_compile_count(void) {
  return compiles.load();
}
extern "C" FX_PLUGIN_EXPORT int accelerator_release_count(void) {
  return releases.load();
}

FXP_PLUGIN_WITH_EXTENSIONS(
    "accelerator", "0.2", register_backend,
    fxp::pass<accelerator_mark>(
        "accelerator_mark",
        "meta['partition'] = index of the accelerator's partitions")
        .option("allows_single", FX_OPTION_BOOL, "true",
                "keep partitions of a single compute node")
        .requires_property({"tensor_meta"}),
    fxp::pass<accelerator_fuse>(
        "accelerator_fuse",
        "fuses the accelerator's partitions into child GraphModules")
        .option("allows_single", FX_OPTION_BOOL, "true",
                "keep partitions of a single compute node")
        .requires_property({"tensor_meta"}),
    fxp::pass<accelerator_delegate>(
        "accelerator_delegate",
        "runs the accelerator's partitions on a backend (compiled once)")
        .option("allows_single", FX_OPTION_BOOL, "true",
                "keep partitions of a single compute node")
        .option("backend", FX_OPTION_STRING, "accelerator",
                "the registered backend that compiles and runs them")
        .requires_property({"tensor_meta"}))
