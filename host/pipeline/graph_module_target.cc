// GraphModuleTarget: a pass target over a GraphModule (pass_target.h), and
// its attribute store for the C ABI with a journal of the tensors a pass
// replaced, so a rollback puts them back.
#include <ATen/DLConvertor.h>
#include <ATen/EmptyTensor.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fx_core/io/atomic_file.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/module_path.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "host/capi/c_api.h"
#include "host/pipeline/graph_equality.h"
#include "host/pipeline/lent_child_graphs.h"
#include "host/pipeline/pass_target.h"
#include "host/pipeline/subgraph_module_transfer.h"

namespace fx::host {

namespace {

// Bytes copied in, kept until clear(): the rollback copies of the tensors a
// pass reads, one memcpy each instead of a LibTorch tensor (an allocation
// and a dispatched copy per tensor were a sixth of fuse's time).
class ByteArena {
 public:
  // A copy of `bytes` bytes at `data`, valid until clear().
  const char* copy(const void* data, size_t bytes) {
    if (chunks_.empty() || used_ + bytes > capacity_) {
      capacity_ = std::max(bytes, kChunkBytes);
      chunks_.push_back(std::make_unique<char[]>(capacity_));
      used_ = 0;
    }
    char* out = chunks_.back().get() + used_;
    if (bytes > 0) std::memcpy(out, data, bytes);
    used_ += bytes;
    return out;
  }
  // A copy of `text`, valid until clear().
  std::string_view copy(std::string_view text) {
    return {copy(text.data(), text.size()), text.size()};
  }
  void clear() {
    chunks_.clear();
    used_ = capacity_ = 0;
  }

 private:
  static constexpr size_t kChunkBytes = size_t{1} << 20;
  std::vector<std::unique_ptr<char[]>> chunks_;
  size_t used_ = 0;
  size_t capacity_ = 0;
};

// A DLPack view of a module's tensor that GraphGetAttr hands to a plugin,
// and the host's note of it: one allocation, owned by both and freed by the
// last to let go (the plugin through the DLPack deleter, which also marks
// the view released; the host through Release). The shape and strides of
// up to kInlineDims dimensions live inside it.
struct SharedView {
  static constexpr size_t kInlineDims = 4;
  explicit SharedView(const at::Tensor& t) : tensor(t) {
    outer.manager_ctx = this;
    outer.deleter = [](DLManagedTensor* self) {
      auto* view = static_cast<SharedView*>(self->manager_ctx);
      view->held.store(false);
      if (view->inner != nullptr) view->inner->deleter(view->inner);
      view->inner = nullptr;
      view->release();
    };
  }
  // Room for the shape then the strides of `ndim` dimensions.
  int64_t* dims(size_t ndim) {
    if (ndim <= kInlineDims) return inline_dims;
    more_dims.resize(2 * ndim);
    return more_dims.data();
  }
  void release() {
    if (owners.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  struct Release {
    void operator()(SharedView* view) const { view->release(); }
  };

  // The attribute's name the view was handed out under; a name of up to
  // kInlineName bytes (most module paths) lives inside the view too.
  void set_name(std::string_view name) {
    name_size = name.size();
    if (name.size() <= kInlineName) {
      std::memcpy(inline_name, name.data(), name.size());
    } else {
      long_name.assign(name);
    }
  }
  std::string_view name() const {
    return name_size <= kInlineName ? std::string_view(inline_name, name_size)
                                    : std::string_view(long_name);
  }

  static constexpr size_t kInlineName = 48;
  DLManagedTensor outer{};
  at::Tensor tensor;                 // shares the plugin's storage
  DLManagedTensor* inner = nullptr;  // at::toDLPack's, off the CPU
  std::atomic<int> owners{2};        // the plugin and the host
  std::atomic<bool> held{true};      // until the plugin's deleter
  int64_t inline_dims[2 * kInlineDims];
  std::vector<int64_t> more_dims;
  size_t name_size = 0;
  char inline_name[kInlineName];
  std::string long_name;
};

// Whether `t` is a dense tensor whose bytes can be copied as one block:
// on the CPU, not quantized, contiguous.
bool copyable_bytes(const at::Tensor& t) {
  return t.is_cpu() && !t.is_quantized() && t.is_contiguous();
}

// Whether `t`'s strides are row-major for its sizes (or absent, which
// DLPack defines as row-major); sizes of 0 or 1 leave a stride free.
bool row_major(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int32_t d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] > 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

// A tensor the host owns with `tensor`'s values; takes ownership of
// `tensor` (its deleter is called, also on an error). A row-major CPU
// tensor is copied with one memcpy; any other through LibTorch.
at::Tensor owned_copy(DLManagedTensor* tensor) {
  const DLTensor& dl = tensor->dl_tensor;
  if (dl.device.device_type != kDLCPU || !row_major(dl)) {
    return at::fromDLPack(tensor).clone();
  }
  at::Tensor out;
  try {
    // Straight to the CPU allocator: at::empty's dispatch was a tenth of
    // what a pass setting 50k small tensors paid per tensor.
    out = at::detail::empty_cpu(at::IntArrayRef(dl.shape, dl.ndim),
                                at::toScalarType(dl.dtype));
    if (out.nbytes() > 0) {
      std::memcpy(out.data_ptr(),
                  static_cast<const char*>(dl.data) + dl.byte_offset,
                  out.nbytes());
    }
  } catch (...) {
    if (tensor->deleter) tensor->deleter(tensor);
    throw;
  }
  if (tensor->deleter) tensor->deleter(tensor);
  return out;
}

}  // namespace

// The module's tensors and submodules for the C ABI, with a journal of the
// tensors a pass replaced so a rollback can put them back.
namespace {

// A keep_used_attributes entry's uses as the worker sends them: a list of
// (opcode, target, node name) tuples.
c10::IValue encode_uses(const std::vector<GraphModule::AttributeUse>& uses) {
  c10::impl::GenericList list(c10::AnyType::get());
  for (const GraphModule::AttributeUse& use : uses) {
    list.push_back(c10::ivalue::Tuple::create(
        {c10::IValue(static_cast<int64_t>(use.op)), c10::IValue(use.target),
         c10::IValue(use.node)}));
  }
  return list;
}
std::vector<GraphModule::AttributeUse> decode_uses(const c10::IValue& list) {
  std::vector<GraphModule::AttributeUse> uses;
  for (const c10::IValue& item : list.toListRef()) {
    const auto& f = item.toTupleRef().elements();
    const auto op = static_cast<Opcode>(f.at(0).toInt());
    if (op != Opcode::kGetAttr && op != Opcode::kCallModule) {
      throw FxError("a kept attribute use is neither get_attr nor call_module");
    }
    uses.push_back({op, f.at(1).toStringRef(), f.at(2).toStringRef()});
  }
  return uses;
}

}  // namespace

class GraphModuleTarget::Attributes : public GraphModuleAttributeStore {
 public:
  Attributes(GraphModule& module, std::vector<at::Tensor> example_inputs)
      : GraphModuleAttributeStore(module, "the module"),
        module_(module),
        lent_(*this) {
    if (!example_inputs.empty()) batches_.push_back(std::move(example_inputs));
  }

