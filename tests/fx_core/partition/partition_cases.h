// The cases partition_cases.py writes (torch.fx's partitions and fused
// graphs, made at test time), read for the partitioner and fusion suites.
#ifndef TESTS_FX_CORE_PARTITION_PARTITION_CASES_H_
#define TESTS_FX_CORE_PARTITION_PARTITION_CASES_H_

#include <memory>
#include <string>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/partition/capability_partitioner.h"
#include "fx_core/partition/operator_support.h"

namespace fx::testing {

struct PartitionCase {
  std::string name;
  std::string dir;
  GraphFile file;
  OperatorSupport support;
  PartitionOptions options;
  // torch.fx's partitions (node names in graph order), in its order.
  std::vector<std::vector<std::string>> expected;
  bool ambiguous = false;
};

// Runs partition_cases.py once per process (groups: resnet, resnet_aten,
// transformer, random; all when empty) into TEST_TMPDIR and returns the case
// directories' names, sorted. Throws std::runtime_error when it fails.
std::vector<std::string> partition_case_names();
std::string partition_case_dir(const std::string& name);

// Reads one case: its graph, the support rule of rule.json built from
// target_support / opcode_support, and torch.fx's partitions.
PartitionCase load_partition_case(const std::string& name);

// Partitions as lists of names.
std::vector<std::vector<std::string>> partition_names(
    const std::vector<Partition>& partitions);

}  // namespace fx::testing

#endif  // TESTS_FX_CORE_PARTITION_PARTITION_CASES_H_
