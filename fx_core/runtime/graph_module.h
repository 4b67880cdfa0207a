// fx::GraphModule: a torch::nn::Module generated from a Graph (torch.fx's
// `GraphModule`).
//
// Built from a root module and a Graph, it copies from the root only what
// the graph references: the submodule of every call_module target and the
// parameter or buffer of every get_attr target, at the same qualified path
// (`layer1.0.conv1`), creating plain container modules on the way. As in
// torch.fx the copied submodules are shared with the root, not cloned;
// deepcopy() makes an independent copy.
//
// recompile() regenerates `code()` (torch.fx's `gm.code`, byte for byte) and
// drops the executable form (a GraphExecutor, graph_executor.h: the compiler
// layer's ExecutionPlan), which the first forward() or check_executable()
// after it compiles (once, whichever thread asks first): a pass pipeline
// that recompiles a module's graphs after every pass compiles none of them
// it does not run. forward() runs it through the graph's CodeGen
// process_inputs / process_outputs hooks. Call recompile()
// after editing graph() or replacing an attribute, as in torch.fx. A graph
// that cannot run (an unknown target) still prints and generates code;
// forward() then throws FxError naming the node (check_executable() reports
// it earlier).
//
// Targets no registry knows (a host language's callables) and get_attr
// targets that are neither submodules nor tensors (a host language's
// objects) may be given to one GraphModule as its foreign_targets()
// (foreign_targets.h): they are kept when the graph is replaced, copied by
// deepcopy() and passed on to a GraphModule built from this one as its
// root. A get_attr node reads such an attribute where the module has no
// parameter or buffer at its path.
#ifndef FX_CORE_RUNTIME_GRAPH_MODULE_H_
#define FX_CORE_RUNTIME_GRAPH_MODULE_H_

#include <ATen/core/ivalue.h>
#include <torch/nn/module.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/foreign_targets.h"
#include "fx_core/runtime/module_path.h"

namespace fx {

class GraphExecutor;
namespace sym {
class ShapeEnv;
}  // namespace sym

// What a tensor attribute that is not a parameter is in torch.fx's Python
// module. LibTorch's modules have buffers only (always in state_dict): a
// GraphModule holds each such tensor as a buffer and keeps its kind beside
// it, so that it goes back to Python (and to files) as it came.
enum class BufferKind {
  kPersistent,     // register_buffer(name, t)
  kNonPersistent,  // register_buffer(name, t, persistent=False)
  kPlain,          // a plain attribute (setattr): neither parameter nor buffer
};

class GraphModule : public torch::nn::Module, public GraphOwner {
 public:
  // What a GraphModule can be built from when there is no root module (a
  // graph file, a pass that builds modules): qualified path -> a submodule
  // or a tensor (a parameter or a buffer, as `is_parameter` says; a
  // parameter's requires_grad is the tensor's).
  struct Attribute {
    std::shared_ptr<torch::nn::Module> module;
    at::Tensor tensor;
    bool is_parameter = false;  // for a tensor: parameter or buffer
    BufferKind buffer_kind = BufferKind::kPersistent;  // for a buffer
  };
  using AttributeMap = std::vector<std::pair<std::string, Attribute>>;

  // Copies what `graph` references from `root` (see above), and a root
  // GraphModule's foreign targets (or `foreign_targets`): a get_attr target
  // that is one of their attributes needs nothing from `root`. Throws
  // FxError naming the node whose target `root` lacks.
  GraphModule(torch::nn::Module& root, std::unique_ptr<Graph> graph,
              std::string class_name = "GraphModule");
  GraphModule(const AttributeMap& root, std::unique_ptr<Graph> graph,
              std::string class_name = "GraphModule",
              ForeignTargets foreign_targets = {});
  ~GraphModule() override;

  Graph& graph() { return *graph_; }
  const Graph& graph() const { return *graph_; }
  // Replaces the graph (taking ownership) and recompiles.
  void set_graph(std::unique_ptr<Graph> graph);
  const std::string& class_name() const { return class_name_; }

  // torch.fx's gm.code: the Python source of forward.
  const std::string& code() const { return code_; }
  // Regenerates code() and the executable form from graph().
  void recompile();
  // OK when forward() can run; otherwise the error naming the node.
  absl::Status check_executable() const;

  // The call_function / call_method targets this module runs that the
  // OpRegistry does not know, consulted before it, and the attributes that
  // are neither submodules nor tensors. set_foreign_targets
  // replaces them and recompiles; after adding to mutable_foreign_targets()
  // call recompile(), as after editing graph().
  const ForeignTargets& foreign_targets() const { return foreign_targets_; }
  ForeignTargets& mutable_foreign_targets() { return foreign_targets_; }
  void set_foreign_targets(ForeignTargets targets);