  // Batch 0 is the passes' example inputs; the others, calibration data.
  size_t num_example_inputs() const override {
    return batches_.empty() ? 0 : batches_[0].size();
  }
  size_t num_example_batches() const override { return batches_.size(); }
  DLManagedTensor* example_input(size_t index,
                                 std::string* error) const override {
    return example_batch_input(0, index, error);
  }
  DLManagedTensor* example_batch_input(size_t batch, size_t index,
                                       std::string* error) const override {
    if (batch > 0 && batch >= batches_.size()) {
      *error = cat("there are ", batches_.size(),
                   " batches of example inputs, no batch ", batch);
      return nullptr;
    }
    const size_t count = batches_.empty() ? 0 : batches_[batch].size();
    if (index >= count) {
      *error = batch == 0 ? cat("there are ", count,
                                " example inputs, no "
                                "index ",
                                index)
                          : cat("batch ", batch, " has ", count,
                                " example inputs, no index ", index);
      return nullptr;
    }
    // A copy: a pass that writes into it cannot change the inputs.
    return at::toDLPack(batches_[batch][index].detach().clone());
  }
  void add_batches(std::vector<std::vector<at::Tensor>> batches) {
    for (auto& b : batches) batches_.push_back(std::move(b));
  }
  void clear_batches() { batches_.clear(); }
  std::vector<at::Tensor> example_inputs() const {
    return batches_.empty() ? std::vector<at::Tensor>{} : batches_[0];
  }

  DLManagedTensor* get_attr(std::string_view name,
                            std::string* error) const override {
    at::Tensor t = tensor_attr(name, error);
    if (!t.defined()) return nullptr;
    remember(name, t);
    return track_view(name, t);
  }

  bool set_attr(std::string_view name, DLManagedTensor* tensor,
                std::string* error) override {
    at::Tensor value;
    try {
      // Takes ownership and calls the deleter when done.
      value = owned_copy(tensor);
    } catch (const std::exception& e) {
      *error = cat("cannot read the tensor for '", name, "': ", e.what());
      return false;
    }
    return store_tensor(name, value, /*owned=*/true, error);
  }

