// Fuzz target: module configs, from the file's `config` to the module's
// forward. A config is untrusted: ModuleRegistry::create checks it against
// the kind's constructor contract (module_registry.h), and whatever it
// accepts must build and run on a small input without crashing (issue 41: a
// Conv2d padding of 2^53 + 1 crashed in oneDNN's convolution).
//
// An input is three lines: a module type ("torch.nn.Conv2d"), its config as
// the JSON object a graph file's `config` holds ({"in_channels": 2, ...}),
// and the input tensor's sizes ("1 2 5 5"). The config is read by the
// fx-graph reader itself (a one-module graph around it), so it decodes as a
// file's does. What the contract refuses must be refused with a message;
// what it accepts is built when that stays within the fuzzer's memory (at
// most 2^20 weight elements by the kind's declared weights; a kind declaring
// none, no int beyond 64) and run when every int is at most 64
// (plan_for).
#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/value.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

constexpr int64_t kMaxWeightElements = int64_t{1} << 20;
constexpr int64_t kMaxInputElements = 4096;
// A kind declaring no weights is built only when every int of its
// config is at most this (its weights are then at most a few of its ints
// multiplied: 64 LSTM layers of 64 gates of 64 inputs).
constexpr int64_t kMaxUndeclaredInt = 64;

// The three lines of the input; false when there are fewer.
bool split(std::string_view in, std::string_view out[3]) {
  for (int i = 0; i < 2; ++i) {
    size_t nl = in.find('\n');
    if (nl == std::string_view::npos) return false;
    out[i] = in.substr(0, nl);
    in.remove_prefix(nl + 1);
  }
  out[2] = in;
  return true;
}

// The config of a one-module graph file around `type` and `config`.
absl::StatusOr<fx::ModuleSpec> read_config(std::string_view type,
                                           std::string_view config) {
  std::string json = std::string(
      R"({"format": "fx-graph", "version": 1, "nodes": [
 {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
 {"name": "output", "op": "output", "target": "output", "args": [{"node": "x"}], "kwargs": {}}],
 "modules": {"m": {"type": )");
  // The type as a JSON string: quotes and backslashes make it unreadable.
  if (type.find_first_of("\"\\") != std::string_view::npos) {
    return absl::InvalidArgumentError("a type the fuzzer does not quote");
  }
  json += "\"" + std::string(type) + "\", \"config\": " + std::string(config) +
          "}}}";
  absl::StatusOr<fx::GraphFile> file = fx::parse_graph_json(json, "<fuzz>");
  if (!file.ok()) return file.status();
  if (file->modules.size() != 1) {
    return absl::InvalidArgumentError("not one module");
  }
  return file->modules[0].second;
}

// Sizes of at most 5 dimensions and kMaxInputElements elements.
bool input_sizes(std::string_view text, std::vector<int64_t>* sizes) {
  std::istringstream in{std::string(text)};
  int64_t d = 0, numel = 1;
  while (in >> d) {
    if (d < 0 || d > kMaxInputElements || sizes->size() == 5) return false;
    numel *= d;
    if (numel > kMaxInputElements) return false;
    sizes->push_back(d);
  }
  return true;
}

// The largest magnitude of an int in `v` (alone or in a list or tuple).
int64_t max_abs_int(const c10::IValue& v) {
  if (v.isInt())
    return v.toInt() == INT64_MIN ? INT64_MAX : std::abs(v.toInt());
  int64_t most = 0;
  if (v.isIntList() || v.isList() || v.isTuple()) {
    std::vector<c10::IValue> items =
        v.isTuple() ? v.toTupleRef().elements().vec() : v.toListRef().vec();
    for (const c10::IValue& item : items) {
      most = std::max(most, max_abs_int(item));
    }
  }
  return most;
}

// Thrown to stop walking weights beyond the fuzzer's bound.
struct TooLarge {};

// What the fuzzer does with a config.
enum class Plan { kSkip, kBuild, kBuildAndRun };

// kSkip when building could allocate beyond the fuzzer's bounds: the
// weights the kind declares (weight_shapes or visit_weights) over
// kMaxWeightElements, or (a kind declaring
// none) an int beyond kMaxUndeclaredInt; the forward runs only when every
// int is at most 64, so its output stays small. A config the contract refuses
// is built: create() must refuse it with a message.
Plan plan_for(const fx::ModuleKind& kind, const fx::ArgumentDict& config) {
  std::vector<std::pair<std::string, c10::IValue>> kwargs;
  for (const auto& [key, value] : config) {
    try {
      kwargs.emplace_back(key, fx::constant_value(value));
    } catch (const std::exception&) {
      return Plan::kBuild;
    }
  }
  std::vector<c10::IValue> values;
  std::string error;
  if (!fx::bind_values(kind.init_schema, {}, kwargs, &values, &error)) {
    return Plan::kBuild;
  }
  fx::OpArgs args(kind.init_schema, values.data());
  int64_t most = 0;
  try {
    fx::check_module_config(kind, args);
    for (size_t i = 0; i < args.size(); ++i) {
      most = std::max(most, max_abs_int(args[i]));
    }
    int64_t total = 0;
    bool declared = fx::visit_declared_weights(
        kind, args, [&](const std::string&, const std::vector<int64_t>& shape) {
          int64_t numel = 1;
          for (int64_t d : shape) numel *= d;  // checked not to overflow
          total += numel;
          if (total > kMaxWeightElements) throw TooLarge();
        });
    if (!declared && most > kMaxUndeclaredInt) return Plan::kSkip;
  } catch (const TooLarge&) {
    return Plan::kSkip;
  } catch (const std::exception&) {
    return Plan::kBuild;
  }
  return most <= 64 ? Plan::kBuildAndRun : Plan::kBuild;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fx::fuzz::require;
  std::string_view lines[3];
  std::string_view input(reinterpret_cast<const char*>(data), size);
  if (!split(input, lines)) return 0;
  absl::StatusOr<fx::ModuleSpec> spec = read_config(lines[0], lines[1]);
  fx::fuzz::require_message(spec.status());
  std::vector<int64_t> sizes;
  if (!spec.ok() || !input_sizes(lines[2], &sizes)) return 0;
  const fx::ModuleKind* kind = fx::ModuleRegistry::global().find(spec->type);
  if (kind == nullptr || !kind->create) return 0;
  Plan plan = plan_for(*kind, spec->config);
  if (plan == Plan::kSkip) return 0;
  std::shared_ptr<torch::nn::Module> module;
  try {
    module = fx::ModuleRegistry::global().create(spec->type, spec->config);
  } catch (const std::exception& e) {
    require(std::string_view(e.what()).size() > 0, "an empty refusal");
    return 0;
  }
  if (plan != Plan::kBuildAndRun) return 0;
  module->eval();
  try {
    fx::call_module(*module, "m", {at::rand(sizes)}, {});
  } catch (const std::exception& e) {
    require(std::string_view(e.what()).size() > 0, "an empty refusal");
  }
  return 0;
}
