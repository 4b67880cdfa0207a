// The toy accelerator (accelerator.cc) on resnet18 and a small transformer,
// both exported with Python torch.fx at test time:
//  - shape_prop,accelerator_fuse (what `fx run` runs) fuses the accelerator's
//    partitions into child GraphModules holding only what it supports; the
//    fused model computes eager PyTorch's numbers (the bundle's expected.pt)
//    and saves, reloads and computes them again;
//  - shape_prop,accelerator_delegate hands each partition to the
//    accelerator's backend, which compiles each exactly once, when it is
//    delegated, and runs it on every call with eager's numbers;
//  - the partition picture (accelerator_mark, dot{color_by=partition}).
#include <ATen/ATen.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/module_registry.h"
#include "host/loader/plugin_loader.h"
#include "host/pipeline/pass_manager.h"
#include "host/pipeline/pass_registry.h"
#include "host/pipeline/pass_target.h"
#include "host/pipeline/pipeline.h"

namespace fx {
namespace {

std::string runfile(const std::string& path) {
  return std::string(std::getenv("TEST_SRCDIR")) + "/fx_sdk/" + path;
}

std::string tmp(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

// Exports with tools/torchfx_export.py (ARGS: what to export) into DIR once.
std::string export_model(const std::string& name, const std::string& args) {
  std::string dir = tmp(name);
  if (std::ifstream(dir + "/graph.fx.json")) return dir;
  std::string command = "/usr/bin/python3 " +
                        runfile("tools/torchfx_export.py") + " " + args +
                        " -o " + dir + " > " + dir + ".log 2>&1";
  if (std::system(command.c_str()) != 0) {
    throw std::runtime_error("exporting " + name + " failed: see " + dir +
                             ".log");
  }
  return dir;
}

std::string model_dir(const std::string& name) {
  if (name == "resnet18") return export_model(name, "--torchvision resnet18");
  return export_model(
      name, "--module " +
                runfile("tests/fx_core/partition/transformer_block.py") +
                ":Transformer --input-shape 2,5,16");
}

std::vector<c10::IValue> read_inputs(const std::string& dir) {
  auto inputs = read_value_file(dir + "/input.pt");
  if (!inputs.ok()) throw std::runtime_error(inputs.status().ToString());
  return inputs->toListRef().vec();
}

// The first-party plugins (shape_prop, dot) and the accelerator.
const host::PassRegistry& registry() {
  static host::PassRegistry* r = [] {
    auto* out = new host::PassRegistry();
    auto plugins = host::load_plugin_dir("plugins");
    if (!plugins.ok()) throw std::runtime_error(plugins.status().ToString());
    auto accelerator =
        host::load_plugin("sdk_examples/accelerator/libaccelerator.so");
    if (!accelerator.ok()) {
      throw std::runtime_error(accelerator.status().ToString());
    }
    plugins->push_back(*accelerator);
    for (const auto& p : *plugins) {
      absl::Status s = out->add(p);
      if (!s.ok()) throw std::runtime_error(s.ToString());
    }
    return out;
  }();
  return *r;
}

// Runs `pipeline` on the model in DIR with its inputs as example inputs (as
// `fx run DIR/graph.fx.json --inputs DIR/input.pt` does) into *gm.
void run_pipeline(const std::string& dir, const std::string& pipeline,
                  std::shared_ptr<GraphModule>* gm) {
  auto read = read_graph_module(dir + "/graph.fx.json");
  ASSERT_TRUE(read.ok()) << read.status();
  *gm = *read;
  auto pm = host::PassManager::create(registry(),
                                      *host::parse_pipeline_text(pipeline));
  ASSERT_TRUE(pm.ok()) << pm.status();
  std::vector<at::Tensor> examples;
  for (const c10::IValue& v : read_inputs(dir)) {
    examples.push_back(v.toTensor());
  }
  host::GraphModuleTarget target(**gm, examples);
  host::PipelineReport report = pm->run(target);
  target.finish();
  ASSERT_TRUE(report.ok()) << report.failure;
}

// Every compute node of the accelerator's children is one it supports.
void expect_only_supported(GraphModule& gm, size_t* children) {
  static const std::set<std::string> kSupported = {
      "torch.nn.Conv2d", "torch.nn.Linear", "torch.nn.ReLU", "operator.add",
      "torch.add",       "torch.relu",      "relu",          "add"};
  for (const Node* call : gm.graph().nodes()) {
    if (call->op() != Opcode::kCallModule ||
        call->target().rfind("accelerator_", 0) != 0) {
      continue;
    }
    ++*children;
    auto child = std::dynamic_pointer_cast<GraphModule>(
        gm.get_submodule(std::string(call->target())));
    ASSERT_NE(child, nullptr) << call->target();
    for (const Node* n : child->graph().nodes()) {
      if (n->op() == Opcode::kPlaceholder || n->op() == Opcode::kOutput ||
          n->op() == Opcode::kGetAttr) {
        continue;
      }
      std::string what(n->target());
      if (n->op() == Opcode::kCallModule) {
        what = child->get_submodule(what)->name();
      }
      EXPECT_TRUE(kSupported.count(what) ||
                  what.find("Conv2d") != std::string::npos ||
                  what.find("Linear") != std::string::npos ||
                  what.find("ReLU") != std::string::npos)
          << call->target() << ": " << n->name() << " " << what;
    }
  }
}

class Accelerator : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (std::system("/usr/bin/python3 -c 'import torchvision' >/dev/null "
                    "2>&1") != 0) {
      GTEST_SKIP() << "python3-torch and torchvision are not installed";
    }
  }
};

void expect_expected(GraphModule& gm, const std::string& dir) {
  auto expected = read_value_file(dir + "/expected.pt");
  ASSERT_TRUE(expected.ok()) << expected.status();
  c10::IValue got = gm.forward(read_inputs(dir));
  ASSERT_TRUE(got.isTensor() && expected->isTensor());
  EXPECT_TRUE(at::allclose(got.toTensor(), expected->toTensor(), 1e-5, 1e-5))
      << (got.toTensor() - expected->toTensor()).abs().max();
}

TEST_P(Accelerator, FusedModelComputesEagerNumbersAndSaves) {
  std::string dir = model_dir(GetParam());
  std::shared_ptr<GraphModule> gm;
  run_pipeline(dir, "shape_prop,accelerator_fuse", &gm);
  if (HasFatalFailure()) return;
  size_t children = 0;
  expect_only_supported(*gm, &children);
  EXPECT_GE(children, 3u);
  expect_expected(*gm, dir);
  // Saved (children as GraphModule entries), reloaded, run again.
  std::string saved = tmp(GetParam() + "_fused.fx.json");
  ASSERT_TRUE(write_graph_module(*gm, saved).ok());
  auto again = read_graph_module(saved);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->code(), gm->code());
  EXPECT_EQ((*again)->graph().str(), gm->graph().str());
  expect_expected(**again, dir);
}