  bool set_tensor_attr(std::string_view name, const at::Tensor& value,
                       std::string* error) override {
    return store_tensor(name, value, /*owned=*/false, error);
  }

  // set_tensor_attr; `owned`: nothing else holds `value`, which may then
  // be given requires_grad itself instead of through a detached alias.
  bool store_tensor(std::string_view name, const at::Tensor& value, bool owned,
                    std::string* error) {
    // Looked up in the owning module alone: a walk over every parameter of
    // the model per call made passes that set many attributes quadratic.
    std::optional<TensorAttr> existing = tensor_at(module_, name);
    const at::Tensor current = existing ? existing->tensor : at::Tensor();
    if (current.defined() && current.is_quantized() != value.is_quantized()) {
      *error = cat("'", name, "' holds ",
                   current.is_quantized() ? "a quantized" : "an unquantized",
                   " tensor; it cannot be replaced by ",
                   value.is_quantized() ? "a quantized" : "an unquantized",
                   " one (give the new tensor a new name)");
      return false;
    }
    // set_attr replaces an existing tensor's data in place, so keep the old
    // data through a new alias of it (and its requires_grad).
    const bool is_parameter = existing && existing->is_parameter;
    Entry entry;
    entry.name = std::string(name);
    entry.previous = current.defined() ? current.variable_data() : at::Tensor();
    entry.is_parameter = is_parameter;
    entry.requires_grad = current.defined() && current.requires_grad();
    journal_.push_back(std::move(entry));
    // A parameter given new values keeps requiring grad (torch:
    // `p.data = values`; a pass's new nn.Parameter requires grad too).
    at::Tensor stored = value;
    if (is_parameter && current.defined() && stored.is_floating_point() &&
        stored.requires_grad() != current.requires_grad()) {
      if (owned && stored.is_leaf()) {
        stored.set_requires_grad(current.requires_grad());
      } else {
        stored = value.detach().requires_grad_(current.requires_grad());
      }
    }
    module_.set_attr(name, stored, is_parameter);
    journal_.back().stored = stored;
    return true;
  }

  Graph* lend_child_graph(std::string_view name,
                          const std::shared_ptr<GraphModule>& child,
                          std::string* error) override {
    (void)error;
    return lent_.lend(name, child);
  }
  bool keep_used_attributes(std::string_view path, const Graph& graph,
                            std::string* error) override {
    return keep_uses(path, GraphModule::attribute_uses(graph), error);
  }
  // keep_used_attributes with the graph's uses (as a worker sends them).
  bool keep_uses(std::string_view path,
                 std::vector<GraphModule::AttributeUse> uses,
                 std::string* error) {
    Entry entry;
    entry.name = std::string(path);
    GraphModule* gm = &module_;
    if (!path.empty()) {
      entry.kept_child =
          std::dynamic_pointer_cast<GraphModule>(module_.get_submodule(path));
      if (entry.kept_child == nullptr) {
        *error = cat("the module has no child GraphModule '", path, "'");
        return false;
      }
      gm = entry.kept_child.get();
    }
    // Modules added before, at or below the GraphModule kept (the root's
    // for a root keep), go ahead of the keep (those it keeps: see below).
    for (const auto& [name, child] : new_graph_modules()) {
      if (path.empty() || path_is_below(name, path)) {
        entry.modules_before.emplace_back(
            name, std::dynamic_pointer_cast<GraphModule>(
                      module_.get_submodule(name)));
      }
    }
    try {
      entry.held = gm->keep_used_attributes(uses);
    } catch (const FxError& e) {
      *error = e.what();
      return false;
    }
    if (entry.held == nullptr) return true;  // it held just that
    // A lent child's graph must stay where the pass borrowed it.
    const std::string detached = lent_.detached_from(module_);
    if (!detached.empty()) {
      gm->restore_attributes(*entry.held);
      *error = cat("the graph does not use '", detached,
                   "' as a submodule, whose graph is lent to this pass "
                   "(GraphSubmoduleGraph): it cannot be taken out");
      return false;
    }
    // Only those the keep kept need to reach the host.
    auto& before = entry.modules_before;
    before.erase(std::remove_if(before.begin(), before.end(),
                                [&](const auto& m) {
                                  return module_.get_submodule(m.first) !=
                                         m.second;
                                }),
                 before.end());
    entry.uses = std::move(uses);
    journal_.push_back(std::move(entry));
    return true;
  }
  // Lints the child graphs the pass borrowed; throws FxError.
  void lint_lent_graphs() const { lent_.lint(); }

