#include "host/pipeline/standard_instrumentations.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <boost/filesystem.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/io/atomic_file.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/support/strings.h"
#include "host/options/pass_options.h"
#include "host/pipeline/pass_worker.h"

namespace fx::host {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A bound option as a typed pipeline input (for reproducer configs).
OptionInput to_input(const OptionValue& value) {
  OptionInput in;
  in.text = option_value_text(value);
  switch (value.type) {
    case FX_OPTION_BOOL:
      in.kind = OptionInput::Kind::kBool;
      break;
    case FX_OPTION_INT:
      in.kind = OptionInput::Kind::kInt;
      break;
    case FX_OPTION_FLOAT:
      // inf and nan are not JSON numbers; the text form reads them.
      in.kind = std::isfinite(value.f) ? OptionInput::Kind::kFloat
                                       : OptionInput::Kind::kString;
      break;
    case FX_OPTION_STRING:
      in.kind = OptionInput::Kind::kString;
      break;
    case FX_OPTION_STRING_LIST:
      in.kind = OptionInput::Kind::kList;
      in.list = value.list;
      break;
  }
  return in;
}

std::string timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y%m%d-%H%M%S", &tm);
  return buffer;
}

namespace fs = boost::filesystem;

// Copies every plugin loaded from a file into `dir`/plugins and returns
// them pinned, at paths relative to `dir` (file names made unique).
absl::StatusOr<std::vector<PluginReference>> copy_plugins(
    const PassEvent& event, const std::string& dir) {
  std::vector<PluginReference> copies;
  std::set<std::string> taken;
  boost::system::error_code ec;
  for (const auto& plugin : event.registry.plugins()) {
    if (plugin->path().empty()) continue;
    std::string name = fs::path(plugin->path()).filename().string();
    if (taken.count(name) > 0) name = cat(copies.size(), "-", name);
    taken.insert(name);
    std::string relative = "plugins/" + name;
    if (copies.empty()) fs::create_directories(dir + "/plugins", ec);
    if (!ec) {
      fs::copy_file(plugin->path(), dir + "/" + relative,
                    fs::copy_option::overwrite_if_exists, ec);
    }
    if (ec) {
      return absl::InternalError(cat("cannot copy ", plugin->path(),
                                     " into the reproducer: ", ec.message()));
    }
    copies.push_back({relative, plugin->sha256()});
  }
  return copies;
}

// The config of a reproducer: the schedule from the failed pass on, with
// options bound, `plugins` pinned, `holding` assumed.
PipelineSpec reproducer_spec(const PassEvent& event,
                             std::vector<PluginReference> plugins) {
  PipelineSpec repro;
  repro.plugins = std::move(plugins);
  for (size_t i = event.index; i < event.schedule.size(); ++i) {
    PassInvocation p;
    p.pass = event.schedule[i].invocation.pass;
    for (const auto& [name, value] : event.schedule[i].options.values) {
      p.options.emplace_back(name, to_input(value));
    }
    repro.passes.push_back(std::move(p));
  }
  repro.verify_each = event.spec.verify_each;
  repro.isolate = event.spec.isolate;
  // Its plugins are pinned, so "auto" would trust them all: a pass that ran
  // isolated stays isolated.
  if (event.spec.isolation() == Isolation::kAuto && event.pass().isolated) {
    repro.isolate = Isolation::kAll;
  }
  repro.pass_timeout_seconds = event.spec.pass_timeout_seconds;
  repro.pass_memory_limit_mib = event.spec.pass_memory_limit_mib;
  repro.assume.assign(event.holding.begin(), event.holding.end());
  return repro;
}

// inputs.pt, when the passes had example inputs; whether it was written.
absl::StatusOr<bool> write_inputs(const PassEvent& event,
                                  const std::string& dir) {
  std::vector<at::Tensor> inputs = event.target.example_inputs();
  if (inputs.empty()) return false;
  absl::Status s = write_value_file(dir + "/inputs.pt",
                                    c10::List<at::Tensor>(std::move(inputs)));
  if (!s.ok()) return s;
  return true;
}

std::string reproducer_readme(const std::string& headline, bool inputs) {
  return cat(
      headline, "\n\ngraph.fx.json is the graph the pass received",
      inputs ? ", inputs.pt the example inputs the passes saw" : "",
      "; pipeline.json runs the rest of the pipeline from that pass, with "
      "every plugin pinned by sha256 (copies in plugins/). Reproduce in "
      "this directory with:\n\n  fx run graph.fx.json --config pipeline.json",
      inputs ? " --inputs inputs.pt" : "",
      " --no-default-plugins -o out.fx.json\n");
}

