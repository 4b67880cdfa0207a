// The driver of every fx_library's NAME_test (tools/bazel/fx_library.bzl):
// on random inputs shaped like the example inputs (3 draws, floating tensors
// redrawn, others kept), the unoptimised graph's GraphModule, the optimised
// bundle's GraphModule and the library's generated C++ (NAME::run, reached
// through fx::library_test::run_generated, which NAME_test_entry.cc defines)
// compute the same outputs within --rtol/--atol; and no module type named by
// --absent is called by the optimised graph (the pipeline ran).
//
// Arguments (paths relative to the runfiles root, as $(rootpath) gives):
//   --optimized=PATH --inputs=PATH --rtol=X --atol=X [--absent=TYPE]...
//   FILE...   the original graph target's files (the .fx.json among them)
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "fx_core/io/torch_save.h"
#include "fx_core/ir/graph.h"
#include "fx_core/ir/node.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/value.h"

namespace fx::library_test {

// Defined per test by fx_library (NAME_test_entry.cc).
c10::IValue run_generated(torch::nn::Module& self,
                          const std::vector<at::Tensor>& inputs);

namespace {

struct Args {
  std::string original, optimized, inputs;
  double rtol = 1e-4, atol = 1e-5;
  std::vector<std::string> absent;
};

// `path` as $(rootpath) gives it, i.e. under the workspace's runfiles
// directory: TEST_SRCDIR/TEST_WORKSPACE under bazel test, else the working
// directory (bazel run starts there). The workspace is the one declaring
// the fx_library: this tree's, or a user's on the install.
std::string runfile(const std::string& path) {
  const char* root = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (root && workspace) {
    return std::string(root) + "/" + workspace + "/" + path;
  }
  return path;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool parse(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const std::string& flag, std::string& into) {
      if (a.rfind(flag, 0) != 0) return false;
      into = a.substr(flag.size());
      return true;
    };
    std::string v;
    if (value("--optimized=", args.optimized) ||
        value("--inputs=", args.inputs)) {
    } else if (value("--rtol=", v)) {
      args.rtol = std::stod(v);
    } else if (value("--atol=", v)) {
      args.atol = std::stod(v);
    } else if (value("--absent=", v)) {
      args.absent.push_back(v);
    } else if (a.rfind("--", 0) == 0) {
      std::cerr << "fx_library test: unknown argument " << a << "\n";
      return false;
    } else if (ends_with(a, ".fx.json")) {
      args.original = a;
    }
  }
  if (args.original.empty() || args.optimized.empty() || args.inputs.empty()) {
    std::cerr << "fx_library test: the original graph, --optimized and "
                 "--inputs are required\n";
    return false;
  }
  return true;
}

std::vector<at::Tensor> tensors_of(const c10::IValue& v) {
  if (v.isTensor()) return {v.toTensor()};
  std::vector<at::Tensor> out;
  for (const c10::IValue& x : sequence_elements(v)) {
    std::vector<at::Tensor> inner = tensors_of(x);
    out.insert(out.end(), inner.begin(), inner.end());
  }
  return out;
}

std::shared_ptr<GraphModule> read(const std::string& path) {
  auto gm = read_graph_module(runfile(path));
  if (!gm.ok()) {
    std::cerr << "FAIL: " << path << ": " << gm.status().message() << "\n";
    std::exit(1);
  }
  (*gm)->eval();
  return *gm;
}

// Module types the optimised graph still calls, of those it must not.
int check_absent(const GraphModule& gm, const Args& args) {
  int failures = 0;
  for (const Node* node : gm.graph().nodes()) {
    if (node->op() != Opcode::kCallModule) continue;
    auto m = gm.get_submodule(node->target());
    std::string type = m ? module_type_name(*m) : "";
    for (const std::string& absent : args.absent) {
      if (type.find(absent) != std::string::npos) {
        std::cerr << "FAIL: the optimised graph still calls " << type << " ("
                  << node->name() << ")\n";
        ++failures;
      }
    }
  }
  return failures;
}

int compare(const c10::IValue& got, const c10::IValue& want,
            const std::string& what, const Args& args) {
  std::vector<at::Tensor> g = tensors_of(got), w = tensors_of(want);
  if (g.size() != w.size()) {
    std::cerr << "FAIL: " << what << ": " << g.size() << " outputs, want "
              << w.size() << "\n";
    return 1;
  }
  int failures = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    bool close =
        g[i].sizes() == w[i].sizes() &&
        at::allclose(g[i].to(w[i].scalar_type()), w[i], args.rtol, args.atol);
    double diff = g[i].sizes() == w[i].sizes()
                      ? (g[i].to(at::kDouble) - w[i].to(at::kDouble))
                            .abs()
                            .max()
                            .item<double>()
                      : -1;
    std::cout << (close ? "ok   " : "FAIL ") << what << " output " << i
              << ": max |got - want| = " << diff << "\n";
    failures += close ? 0 : 1;
  }
  return failures;
}

int run(const Args& args) {
  c10::NoGradGuard no_grad;
  std::shared_ptr<GraphModule> original = read(args.original);
  std::shared_ptr<GraphModule> optimized = read(args.optimized);
  auto example = read_value_file(runfile(args.inputs));
  if (!example.ok()) {
    std::cerr << "FAIL: " << args.inputs << ": " << example.status().message()
              << "\n";
    return 1;
  }
  std::vector<at::Tensor> shapes = tensors_of(*example);
  int failures = check_absent(*optimized, args);
  for (int draw = 0; draw < 3; ++draw) {
    at::manual_seed(1234 + draw);
    std::vector<at::Tensor> inputs;
    std::vector<c10::IValue> values;
    for (const at::Tensor& t : shapes) {
      inputs.push_back(t.is_floating_point() ? at::randn_like(t) : t.clone());
      values.emplace_back(inputs.back());
    }
    c10::IValue want = original->forward(values);
    const std::string tag = "draw " + std::to_string(draw) + ": ";
    failures += compare(optimized->forward(values), want,
                        tag + "optimised bundle", args);
    failures += compare(run_generated(*optimized, inputs), want,
                        tag + "generated C++", args);
  }
  std::cout << (failures == 0 ? "PASS" : "FAIL") << "\n";
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace fx::library_test

int main(int argc, char** argv) {
  fx::library_test::Args args;
  if (!fx::library_test::parse(argc, argv, args)) return 2;
  return fx::library_test::run(args);
}
