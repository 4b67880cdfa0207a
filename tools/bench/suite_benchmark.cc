// The C++ side of the unified benchmark suite (tools/bench/run_all.sh,
// `bazel run --config=opt //tools:bench`). Prints one JSON object.
//
//   suite_benchmark [--sizes 1000,10000,100000,1000000] [--models DIR]
//                   [--repeat N] [--threads 1,2] [--skip-ir]
//                   [--skip-forward] [--skip-models] [--check]
//   --check: load every model and compare every engine's output, time
//   nothing
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
// Threads: every forward row is measured at each count of --threads
// (default 1 and every available CPU), set with fx::set_num_threads (LibTorch
// and OpenBLAS's own pool); the IR part is single-threaded code, run at 1.
// The JSON states the counts and the BLAS (fx::blas_library()).
//
// Forward ("forward": {THREADS: {name: row}}), median microseconds per call
// under NoGradGuard: a chain of 1000 ops cycling torch.relu, + w, * w on a
// 4x16 tensor (w: 16), built as a Graph (or, with --models, DIR/chain from
// suite_bench.py): compiled GraphModule, InferencePlan, the virtual
// Interpreter, hand-written LibTorch (at::relu / at::add / at::mul in a loop)
// and, with --models, TorchScript (DIR/chain/script.pt, torch.jit.script of
// torch.fx's GraphModule).
//
// Models ("models": {THREADS: {name: row}}, with --models DIR): the bundles
// suite_bench.py writes (DIR/models.txt lists them: torchvision's
// classification models, a small transformer and an encoder, NAME at batch
// 1 and NAME@B at batch B). A model that fails to load or differs gets a row
// {"error": ...} and the others go on. Per model: TorchScript as deployed for
// inference (DIR/NAME/script_frozen.pt, torch.jit.freeze of torch.jit.script in
// Python, loaded here and put through torch::jit::optimize_for_inference:
// conv/BN folding, oneDNN weights and fused ops), eager LibTorch (the model's
// forward written out over the bundle's modules, as a LibTorch user writes it:
// resnet50, the mobile models and the small transformer), GraphModule,
// InferencePlan and Interpreter. When DIR/NAME/graph.opt.fx.json exists
// (run_all.sh writes it with `fx run --pipeline` shape_prop, fold_bn,
// fuse_conv, fuse_linear, fuse_matmul, fuse_pointwise), the InferencePlan plans
// that graph: BatchNorm folded, convolutions, linears and matmuls with their
// tails on oneDNN.
//
// Every variant's output is checked against GraphModule::forward first:
// bitwise for the inference plan of the original graph, allclose 1e-4/1e-5
// for eager LibTorch and the plain TorchScript, and for the optimized
// TorchScript and the plan of the optimized graph a largest difference under
// 1e-3 of the output's largest magnitude (BatchNorm folding rounds
// differently; the differences are in the JSON). Engines run in
// interleaved rounds (5 rounds of `repeat` runs each, the median of the rounds'
// medians), so load on the machine hits all alike.
#include <ATen/ATen.h>
#include <malloc.h>
#include <torch/csrc/autograd/grad_mode.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/modules/pooling.h>
#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fx_core/compile/inference_plan.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/ir/codegen.h"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/graph_module_file.h"
#include "fx_core/runtime/interpreter.h"
#include "fx_core/runtime/modules/activation.h"
#include "fx_core/runtime/parallel.h"
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

template <typename T>
bool is(fx::GraphModule& gm, const std::string& path) {
  auto m = gm.get_submodule(path);
  return m && m->as<T>() != nullptr;
}