// Writes the reproducer of `event`'s pass into `dir` (which must exist).
absl::Status write_reproducer(const PassEvent& event, const std::string& dir,
                              const std::string& headline) {
  absl::Status written = event.target.write(dir + "/graph.fx.json");
  if (!written.ok()) return written;
  absl::StatusOr<bool> inputs = write_inputs(event, dir);
  if (!inputs.ok()) return inputs.status();
  absl::StatusOr<std::vector<PluginReference>> plugins =
      copy_plugins(event, dir);
  if (!plugins.ok()) return plugins.status();
  written = write_file_atomically(
      dir + "/pipeline.json",
      pipeline_config_json(reproducer_spec(event, *std::move(plugins))));
  if (!written.ok()) return written;
  return write_file_atomically(dir + "/README.txt",
                               reproducer_readme(headline, *inputs));
}

}  // namespace

void PassTimingInstrumentation::run_before_pass(const PassEvent&) {
  start_ = Clock::now();
}

void PassTimingInstrumentation::run_after_pass_call(const PassEvent& event) {
  event.record().run_seconds = seconds_since(start_);
}

void PassTimingInstrumentation::run_before_verification(const PassEvent&) {
  start_ = Clock::now();
}

void PassTimingInstrumentation::run_after_verification(const PassEvent& event) {
  event.record().verify_seconds = seconds_since(start_);
}

IrPrintingInstrumentation::IrPrintingInstrumentation(
    std::ostream& out, bool all, std::vector<std::string> passes)
    : out_(out), all_(all), passes_(std::move(passes)) {}

void IrPrintingInstrumentation::run_after_pass(const PassEvent& event) {
  if (!all_ && std::find(passes_.begin(), passes_.end(), event.name()) ==
                   passes_.end()) {
    return;
  }
  out_ << "// -----// graph after " << event.name() << " //----- //\n"
       << event.target.graph().str();
}

ProgressInstrumentation::ProgressInstrumentation(Callback report)
    : report_(std::move(report)) {}

void ProgressInstrumentation::run_before_pass(const PassEvent& event) {
  report_(event.index + 1, event.schedule.size(), event.name());
}

ReproducerInstrumentation::ReproducerInstrumentation(std::string dir)
    : dir_(std::move(dir)) {}

void ReproducerInstrumentation::run_before_pipeline(const PipelineEvent&) {
  pending_.clear();
}

namespace {

// A fresh reproducer directory for `event`'s pass under `root`, or "".
std::string new_reproducer_dir(const std::string& root,
                               const PassEvent& event) {
  std::string dir = cat(root, "/", event.pass().invocation.pass, "-",
                        timestamp(), "-", getpid());
  boost::system::error_code ec;
  boost::filesystem::create_directories(dir, ec);
  return ec ? "" : dir;
}

}  // namespace

void ReproducerInstrumentation::run_before_pass(const PassEvent& event) {
  // In process, a pass can end the process (a crash, an exit, a kill after
  // a hang): its reproducer is written before it runs, and removed when it
  // returns.
  if (event.pass().isolated) return;
  pending_ = new_reproducer_dir(dir_, event);
  if (pending_.empty()) return;
  const Plugin& plugin = *event.pass().pass->plugin;
  std::string headline =
      cat("the process ended during pass '", event.pass().invocation.pass,
          "' of ", plugin.describe(),
          " (a crash, an exit or a kill: see the host's last message)");
  if (!write_reproducer(event, pending_, headline).ok()) {
    boost::system::error_code ec;
    boost::filesystem::remove_all(pending_, ec);
    pending_.clear();
  }
}

void ReproducerInstrumentation::run_after_pass(const PassEvent&) {
  if (pending_.empty()) return;
  boost::system::error_code ec;
  boost::filesystem::remove_all(pending_, ec);
  pending_.clear();
}