  bool add_module(std::string_view name, std::string_view type,
                  const ArgumentDict& config, std::string* error) override {
    if (std::string lent = lent_.lent_at_or_below(name); !lent.empty()) {
      *error = cat("cannot replace '", name, "': the graph of '", lent,
                   "' is lent to this pass (GraphSubmoduleGraph)");
      return false;
    }
    std::shared_ptr<torch::nn::Module> module;
    try {
      module = ModuleRegistry::global().create(type, config);
    } catch (const std::exception& e) {
      *error = cat("cannot build module '", name, "': ", e.what());
      return false;
    }
    Entry entry;
    entry.name = std::string(name);
    entry.is_module = true;
    entry.spec = ModuleSpec{std::string(type), config, false, nullptr};
    entry.previous_module = module_.get_submodule(name);
    // A replacement keeps the mode of the module it replaces (a fused
    // convolution of an eval-mode model is in eval mode too).
    if (entry.previous_module != nullptr) {
      module->train(entry.previous_module->is_training());
    }
    journal_.push_back(std::move(entry));
    module_.add_submodule(name, std::move(module));
    return true;
  }

  // The journal with today's values: (name, tensor) for a tensor set,
  // (name, {parameter or buffer: tensor}) for a module added, whose spec
  // goes into `added`; first, (name, tensor, true) for each tensor the pass
  // wrote in place (into the tensor it read, before any replacement).
  std::string encode(std::vector<std::pair<std::string, ModuleSpec>>* added) {
    c10::impl::GenericList entries(c10::AnyType::get());
    for (const Read& read : reads_) {
      if (!read.unchanged()) {
        entries.push_back(c10::ivalue::Tuple::create(
            {c10::IValue(std::string(read.name)),
             c10::IValue(read.tensor.detach()), c10::IValue(true)}));
      }
    }
    std::set<const GraphModule*> sent;
    for (const Entry& e : journal_) {
      if (e.held) {
        encode_modules_before(e, &sent, entries);
        entries.push_back(c10::ivalue::Tuple::create(
            {c10::IValue(e.name), encode_uses(e.uses)}));
      } else if (e.is_module) {
        added->emplace_back(e.name, e.spec);
        entries.push_back(c10::ivalue::Tuple::create(
            {c10::IValue(e.name), c10::IValue(module_state(e.name))}));
      } else {
        // (Taken out again when a later keep_used_attributes left it.)
        at::Tensor t = module_.get_attr(e.name);
        if (!t.defined()) t = e.stored;
        if (t.defined()) {
          entries.push_back(c10::ivalue::Tuple::create(
              {c10::IValue(e.name), c10::IValue(std::move(t))}));
        }
      }
    }
    for (const auto& [name, child] : new_graph_modules()) {
      if (sent.insert(child).second) {
        entries.push_back(encode_subgraph_module(module_, name, *child));
      }
    }
    // A lent child's graph: (name, (JSON text, namespace reset)).
    for (LentChildGraphs::Change& change : lent_.encode()) {
      entries.push_back(c10::ivalue::Tuple::create(
          {c10::IValue(std::move(change.qualified_name)),
           c10::ivalue::Tuple::create({c10::IValue(std::move(change.json)),
                                       c10::IValue(change.namespace_reset)})}));
    }
    std::vector<char> bytes = torch::jit::pickle_save(entries);
    return std::string(bytes.begin(), bytes.end());
  }

  // Replays encode()'s entries through set_attr / add_module (journaled).
  absl::Status apply(
      const std::vector<std::pair<std::string, ModuleSpec>>& added,
      std::string_view bytes) {
    c10::IValue entries =
        torch::jit::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
    size_t next_module = 0;
    std::string error;
    for (const c10::IValue& item : entries.toListRef()) {
      const auto& fields = item.toTupleRef().elements();
      std::string name = fields[0].toStringRef();
      bool done = true;
      if (fields.size() == kSubgraphModuleFields) {
        adopt_module(name, decode_subgraph_module(module_, item));
      } else if (fields.size() == 2 && fields[1].isTuple()) {
        const auto& graph = fields[1].toTupleRef().elements();
        absl::Status lent = lent_.apply(
            module_, {name, graph[0].toStringRef(), graph[1].toBool()});
        if (!lent.ok()) return lent;
      } else if (fields.size() == 2 && fields[1].isList()) {
        done = keep_uses(name, decode_uses(fields[1]), &error);
      } else if (fields.size() == 3) {
        done = write_in_place(name, fields[1].toTensor(), &error);
      } else if (fields[1].isTensor()) {
        done = set_tensor_attr(name, fields[1].toTensor(), &error);
      } else if (next_module >= added.size()) {
        return absl::InternalError(cat("module '", name, "' has no spec"));
      } else {
        const ModuleSpec& spec = added[next_module++].second;
        done = add_module(name, spec.type, spec.config, &error) &&
               load_state(name, fields[1].toGenericDict(), &error);
      }
      if (!done) return absl::InternalError(error);
    }
    return absl::OkStatus();
  }

