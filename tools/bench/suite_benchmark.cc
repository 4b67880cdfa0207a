// The C++ side of the unified benchmark suite (tools/bench/run_all.sh,
// `bazel run --config=opt //tools:bench`). Prints one JSON object.
//
//   suite_benchmark [--sizes 1000,10000,100000,1000000] [--models DIR]
//                   [--repeat N] [--skip-ir] [--skip-forward]
//   suite_benchmark --once OP --sizes N     (for count_instructions.sh)
//
// IR ("ir"): a chain of N traced operations (cycling x + 1.0, x * w / x * y,
// x.relu(), torch.relu(x), x.clamp(min=-1.0), as tools/bench/suite_bench.py
// traces with torch.fx): trace (fx::Tracer), copy (Graph::deepcopy), print
// (str), codegen (python_code), lint, and an edit storm (after every third
// node insert torch.neg, point the node's other users at it, point them
// back, erase it), plus the heap bytes per node the traced graph holds
// (glibc mallinfo2 before and after tracing). Median wall time.
//
// Forward ("forward"), median microseconds per call under NoGradGuard:
//  - chain: 1000 ops cycling torch.relu, + w, * w on a 4x16 tensor (w: 16),
//    built as a Graph: compiled GraphModule, InferencePlan, the virtual
//    Interpreter, hand-written LibTorch (at::relu / at::add / at::mul in a
//    loop) and, with --models, TorchScript (DIR/chain/script.pt, written by
//    suite_bench.py from torch.jit.script of torch.fx's GraphModule);
//  - resnet50 (with --models: DIR/resnet50, a torchfx_export bundle, batch
//    1): the same four, hand-written = the ResNet-50 forward written out over
//    the bundle's own modules, and TorchScript.
// Every variant's output is checked against GraphModule::forward first
// (bitwise for the inference plan).
#include <ATen/ATen.h>
#include <malloc.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>
#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "fx_core/io/torch_save.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/interpreter.h"
#include "fx_core/runtime/plan/inference_plan.h"
#include "fx_core/tracer/functions.h"
#include "fx_core/tracer/tracer.h"
#include "tools/bench/traced_chain.h"

