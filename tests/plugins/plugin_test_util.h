// Shared by the first-party plugin tests: the plugins loaded from the test's
// runfiles, pipelines run on GraphModules through the pass manager, bundles
// from ../shared/reference and torchvision exports, and Python torch.fx.
#ifndef TESTS_PLUGINS_PLUGIN_TEST_UTIL_H_
#define TESTS_PLUGINS_PLUGIN_TEST_UTIL_H_

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "fx_core/runtime/graph_module.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_registry.h"
#include "tests/testing/python.h"

namespace fx::plugins_test {

// Every first-party plugin (plugins/libfx_*.so), loaded once.
const host::PassRegistry& registry();

// A GraphModule with its example inputs and, when known, torch's output.
struct Bundle {
  std::string dir;
  std::shared_ptr<GraphModule> gm;
  std::vector<at::Tensor> inputs;
  c10::IValue expected;  // None when the bundle has no expected.pt
};

// Reads DIR/graph.fx.json, DIR/input.pt and DIR/expected.pt.
Bundle load_bundle(const std::string& dir);
// ../shared/reference/NAME.
Bundle load_reference(const std::string& name);

// Runs `pipeline` (text, or a JSON config when it starts with '{') on `gm`
// with example inputs; fails the test (ADD_FAILURE) on a config error.
host::PipelineReport run_pipeline(GraphModule& gm, const std::string& pipeline,
                                  std::vector<at::Tensor> inputs = {});

// gm(inputs...).
c10::IValue forward(GraphModule& gm, const std::vector<at::Tensor>& inputs);

// Every tensor of a (possibly nested) value, in order.
std::vector<at::Tensor> tensors_of(const c10::IValue& v);
// Largest absolute difference between the tensors of two values (inf when
// their structure differs).
double max_abs_diff(const c10::IValue& a, const c10::IValue& b);

// Empty when /usr/bin/python3 has torch and torchvision; else why not.
std::string python_skip_reason();
// A runfile's absolute path ("tools/torchfx_export.py").
using testing::runfile;
// Exports torchvision model `name` with torch.fx into TEST_TMPDIR (once per
// process) and returns the bundle directory; throws with the log on
// failure.
std::string export_torchvision(const std::string& name);
// Exports class `cls` of the Python file `module_file` (a runfile path) with
// torch.fx for an input of `shape` ("2,3,8,8") into TEST_TMPDIR (once per
// process), in eval mode or with `train` in training mode; returns the
// bundle directory; throws with the log on failure.
std::string export_module(const std::string& module_file,
                          const std::string& cls, const std::string& shape,
                          bool train = false);
// The lines of `text`, without their line breaks.
std::vector<std::string> lines_of(const std::string& text);
// Runs a shell command; returns its exit status, its output in *output.
int run_command(const std::string& command, std::string* output);

}  // namespace fx::plugins_test

#endif  // TESTS_PLUGINS_PLUGIN_TEST_UTIL_H_