  // Before a pass: the journal emptied, the submodules noted, and a copy
  // of each tensor an earlier pass still holds a view of (it may write
  // through it in this pass: the rollback must undo that too).
  void begin() {
    lent_.clear();
    journal_.clear();
    clear_reads();
    remember_held_views();
    graph_modules_at_begin_.clear();
    std::string path;
    note_graph_modules(module_, &path);
  }
  void clear() {
    lent_.clear();
    journal_.clear();
    clear_reads();
  }
  // Whether the pass replaced, added or wrote into an attribute.
  bool changed() const {
    if (!journal_.empty() || lent_.changed()) return true;
    for (const Read& read : reads_) {
      if (!read.unchanged()) return true;
    }
    return false;
  }
  // Undoes the pass's changes: what it wrote into tensors it read, the
  // submodules it added (GraphAddSubgraphModule, GraphAddModule under a new
  // name: taken out again, so a rerun can add them), then its replacements,
  // newest first.
  void undo() {
    torch::NoGradGuard no_grad;
    lent_.rollback();
    for (Read& read : reads_) {
      if (!read.unchanged()) read.restore();
    }
    clear_reads();
    for (const auto& added : new_graph_modules()) remove_module(added.first);
    bool kept_used = false;
    for (auto it = journal_.rbegin(); it != journal_.rend(); ++it) {
      if (it->held) {
        GraphModule& gm = it->kept_child ? *it->kept_child : module_;
        gm.restore_attributes(*it->held);
        kept_used = true;
      } else if (it->is_module) {
        if (it->previous_module) {
          module_.add_submodule(it->name, it->previous_module);
        } else {
          remove_module(it->name);
        }
      } else if (it->previous.defined()) {
        it->previous.set_requires_grad(it->requires_grad);
        module_.set_attr(it->name, it->previous, it->is_parameter);
      }
    }
    // What keep_used_attributes held may include modules added since begin.
    if (kept_used) {
      for (const auto& added : new_graph_modules()) remove_module(added.first);
    }
    journal_.clear();
  }

 private:
  // One change a pass made: a tensor replaced or a module added/replaced.
  struct Entry {
    std::string name;
    at::Tensor previous;  // undefined when the pass added the attribute
    bool is_parameter = false;
    bool requires_grad = false;
    bool is_module = false;
    std::shared_ptr<torch::nn::Module> previous_module;  // null: added
    ModuleSpec spec;  // what the module was built from
    // keep_used_attributes: what the GraphModule at `name` held before
    // (`kept_child` when not the target's module) and the uses it kept.
    std::shared_ptr<GraphModule::HeldAttributes> held;
    std::shared_ptr<GraphModule> kept_child;
    std::vector<GraphModule::AttributeUse> uses;
    // The GraphModules the pass had added (GraphAddSubgraphModule) when it
    // kept the root's used attributes: a worker sends them before the keep,
    // against the root as it was.
    std::vector<std::pair<std::string, std::shared_ptr<GraphModule>>>
        modules_before;
    // A tensor entry's value (sent even when a later keep took it out).
    at::Tensor stored;
  };
  // A tensor a pass read (GraphGetAttr hands out a view of it) and a copy
  // of what it held then: in-place writes through the view roll back. A
  // dense CPU tensor's copy is its bytes in the arena (`saved`, compared and
  // put back bit for bit); any other tensor's is a LibTorch clone.
  struct Read {
    std::string_view name;  // in arena_
    at::Tensor tensor;
    at::Tensor copy;
    const char* saved = nullptr;
    size_t bytes = 0;
    bool unchanged() const {
      if (!copy.defined()) {
        return tensor.nbytes() == bytes &&
               std::memcmp(tensor.data_ptr(), saved, bytes) == 0;
      }
      return tensor.sizes() == copy.sizes() && tensor.dtype() == copy.dtype() &&
             torch::equal(tensor, copy);
    }
    // Puts the copy back (outside autograd).
    void restore() {
      if (copy.defined()) {
        tensor.detach().copy_(copy);
      } else if (tensor.nbytes() == bytes && bytes > 0) {
        std::memcpy(tensor.data_ptr(), saved, bytes);
      }
    }
  };
  // The GraphModules added before keep entry `e` and not sent yet, against
  // the root's registries as the keep found them.
  void encode_modules_before(const Entry& e, std::set<const GraphModule*>* sent,
                             c10::impl::GenericList& entries) const {
    if (e.modules_before.empty()) return;
    // A root keep changed the root's registries: the modules are found as
    // it found them. A child's keep left the root's paths as they were.
    torch::nn::Module before("Module");
    if (e.name.empty()) restore_members(before, e.held->members);
    const torch::nn::Module& root = e.name.empty() ? before : module_;
    for (const auto& [name, child] : e.modules_before) {
      if (sent->insert(child.get()).second) {
        entries.push_back(encode_subgraph_module(root, name, *child));
      }
    }
  }

