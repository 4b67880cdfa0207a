// The `fx` command: output on stdout, errors that name the file, node and
// field on stderr with a non-zero status, for every subcommand.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "fx_core/io/torch_save.h"
#include "tests/testing/python.h"
#include "tests/testing/reference.h"
#include "tests/tools/fx_run.h"

namespace fx {
namespace {

using testing::Result;
using testing::run;

std::string write_temp(const std::string& name, const std::string& text) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string path = std::string(tmp ? tmp : "/tmp") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string reference(const std::string& name, const std::string& file) {
  return testing::reference_dir() + "/" + name + "/" + file;
}

// A minimal valid graph with one node replaced by `node_json`.
std::string graph_with(const std::string& node_json) {
  return R"({"format": "fx-graph", "version": 1, "nodes": [
    {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
    )" + node_json +
         R"(,
    {"name": "output", "op": "output", "target": "output", "args": [{"node": "x"}], "kwargs": {}}]})";
}

TEST(FxCommand, PrintWritesTheGraphTextAndANewline) {
  Result r = run({"print", reference("seed_mymodule", "graph.fx.json")});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, testing::read_file(reference("seed_mymodule", "graph.txt")));
  EXPECT_EQ(r.err, "");
}

TEST(FxCommand, CodeWritesTorchFxCodeExactly) {
  Result r = run({"code", reference("seed_wrap", "graph.fx.json")});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, testing::read_file(reference("seed_wrap", "code.py")));
}

TEST(FxCommand, TabularHasTorchFxColumns) {
  Result r = run({"tabular", reference("seed_topk", "graph.fx.json")});
  EXPECT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, dashes, first;
  std::getline(lines, header);
  std::getline(lines, dashes);
  std::getline(lines, first);
  EXPECT_EQ(header.substr(0, 15), "opcode         ");
  EXPECT_NE(header.find("name"), std::string::npos);
  EXPECT_NE(header.find("target"), std::string::npos);
  EXPECT_NE(header.find("kwargs"), std::string::npos);
  EXPECT_EQ(dashes.substr(0, 15), "-------------  ");
  EXPECT_NE(r.out.find("<built-in function add>"), std::string::npos);
  EXPECT_NE(r.out.find("{'dim': -1}"), std::string::npos);
  EXPECT_NE(r.out.find("(x, linear_weight)"), std::string::npos);
}

TEST(FxCommand, NoArgumentsPrintsUsageAndFails) {
  Result r = run({});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("usage: fx"), std::string::npos);
}

