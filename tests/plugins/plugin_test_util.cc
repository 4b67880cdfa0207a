#include "tests/plugins/plugin_test_util.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <stdexcept>

#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module_file.h"
#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_target.h"
#include "host/pipeline/pipeline.h"
#include "tests/testing/reference.h"

namespace fx::plugins_test {

namespace fs = std::filesystem;

const host::PassRegistry& registry() {
  static host::PassRegistry* r = [] {
    auto* out = new host::PassRegistry();
    auto plugins = host::load_plugin_dir("plugins");
    if (!plugins.ok()) {
      throw std::runtime_error(std::string(plugins.status().message()));
    }
    for (const auto& p : *plugins) {
      absl::Status s = out->add(p);
      if (!s.ok()) throw std::runtime_error(std::string(s.message()));
    }
    return out;
  }();
  return *r;
}

Bundle load_bundle(const std::string& dir) {
  Bundle b;
  b.dir = dir;
  auto gm = read_graph_module(dir + "/graph.fx.json");
  if (!gm.ok()) throw std::runtime_error(std::string(gm.status().message()));
  b.gm = *gm;
  if (fs::exists(dir + "/input.pt")) {
    auto inputs = read_value_file(dir + "/input.pt");
    if (!inputs.ok()) {
      throw std::runtime_error(std::string(inputs.status().message()));
    }
    for (const c10::IValue& v : inputs->toListRef()) {
      b.inputs.push_back(v.toTensor());
    }
  }
  if (fs::exists(dir + "/expected.pt")) {
    auto expected = read_value_file(dir + "/expected.pt");
    if (expected.ok()) b.expected = *expected;
  }
  return b;
}

Bundle load_reference(const std::string& name) {
  return load_bundle(testing::reference_dir() + "/" + name);
}

host::PipelineReport run_pipeline(GraphModule& gm, const std::string& pipeline,
                                  std::vector<at::Tensor> inputs) {
  absl::StatusOr<host::PipelineSpec> spec =
      !pipeline.empty() && pipeline[0] == '{'
          ? host::parse_pipeline_config(pipeline, "test", ".")
          : host::parse_pipeline_text(pipeline);
  if (!spec.ok()) {
    ADD_FAILURE() << spec.status();
    return {};
  }
  auto pm = host::PassManager::create(registry(), *std::move(spec));
  if (!pm.ok()) {
    ADD_FAILURE() << pm.status();
    return {};
  }
  host::GraphModuleTarget target(gm, std::move(inputs));
  host::PipelineReport report = pm->run(target);
  target.finish();
  return report;
}

c10::IValue forward(GraphModule& gm, const std::vector<at::Tensor>& inputs) {
  at::NoGradGuard no_grad;
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());
  return gm.forward(std::move(args));
}

std::vector<at::Tensor> tensors_of(const c10::IValue& v) {
  std::vector<at::Tensor> out;
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements()) {
      for (const at::Tensor& t : tensors_of(e)) out.push_back(t);
    }
  } else if (v.isList()) {
    for (const c10::IValue& e : v.toListRef()) {
      for (const at::Tensor& t : tensors_of(e)) out.push_back(t);
    }
  }
  return out;
}

double max_abs_diff(const c10::IValue& a, const c10::IValue& b) {
  std::vector<at::Tensor> x = tensors_of(a), y = tensors_of(b);
  if (x.size() != y.size() || x.empty()) {
    return std::numeric_limits<double>::infinity();
  }
  double out = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].sizes() != y[i].sizes()) {
      return std::numeric_limits<double>::infinity();
    }
    out = std::max(out, (x[i].to(at::kDouble) - y[i].to(at::kDouble))
                            .abs()
                            .max()
                            .item<double>());
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

int run_command(const std::string& command, std::string* output) {
  std::string full = command + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  if (pipe == nullptr) return -1;
  std::array<char, 4096> buf;
  std::string out;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0)
    out.append(buf.data(), n);
  int status = pclose(pipe);
  if (output) *output = out;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string python_skip_reason() {
  static std::string reason = [] {
    std::string out;
    if (run_command("/usr/bin/python3 -c 'import torch, torchvision'", &out) !=
        0) {
      return std::string(
          "python3-torch / python3-torchvision are not installed at "
          "/usr/bin/python3");
    }
    return std::string();
  }();
  return reason;
}

std::string export_torchvision(const std::string& name) {
  static std::map<std::string, std::string> done;
  auto it = done.find(name);
  if (it != done.end()) return it->second;
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp ? tmp : "/tmp") + "/torchvision/" + name;
  std::string out;
  int status =
      run_command("/usr/bin/python3 " + runfile("tools/torchfx_export.py") +
                      " --torchvision " + name + " -o " + dir,
                  &out);
  if (status != 0) {
    throw std::runtime_error("exporting " + name + " failed:\n" + out);
  }
  done[name] = dir;
  return dir;
}

std::string export_module(const std::string& module_file,
                          const std::string& cls, const std::string& shape,
                          bool train) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp ? tmp : "/tmp") + "/models/" + cls +
                    (train ? "_train" : "");
  if (std::filesystem::exists(dir + "/graph.fx.json")) return dir;
  std::string log;
  int status = run_command(
      "/usr/bin/python3 " + runfile("tools/torchfx_export.py") + " --module " +
          runfile(module_file) + ":" + cls + " --input-shape " + shape +
          (train ? " --train" : "") + " -o " + dir,
      &log);
  if (status != 0)
    throw std::runtime_error("exporting " + cls + " failed:\n" + log);
  return dir;
}

}  // namespace fx::plugins_test
