// What a pipeline transforms: a graph, the attributes of the module that owns
// it (if any), and how to put the graph back when a pass is rolled back.
//
//  - GraphModuleTarget: a GraphModule. Passes see its parameters, buffers and
//    submodules through GraphHasAttr / GraphGetAttr / GraphSetAttr /
//    GraphModuleType. Tensors handed to a pass are DLPack views that share
//    memory with the module; a pass should set a new tensor with
//    GraphSetAttr rather than write into them, but one that writes in place
//    is rolled back too: each tensor read is copied (once per pass) and put
//    back on rollback, and a write is a change (changed()). So is a write
//    through a view an earlier pass kept (did not release): at begin(),
//    every tensor with a view still held is copied too. Example inputs
//    are handed out as copies.
//  - GraphFileTarget: a graph file without weights (graph and `modules`
//    section); attribute calls fail with FX_FAILED_PRECONDITION.
//
// Transactions: begin() before a pass, then commit() or rollback(). Rolling
// back restores the graph exactly (nodes, names, meta, the namespace) and
// every attribute the pass replaced, and takes out every submodule it added
// (a split's submod_0: a rerun can add it again). A parameter or buffer the
// pass added under a new name stays in the module (LibTorch cannot
// unregister one) but is unreferenced by the restored graph, so a written
// bundle is byte-identical to one written before the pass.
//
// Isolation (isolated_pass.h): a pass run in a worker process changes the
// worker's copy of the target; encode_changes() there turns what the pass
// made of it into bytes, and apply_changes() in the host puts them into the
// host's target, inside the transaction begun before the worker started, so
// commit() and rollback() then work as if the pass had run in the host.
#ifndef HOST_PIPELINE_PASS_TARGET_H_
#define HOST_PIPELINE_PASS_TARGET_H_

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fx_core/format/graph_json.h"
#include "fx_core/ir/graph.h"

namespace fx {
class GraphModule;
}  // namespace fx

namespace fx::host {

class AttributeStore;

// Readies `incoming`, a graph an isolated worker sent, to take `current`'s
// place: the names `current` handed out stay taken (unless the pass reset
// the namespace) and it keeps `current`'s code generator, which a file
// cannot carry (a Python CodeGen kept in process).
void adopt_worker_graph(const Graph& current, Graph& incoming,
                        bool namespace_reset);

class PassTarget {
 public:
  virtual ~PassTarget();
  virtual Graph& graph() = 0;
  // The attributes a pass may use, or nullptr when there are none.
  virtual AttributeStore* attributes() = 0;
  // The GraphModule whose graph this is, or nullptr (a bare graph file).
  virtual GraphModule* module() { return nullptr; }

  // A transaction around one pass.
  void begin();
  void commit();
  void rollback();
  // Whether the graph or an attribute differs from what begin() saw.
  bool changed();
  // Lints the graph and the child graphs the pass borrowed
  // (GraphSubmoduleGraph); throws FxError naming the graph at fault.
  void lint();
  // Lints only the borrowed child graphs (what a run without verification
  // still checks of them: they are written and recompiled as they are).
  virtual void lint_lent_graphs() const {}

  // In the worker, after the pass: the graph as an fx-graph JSON text (the
  // modules the pass added in its `modules` section) and the attributes the
  // pass set or added, with their values; empty when nothing changed
  // (changed()), so an unchanged graph costs no JSON.
  std::string encode_changes();
  // In the host, between begin() and commit()/rollback(): makes this target
  // what encode_changes() described (attributes through the journal, so a
  // rollback undoes them; the graph keeps the names it had handed out). An
  // error (unreadable bytes, an attribute that cannot be set) leaves the
  // transaction to be rolled back.
  absl::Status apply_changes(std::string_view bytes);

  // Called once after the pipeline (a GraphModule recompiles).
  virtual void finish() {}

  // The example inputs passes see (GraphExampleInput), one per placeholder;
  // none by default.
  virtual std::vector<at::Tensor> example_inputs() const { return {}; }
  // Drops them (and every batch): a pass changed the placeholders.
  virtual void forget_example_inputs() {}