namespace {

using fx::Value;
using namespace fx::literals;  // NOLINT
using Clock = std::chrono::steady_clock;

// Median wall microseconds of `fn` over `repeat` runs (after one warm-up);
// `setup` runs untimed before each.
double median_us(int repeat, const std::function<void()>& fn,
                 const std::function<void()>& setup = nullptr) {
  if (setup) setup();
  fn();
  std::vector<double> times;
  for (int i = 0; i < repeat; ++i) {
    if (setup) setup();
    auto start = Clock::now();
    fn();
    times.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// ------------------------------------------------------------------- IR

using fx::bench::Chain;

void edit_storm(fx::Graph& g) {
  std::vector<fx::Node*> nodes = g.nodes().to_vector();
  for (size_t i = 0; i < nodes.size(); i += 3) {
    fx::Node* node = nodes[i];
    if (node->op() == fx::Opcode::kOutput) continue;
    fx::Node* neg;
    {
      auto ip = g.inserting_after(node);
      neg = g.call_function("torch.neg", {node});
    }
    node->replace_all_uses_with(neg,
                                [neg](fx::Node* user) { return user != neg; });
    neg->replace_all_uses_with(node);
    g.erase_node(neg);
  }
  g.purge_erased_nodes();
}

}  // namespace

// Runs `fn` once. count_instructions.sh counts the instructions executed
// inside this function (valgrind --toggle-collect=fx_bench_measured), so it
// has C linkage and is never inlined.
extern "C" __attribute__((noinline)) void fx_bench_measured(
    const std::function<void()>* fn) {
  (*fn)();
}

namespace {

// --once OP: builds OP's input for the first size untimed, then runs OP once
// inside fx_bench_measured. Prints the node count.
int run_once(const std::string& op, int64_t n) {
  Chain m(n - 4);
  std::unique_ptr<fx::Graph> g = fx::Tracer().trace(m);
  std::unique_ptr<fx::Graph> result;
  std::string text;
  std::function<void()> fn;
  if (op == "trace") {
    fn = [&] { result = fx::Tracer().trace(m); };
  } else if (op == "copy") {
    fn = [&] { result = g->deepcopy(); };
  } else if (op == "print") {
    fn = [&] { text = g->str(); };
  } else if (op == "codegen") {
    fn = [&] { text = g->python_code().src; };
  } else if (op == "lint") {
    fn = [&] { g->lint(); };
  } else if (op == "edit") {
    result = g->deepcopy();
    fn = [&] { edit_storm(*result); };
  } else {
    std::cerr << "suite_benchmark: --once takes trace, copy, print, codegen, "
                 "lint or edit, not '"
              << op << "'\n";
    return 2;
  }
  fx_bench_measured(&fn);
  std::cout << g->size() << "\n";
  return 0;
}

std::string ir_json(const std::vector<int64_t>& sizes) {
  {
    // The first trace fills process-wide tables (the op and module
    // registries, the tracer's patched functions); they are not the graph's
    // and must not count in the first size's bytes per node.
    Chain warm_up(16);
    fx::Tracer().trace(warm_up)->python_code();
  }
  std::ostringstream out;
  out << "{";
  bool first = true;
  for (int64_t n : sizes) {
    const int repeat = n <= 1000 ? 21 : n <= 10000 ? 11 : n <= 100000 ? 5 : 3;
    Chain m(n - 4);  // + 2 placeholders, get_attr weight, output
    std::unique_ptr<fx::Graph> g;
    size_t before = mallinfo2().uordblks;
    g = fx::Tracer().trace(m);
    size_t after = mallinfo2().uordblks;
    const double nodes = static_cast<double>(g->size());
    double trace = median_us(
        repeat, [&] { g = fx::Tracer().trace(m); }, [&] { g.reset(); });
    std::unique_ptr<fx::Graph> copy;
    double copy_us = median_us(
        repeat, [&] { copy = g->deepcopy(); }, [&] { copy.reset(); });
    copy.reset();
    std::string text;
    double print_us = median_us(
        repeat, [&] { text = g->str(); }, [&] { std::string().swap(text); });
    double codegen_us = median_us(
        repeat, [&] { text = g->python_code().src; },
        [&] { std::string().swap(text); });
    double lint_us = median_us(repeat, [&] { g->lint(); });
    std::unique_ptr<fx::Graph> fresh;
    double edit_us = median_us(
        repeat, [&] { edit_storm(*fresh); },
        [&] {
          fresh.reset();
          fresh = g->deepcopy();
        });
    out << (first ? "" : ", ") << "\"" << n << "\": {\"nodes\": " << nodes
        << ", \"trace_us\": " << trace << ", \"copy_us\": " << copy_us
        << ", \"print_us\": " << print_us << ", \"codegen_us\": " << codegen_us
        << ", \"lint_us\": " << lint_us << ", \"edit_us\": " << edit_us
        << ", \"bytes_per_node\": "
        << static_cast<double>(after - before) / nodes << "}";
    first = false;
    std::cerr << "ir " << n << " done\n";
  }
  out << "}";
  return out.str();
}

// -------------------------------------------------------------- forward

std::unique_ptr<fx::GraphModule> make_small_chain(torch::nn::Module& root,
                                                  int ops) {
  auto g = std::make_unique<fx::Graph>();
  fx::Node* v = g->placeholder("x");
  fx::Node* w = g->get_attr("w");
  for (int i = 0; i < ops; ++i) {
    switch (i % 3) {
      case 0:
        v = g->call_function("torch.relu", {v});
        break;
      case 1:
        v = g->call_function("operator.add", {v, w});
        break;
      default:
        v = g->call_function("operator.mul", {v, w});
        break;
    }
  }
  g->output(v);
  return std::make_unique<fx::GraphModule>(root, std::move(g));
}

bool same_bits(const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes() || a.strides() != b.strides() ||
      a.scalar_type() != b.scalar_type()) {
    return false;
  }
  at::Tensor x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) == 0;
}

template <typename T>
T& module_as(fx::GraphModule& gm, const std::string& path) {
  auto m = gm.get_submodule(path);
  T* t = m ? m->as<T>() : nullptr;
  if (t == nullptr) throw std::runtime_error("no module " + path);
  return *t;
}

// torchvision's ResNet-50 forward written out in LibTorch over the bundle's
// modules (the ops the traced graph calls, in its order).
at::Tensor resnet50_by_hand(fx::GraphModule& gm, const at::Tensor& input) {
  using namespace torch::nn;  // NOLINT
  auto conv = [&](const std::string& p, const at::Tensor& x) {
    return module_as<Conv2dImpl>(gm, p).forward(x);
  };
  auto bn = [&](const std::string& p, const at::Tensor& x) {
    return module_as<BatchNorm2dImpl>(gm, p).forward(x);
  };
  auto relu_ = [](at::Tensor t) { return at::relu_(t); };
  at::Tensor x = relu_(bn("bn1", conv("conv1", input)));
  x = module_as<MaxPool2dImpl>(gm, "maxpool").forward(x);
  const int blocks[] = {3, 4, 6, 3};
  for (int l = 0; l < 4; ++l) {
    for (int b = 0; b < blocks[l]; ++b) {
      std::string p = "layer" + std::to_string(l + 1) + "." + std::to_string(b);
      at::Tensor out = relu_(bn(p + ".bn1", conv(p + ".conv1", x)));
      out = relu_(bn(p + ".bn2", conv(p + ".conv2", out)));
      out = bn(p + ".bn3", conv(p + ".conv3", out));
      at::Tensor identity =
          b == 0 ? bn(p + ".downsample.1", conv(p + ".downsample.0", x)) : x;
      x = relu_(at::add(out, identity));
    }
  }
  x = module_as<AdaptiveAvgPool2dImpl>(gm, "avgpool").forward(x);
  x = at::flatten(x, 1);
  return module_as<LinearImpl>(gm, "fc").forward(x);
}

struct ForwardRow {
  std::string name;
  double nodes = 0;
  double graph_module = 0, plan = 0, interpreter = 0, by_hand = -1,
         torchscript = -1;
  size_t direct = 0;
};

std::string row_json(const ForwardRow& r) {
  std::ostringstream out;
  out << "\"" << r.name << "\": {\"nodes\": " << r.nodes
      << ", \"graph_module_us\": " << r.graph_module
      << ", \"inference_plan_us\": " << r.plan
      << ", \"interpreter_us\": " << r.interpreter
      << ", \"libtorch_us\": " << r.by_hand
      << ", \"torchscript_us\": " << r.torchscript
      << ", \"plan_direct_nodes\": " << r.direct << "}";
  return out.str();
}

ForwardRow measure(const std::string& name, fx::GraphModule& gm,
                   const at::Tensor& x,
                   const std::function<at::Tensor(const at::Tensor&)>& by_hand,
                   const std::string& script, int repeat) {
  ForwardRow r;
  r.name = name;
  r.nodes = static_cast<double>(gm.graph().size());
  std::vector<c10::IValue> in{x};
  at::Tensor want = gm.forward(in).toTensor();
  auto plan = fx::InferencePlan::build(gm, in);
  if (!same_bits(plan->run(in).toTensor(), want)) {
    throw std::runtime_error(name + ": inference plan differs");
  }
  r.direct = plan->stats().direct_steps;
  fx::Interpreter interpreter(gm);
  if (!at::equal(interpreter.run(in).toTensor(), want)) {
    throw std::runtime_error(name + ": interpreter differs");
  }
  // Interleaved rounds, so load on the machine hits every variant alike.
  std::vector<double> gm_t, plan_t, interp_t, hand_t, ts_t;
  torch::jit::Module ts;
  bool have_ts = !script.empty() && std::filesystem::exists(script);
  if (have_ts) {
    ts = torch::jit::load(script);
    ts.eval();
    if (!at::allclose(ts.forward(in).toTensor(), want, 1e-4, 1e-5)) {
      throw std::runtime_error(name + ": TorchScript differs");
    }
  }
  if (by_hand && !at::allclose(by_hand(x), want, 1e-4, 1e-5)) {
    throw std::runtime_error(name + ": hand-written differs");
  }
  const int rounds = 5;
  for (int k = 0; k < rounds; ++k) {
    gm_t.push_back(median_us(repeat, [&] { gm.forward(in); }));
    plan_t.push_back(median_us(repeat, [&] { plan->run(in); }));
    interp_t.push_back(median_us(repeat, [&] { interpreter.run(in); }));
    if (by_hand) hand_t.push_back(median_us(repeat, [&] { by_hand(x); }));
    if (have_ts) ts_t.push_back(median_us(repeat, [&] { ts.forward(in); }));
  }
  auto med = [](std::vector<double> v) {
    if (v.empty()) return -1.0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  r.graph_module = med(gm_t);
  r.plan = med(plan_t);
  r.interpreter = med(interp_t);
  r.by_hand = med(hand_t);
  r.torchscript = med(ts_t);
  std::cerr << "forward " << name << " done\n";
  return r;
}

std::string forward_json(const std::string& models, int repeat) {
  std::vector<ForwardRow> rows;
  {
    torch::nn::Module root;
    at::Tensor w = root.register_parameter("w", at::rand({16}));
    auto gm = make_small_chain(root, 1000);
    auto by_hand = [&](const at::Tensor& x) {
      at::Tensor v = x;
      for (int i = 0; i < 1000; ++i) {
        switch (i % 3) {
          case 0:
            v = at::relu(v);
            break;
          case 1:
            v = at::add(v, w);
            break;
          default:
            v = at::mul(v, w);
            break;
        }
      }
      return v;
    };
    std::string script = models.empty() ? "" : models + "/chain/script.pt";
    at::Tensor x = at::randn({4, 16});
    if (!models.empty() &&
        std::filesystem::exists(models + "/chain/graph.fx.json")) {
      // torch.fx's chain, with its weight and input: same numbers as Python.
      auto loaded = fx::read_graph_module(models + "/chain/graph.fx.json");
      auto inputs = fx::read_value_file(models + "/chain/input.pt");
      if (loaded.ok() && inputs.ok()) {
        at::Tensor lw = (*loaded)->get_attr("w");
        w.set_data(lw);
        x = inputs->toListRef()[0].toTensor();
        rows.push_back(
            measure("chain_1k", **loaded, x, by_hand, script, repeat * 10));
      }
    }
    if (rows.empty()) {
      rows.push_back(measure("chain_1k", *gm, x, by_hand, script, repeat * 10));
    }
  }
  if (!models.empty() &&
      std::filesystem::exists(models + "/resnet50/graph.fx.json")) {
    auto gm = fx::read_graph_module(models + "/resnet50/graph.fx.json");
    auto inputs = fx::read_value_file(models + "/resnet50/input.pt");
    if (!gm.ok() || !inputs.ok()) {
      throw std::runtime_error("cannot read the resnet50 bundle");
    }
    fx::GraphModule& m = **gm;
    rows.push_back(measure(
        "resnet50", m, inputs->toListRef()[0].toTensor(),
        [&m](const at::Tensor& x) { return resnet50_by_hand(m, x); },
        models + "/resnet50/script.pt", std::max(3, repeat / 4)));
  }
  std::ostringstream out;
  out << "{";
  for (size_t i = 0; i < rows.size(); ++i) {
    out << (i ? ", " : "") << row_json(rows[i]);
  }
  out << "}";
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes = {1000, 10000, 100000, 1000000};
  std::string models;
  int repeat = 20;
  bool ir = true, forward = true;
  std::string once;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::stringstream ss(argv[++i]);
      std::string item;
      while (std::getline(ss, item, ',')) sizes.push_back(std::stoll(item));
    } else if (a == "--models" && i + 1 < argc) {
      models = argv[++i];
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else if (a == "--skip-ir") {
      ir = false;
    } else if (a == "--skip-forward") {
      forward = false;
    } else if (a == "--once" && i + 1 < argc) {
      once = argv[++i];
    } else {
      std::cerr << "usage: suite_benchmark [--sizes N,N] [--models DIR] "
                   "[--repeat N] [--skip-ir] [--skip-forward] [--once OP]\n";
      return 2;
    }
  }
  try {
    if (!once.empty()) return run_once(once, sizes.front());
    std::string ir_part = ir ? ir_json(sizes) : "{}";
    torch::NoGradGuard no_grad;
    std::string fwd_part = forward ? forward_json(models, repeat) : "{}";
    std::cout << "{\"ir\": " << ir_part << ", \"forward\": " << fwd_part
              << "}\n";
  } catch (const std::exception& e) {
    std::cerr << "suite_benchmark: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