  // A symbolic graph's capture-time hints and guards (torch 1.13's
  // gm.shape_env; nullptr: none). Takes effect at recompile() (set_shape_env
  // recompiles), where they join the sizes the placeholders' tensor_meta
  // declares (shape_guards.h).
  void set_shape_env(std::shared_ptr<const sym::ShapeEnv> declared);
  const std::shared_ptr<const sym::ShapeEnv>& declared_shape_env() const {
    return declared_shape_env_;
  }
  // The environment forward() checks its inputs against: nullptr unless
  // the graph is symbolic.
  const sym::ShapeEnv* shape_env() const { return shape_env_.get(); }

  // Runs the graph on positional inputs. A symbolic graph first checks them
  // against shape_env(): FxError naming the placeholder, the dimension and
  // the guard they break.
  c10::IValue forward(std::vector<c10::IValue> inputs);
  template <typename... Inputs>
  c10::IValue operator()(Inputs&&... inputs) {
    return forward(
        std::vector<c10::IValue>{c10::IValue(std::forward<Inputs>(inputs))...});
  }

  // An independent copy: a copy of the graph, clones of the submodules,
  // parameters and buffers, copies of the foreign attributes that have a
  // `copy` (ForeignTargets::deepcopy). Throws FxError for a submodule that
  // cannot be cloned (a class that is not torch::nn::Cloneable).
  std::shared_ptr<GraphModule> deepcopy() const;

  // The submodule at a dotted path (`layer1.0.conv1`), or nullptr.
  std::shared_ptr<torch::nn::Module> get_submodule(
      std::string_view qualified_name) const;
  // The parameter or buffer at a dotted path, or an undefined tensor.
  at::Tensor get_attr(std::string_view qualified_name) const;
  // Adds or replaces a submodule / tensor at a dotted path, creating
  // containers on the way (torch.fx's add_submodule). Call recompile() after.
  // A new buffer takes `buffer_kind`; a replaced tensor keeps its kind.
  void add_submodule(std::string_view qualified_name,
                     std::shared_ptr<torch::nn::Module> module);
  void set_attr(std::string_view qualified_name, const at::Tensor& tensor,
                bool is_parameter,
                BufferKind buffer_kind = BufferKind::kPersistent);
  // The kind of the buffer at a dotted path set through this GraphModule,
  // or through the child GraphModule the path goes through (kPersistent
  // for any other path: a module's own buffers are).
  BufferKind buffer_kind(std::string_view qualified_name) const;
  // Every submodule, parameter and buffer the graph references, in the
  // order they are first used (what a graph file's modules/weights hold).
  AttributeMap referenced_attributes() const;

  // A get_attr or call_module node's reference to an attribute.
  struct AttributeUse {
    Opcode op;
    std::string target;
    std::string node;  // the node's name, for errors
  };
  // The graph's references, in node order.
  static std::vector<AttributeUse> attribute_uses(const Graph& graph);
  // What the module held before keep_used_attributes().
  struct HeldAttributes {
    ModuleMembers members;
    std::map<std::string, BufferKind, std::less<>> buffer_kinds;
  };
  // torch.fx's GraphModule(self, graph) in place, `uses` being the graph's
  // references (attribute_uses): the module's submodules and tensors
  // become those the uses name, installed in that order under new plain
  // containers (the modules and tensors themselves are the same objects;
  // no module below is changed). A buffer keeps its kind, as the
  // constructor's copies do (torch's _copy_attr registers every tensor
  // that is not a parameter as a persistent buffer). Returns what it held
  // before, which restore_attributes() puts back, or nullptr when it held
  // exactly that already (the same objects at the same paths in the same
  // order): then nothing changed. Throws FxError naming the node whose
  // target the module lacks, leaving the module as it was. Call
  // recompile() after.
  std::shared_ptr<HeldAttributes> keep_used_attributes(
      const std::vector<AttributeUse>& uses);
  void restore_attributes(const HeldAttributes& held);

  // GraphOwner: lint and dead code elimination ask these. A foreign
  // attribute (or a path holding one) is kOther.
  AttrKind resolve_attr(std::string_view qualified_name) const override;
  bool has_function(std::string_view target) const override;

 private:
  using AttributeLookup = std::function<Attribute(const AttributeUse&)>;
  void copy_from(const AttributeLookup& lookup);
  void install_attributes(const std::vector<AttributeUse>& uses,
                          const AttributeLookup& lookup);
  torch::nn::Module& container(std::string_view path, std::string* leaf);

  std::unique_ptr<Graph> graph_;
  std::string class_name_;
  std::string code_;
  // The executable form, compiled on demand (executor()); plan_error_ says
  // why there is none once plan_compiled_. Guarded by plan_mutex_.
  const GraphExecutor* executor() const;
  mutable std::mutex plan_mutex_;
  mutable bool plan_compiled_ = false;
  mutable std::unique_ptr<GraphExecutor> plan_;
  mutable std::string plan_error_;
  std::shared_ptr<const sym::ShapeEnv> declared_shape_env_;
  std::shared_ptr<const sym::ShapeEnv> shape_env_;
  ForeignTargets foreign_targets_;
  // Paths of the buffers whose kind is not kPersistent.
  std::map<std::string, BufferKind, std::less<>> buffer_kinds_;
};

}  // namespace fx

#endif  // FX_CORE_RUNTIME_GRAPH_MODULE_H_
