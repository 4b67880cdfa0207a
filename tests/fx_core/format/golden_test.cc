// Every graph in ../shared/reference, read from its fx-graph file, prints and
// generates code byte-identical to torch.fx's own output (graph.txt, code.py),
// and writes back to the same JSON bytes.
#include <gtest/gtest.h>

#include <string>

#include "fx_core/format/graph_json.h"
#include "fx_core/ir/codegen.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

class ReferenceGraph : public ::testing::TestWithParam<std::string> {
 protected:
  std::string path(const std::string& file) const {
    return testing::reference_dir() + "/" + GetParam() + "/" + file;
  }
};

TEST_P(ReferenceGraph, PrintsExactlyAsTorchFx) {
  absl::StatusOr<GraphFile> file = read_graph_file(path("graph.fx.json"));
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->graph->str() + "\n", testing::read_file(path("graph.txt")));
}

TEST_P(ReferenceGraph, GeneratesExactlyTorchFxCode) {
  absl::StatusOr<GraphFile> file = read_graph_file(path("graph.fx.json"));
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->graph->python_code("self").src,
            testing::read_file(path("code.py")));
}

TEST_P(ReferenceGraph, WritesBackTheSameJson) {
  std::string text = testing::read_file(path("graph.fx.json"));
  absl::StatusOr<GraphFile> file = parse_graph_json(text, GetParam());
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(to_graph_json(*file), text);
}

TEST_P(ReferenceGraph, PassesLint) {
  absl::StatusOr<GraphFile> file = read_graph_file(path("graph.fx.json"));
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_NO_THROW(file->graph->lint());
}

TEST(ReferenceGraphs, AreAllPresent) {
  ASSERT_FALSE(testing::reference_dir().empty());
  EXPECT_GE(testing::reference_cases().size(), 7u);
}

INSTANTIATE_TEST_SUITE_P(SharedReference, ReferenceGraph,
                         ::testing::ValuesIn(testing::reference_cases()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fx
