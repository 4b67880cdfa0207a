// `fx exec FILE --inputs IN.pt [--inputs IN2.pt]... [--outputs OUT.pt]
// [--pipeline TEXT | --optimize]
// [--engine graph_module|inference_plan|interpreter] [--dynamic] [--threads N]
// [--repeat N] [--eval]`: runs a bundle (or a graph file without parameters) on
// the inputs, a torch.save list, without autograd, and writes the output with
// torch.save, atomically.
//
//  - Plugins (--plugin, --plugin-dir, the default directories as for fx run)
//    are loaded first, so the custom ops and module rules they register
//    resolve when FILE loads.
//  - --pipeline TEXT runs those passes on the loaded module, in memory, with
//    the inputs as the passes' example inputs, before anything executes:
//    `--pipeline shape_prop,fold_bn,fuse_conv --engine inference_plan` runs
//    the plan on the graph the inference plugin optimized, as `fx run` would
//    write it. A failing pass is an error (exit status 1) naming it.
//    TEXT may be a named pipeline (host/pipeline/named_pipelines.h:
//    O1, O2, inference); its engine is then the default for --engine, and
//    stderr names the passes that ran ("fx exec: named pipeline
//    inference: ran shape_prop, fold_bn, ...").
//  - --optimize is `--pipeline inference`: the InferencePlan's fast path
//    (with --engine inference_plan unless --engine says otherwise).
//  - Each module runs in the training mode the bundle records for it
//    ("training" in MODULE), as torch.fx runs the exported model; --eval
//    puts them all in eval mode first, as model.eval().
//  - --engine chooses what executes: GraphModule::forward (the default), the
//    InferencePlan (built on the inputs, which runs the graph once) or the
//    Interpreter.
//  - Several input sets (--inputs repeated, e.g. one per batch size or
//    sequence length) run one after the other on one engine, built on the
//    first set (the passes too get the first set as example inputs);
//    --outputs then holds a list with one output per set, in order.
//  - --dynamic (with --engine inference_plan) builds the dynamic plan, one
//    plan for every shape (inference_plan.h, PlanShapes::kDynamic); without
//    it the plan re-plans whenever a set's shapes differ. With --dynamic or
//    several sets the inference plan prints "plan builds: N" (1 for a
//    dynamic plan) and "shape specialisations: K" after the runs.
//  - A symbolic graph's guards are checked on every set: a set that breaks
//    one is an error naming the guard, and nothing is written.
//  - --repeat N runs N more times after the first run (the warm-up) and
//    prints "ENGINE: N runs, T threads: min X ms, median Y ms" (with several
//    sets one line per set, "ENGINE [IN.pt]: ..."); --outputs may then be
//    left out. --threads N sets LibTorch's and OpenBLAS's
//    thread count (default: every CPU the process may use).
// Exit status: 0 on success, 1 when something does not load, run or write
// (or a pass fails), 2 for a usage error: a bad option or pipeline (found
// before FILE is read).
#ifndef TOOLS_EXEC_COMMAND_H_
#define TOOLS_EXEC_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "host/loader/plugin_discovery.h"

namespace fx::tools {

struct ExecArgs {
  std::string input;                // FILE
  std::vector<std::string> inputs;  // --inputs IN.pt, one per set
  std::string outputs;              // --outputs OUT.pt (may be empty)
  std::string pipeline;             // --pipeline TEXT (may be empty)
  bool optimize = false;            // --optimize: --pipeline inference
  // --engine; empty: the named pipeline's engine, else graph_module.
  std::string engine;
  int threads = 0;       // --threads N; 0: the default
  int repeat = 0;        // --repeat N; 0: run once
  bool eval = false;     // --eval: every module in eval mode
  bool dynamic = false;  // --dynamic: one plan, every shape
  host::PluginSources sources;
};

int run_exec_command(const ExecArgs& args, std::ostream& out,
                     std::ostream& err);

}  // namespace fx::tools

#endif  // TOOLS_EXEC_COMMAND_H_
