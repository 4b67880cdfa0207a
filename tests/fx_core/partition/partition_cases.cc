#include "tests/fx_core/partition/partition_cases.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "fx_core/format/json_text.h"
#include "fx_core/partition/target_support.h"
#include "tests/testing/python.h"
#include "tests/testing/reference.h"

namespace fx::testing {
namespace {

std::string cases_dir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return std::string(tmp ? tmp : "/tmp") + "/partition_cases";
}

nlohmann::ordered_json read_json(const std::string& path) {
  auto json = parse_json_text(read_file(path), path);
  if (!json.ok())
    throw std::runtime_error(std::string(json.status().message()));
  return *std::move(json);
}

std::vector<std::string> strings(const nlohmann::ordered_json& list) {
  return list.get<std::vector<std::string>>();
}

OperatorSupport rule_support(const nlohmann::ordered_json& rule,
                             const GraphFile& file) {
  SupportedTargets targets{strings(rule["functions"]), strings(rule["methods"]),
                           strings(rule["module_types"])};
  auto modules = file.modules;
  ModuleTypeFn module_type = [modules](const Node& call) {
    for (const auto& [path, spec] : modules) {
      if (path == call.target()) return spec.type;
    }
    return std::string();
  };
  std::vector<OperatorSupport> rules{target_support(targets, module_type)};
  if (rule["get_attr"].get<bool>()) {
    rules.push_back(opcode_support({Opcode::kGetAttr}));
  }
  return any_of(std::move(rules));
}

}  // namespace

std::vector<std::string> partition_case_names() {
  static const std::vector<std::string> names = [] {
    run_python("tests/fx_core/partition/partition_cases.py",
               {runfile("tools/torchfx_export.py"), cases_dir()});
    std::vector<std::string> out;
    for (const auto& entry : std::filesystem::directory_iterator(cases_dir())) {
      out.push_back(entry.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }();
  return names;
}

std::string partition_case_dir(const std::string& name) {
  return cases_dir() + "/" + name;
}

PartitionCase load_partition_case(const std::string& name) {
  PartitionCase c;
  c.name = name;
  c.dir = partition_case_dir(name);
  absl::StatusOr<GraphFile> file = read_graph_file(c.dir + "/graph.fx.json");
  if (!file.ok())
    throw std::runtime_error(std::string(file.status().message()));
  c.file = *std::move(file);
  nlohmann::ordered_json rule = read_json(c.dir + "/rule.json");
  c.support = rule_support(rule, c.file);
  c.options.allows_single_node_partition = rule["allows_single"].get<bool>();
  nlohmann::ordered_json expected = read_json(c.dir + "/partitions.json");
  for (const auto& p : expected["partitions"]) c.expected.push_back(strings(p));
  c.ambiguous = expected["ambiguous"].get<bool>();
  return c;
}

std::vector<std::vector<std::string>> partition_names(
    const std::vector<Partition>& partitions) {
  std::vector<std::vector<std::string>> out;
  for (const Partition& p : partitions) {
    std::vector<std::string> names;
    for (const Node* n : p.nodes) names.emplace_back(n->name());
    out.push_back(std::move(names));
  }
  return out;
}

}  // namespace fx::testing
