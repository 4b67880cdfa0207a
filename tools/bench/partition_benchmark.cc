// The capability partitioner at scale, against torch.fx's
// CapabilityBasedPartitioner on the same graphs in the same run.
//
//   bazel run --config=opt //tools/bench:partition_benchmark --
//       [--deep 1000,10000,100000] [--wide 100000] [--torchfx_deep 1000,3000]
//       [--torchfx_wide 100000] [--repeat 11]
//
// Graphs are chains of blocks modelled on a residual MLP block with a
// tuple-returning op (9 nodes each):
//   a = relu(x); b = a + x; c = chunk(b, 2); d, e = c[0], c[1]; f = d * e;
//   g = sigmoid(f) (every third block) or tanh(f); h = g + b; x = relu(h)
// The rule supports every call_function but torch.sigmoid, so each sigmoid
// splits a partition and the getitem rule applies in every block.
//  - deep: one chain of N nodes (a network's depth; torch.fx's ancestor sets
//    then grow with the square of N, so it is timed at small N only);
//  - wide: N nodes as independent chains of 100 nodes (towers) from one
//    placeholder, all returned: what torch.fx can still do at 100k nodes.
// Ours: median wall time of `repeat` runs of propose_partitions (1 thread;
// it is single-threaded). torch.fx: one run, CPU time
// (tools/bench/partition_bench.py), and its partitions must equal ours.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/ir/graph.h"
#include "fx_core/partition/capability_partitioner.h"
#include "fx_core/partition/target_support.h"
#include "tools/bench/timing.h"

namespace {

using fx::Graph;
using fx::Node;

// One block after x; returns the new x.
Node* add_block(Graph& g, Node* x, int64_t index) {
  Node* a = g.call_function("torch.relu", {x});
  Node* b = g.call_function("operator.add", {a, x});
  Node* c = g.call_function("torch.chunk", {b, 2});
  Node* d = g.call_function("operator.getitem", {c, 0});
  Node* e = g.call_function("operator.getitem", {c, 1});
  Node* f = g.call_function("operator.mul", {d, e});
  Node* s =
      g.call_function(index % 3 == 2 ? "torch.sigmoid" : "torch.tanh", {f});
  Node* h = g.call_function("operator.add", {s, b});
  return g.call_function("torch.relu", {h});
}

constexpr int64_t kBlockNodes = 9;

std::unique_ptr<Graph> deep_graph(int64_t n) {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  for (int64_t i = 0; i < (n - 2) / kBlockNodes; ++i) x = add_block(*g, x, i);
  g->output(x);
  return g;
}

std::unique_ptr<Graph> wide_graph(int64_t n) {
  constexpr int64_t kTower = 11;  // blocks of a 100-node tower
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  fx::ArgumentList outputs;
  for (int64_t t = 0; t < (n - 2) / (kTower * kBlockNodes + 1); ++t) {
    Node* y = g->call_function("torch.relu", {x});
    for (int64_t i = 0; i < kTower; ++i) y = add_block(*g, y, i);
    outputs.emplace_back(y);
  }
  g->output(fx::Argument::tuple(outputs));
  return g;
}

fx::OperatorSupport not_sigmoid() {
  return fx::OperatorSupport([](const Node& n) {
    return n.op() == fx::Opcode::kCallFunction && n.target() != "torch.sigmoid";
  });
}

std::string partition_text(const std::vector<fx::Partition>& parts) {
  std::string out;
  for (const fx::Partition& p : parts) {
    for (size_t i = 0; i < p.nodes.size(); ++i) {
      if (i) out += ' ';
      out += p.nodes[i]->name();
    }
    out += '\n';
  }
  return out;
}

struct Case {
  std::string kind;
  int64_t size;
  std::unique_ptr<Graph> graph;
  std::string ours;  // our partitions, as partition_bench.py writes them
};

Case measure(const std::string& kind, int64_t n, int repeat) {
  Case c{kind, n, kind == "deep" ? deep_graph(n) : wide_graph(n), ""};
  fx::OperatorSupport rule = not_sigmoid();
  std::vector<fx::Partition> parts;
  double us = fx::bench::median_us(
      [&] { parts = fx::propose_partitions(*c.graph, rule); }, repeat);
  c.ours = partition_text(parts);
  std::printf("%-5s %7zu nodes: ours %9.2f ms (%zu partitions, median of %d)\n",
              kind.c_str(), c.graph->size(), us / 1000, parts.size(), repeat);
  std::fflush(stdout);
  return c;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// torch.fx on the cases, in one Python process; checks its partitions.
void run_torchfx(const std::vector<Case*>& cases, const std::string& import_py,
                 const std::string& script) {
  if (cases.empty()) return;
  std::string dir = "/tmp/fx_partition_bench_" + std::to_string(getpid());
  std::string command = "mkdir -p " + dir;
  if (std::system(command.c_str()) != 0) return;
  command = "/usr/bin/python3 " + script + " " + import_py + " " + dir + "/out";
  for (size_t k = 0; k < cases.size(); ++k) {
    std::string path = dir + "/" + std::to_string(k) + ".fx.json";
    fx::GraphFile file;
    file.graph = std::move(cases[k]->graph);
    if (!fx::write_graph_file(path, file).ok()) return;
    command += " " + path;
  }
  command += " > " + dir + "/times.txt";
  if (std::system(command.c_str()) != 0) {
    std::printf("torch.fx: failed\n");
    return;
  }
  std::istringstream times(read_file(dir + "/times.txt"));
  for (size_t k = 0; k < cases.size(); ++k) {
    std::string path;
    double seconds = 0;
    times >> path >> seconds;
    bool same =
        read_file(dir + "/out." + std::to_string(k) + ".txt") == cases[k]->ours;
    std::printf("%-5s %7lld nodes: torch.fx %9.2f ms, partitions %s ours\n",
                cases[k]->kind.c_str(), static_cast<long long>(cases[k]->size),
                seconds * 1000, same ? "equal to" : "DIFFER from");
  }
  command = "rm -rf " + dir;
  if (std::system(command.c_str()) != 0) return;
}

std::vector<int64_t> sizes(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ',')) {
    if (!item.empty()) out.push_back(std::stoll(item));
  }
  return out;
}

