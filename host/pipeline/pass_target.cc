// PassTarget: what every pass target shares (the graph snapshot a pass
// starts from, commit and rollback, the attribute changes an isolated pass
// sends back as bytes), and GraphFileTarget's write. GraphModuleTarget is
// graph_module_target.cc.
#include "host/pipeline/pass_target.h"

#include <ATen/DLConvertor.h>
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
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fx_core/io/atomic_file.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/module_path.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/support/strings.h"
#include "host/capi/c_api.h"
#include "host/pipeline/graph_equality.h"
#include "host/pipeline/subgraph_module_transfer.h"

namespace fx::host {

PassTarget::~PassTarget() = default;

void PassTarget::begin() {
  snapshot_ = graph().snapshot();
  namespace_generation_ = graph().graph_namespace().generation();
  begin_attributes();
}

void PassTarget::lint() {
  graph().lint();
  lint_lent_graphs();
}

void PassTarget::commit() {
  snapshot_.reset();
  end_attributes();
  committed();
}

void PassTarget::rollback() {
  rollback_attributes();
  if (snapshot_) replace_graph(std::move(snapshot_));
}

namespace {
// encode_changes() bytes: the JSON text's size, a flag byte, the text, the
// attributes. The flag says the pass reset the graph's namespace: the graph
// rebuilt from the text then keeps the fresh namespace the file gives it.
constexpr size_t kSizeBytes = sizeof(uint64_t);
constexpr size_t kHeaderBytes = kSizeBytes + 1;
}  // namespace

void adopt_worker_graph(const Graph& current, Graph& incoming,
                        bool namespace_reset) {
  if (!namespace_reset) incoming.reserve_names_of(current);
  incoming.set_codegen(current.codegen().clone());
}

std::string PassTarget::encode_changes() {
  // Nothing changed (an analysis, a pass with nothing to do): no bytes, so
  // the host parses nothing.
  if (!changed()) return {};
  std::vector<std::pair<std::string, ModuleSpec>> added;
  std::string attributes = encode_attribute_changes(&added);
  std::string json = to_graph_json(graph(), added);
  uint64_t size = json.size();
  std::string bytes(reinterpret_cast<const char*>(&size), kSizeBytes);
  const bool reset =
      graph().graph_namespace().generation() != namespace_generation_;
  bytes.push_back(reset ? '\1' : '\0');
  return bytes + json + attributes;
}

absl::Status PassTarget::apply_changes(std::string_view bytes) {
  if (bytes.empty()) return absl::OkStatus();  // the pass changed nothing
  uint64_t size = 0;
  if (bytes.size() >= kSizeBytes) std::memcpy(&size, bytes.data(), kSizeBytes);
  if (bytes.size() < kHeaderBytes || bytes.size() - kHeaderBytes < size) {
    return absl::InternalError("the worker's result is truncated");
  }
  const bool namespace_reset = bytes[kSizeBytes] != '\0';
  absl::StatusOr<GraphFile> file =
      parse_graph_json(bytes.substr(kHeaderBytes, size), "<worker result>");
  if (!file.ok()) return file.status();
  try {
    absl::Status applied = apply_attribute_changes(
        file->modules, bytes.substr(kHeaderBytes + size));
    if (!applied.ok()) return applied;
    adopt_worker_graph(graph(), *file->graph, namespace_reset);
    replace_graph(std::move(file->graph));
  } catch (const std::exception& e) {
    return absl::InternalError(
        cat("the worker's result cannot be applied: ", e.what()));
  }
  return absl::OkStatus();
}

bool PassTarget::changed() {
  return attributes_changed() ||
         (snapshot_ && !structurally_equal(*snapshot_, graph()));
}

absl::Status GraphFileTarget::write(const std::string& json_path) const {
  std::string json = to_graph_json(*file_.graph, file_.modules, file_.weights);
  if (absl::Status s = check_reads_back(json, json_path); !s.ok()) return s;
  return write_file_atomically(json_path, json);
}

}  // namespace fx::host