// torchvision's activation modules, called as functions.
at::Tensor activation(fx::GraphModule& gm, const std::string& p, at::Tensor x) {
  if (is<torch::nn::ReLUImpl>(gm, p)) return at::relu_(x);
  if (is<fx::nn::HardswishImpl>(gm, p)) return at::hardswish_(x);
  if (is<torch::nn::SiLUImpl>(gm, p)) return at::silu_(x);
  if (is<fx::nn::HardsigmoidImpl>(gm, p)) return at::hardsigmoid(x);
  if (is<torch::nn::SigmoidImpl>(gm, p)) return at::sigmoid(x);
  throw std::runtime_error("no activation module " + p);
}

// mobilenet_v3_large and efficientnet_b0 written out over the bundle's
// modules: torchvision's Conv2dNormActivation (conv, batch norm, activation),
// SqueezeExcitation and InvertedResidual / MBConv blocks (a residual add
// where the block keeps the shape; stochastic depth is the identity in eval).
at::Tensor mobile_by_hand(fx::GraphModule& gm, const at::Tensor& input) {
  using namespace torch::nn;  // NOLINT
  auto cna = [&](const std::string& p, const at::Tensor& x) {
    at::Tensor y = module_as<BatchNorm2dImpl>(gm, p + ".1")
                       .forward(module_as<Conv2dImpl>(gm, p + ".0").forward(x));
    return is<Module>(gm, p + ".2") ? activation(gm, p + ".2", y) : y;
  };
  auto se = [&](const std::string& p, const at::Tensor& x) {
    at::Tensor s = at::adaptive_avg_pool2d(x, {1, 1});
    s = module_as<Conv2dImpl>(gm, p + ".fc1").forward(s);
    s = activation(gm, p + ".activation", s);
    s = module_as<Conv2dImpl>(gm, p + ".fc2").forward(s);
    s = activation(gm, p + ".scale_activation", s);
    return s * x;
  };
  auto block = [&](const std::string& p, const at::Tensor& x) {
    at::Tensor y = x;
    for (int k = 0;; ++k) {
      std::string q = p + ".block." + std::to_string(k);
      if (is<Conv2dImpl>(gm, q + ".0")) {
        y = cna(q, y);
      } else if (is<Conv2dImpl>(gm, q + ".fc1")) {
        y = se(q, y);
      } else {
        break;
      }
    }
    return y.sizes() == x.sizes() ? y.add_(x) : y;
  };
  at::Tensor x = input;
  for (int i = 0;; ++i) {
    std::string p = "features." + std::to_string(i);
    if (is<Conv2dImpl>(gm, p + ".0")) {
      x = cna(p, x);
    } else if (is<Conv2dImpl>(gm, p + ".block.0.0")) {
      x = block(p, x);
    } else if (is<Conv2dImpl>(gm, p + ".0.block.0.0")) {
      for (int j = 0;
           is<Conv2dImpl>(gm, p + "." + std::to_string(j) + ".block.0.0");
           ++j) {
        x = block(p + "." + std::to_string(j), x);
      }
    } else {
      break;
    }
  }
  x = at::flatten(at::adaptive_avg_pool2d(x, {1, 1}), 1);
  for (int k = 0;; ++k) {
    std::string p = "classifier." + std::to_string(k);
    if (is<LinearImpl>(gm, p)) {
      x = module_as<LinearImpl>(gm, p).forward(x);
    } else if (is<DropoutImpl>(gm, p)) {
      continue;  // eval
    } else if (is<Module>(gm, p)) {
      x = activation(gm, p, x);
    } else {
      break;
    }
  }
  return x;
}