TEST(FxCommand, UnknownCommandIsNamed) {
  Result r = run({"frobnicate", "x.json"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown command 'frobnicate'"), std::string::npos);
}

TEST(FxCommand, MissingFileIsNamed) {
  Result r = run({"print", "/nonexistent/graph.fx.json"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("/nonexistent/graph.fx.json"), std::string::npos);
  EXPECT_EQ(r.out, "");
}

TEST(FxCommand, MalformedJsonIsReported) {
  std::string path =
      write_temp("malformed.json", "{\"format\": \"fx-graph\", ");
  Result r = run({"print", path});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("malformed JSON"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(FxCommand, UnknownOpcodeNamesTheNode) {
  std::string path = write_temp(
      "unknown_op.json",
      graph_with(
          R"({"name": "y", "op": "call_magic", "target": "f", "args": [], "kwargs": {}})"));
  Result r = run({"code", path});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("node 'y'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown opcode 'call_magic'"), std::string::npos)
      << r.err;
}

TEST(FxCommand, DanglingNodeReferenceNamesTheNodeAndField) {
  std::string path = write_temp(
      "dangling.json",
      graph_with(
          R"({"name": "y", "op": "call_function", "target": "torch.relu", "args": [{"node": "ghost"}], "kwargs": {}})"));
  Result r = run({"print", path});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("node 'y' field 'args[0]'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'ghost'"), std::string::npos) << r.err;
}

TEST(FxCommand, OutputNotLastIsRefused) {
  std::string text = R"({"format": "fx-graph", "version": 1, "nodes": [
    {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
    {"name": "output", "op": "output", "target": "output", "args": [{"node": "x"}], "kwargs": {}},
    {"name": "y", "op": "call_function", "target": "torch.relu", "args": [{"node": "x"}], "kwargs": {}}]})";
  Result r = run({"print", write_temp("output_not_last.json", text)});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("node 'output'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("must be the last node"), std::string::npos) << r.err;
}

TEST(FxCommand, UnknownLanguageIsRefused) {
  Result r =
      run({"code", "--lang=rust", reference("seed_leaf", "graph.fx.json")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown language 'rust'"), std::string::npos);
}

TEST(FxCommand, CodeCppWritesLibTorchSourceInTheGivenNamespace) {
  Result r = run({"code", "--lang=cpp", "--name=mine",
                  reference("seed_mymodule", "graph.fx.json")});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("namespace mine {"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fx::cpp::submodule<torch::nn::LinearImpl>(self, "
                       "\"linear\").forward(add)"),
            std::string::npos)
      << r.out;
}

TEST(FxCommand, CodeCppNamesTheNodeWithoutCSpelling) {
  std::string path = write_temp(
      "mystery.fx.json",
      graph_with(
          R"({"name": "m", "op": "call_function", "target": "vendor.m", "args": [{"node": "x"}], "kwargs": {}})"));
  Result r = run({"code", "--lang=cpp", path});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("node 'm'"), std::string::npos) << r.err;
}

// The demo traces MyModule; what it prints is what torch.fx printed for the
// traced MyModule (../shared/reference); then it runs a pipeline of plugins
// loaded at runtime and checks the result against eager.
TEST(FxCommand, DemoPrintsTorchFxsGraphAndCodeAndMatchesEager) {
  Result r = run({"demo"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(
      r.out.find(testing::read_file(reference("seed_mymodule", "graph.txt"))),
      std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find(testing::read_file(reference("seed_mymodule", "code.py"))),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("max |difference| against eager: 0\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  fx_passes 1.0 (5 passes)\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("decompose   ran"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("call_function[target=torch.matmul]"), std::string::npos)
      << r.out;
}

TEST(FxCommand, DemoTakesNoFile) {
  Result r = run({"demo", "x.json"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("takes no FILE"), std::string::npos);
}

TEST(FxCommand, ExecWritesTheOutputTorchFxComputed) {
  std::string out_path = write_temp("exec_out.pt", "");
  Result r = run({"exec", reference("seed_leaf", "graph.fx.json"), "--inputs",
                  reference("seed_leaf", "input.pt"), "--outputs", out_path});
  ASSERT_EQ(r.status, 0) << r.err;
  auto got = read_value_file(out_path);
  auto want = read_value_file(reference("seed_leaf", "expected.pt"));
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_TRUE(want.ok()) << want.status().message();
  EXPECT_TRUE(at::allclose(got->toTensor(), want->toTensor(), 1e-5, 1e-6));
}

TEST(FxCommand, ExecWithoutOutputsIsRefused) {
  Result r = run({"exec", reference("seed_leaf", "graph.fx.json"), "--inputs",
                  reference("seed_leaf", "input.pt")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--outputs OUT.pt"), std::string::npos) << r.err;
}

TEST(FxCommand, ExecNamesAnUnreadableInputsFile) {
  std::string bad = write_temp("bad_inputs.pt", "not a zip");
  Result r = run({"exec", reference("seed_leaf", "graph.fx.json"),
                  "--inputs=" + bad, "--outputs=" + bad + ".out"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bad_inputs.pt"), std::string::npos) << r.err;
}

// Issue 22: fx exec never replaces a file it reads.
TEST(FxCommand, ExecNeverOverwritesItsInputs) {
  std::string inputs = write_temp("exec_inputs.pt", "");
  std::remove(inputs.c_str());
  {
    std::ifstream from(reference("seed_leaf", "input.pt"), std::ios::binary);
    std::ofstream to(inputs, std::ios::binary);
    to << from.rdbuf();
  }
  std::string before = testing::read_file(inputs);
  Result r = run({"exec", reference("seed_leaf", "graph.fx.json"), "--inputs",
                  inputs, "--outputs", inputs});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "fx exec: --outputs " + inputs + " would overwrite " +
                       inputs +
                       " (--inputs), which this command reads; write the "
                       "output elsewhere\n");
  EXPECT_EQ(testing::read_file(inputs), before);
}

// Issue 34: --max-file-bytes, a global option of the shared parser, holds
// for one command and is restored after it (commands run in process here).
TEST(FxCommand, TheFileLimitHoldsForOneCommand) {
  const std::string graph = reference("seed_leaf", "graph.fx.json");
  Result r = run({"print", graph, "--max-file-bytes=10"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bytes is more than the limit of 10 bytes"),
            std::string::npos)
      << r.err;
  r = run({"--max-file-bytes", "10", "code", graph});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(run({"print", graph}).status, 0);
  r = run({"print", graph, "--max-file-bytes=-1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "fx: --max-file-bytes needs a positive number of bytes, got "
            "'-1'\n");
}

// Issue 22: `"weights": "/dev/zero"` read forever; now refused at once.
TEST(FxCommand, ExecRefusesWeightsThatAreNoRegularFile) {
  std::string text =
      testing::read_file(reference("seed_mymodule", "graph.fx.json"));
  text.replace(text.find("\"model.weights.pt\""), 18, "\"/dev/zero\"");
  std::string graph = write_temp("dev_zero_weights.json", text);
  Result r =
      run({"exec", graph, "--inputs", reference("seed_mymodule", "input.pt"),
           "--outputs", graph + ".out.pt"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "fx exec: " + graph +
                       ": cannot read '/dev/zero': not a regular file (a "
                       "character device)\n");
}

// A graph calling a vendor's custom op (my_vendor.fused_gelu, registered by
// sdk_examples/vendor_extension's plugin) runs from the CLI once the plugin
// is loaded. One test: the op stays registered for the rest of the process.
TEST(FxCommand, ExecLoadsTheCustomOpsOfPlugins) {
  std::string graph = write_temp("vendor_op.fx.json", R"({
    "format": "fx-graph", "version": 1, "modules": {},
    "nodes": [
      {"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": {}},
      {"name": "fused_gelu", "op": "call_function",
       "target": "my_vendor.fused_gelu", "args": [{"node": "x"}],
       "kwargs": {"alpha": 2.0}},
      {"name": "output", "op": "output", "target": "output",
       "args": [{"node": "fused_gelu"}], "kwargs": {}}]})");
  at::Tensor x = at::linspace(-3, 3, 12).reshape({3, 4});
  std::string inputs = write_temp("vendor_op_in.pt", "");
  ASSERT_TRUE(write_value_file(inputs, c10::List<at::Tensor>({x})).ok());
  std::string outputs = write_temp("vendor_op_out.pt", "");
  std::string plugin = "sdk_examples/vendor_extension/libvendor_extension.so";

  Result without = run({"exec", graph, "--no-default-plugins", "--inputs",
                        inputs, "--outputs", outputs});
  EXPECT_EQ(without.status, 1);
  EXPECT_NE(without.err.find("my_vendor.fused_gelu"), std::string::npos)
      << without.err;

  Result r = run({"exec", graph, "--plugin", plugin, "--inputs", inputs,
                  "--outputs", outputs});
  ASSERT_EQ(r.status, 0) << r.err;
  auto got = read_value_file(outputs);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_TRUE(at::allclose(got->toTensor(), 2.0 * at::gelu(x), 1e-5, 1e-6))
      << got->toTensor();
}

TEST(FxCommand, ExecNamesAPluginThatDoesNotLoad) {
  Result r = run({"exec", reference("seed_leaf", "graph.fx.json"), "--plugin",
                  "missing.so", "--inputs", reference("seed_leaf", "input.pt"),
                  "--outputs", write_temp("unused.pt", "")});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("fx exec: cannot load plugin: cannot read 'missing.so'"),
            std::string::npos)
      << r.err;
}

// Issue 17: every engine computes the output torch.fx computed.
TEST(FxCommand, ExecRunsEveryEngine) {
  auto want = read_value_file(reference("seed_mymodule", "expected.pt"));
  ASSERT_TRUE(want.ok()) << want.status().message();
  for (std::string engine : {"graph_module", "inference_plan", "interpreter"}) {
    std::string out_path = write_temp("exec_" + engine + ".pt", "");
    Result r = run({"exec", reference("seed_mymodule", "graph.fx.json"),
                    "--inputs", reference("seed_mymodule", "input.pt"),
                    "--outputs", out_path, "--engine", engine});
    ASSERT_EQ(r.status, 0) << engine << ": " << r.err;
    EXPECT_EQ(r.out, "") << engine;
    auto got = read_value_file(out_path);
    ASSERT_TRUE(got.ok()) << engine << ": " << got.status().message();
    EXPECT_TRUE(at::allclose(got->toTensor(), want->toTensor(), 1e-5, 1e-6))
        << engine;
  }
}

// Issue 40: each module runs in the training mode the bundle records, as
// torch.fx ran the model torchfx_export.py exported in train() mode
// (expected.pt, computed by torch.fx); --eval puts every module in eval mode.
TEST(FxCommand, ExecKeepsEachModulesTrainingMode) {
  if (!testing::have_python_torch()) GTEST_SKIP() << "no python3-torch";
  std::string dir = write_temp("train_mode", "");
  std::remove(dir.c_str());
  testing::run_python("tools/torchfx_export.py",
                      {"--module",
                       testing::runfile("tests/tools/train_mode_model.py") +
                           ":TrainModeBatchNorm",
                       "--train", "--input-shape", "5,3,6,6", "-o", dir});
  auto want = read_value_file(dir + "/expected.pt");
  ASSERT_TRUE(want.ok()) << want.status().message();
  for (std::string engine : {"graph_module", "inference_plan", "interpreter"}) {
    std::string out_path = write_temp("train_" + engine + ".pt", "");
    Result r =
        run({"exec", dir + "/graph.fx.json", "--inputs", dir + "/input.pt",
             "--outputs", out_path, "--engine", engine});
    ASSERT_EQ(r.status, 0) << engine << ": " << r.err;
    auto got = read_value_file(out_path);
    ASSERT_TRUE(got.ok()) << engine << ": " << got.status().message();
    EXPECT_TRUE(at::allclose(got->toTensor(), want->toTensor(), 1e-4, 1e-5))
        << engine << ": " << got->toTensor() << " vs " << want->toTensor();
  }
  std::string out_path = write_temp("train_eval.pt", "");
  Result r = run({"exec", dir + "/graph.fx.json", "--inputs", dir + "/input.pt",
                  "--outputs", out_path, "--eval"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto got = read_value_file(out_path);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_FALSE(at::allclose(got->toTensor(), want->toTensor(), 1e-2, 1e-2));
}

TEST(FxCommand, ExecRepeatPrintsMinAndMedianWithTheThreadCount) {
  Result r =
      run({"exec", reference("seed_mymodule", "graph.fx.json"), "--inputs",
           reference("seed_mymodule", "input.pt"), "--engine=inference_plan",
           "--threads", "1", "--repeat", "5"});
  ASSERT_EQ(r.status, 0) << r.err;  // --outputs may be left out with --repeat
  EXPECT_EQ(at::get_num_threads(), 1);
  std::string prefix = "inference_plan: 5 runs, 1 threads: min ";
  ASSERT_EQ(r.out.substr(0, prefix.size()), prefix) << r.out;
  double min_ms = -1, median_ms = -1;
  ASSERT_EQ(std::sscanf(r.out.c_str() + prefix.size(), "%lf ms, median %lf ms",
                        &min_ms, &median_ms),
            2)
      << r.out;
  EXPECT_GE(min_ms, 0);
  EXPECT_LE(min_ms, median_ms);
  EXPECT_EQ(r.out.back(), '\n');

  r = run({"exec", reference("seed_mymodule", "graph.fx.json"), "--inputs",
           reference("seed_mymodule", "input.pt"), "--threads=2",
           "--repeat=2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("graph_module: 2 runs, 2 threads: min ", 0), 0)
      << r.out;
  EXPECT_EQ(at::get_num_threads(), 2);
  at::set_num_threads(1);
}

TEST(FxCommand, ExecRefusesAnUnknownEngineAndBadCounts) {
  std::vector<std::string> base = {
      "exec",      reference("seed_mymodule", "graph.fx.json"),
      "--inputs",  reference("seed_mymodule", "input.pt"),
      "--outputs", write_temp("exec_refused.pt", "")};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run(args);
  };
  Result r = with({"--engine", "jit"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "fx exec: unknown engine 'jit' (expected graph_module, "
            "inference_plan or interpreter)\n");
  for (std::string key : {"threads", "repeat"}) {
    for (std::string bad : {"0", "-1", "two", "3x", ""}) {
      r = with({"--" + key + "=" + bad});
      EXPECT_EQ(r.status, 2) << key << "=" << bad;
      EXPECT_EQ(r.err, "fx exec: --" + key +
                           " expects a positive integer, got '" + bad + "'\n");
    }
  }
}

// --dynamic is the inference plan's: with another engine a usage error.
TEST(FxCommand, ExecDynamicNeedsTheInferencePlan) {
  Result r = run({"exec", reference("seed_mymodule", "graph.fx.json"),
                  "--inputs", reference("seed_mymodule", "input.pt"),
                  "--outputs", write_temp("exec_dynamic.pt", ""), "--dynamic"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "fx exec: --dynamic needs --engine inference_plan\n");
}

// Several input sets with --repeat: one timing line per set, then the
// plan's counts.
TEST(FxCommand, ExecDynamicTimesEachInputSet) {
  const std::string in = reference("seed_mymodule", "input.pt");
  Result r = run({"exec", reference("seed_mymodule", "graph.fx.json"),
                  "--inputs", in, "--inputs", in, "--engine", "inference_plan",
                  "--dynamic", "--repeat", "2", "--threads", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string line = "inference_plan [" + in + "]: 2 runs, 1 threads: ";
  EXPECT_EQ(r.out.find(line), 0u) << r.out;
  EXPECT_NE(r.out.find(line, line.size()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plan builds: 1\nshape specialisations: 1\n"),
            std::string::npos)
      << r.out;
}

// fx exec --pipeline: the passes run on the loaded module before it runs;
// a pipeline that cannot be built is a usage error found before FILE is read.
TEST(FxCommand, ExecRunsAPipelineFirst) {
  auto want = read_value_file(reference("seed_mymodule", "expected.pt"));
  ASSERT_TRUE(want.ok()) << want.status().message();
  std::string out_path = write_temp("exec_pipeline.pt", "");
  Result r =
      run({"exec", reference("seed_mymodule", "graph.fx.json"), "--inputs",
           reference("seed_mymodule", "input.pt"), "--outputs", out_path,
           "--pipeline", "shape_prop,cse,dce", "--engine", "inference_plan"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto got = read_value_file(out_path);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_TRUE(at::allclose(got->toTensor(), want->toTensor(), 1e-5, 1e-6));

  for (std::string pipeline : {"no_such_pass", "dce{", "dce{nope=1}"}) {
    r = run({"exec", "missing.fx.json", "--inputs", "missing.pt", "--outputs",
             write_temp("exec_pipeline_bad.pt", ""), "--pipeline", pipeline});
    EXPECT_EQ(r.status, 2) << pipeline << ": " << r.err;
    EXPECT_EQ(r.err.rfind("fx exec: ", 0), 0) << r.err;
    EXPECT_EQ(r.err.find("missing"), std::string::npos) << r.err;
  }
}

TEST(FxCommand, OptionOfAnotherCommandIsRefused) {
  Result r =
      run({"print", "--inputs=x", reference("seed_leaf", "graph.fx.json")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown option '--inputs=x'"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace fx
