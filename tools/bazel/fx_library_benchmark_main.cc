// The driver of every fx_library's NAME_benchmark (tools/bazel/fx_library.bzl):
// times the unoptimised graph's GraphModule, the optimised bundle's
// GraphModule and the library's generated C++ (NAME::run, through
// fx::library_test::run_generated) on random inputs shaped like the example
// inputs, and prints each one's median over --repeat runs after a warm-up.
//
// Arguments as NAME_test's (fx_library_test_main.cc), plus --repeat=N (20).
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/value.h"

namespace fx::library_test {

c10::IValue run_generated(torch::nn::Module& self,
                          const std::vector<at::Tensor>& inputs);

namespace {

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

std::vector<at::Tensor> tensors_of(const c10::IValue& v) {
  if (v.isTensor()) return {v.toTensor()};
  std::vector<at::Tensor> out;
  for (const c10::IValue& x : sequence_elements(v)) out.push_back(x.toTensor());
  return out;
}

double median_ms(const std::function<void()>& f, int repeat) {
  f();
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - t0)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int run(int argc, char** argv) {
  std::string original, optimized, inputs;
  int repeat = 20;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto ends_with = [&](const std::string& s) {
      return a.size() >= s.size() &&
             a.compare(a.size() - s.size(), s.size(), s) == 0;
    };
    if (a.rfind("--optimized=", 0) == 0)
      optimized = a.substr(12);
    else if (a.rfind("--inputs=", 0) == 0)
      inputs = a.substr(9);
    else if (a.rfind("--repeat=", 0) == 0)
      repeat = std::max(1, std::stoi(a.substr(9)));
    else if (a.rfind("--", 0) != 0 && ends_with(".fx.json"))
      original = a;
  }
  c10::NoGradGuard no_grad;
  auto a = read_graph_module(runfile(original));
  auto b = read_graph_module(runfile(optimized));
  auto example = read_value_file(runfile(inputs));
  if (!a.ok() || !b.ok() || !example.ok()) {
    std::cerr << "fx_library benchmark: cannot read " << original << ", "
              << optimized << " or " << inputs << "\n";
    return 1;
  }
  (*a)->eval();
  (*b)->eval();
  std::vector<at::Tensor> xs;
  std::vector<c10::IValue> values;
  for (const at::Tensor& t : tensors_of(*example)) {
    xs.push_back(t.is_floating_point() ? at::randn_like(t) : t.clone());
    values.emplace_back(xs.back());
  }
  std::cout << "unoptimised GraphModule: "
            << median_ms([&] { (*a)->forward(values); }, repeat) << " ms\n"
            << "optimised GraphModule:   "
            << median_ms([&] { (*b)->forward(values); }, repeat) << " ms\n"
            << "generated C++ run():     "
            << median_ms([&] { run_generated(**b, xs); }, repeat) << " ms\n"
            << "(median of " << repeat << " runs after a warm-up)\n";
  return 0;
}

}  // namespace
}  // namespace fx::library_test

int main(int argc, char** argv) { return fx::library_test::run(argc, argv); }