void ReproducerInstrumentation::run_after_pass_failed(const PassEvent& event) {
  // The one written before the pass is written again, whole (its graph
  // would otherwise take the other of a bundle's two weights names).
  boost::system::error_code ec;
  if (!pending_.empty()) boost::filesystem::remove_all(pending_, ec);
  pending_.clear();
  PassRecord& record = event.record();
  std::string dir = new_reproducer_dir(dir_, event);
  if (dir.empty()) return;
  if (write_reproducer(event, dir, record.failure).ok()) {
    record.reproducer = dir;
    if (event.report.reproducer.empty()) event.report.reproducer = dir;
  }
}

// ------------------------------------------------------------ fatal signals

namespace {

// What the handler writes: prepared before each pass, so the handler only
// reads fixed buffers. `armed`: 0 before any pass, 1 while a pass runs (on
// thread `pass_thread` of process `armed_pid`), 2 after it returned.
char fatal_prefix[128];
char fatal_message[1024];
volatile sig_atomic_t fatal_armed = 0;
volatile pid_t armed_pid = 0;
volatile pid_t pass_thread = 0;
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
struct sigaction previous_actions[NSIG];

void write_all(const char* s) {
  size_t n = std::strlen(s);
  while (n > 0) {
    ssize_t w = ::write(2, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

pid_t current_thread() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

void on_fatal_signal(int sig) {
  sig_atomic_t armed = fatal_armed;
  if (armed != 0 && getpid() == armed_pid) {
    fatal_armed = 0;
    write_all(fatal_prefix);
    write_all(": fatal signal ");
    const char* name = known_signal_name(sig);
    write_all(name != nullptr ? name : "signal");
    if (armed == 2) {
      write_all(" after");
    } else if (current_thread() != pass_thread) {
      write_all(" in another thread (one a plugin left running?) during");
    } else {
      write_all(" in");
    }
    write_all(fatal_message);
  }
  // The previous disposition (usually the default: die of the signal); the
  // signal raised again is delivered when this handler returns.
  sigaction(sig, &previous_actions[sig], nullptr);
  raise(sig);
}

// exit() or quick_exit() called while a pass runs (by the plugin): named,
// and the process ends with kPluginExitStatus rather than the status the
// plugin chose (exit(0) would have looked like success).
void on_exit_during_pass() {
  if (fatal_armed != 1 || getpid() != armed_pid) return;
  fatal_armed = 0;
  write_all(fatal_prefix);
  write_all(": the process was ended (exit or quick_exit) during");
  write_all(fatal_message);
  ::_exit(kPluginExitStatus);
}

void install_fatal_signal_handlers() {
  static bool installed = [] {
    static std::vector<char> stack(std::max<size_t>(SIGSTKSZ, 64 * 1024));
    stack_t alt{};
    alt.ss_sp = stack.data();
    alt.ss_size = stack.size();
    sigaltstack(&alt, nullptr);
    struct sigaction action {};
    action.sa_handler = on_fatal_signal;
    action.sa_flags = SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (int sig : kFatalSignals) {
      sigaction(sig, &action, &previous_actions[sig]);
    }
    std::atexit(on_exit_during_pass);
    std::at_quick_exit(on_exit_during_pass);
    return true;
  }();
  (void)installed;
}

void copy_to(char* buffer, size_t size, const std::string& text) {
  size_t n = std::min(size - 1, text.size());
  std::memcpy(buffer, text.data(), n);
  buffer[n] = '\0';
}

}  // namespace

FatalSignalInstrumentation::FatalSignalInstrumentation(
    std::string_view prefix) {
  copy_to(fatal_prefix, sizeof fatal_prefix, std::string(prefix));
  install_fatal_signal_handlers();
}

void FatalSignalInstrumentation::run_before_pass(const PassEvent& event) {
  const Plugin& plugin = *event.pass().pass->plugin;
  fatal_armed = 0;
  copy_to(
      fatal_message, sizeof fatal_message,
      cat(" pass '", event.pass().invocation.pass, "' of ", plugin.describe(),
          "; the process ends here and no output is written\n"));
  armed_pid = getpid();
  pass_thread = current_thread();
  fatal_armed = 1;
}

void FatalSignalInstrumentation::run_after_pass_call(const PassEvent& event) {
  const Plugin& plugin = *event.pass().pass->plugin;
  fatal_armed = 0;
  copy_to(
      fatal_message, sizeof fatal_message,
      cat(" pass '", event.pass().invocation.pass, "' of ", plugin.describe(),
          " returned (in a thread it left running, or in the host); the "
          "process ends here\n"));
  fatal_armed = 2;
}

}  // namespace fx::host