// suite_bench.py's SmallTransformer written out (4 heads).
at::Tensor transformer_by_hand(fx::GraphModule& gm, const at::Tensor& idx) {
  using namespace torch::nn;  // NOLINT
  constexpr int64_t kHeads = 4;
  auto linear = [&](const std::string& p, const at::Tensor& x) {
    return module_as<LinearImpl>(gm, p).forward(x);
  };
  auto norm = [&](const std::string& p, const at::Tensor& x) {
    return module_as<LayerNormImpl>(gm, p).forward(x);
  };
  const int64_t b = idx.size(0), t = idx.size(1);
  at::Tensor x = module_as<EmbeddingImpl>(gm, "tok").forward(idx) +
                 gm.get_attr("pos").slice(0, 0, t);
  for (int l = 0; is<LinearImpl>(gm, "blocks." + std::to_string(l) + ".qkv");
       ++l) {
    std::string p = "blocks." + std::to_string(l) + ".";
    at::Tensor qkv = linear(p + "qkv", norm(p + "ln1", x));
    const int64_t head_dim = qkv.size(-1) / 3 / kHeads;
    qkv = qkv.view({b, t, 3, kHeads, head_dim}).permute({2, 0, 3, 1, 4});
    at::Tensor att = at::matmul(qkv[0], qkv[1].transpose(-2, -1)) *
                     std::pow(static_cast<double>(head_dim), -0.5);
    att = att.softmax(-1);
    at::Tensor y = at::matmul(att, qkv[2]).transpose(1, 2).reshape({b, t, -1});
    x = x + linear(p + "proj", y);
    x = x + linear(p + "fc2", at::gelu(linear(p + "fc1", norm(p + "ln2", x))));
  }
  return linear("head", norm("ln", x));
}