bool contains(const std::vector<int64_t>& v, int64_t x) {
  for (int64_t y : v) {
    if (y == x) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::string deep = "1000,10000,100000", wide = "100000";
  std::string torchfx_deep = "1000,3000", torchfx_wide = "100000";
  int repeat = 11;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--deep")
      deep = value;
    else if (flag == "--wide")
      wide = value;
    else if (flag == "--torchfx_deep")
      torchfx_deep = value;
    else if (flag == "--torchfx_wide")
      torchfx_wide = value;
    else if (flag == "--repeat")
      repeat = std::atoi(value.c_str());
    else {
      std::fprintf(stderr, "partition_benchmark: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  std::vector<int64_t> fx_deep = sizes(torchfx_deep),
                       fx_wide = sizes(torchfx_wide);
  for (int64_t n : fx_deep) {
    if (!contains(sizes(deep), n)) deep += "," + std::to_string(n);
  }
  std::vector<Case> cases;
  for (int64_t n : sizes(deep)) cases.push_back(measure("deep", n, repeat));
  for (int64_t n : sizes(wide)) cases.push_back(measure("wide", n, repeat));
  std::vector<Case*> for_torchfx;
  for (Case& c : cases) {
    const auto& wanted = c.kind == "deep" ? fx_deep : fx_wide;
    if (contains(wanted, c.size)) for_torchfx.push_back(&c);
  }
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
    std::printf("torch.fx: skipped (python3-torch is not installed)\n");
    return 0;
  }
  const char* dir = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  std::string root = dir ? std::string(dir) + "/" : "";
  run_torchfx(for_torchfx, root + "tools/torchfx_import.py",
              root + "tools/bench/partition_bench.py");
  return 0;
}