// The accelerator backend's counters (accelerator.cc exports them).
int backend_counter(const char* name) {
  void* lib = dlopen("sdk_examples/accelerator/libaccelerator.so",
                     RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return -1;
  auto* fn = reinterpret_cast<int (*)()>(dlsym(lib, name));
  int value = fn ? fn() : -1;
  dlclose(lib);
  return value;
}

TEST_P(Accelerator, BackendCompilesEachPartitionOnceAndRunsIt) {
  std::string dir = model_dir(GetParam());
  registry();  // loads the plugin, which registers its backend
  int compiled = backend_counter("accelerator_compile_count");
  int released = backend_counter("accelerator_release_count");
  ASSERT_GE(compiled, 0);
  std::shared_ptr<GraphModule> gm;
  run_pipeline(dir, "shape_prop,accelerator_delegate", &gm);
  if (HasFatalFailure()) return;
  int delegated = 0;
  for (const Node* n : gm->graph().nodes()) {
    if (n->op() != Opcode::kCallModule) continue;
    auto m = gm->get_submodule(n->target());
    const ModuleKind* kind = ModuleRegistry::global().find(*m);
    if (kind && kind->type == "fx.host.DelegatedModule") ++delegated;
  }
  EXPECT_GE(delegated, 3);
  EXPECT_EQ(backend_counter("accelerator_compile_count") - compiled, delegated);
  expect_expected(*gm, dir);
  expect_expected(*gm, dir);
  EXPECT_EQ(backend_counter("accelerator_compile_count") - compiled, delegated);
  gm.reset();
  EXPECT_EQ(backend_counter("accelerator_release_count") - released, delegated);
}

TEST_P(Accelerator, AnUnknownBackendIsNamedAndTheGraphKept) {
  std::string dir = model_dir(GetParam());
  auto read = read_graph_module(dir + "/graph.fx.json");
  ASSERT_TRUE(read.ok()) << read.status();
  std::string before = (*read)->graph().str();
  auto pm = host::PassManager::create(
      registry(), *host::parse_pipeline_text(
                      "shape_prop,accelerator_delegate{backend=nosuch}"));
  ASSERT_TRUE(pm.ok()) << pm.status();
  std::vector<at::Tensor> examples;
  for (const c10::IValue& v : read_inputs(dir)) {
    examples.push_back(v.toTensor());
  }
  host::GraphModuleTarget target(**read, examples);
  host::PipelineReport report = pm->run(target);
  target.finish();
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.failure.find("no backend 'nosuch' is registered "
                                "(registered: accelerator"),
            std::string::npos)
      << report.failure;
  EXPECT_EQ((*read)->graph().str(), before);
}

TEST_P(Accelerator, DrawsThePartitionPicture) {
  std::string dir = model_dir(GetParam());
  std::string picture = tmp(GetParam() + "_partitions.dot");
  std::shared_ptr<GraphModule> gm;
  run_pipeline(dir,
               "shape_prop,accelerator_mark,dot{path=" + picture +
                   ",color_by=partition}",
               &gm);
  if (HasFatalFailure()) return;
  std::ifstream in(picture);
  std::stringstream dot;
  dot << in.rdbuf();
  // Partition 0 and 1 get the palette's first colours; other nodes white.
  EXPECT_NE(dot.str().find("#8dd3c7"), std::string::npos) << dot.str();
  EXPECT_NE(dot.str().find("#ffffb3"), std::string::npos);
  EXPECT_NE(dot.str().find("#ffffff"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Models, Accelerator,
                         ::testing::Values("resnet18", "transformer"));

}  // namespace
}  // namespace fx
