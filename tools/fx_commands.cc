#include "tools/fx_commands.h"

#include <string_view>

#include "fx_core/codegen.h"
#include "fx_core/cpp_codegen.h"
#include "fx_core/error.h"
#include "fx_core/graph_file.h"
#include "tools/demo.h"

namespace fx::tools {
namespace {

constexpr std::string_view kUsage =
    "usage: fx <command> [options] FILE\n"
    "\n"
    "commands:\n"
    "  print FILE                 graph text, as torch.fx prints it\n"
    "  tabular FILE               the graph as a table (print_tabular)\n"
    "  code [--lang=python|cpp] [--name=NAMESPACE] FILE\n"
    "                             generated code: Python (gm.code, the\n"
    "                             default) or C++ (LibTorch) in NAMESPACE\n"
    "  demo                       the seed docs' MyModule: built, printed, "
    "run\n";

// Loads FILE or reports why not.
bool load(const std::string& path, GraphFile* file, std::ostream& err) {
  absl::StatusOr<GraphFile> loaded = read_graph_file(path);
  if (!loaded.ok()) {
    err << "fx: " << loaded.status().message() << "\n";
    return false;
  }
  *file = std::move(*loaded);
  return true;
}

}  // namespace

int run_fx_command(const std::vector<std::string>& args, std::ostream& out,
                   std::ostream& err) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help" ||
      args[0] == "help") {
    (args.empty() ? err : out) << kUsage;
    return args.empty() ? 2 : 0;
  }
  const std::string& command = args[0];
  std::vector<std::string> positional;
  std::string lang = "python";
  std::string cpp_namespace = "fx_generated";
  for (size_t i = 1; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a.substr(0, 7) == "--lang=") {
      lang = std::string(a.substr(7));
    } else if (a.substr(0, 7) == "--name=") {
      cpp_namespace = std::string(a.substr(7));
    } else if (a.size() > 1 && a[0] == '-') {
      err << "fx " << command << ": unknown option '" << a << "'\n" << kUsage;
      return 2;
    } else {
      positional.push_back(args[i]);
    }
  }

  if (command == "demo") {
    if (!positional.empty()) {
      err << "fx demo: takes no FILE\n" << kUsage;
      return 2;
    }
    return run_demo(out, err);
  }
  if (command != "print" && command != "tabular" && command != "code") {
    err << "fx: unknown command '" << command << "'\n" << kUsage;
    return 2;
  }
  if (positional.size() != 1) {
    err << "fx " << command << ": expected one FILE, got " << positional.size()
        << "\n"
        << kUsage;
    return 2;
  }
  GraphFile file;
  if (!load(positional[0], &file, err)) return 1;
  if (command == "print") {
    out << file.graph->str() << "\n";
  } else if (command == "tabular") {
    out << file.graph->tabular();
  } else if (lang == "python") {
    out << file.graph->python_code("self").src;
  } else if (lang == "cpp") {
    std::vector<std::pair<std::string, std::string>> module_types;
    for (const auto& [path, spec] : file.modules) {
      module_types.emplace_back(path, spec.type);
    }
    try {
      out << gen_cpp_code(*file.graph, module_types, cpp_namespace);
    } catch (const FxError& e) {
      err << "fx code: " << positional[0] << ": " << e.what() << "\n";
      return 1;
    }
  } else {
    err << "fx code: unknown language '" << lang
        << "' (expected python or cpp)\n";
    return 2;
  }
  out.flush();
  return out ? 0 : 1;
}

}  // namespace fx::tools