  // Notes `tensor`, read under `name`, the first time in a pass.
  void remember(std::string_view name, const at::Tensor& tensor) const {
    if (read_index_.contains(name)) return;
    Read read;
    read.name = arena_.copy(name);
    read.tensor = tensor;
    if (copyable_bytes(tensor)) {
      read.bytes = tensor.nbytes();
      read.saved = arena_.copy(tensor.data_ptr(), read.bytes);
    } else {
      torch::NoGradGuard no_grad;  // a copy outside autograd, no detach
      read.copy = tensor.clone();
    }
    read_index_.emplace(read.name, reads_.size());
    reads_.push_back(std::move(read));
  }
  void clear_reads() {
    reads_.clear();
    read_index_.clear();
    arena_.clear();
  }

  // Notes every GraphModule below `m` by its qualified name, `*path` being
  // `m`'s (with a trailing '.' unless empty); no name is built for the
  // other modules.
  void note_graph_modules(const torch::nn::Module& m, std::string* path) {
    const size_t base = path->size();
    for (const auto& child : children_of(m)) {
      path->resize(base);
      path->append(child.key());
      if (auto* gm = dynamic_cast<const GraphModule*>(child.value().get())) {
        graph_modules_at_begin_.emplace(*path, gm);
      }
      path->push_back('.');
      note_graph_modules(*child.value(), path);
    }
    path->resize(base);
  }