  // Writes the current state as an fx-graph file at `json_path` (plus, for a
  // GraphModule, the weights beside it). Atomic per file.
  virtual absl::Status write(const std::string& json_path) const = 0;

 protected:
  virtual void replace_graph(std::unique_ptr<Graph> graph) = 0;
  virtual void begin_attributes() {}
  virtual void end_attributes() {}
  virtual void rollback_attributes() {}
  virtual bool attributes_changed() const { return false; }
  // The attribute part of encode_changes() / apply_changes(): the modules
  // the pass added go into `added` (the JSON's `modules`), the rest into the
  // returned bytes. Nothing by default.
  virtual std::string encode_attribute_changes(
      std::vector<std::pair<std::string, ModuleSpec>>* added) {
    (void)added;
    return {};
  }
  virtual absl::Status apply_attribute_changes(
      const std::vector<std::pair<std::string, ModuleSpec>>& added,
      std::string_view bytes) {
    (void)added, (void)bytes;
    return absl::OkStatus();
  }
  // After a pass was committed (a GraphModule recompiles the GraphModules
  // among its submodules, so later passes run them as they now are).
  virtual void committed() {}

 private:
  std::unique_ptr<Graph> snapshot_;
  // The graph namespace's generation when the pass began: a pass that reset
  // the namespace (GraphResetNamespace) sends a fresh one back.
  uint64_t namespace_generation_ = 0;
};

class GraphModuleTarget : public PassTarget {
 public:
  // `example_inputs` (tensors, one per placeholder) are what passes get from
  // GraphExampleInput. With `recompile_at_finish` false, finish() leaves the
  // module's code() and executable form as they were before the pipeline
  // (for a caller that reads only the graph and attributes afterwards and
  // drops the module, as fx_sdk.run_pipeline does; recompiling a large
  // graph is about half a dce run).
  explicit GraphModuleTarget(GraphModule& module,
                             std::vector<at::Tensor> example_inputs = {},
                             bool recompile_at_finish = true);
  ~GraphModuleTarget() override;
  // More batches of example inputs after the first (calibration data, what
  // GraphExampleBatchInput gives for batches 1, 2, ...), each one tensor
  // per placeholder.
  void add_example_batches(std::vector<std::vector<at::Tensor>> batches);
  Graph& graph() override;
  AttributeStore* attributes() override;
  GraphModule* module() override { return &module_; }
  void finish() override;
  std::vector<at::Tensor> example_inputs() const override;
  void forget_example_inputs() override;
  absl::Status write(const std::string& json_path) const override;
  void lint_lent_graphs() const override;

 protected:
  void replace_graph(std::unique_ptr<Graph> graph) override;
  void begin_attributes() override;
  void end_attributes() override;
  void rollback_attributes() override;
  bool attributes_changed() const override;
  std::string encode_attribute_changes(
      std::vector<std::pair<std::string, ModuleSpec>>* added) override;
  absl::Status apply_attribute_changes(
      const std::vector<std::pair<std::string, ModuleSpec>>& added,
      std::string_view bytes) override;
  void committed() override;

 private:
  class Attributes;
  GraphModule& module_;
  std::unique_ptr<Attributes> attributes_;
  bool recompile_at_finish_;
  // The GraphModules among the submodules were recompiled after the last
  // pass (committed) or are as before it (rolled back).
  bool submodules_current_ = false;
};

class GraphFileTarget : public PassTarget {
 public:
  explicit GraphFileTarget(GraphFile& file) : file_(file) {}
  Graph& graph() override { return *file_.graph; }
  AttributeStore* attributes() override { return nullptr; }
  absl::Status write(const std::string& json_path) const override;

 protected:
  void replace_graph(std::unique_ptr<Graph> graph) override {
    file_.graph = std::move(graph);
  }

 private:
  GraphFile& file_;
};

}  // namespace fx::host

#endif  // HOST_PIPELINE_PASS_TARGET_H_