struct ForwardRow {
  std::string name;
  int threads = 1;
  double nodes = 0;
  double graph_module = 0, plan = 0, interpreter = 0, by_hand = -1,
         torchscript = -1;
  double torchscript_max_diff = -1;
  size_t direct = 0;
  size_t onednn = 0;            // plan steps on oneDNN
  bool plan_optimized = false;  // planned after the inference passes
  double plan_max_diff = 0;     // plan vs GraphModule
  std::string error;            // why the model could not be measured
};

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string row_json(const ForwardRow& r, bool optimized_script) {
  std::ostringstream out;
  if (!r.error.empty()) {
    out << "\"" << r.name << "\": {\"threads\": " << r.threads
        << ", \"error\": " << json_string(r.error) << "}";
    return out.str();
  }
  out << "\"" << r.name << "\": {\"threads\": " << r.threads
      << ", \"nodes\": " << r.nodes
      << ", \"graph_module_us\": " << r.graph_module
      << ", \"inference_plan_us\": " << r.plan
      << ", \"interpreter_us\": " << r.interpreter
      << ", \"libtorch_us\": " << r.by_hand << ", \""
      << (optimized_script ? "torchscript_optimized_us" : "torchscript_us")
      << "\": " << r.torchscript;
  if (optimized_script) {
    out << ", \"torchscript_max_abs_diff\": " << r.torchscript_max_diff;
  }
  out << ", \"plan_direct_nodes\": " << r.direct
      << ", \"plan_onednn_nodes\": " << r.onednn << ", \"plan_passes\": \""
      << (r.plan_optimized ? "shape_prop,fold_bn,fuse_conv,fuse_linear,fuse_"
                             "matmul,fuse_pointwise"
                           : "")
      << "\""
      << ", \"plan_max_abs_diff\": " << r.plan_max_diff << "}";
  return out.str();
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

// One model, ready to measure at any thread count.
struct Subject {
  std::string name;
  std::shared_ptr<fx::GraphModule> gm;
  std::vector<c10::IValue> in;
  std::function<at::Tensor(const at::Tensor&)> by_hand;
  std::unique_ptr<torch::jit::Module> script;
  bool optimized_script = false;  // frozen + optimize_for_inference
  // The graph after the inference passes (DIR/NAME/graph.opt.fx.json), which
  // the InferencePlan row plans when present.
  std::shared_ptr<fx::GraphModule> optimized;
  int repeat = 5;
};

// LibTorch warnings, each printed once. oneDNN's ops in the optimized
// TorchScript mobilenet_v3_large warn on every call (resize_output_check), and
// printing that each time would time the terminal, not the model (Python
// shows a warning once too).
class WarnOnce : public c10::WarningHandler {
 public:
  void process(const c10::SourceLocation& where, const std::string& msg,
               const bool verbatim) override {
    if (seen_.insert(msg).second) {
      c10::WarningHandler::process(where, msg, verbatim);
    }
  }

 private:
  std::set<std::string> seen_;
};

// --check: outputs compared, nothing timed.
bool check_only = false;

ForwardRow measure(Subject& s, int threads) {
  fx::set_num_threads(threads);
  ForwardRow r;
  r.name = s.name;
  r.threads = fx::num_threads();
  fx::GraphModule& gm = *s.gm;
  const std::vector<c10::IValue>& in = s.in;
  const at::Tensor x = in[0].toTensor();
  r.nodes = static_cast<double>(gm.graph().size());
  at::Tensor want = gm.forward(in).toTensor();
  auto plan = fx::InferencePlan::build(s.optimized ? *s.optimized : gm, in);
  const at::Tensor planned = plan->run(in).toTensor();
  r.plan_optimized = s.optimized != nullptr;
  r.plan_max_diff = max_abs_diff(planned, want);
  if (!r.plan_optimized && !same_bits(planned, want)) {
    throw std::runtime_error(s.name + ": inference plan differs");
  }
  // Folding BatchNorm rounds differently (as TorchScript's, below).
  if (r.plan_optimized &&
      r.plan_max_diff > 1e-3 * std::max(1.0, want.abs().max().item<double>())) {
    throw std::runtime_error(s.name + ": inference plan differs by " +
                             std::to_string(r.plan_max_diff));
  }
  r.direct = plan->stats().direct_steps;
  r.onednn = plan->stats().onednn_steps;
  fx::Interpreter interpreter(gm);
  if (!at::equal(interpreter.run(in).toTensor(), want)) {
    throw std::runtime_error(s.name + ": interpreter differs");
  }
  if (s.script) {
    // The profiling executor specialises over the first runs.
    for (int i = 0; i < 3; ++i) s.script->forward(in);
    at::Tensor got = s.script->forward(in).toTensor();
    r.torchscript_max_diff = max_abs_diff(got, want);
    // Folding BatchNorm into the convolutions rounds differently.
    double scale = std::max(1.0, want.abs().max().item<double>());
    if (r.torchscript_max_diff > 1e-3 * scale) {
      throw std::runtime_error(s.name + ": TorchScript differs by " +
                               std::to_string(r.torchscript_max_diff));
    }
  }
  if (s.by_hand && !at::allclose(s.by_hand(x), want, 1e-4, 1e-5)) {
    throw std::runtime_error(s.name + ": hand-written differs");
  }
  if (check_only) {
    std::cerr << "checked " << s.name << " at " << r.threads << " threads\n";
    return r;
  }
  std::vector<double> gm_t, plan_t, interp_t, hand_t, ts_t;
  const int rounds = 5, repeat = s.repeat;
  for (int k = 0; k < rounds; ++k) {
    gm_t.push_back(median_us(repeat, [&] { gm.forward(in); }));
    plan_t.push_back(median_us(repeat, [&] { plan->run(in); }));
    interp_t.push_back(median_us(repeat, [&] { interpreter.run(in); }));
    if (s.by_hand) hand_t.push_back(median_us(repeat, [&] { s.by_hand(x); }));
    if (s.script) {
      ts_t.push_back(median_us(repeat, [&] { s.script->forward(in); }));
    }
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
  std::cerr << "forward " << s.name << " at " << r.threads << " threads done\n";
  return r;
}

std::unique_ptr<torch::jit::Module> load_script(const std::string& path,
                                                bool optimize) {
  if (!std::filesystem::exists(path)) return nullptr;
  auto m = std::make_unique<torch::jit::Module>(torch::jit::load(path));
  m->eval();
  if (optimize) *m = torch::jit::optimize_for_inference(*m);
  return m;
}

// {THREADS: {name: row}, ...}
std::string rows_json(const std::map<int, std::vector<ForwardRow>>& rows,
                      bool optimized_script) {
  std::ostringstream out;
  out << "{";
  bool first = true;
  for (const auto& [threads, list] : rows) {
    out << (first ? "" : ", ") << "\"" << threads << "\": {";
    for (size_t i = 0; i < list.size(); ++i) {
      out << (i ? ", " : "") << row_json(list[i], optimized_script);
    }
    out << "}";
    first = false;
  }
  out << "}";
  return out.str();
}

std::string forward_json(const std::string& models,
                         const std::vector<int>& threads, int repeat) {
  torch::nn::Module root;
  at::Tensor w = root.register_parameter("w", at::rand({16}));
  Subject s;
  s.name = "chain_1k";
  s.repeat = repeat * 10;
  s.gm = make_small_chain(root, 1000);
  at::Tensor x = at::randn({4, 16});
  if (!models.empty() &&
      std::filesystem::exists(models + "/chain/graph.fx.json")) {
    // torch.fx's chain, with its weight and input: same numbers as Python.
    auto loaded = fx::read_graph_module(models + "/chain/graph.fx.json");
    auto inputs = fx::read_value_file(models + "/chain/input.pt");
    if (loaded.ok() && inputs.ok()) {
      w.set_data((*loaded)->get_attr("w"));
      x = inputs->toListRef()[0].toTensor();
      s.gm = std::move(*loaded);
    }
  }
  s.in = {x};
  s.by_hand = [&](const at::Tensor& x) {
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
  if (!models.empty())
    s.script = load_script(models + "/chain/script.pt", false);
  std::map<int, std::vector<ForwardRow>> rows;
  for (int t : threads) rows[t].push_back(measure(s, t));
  return rows_json(rows, false);
}

// The bundles suite_bench.py wrote, in its order (DIR/models.txt); without
// that list, every directory of DIR holding a bundle but the chain, sorted.
std::vector<std::string> model_names(const std::string& models) {
  std::vector<std::string> names;
  std::ifstream list(models + "/models.txt");
  for (std::string line; std::getline(list, line);) {
    if (!line.empty()) names.push_back(line);
  }
  if (list.is_open()) return names;
  for (const auto& entry : std::filesystem::directory_iterator(models)) {
    std::string name = entry.path().filename().string();
    if (name != "chain" &&
        std::filesystem::exists(entry.path() / "graph.fx.json")) {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The model's forward written by hand over the bundle's modules, for the
// models that have one (any batch: NAME@B is NAME's); empty otherwise.
std::function<at::Tensor(const at::Tensor&)> by_hand_for(
    const std::string& bundle, fx::GraphModule* m) {
  std::string name = bundle.substr(0, bundle.find('@'));
  if (name == "resnet50") {
    return [m](const at::Tensor& x) { return resnet50_by_hand(*m, x); };
  }
  if (name == "transformer") {
    return [m](const at::Tensor& x) { return transformer_by_hand(*m, x); };
  }
  if (name == "mobilenet_v3_large" || name == "efficientnet_b0") {
    return [m](const at::Tensor& x) { return mobile_by_hand(*m, x); };
  }
  return nullptr;
}

Subject load_subject(const std::string& models, const std::string& name,
                     int repeat) {
  std::string dir = models + "/" + name;
  auto gm = fx::read_graph_module(dir + "/graph.fx.json");
  auto inputs = fx::read_value_file(dir + "/input.pt");
  if (!gm.ok() || !inputs.ok()) {
    throw std::runtime_error("cannot read the " + name + " bundle: " +
                             std::string(!gm.ok() ? gm.status().message()
                                                  : inputs.status().message()));
  }
  Subject s;
  s.name = name;
  s.gm = std::move(*gm);
  s.gm->eval();
  s.in = inputs->toListRef().vec();
  s.by_hand = by_hand_for(name, s.gm.get());
  s.script = load_script(dir + "/script_frozen.pt", true);
  s.optimized_script = true;
  if (std::filesystem::exists(dir + "/graph.opt.fx.json")) {
    auto opt = fx::read_graph_module(dir + "/graph.opt.fx.json");
    if (!opt.ok()) {
      throw std::runtime_error(
          "cannot read the optimized " + name +
          " bundle: " + std::string(opt.status().message()));
    }
    s.optimized = std::move(*opt);
    s.optimized->eval();
  }
  s.repeat = std::max(3, repeat / 4);
  return s;
}

// The row of a model that could not be loaded or measured (said on stderr).
ForwardRow error_row(const std::string& name, int threads,
                     const std::string& error) {
  std::cerr << "suite_benchmark: " << name << ": " << error << "\n";
  ForwardRow r;
  r.name = name;
  r.threads = threads;
  r.error = error;
  return r;
}

// A model that cannot be loaded, or measured at one thread count, gets a row
// with its error there; the others are measured as usual.
std::string models_json(const std::string& models,
                        const std::vector<int>& threads, int repeat) {
  std::map<int, std::vector<ForwardRow>> rows;
  for (const std::string& name : model_names(models)) {
    std::optional<Subject> s;
    std::string load_error;
    try {
      s = load_subject(models, name, repeat);
    } catch (const std::exception& e) {
      load_error = e.what();
    }
    for (int t : threads) {
      if (!s) {
        rows[t].push_back(error_row(name, t, load_error));
        continue;
      }
      try {
        rows[t].push_back(measure(*s, t));
      } catch (const std::exception& e) {
        rows[t].push_back(error_row(name, t, e.what()));
      }
    }
  }
  return rows_json(rows, true);
}

std::vector<int> parse_ints(const std::string& list) {
  std::vector<int> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(std::stoi(item));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes = {1000, 10000, 100000, 1000000};
  std::string models;
  int repeat = 20;
  bool ir = true, forward = true, model_rows = true;
  std::vector<int> threads;
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
    } else if (a == "--threads" && i + 1 < argc) {
      threads = parse_ints(argv[++i]);
    } else if (a == "--skip-ir") {
      ir = false;
    } else if (a == "--skip-forward") {
      forward = false;
    } else if (a == "--skip-models") {
      model_rows = false;
    } else if (a == "--check") {
      check_only = true;
    } else if (a == "--once" && i + 1 < argc) {
      once = argv[++i];
    } else {
      std::cerr << "usage: suite_benchmark [--sizes N,N] [--models DIR] "
                   "[--repeat N] [--threads N,N] [--skip-ir] [--skip-forward] "
                   "[--skip-models] [--check] [--once OP]\n";
      return 2;
    }
  }
  if (threads.empty()) {
    threads = {1};
    if (fx::available_cores() > 1) threads.push_back(fx::available_cores());
  }
  static WarnOnce warn_once;  // outlives main: LibTorch may warn at exit
  c10::Warning::set_warning_handler(&warn_once);
  try {
    fx::set_num_threads(1);  // the IR is single-threaded code
    if (!once.empty()) return run_once(once, sizes.front());
    std::string ir_part = ir ? ir_json(sizes) : "{}";
    torch::NoGradGuard no_grad;
    std::string fwd_part =
        forward ? forward_json(models, threads, repeat) : "{}";
    std::string models_part = model_rows && !models.empty()
                                  ? models_json(models, threads, repeat)
                                  : "{}";
    std::ostringstream counts;
    for (size_t i = 0; i < threads.size(); ++i) {
      counts << (i ? ", " : "") << threads[i];
    }
    std::cout << "{\"threads\": [" << counts.str()
              << "], \"blas\": " << json_string(fx::blas_library())
              << ", \"ir\": " << ir_part << ", \"forward\": " << fwd_part
              << ", \"models\": " << models_part << "}\n";
  } catch (const std::exception& e) {
    std::cerr << "suite_benchmark: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
