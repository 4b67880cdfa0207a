#include "host/delegate/delegated_module.h"

#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>

#include <mutex>
#include <utility>

#include "fx_core/format/graph_json.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "host/handles/attribute_store.h"
#include "host/handles/status.h"
#include "host/handles/wrap.h"

namespace fx::host {
namespace {

// The message of a backend's status, which is freed.
std::string take_message(FxStatus* status) {
  return take_status(status).message;
}

// A placeholder's shape and dtype, from its meta['tensor_meta'].
FxTensorSpec input_spec(const Node& placeholder, const std::string& where) {
  const Argument* meta = find_item(placeholder.meta(), "tensor_meta");
  const Argument* shape = nullptr;
  const Argument* dtype = nullptr;
  if (meta != nullptr && meta->kind() == Argument::Kind::kDict) {
    shape = find_item(meta->items(), "shape");
    dtype = find_item(meta->items(), "dtype");
  }
  if (shape == nullptr || dtype == nullptr ||
      dtype->kind() != Argument::Kind::kDtype) {
    throw FxError(cat(where, ": input '", placeholder.name(),
                      "' has no tensor_meta (run shape_prop first)"));
  }
  FxTensorSpec spec{};
  spec.struct_size = sizeof(FxTensorSpec);
  if (shape->elements().size() > FX_MAX_DIMS) {
    throw FxError(cat(where, ": input '", placeholder.name(),
                      "' has more than ", FX_MAX_DIMS, " dimensions"));
  }
  spec.ndim = static_cast<int32_t>(shape->elements().size());
  for (int32_t d = 0; d < spec.ndim; ++d) {
    const Argument& size = shape->elements()[d];
    if (size.is_symint()) {
      throw FxError(cat(where, ": input '", placeholder.name(),
                        "' has the symbolic size ", size.as_string(),
                        " at dimension ", d,
                        "; backends compile for concrete shapes (run "
                        "shape_prop with concrete shapes first)"));
    }
    spec.shape[d] = size.as_int();
  }
  std::optional<c10::ScalarType> type = parse_dtype(dtype->as_string());
  if (!type) {
    throw FxError(cat(where, ": input '", placeholder.name(),
                      "' has an unknown dtype ", dtype->as_string()));
  }
  spec.dtype = at::getDLDataType(at::empty({0}, at::dtype(*type)));
  return spec;
}

// A partition's tensors and submodules, read only.
class PartitionAttributes : public GraphModuleAttributeStore {
 public:
  explicit PartitionAttributes(const GraphModule& module)
      : GraphModuleAttributeStore(module, "the partition") {}

  DLManagedTensor* get_attr(std::string_view name,
                            std::string* error) const override {
    at::Tensor t = tensor_attr(name, error);
    return t.defined() ? at::toDLPack(t.detach()) : nullptr;
  }
  bool set_attr(std::string_view name, DLManagedTensor* tensor,
                std::string* error) override {
    if (tensor != nullptr && tensor->deleter) tensor->deleter(tensor);
    *error = cat("a delegated partition is read only (setting '", name, "')");
    return false;
  }
};

}  // namespace

DelegatedModule::DelegatedModule(std::shared_ptr<const Backend> backend,
                                 std::string name,
                                 std::shared_ptr<GraphModule> partition)
    : torch::nn::Module("DelegatedModule"),
      backend_(std::move(backend)),
      name_(std::move(name)),
      partition_(std::move(partition)) {
  register_delegated_module_kind();
  register_module("partition", partition_);
  Graph& graph = partition_->graph();
  attributes_ = std::make_unique<PartitionAttributes>(*partition_);
  bound_ = std::make_unique<ScopedAttributeStore>(&graph, attributes_.get());
  std::vector<FxTensorSpec> specs;
  for (const Node* n : graph.nodes()) {
    if (n->op() == Opcode::kPlaceholder) {
      specs.push_back(input_spec(*n, where()));
    }
  }
  const Node* output = graph.output_node();
  const Argument& result = output->args().at(0);
  returns_tuple_ = result.kind() == Argument::Kind::kTuple;
  num_outputs_ = returns_tuple_ ? result.elements().size() : 1;
  std::string json = to_graph_json(graph);
  FxStatus* status = backend_->info.compile(
      backend_->table, internal::wrap(&graph), name_.c_str(), json.c_str(),
      specs.data(), specs.size(), backend_->info.user_data, &compiled_);
  if (status != nullptr) {
    throw FxError(cat(where(), ": compile failed: ", take_message(status)));
  }
}

DelegatedModule::~DelegatedModule() {
  if (backend_->info.release != nullptr) {
    backend_->info.release(compiled_, backend_->info.user_data);
  }
  bound_.reset();
}

std::string DelegatedModule::where() const {
  return cat("backend '", backend_->name, "', partition '", name_, "'");
}

c10::IValue DelegatedModule::forward(const std::vector<c10::IValue>& inputs) {
  std::vector<at::Tensor> tensors;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].isTensor()) {
      throw FxError(cat(where(), ": input ", i, " is not a tensor"));
    }
    tensors.push_back(inputs[i].toTensor().contiguous());
  }
  std::vector<DLManagedTensor*> managed;
  std::vector<const DLTensor*> views;
  for (const at::Tensor& t : tensors) {
    managed.push_back(at::toDLPack(t));
    views.push_back(&managed.back()->dl_tensor);
  }
  std::vector<DLManagedTensor*> outputs(num_outputs_, nullptr);
  FxStatus* status = backend_->info.run(
      backend_->table, compiled_, views.data(), views.size(), outputs.data(),
      outputs.size(), backend_->info.user_data);
  for (DLManagedTensor* m : managed) m->deleter(m);
  std::vector<at::Tensor> results;
  for (DLManagedTensor* out : outputs) {
    if (out != nullptr) results.push_back(at::fromDLPack(out));
  }
  if (status != nullptr) {
    throw FxError(cat(where(), ": run failed: ", take_message(status)));
  }
  if (results.size() != num_outputs_) {
    throw FxError(cat(where(), ": run set ", results.size(), " of ",
                      num_outputs_, " outputs"));
  }
  if (!returns_tuple_) return results[0];
  return c10::ivalue::Tuple::create(
      std::vector<c10::IValue>(results.begin(), results.end()));
}

void register_delegated_module_kind() {
  static std::once_flag once;
  std::call_once(once, [] {
    ModuleKind kind;
    kind.type = "fx.host.DelegatedModule";
    kind.cpp_type = typeid(DelegatedModule);
    kind.forward_schema = OpSchema::parse("*args");
    kind.forward = [](torch::nn::Module& m, OpArgs& a) -> c10::IValue {
      const auto& elements = a[0].toTupleRef().elements();
      return static_cast<DelegatedModule&>(m).forward(
          std::vector<c10::IValue>(elements.begin(), elements.end()));
    };
    ModuleRegistry::global().add(std::move(kind));
  });
}

}  // namespace fx::host
