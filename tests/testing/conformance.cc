#include "tests/testing/conformance.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "absl/status/statusor.h"
#include "fx_core/format/graph_json.h"
#include "fx_core/ir/codegen.h"
#include "tests/testing/python.h"
#include "tests/testing/reference.h"

namespace fx::testing {

std::string conformance_skip_reason() {
  if (have_python_torch(/*torchvision=*/true)) return "";
  return "python3-torch / python3-torchvision are not installed";
}

std::vector<std::string> selected_models(const std::vector<std::string>& all,
                                         const char* env) {
  const char* listed = std::getenv(env);
  if (listed == nullptr) return all;
  std::vector<std::string> names;
  std::stringstream in(listed);
  for (std::string name; std::getline(in, name, ',');) {
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

std::string export_models(const std::string& dir,
                          const std::vector<std::string>& models) {
  std::vector<std::string> args = {dir};
  args.insert(args.end(), models.begin(), models.end());
  try {
    run_python("tests/tools/export_torchvision.py", args);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

void expect_text_and_code_as_torch_fx(const std::string& model_dir) {
  std::string json = read_file(model_dir + "/graph.fx.json");
  absl::StatusOr<GraphFile> file =
      parse_graph_json(json, model_dir + "/graph.fx.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->graph->str() + "\n", read_file(model_dir + "/graph.txt"));
  EXPECT_EQ(file->graph->python_code("self").src,
            read_file(model_dir + "/code.py"));
  EXPECT_EQ(to_graph_json(*file), json);
}

}  // namespace fx::testing