  // A view GraphGetAttr handed out and the plugin has not released (its
  // DLPack deleter not yet called): the plugin may write through it at any
  // time, in any later pass. Shared with the plugin's tensor; it knows the
  // attribute's name.
  using HeldView = std::unique_ptr<SharedView, SharedView::Release>;
  // The DLPack view of `tensor`, whose deleter marks it released. Built
  // here rather than by at::toDLPack, which makes an as_strided view per
  // export (a dispatcher call; a sixth of fuse's time on 25k folds): the
  // view shares `tensor` itself, with torch's normalisation of the strides
  // of size-1 dimensions (gh-83069) done on a copy of the numbers.
  DLManagedTensor* track_view(std::string_view name,
                              const at::Tensor& tensor) const {
    if (!tensor.is_cpu()) return track_exported(name, tensor);
    const DLDataType dtype = at::getDLDataType(tensor);  // throws if none
    auto* shared = new SharedView(tensor);
    const size_t ndim = tensor.dim();
    int64_t* shape = shared->dims(ndim);
    int64_t* strides = shape + ndim;
    for (size_t i = 0; i < ndim; ++i) {
      shape[i] = tensor.sizes()[i];
      strides[i] = shape[i] < 2 ? 1 : tensor.strides()[i];
    }
    DLTensor& dl = shared->outer.dl_tensor;
    dl.data = tensor.data_ptr();
    dl.device = DLDevice{kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(ndim);
    dl.dtype = dtype;
    dl.shape = shape;
    dl.strides = strides;
    dl.byte_offset = 0;
    hold(name, shared);
    return &shared->outer;
  }
  // Notes `view` as held. The notes of views the plugin has released are
  // dropped whenever the notes have doubled since the last sweep, so a pass
  // that reads 100k tensors one at a time keeps a few of them, not 100k.
  void hold(std::string_view name, SharedView* view) const {
    view->set_name(name);
    held_views_.emplace_back(view);
    if (held_views_.size() < sweep_at_) return;
    held_views_.erase(
        std::remove_if(held_views_.begin(), held_views_.end(),
                       [](const HeldView& v) { return !v->held.load(); }),
        held_views_.end());
    sweep_at_ = std::max<size_t>(kFirstSweep, 2 * held_views_.size());
  }
  // track_view through at::toDLPack, for tensors not on the CPU (it says
  // which devices DLPack cannot carry).
  DLManagedTensor* track_exported(std::string_view name,
                                  const at::Tensor& tensor) const {
    DLManagedTensor* inner = at::toDLPack(tensor);
    auto* shared = new SharedView(tensor);
    shared->inner = inner;
    shared->outer.dl_tensor = inner->dl_tensor;
    hold(name, shared);
    return &shared->outer;
  }
  // remember() for every view still held whose storage is still that of
  // the module's attribute of that name (a replaced attribute's old
  // storage is no longer the module's); forgets the released ones.
  void remember_held_views() {
    std::vector<HeldView> still;
    for (HeldView& v : held_views_) {
      if (!v->held.load()) continue;
      at::Tensor now = module_.get_attr(v->name());
      if (now.defined() && now.has_storage() &&
          now.storage().is_alias_of(v->tensor.storage())) {
        remember(v->name(), now);
      }
      still.push_back(std::move(v));
    }
    held_views_ = std::move(still);
    sweep_at_ = std::max<size_t>(kFirstSweep, 2 * held_views_.size());
  }

  // Writes `value` into the tensor at `name` in place, as the pass did in
  // the worker (remembered first, so a rollback undoes it).
  bool write_in_place(const std::string& name, const at::Tensor& value,
                      std::string* error) {
    at::Tensor t = module_.get_attr(name);
    if (!t.defined() || t.sizes() != value.sizes()) {
      *error = cat("the tensor '", name, "' the pass wrote into is not there");
      return false;
    }
    remember(name, t);
    torch::NoGradGuard no_grad;
    t.detach().copy_(value);
    return true;
  }

  // Takes the submodule at the qualified `name` out of its parent (one the
  // pass added); nothing when there is none.
  void remove_module(const std::string& name) {
    const size_t dot = name.rfind('.');
    std::shared_ptr<torch::nn::Module> parent;
    torch::nn::Module* owner = &module_;
    if (dot != std::string::npos) {
      parent = module_.get_submodule(std::string_view(name).substr(0, dot));
      if (parent == nullptr) return;
      owner = parent.get();
    }
    const std::string leaf =
        dot == std::string::npos ? name : name.substr(dot + 1);
    if (owner->named_children().contains(leaf)) owner->unregister_module(leaf);
  }

  // GraphModules the pass added as submodules behind the journal's back
  // (GraphAddSubgraphModule), outermost only, in module order.
  std::vector<std::pair<std::string, const GraphModule*>> new_graph_modules() {
    std::vector<std::pair<std::string, const GraphModule*>> found;
    std::set<std::string> journaled;
    for (const Entry& e : journal_) {
      if (!e.held) journaled.insert(e.name);
    }
    for (const auto& m : module_.named_modules("", /*include_self=*/false)) {
      auto* gm = dynamic_cast<const GraphModule*>(m.value().get());
      auto before = graph_modules_at_begin_.find(m.key());
      if (gm == nullptr || journaled.count(m.key()) > 0 ||
          (before != graph_modules_at_begin_.end() && before->second == gm)) {
        continue;
      }
      bool nested = false;
      for (const auto& f : found) {
        nested = nested || m.key().rfind(f.first + ".", 0) == 0;
      }
      if (!nested) found.emplace_back(m.key(), gm);
    }
    return found;
  }

  // Adds `module` at `name` as add_module does (journaled).
  void adopt_module(const std::string& name,
                    std::shared_ptr<torch::nn::Module> module) {
    Entry entry;
    entry.name = name;
    entry.is_module = true;
    entry.previous_module = module_.get_submodule(name);
    // A replacement keeps the mode of the module it replaces (a fused
    // convolution of an eval-mode model is in eval mode too).
    if (entry.previous_module != nullptr) {
      module->train(entry.previous_module->is_training());
    }
    journal_.push_back(std::move(entry));
    module_.add_submodule(name, std::move(module));
  }

  // The parameters and buffers of submodule `name`, by their names in it.
  c10::Dict<std::string, at::Tensor> module_state(const std::string& name) {
    c10::Dict<std::string, at::Tensor> state;
    std::shared_ptr<torch::nn::Module> m = module_.get_submodule(name);
    if (m == nullptr) return state;
    for (const auto& p : m->named_parameters())
      state.insert(p.key(), p.value());
    for (const auto& b : m->named_buffers()) state.insert(b.key(), b.value());
    return state;
  }

  // Copies `state` into submodule `name` (built by add_module just before).
  bool load_state(const std::string& name, const c10::impl::GenericDict& state,
                  std::string* error) {
    std::shared_ptr<torch::nn::Module> m = module_.get_submodule(name);
    // named_parameters() returns a copy: keep it while pointing into it.
    auto parameters = m->named_parameters();
    auto buffers = m->named_buffers();
    torch::NoGradGuard no_grad;
    for (const auto& item : state) {
      std::string key = item.key().toStringRef();
      at::Tensor* mine = parameters.find(key);
      if (mine == nullptr) mine = buffers.find(key);
      const at::Tensor& value = item.value().toTensor();
      if (mine == nullptr) {
        // A tensor the pass gave the module (a quantized module's weight
        // is registered when it is set): registered here the same way.
        module_.set_attr(cat(name, ".", key), value, /*is_parameter=*/false);
      } else if (mine->is_quantized() != value.is_quantized()) {
        *error = cat("module '", name, "': '", key, "' is ",
                     mine->is_quantized() ? "" : "not ",
                     "quantized, the worker's is ",
                     value.is_quantized() ? "" : "not ");
        return false;
      } else {
        mine->set_data(value);
      }
    }
    return true;
  }

  GraphModule& module_;
  std::vector<std::vector<at::Tensor>> batches_;  // of example inputs
  std::deque<Entry> journal_;                     // no moves as it grows
  // The GraphModules among the submodules when the pass began, by name.
  std::map<std::string, const GraphModule*> graph_modules_at_begin_;
  // The tensors read in this pass, in order, and their index by name.
  mutable std::deque<Read> reads_;
  // Keyed by the names in arena_.
  mutable absl::flat_hash_map<std::string_view, size_t> read_index_;
  mutable ByteArena arena_;
  mutable std::vector<HeldView> held_views_;
  static constexpr size_t kFirstSweep = 1024;
  mutable size_t sweep_at_ = kFirstSweep;
  // The child graphs the pass borrowed (GraphSubmoduleGraph).
  LentChildGraphs lent_;
};

GraphModuleTarget::GraphModuleTarget(GraphModule& module,
                                     std::vector<at::Tensor> example_inputs,
                                     bool recompile_at_finish)
    : module_(module),
      attributes_(
          std::make_unique<Attributes>(module, std::move(example_inputs))),
      recompile_at_finish_(recompile_at_finish) {}
GraphModuleTarget::~GraphModuleTarget() = default;

void GraphModuleTarget::add_example_batches(
    std::vector<std::vector<at::Tensor>> batches) {
  attributes_->add_batches(std::move(batches));
}

Graph& GraphModuleTarget::graph() { return module_.graph(); }
AttributeStore* GraphModuleTarget::attributes() { return attributes_.get(); }
std::vector<at::Tensor> GraphModuleTarget::example_inputs() const {
  return attributes_->example_inputs();
}

void GraphModuleTarget::forget_example_inputs() {
  attributes_->clear_batches();
}

void GraphModuleTarget::replace_graph(std::unique_ptr<Graph> graph) {
  module_.set_graph(std::move(graph));
}
void GraphModuleTarget::end_attributes() { attributes_->clear(); }
void GraphModuleTarget::rollback_attributes() {
  attributes_->undo();
  submodules_current_ = true;
}
bool GraphModuleTarget::attributes_changed() const {
  return attributes_->changed();
}
std::string GraphModuleTarget::encode_attribute_changes(
    std::vector<std::pair<std::string, ModuleSpec>>* added) {
  return attributes_->encode(added);
}
absl::Status GraphModuleTarget::apply_attribute_changes(
    const std::vector<std::pair<std::string, ModuleSpec>>& added,
    std::string_view bytes) {
  return attributes_->apply(added, bytes);
}
namespace {
// Every GraphModule below `m`, outer before inner (named_modules' order,
// without building its 'a.b.c' names: a model of 50k modules paid a third
// of a second per pass for them).
void recompile_graph_submodules(const torch::nn::Module& m) {
  for (const auto& child : children_of(m)) {
    if (auto* sub = dynamic_cast<GraphModule*>(child.value().get())) {
      sub->recompile();
    }
    recompile_graph_submodules(*child.value());
  }
}
}  // namespace

void GraphModuleTarget::lint_lent_graphs() const {
  attributes_->lint_lent_graphs();
}
void GraphModuleTarget::begin_attributes() {
  submodules_current_ = false;
  attributes_->begin();
}
void GraphModuleTarget::committed() {
  recompile_graph_submodules(module_);
  submodules_current_ = true;
}
// After a commit or a rollback the submodules are as compiled; only a
// pipeline that ran no pass (or one left open) has them to recompile.
void GraphModuleTarget::finish() {
  if (!submodules_current_) recompile_graph_submodules(module_);
  submodules_current_ = true;
  if (recompile_at_finish_) module_.recompile();
}

absl::Status GraphModuleTarget::write(const std::string& json_path) const {
  return write_graph_module(module_, json_path);
}

}  // namespace fx::host
