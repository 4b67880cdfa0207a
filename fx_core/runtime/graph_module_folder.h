// fx::to_folder: torch.fx's `GraphModule.to_folder(folder, module_name)` for
// the C++ GraphModule. It writes a package that Python torch imports and C++
// reloads:
//
//   folder/
//     __init__.py       `from .module import *`
//     module.py         `class FxModule(torch.nn.Module)` (see below)
//     state_dict.pt     every parameter and buffer, keyed as torch.fx's
//                       gm.state_dict() keys them (`linear.weight`, `param`,
//                       `layer1.0.conv1.weight`); torch.load gives a dict
//     graph.fx.json     the same module as an fx-graph bundle
//     model.weights.pt  (docs/fx-graph-json.md), written by
//                       write_graph_module: read_graph_module(
//                       folder + "/graph.fx.json") rebuilds it in C++
//                       (model.weights.pt only when there are weights)
//
// With the folder's parent on sys.path, Python does
//   from folder import FxModule; m = FxModule(); m(x)
//
// module.py starts as torch.fx's does (`import torch`, the imports of
// torch.fx's codegen builtins such as `from math import inf`,
// `from torch.nn import *`), then defines what gm.code needs that is not in
// scope (`import math` / `math_sqrt = math.sqrt`, `typing_List =
// typing.List`; builtins such as `len` need nothing) and the modules of
// non-torch module types. Then the class:
//  - __init__ builds every submodule the graph references at its qualified
//    path, from its ModuleKind's type and describe() kwargs
//    (`self.linear = torch.nn.Linear(in_features=4, out_features=5,
//    bias=True)`), with plain torch.nn.Module() containers on the way
//    (`layer1.0.conv1`; atoms that are not identifiers go through
//    add_module / register_parameter); it registers each get_attr target
//    outside those modules as a torch.nn.Parameter or a buffer of the right
//    shape and dtype (requires_grad as in C++), loads state_dict.pt from the
//    directory of module.py (os.path.dirname(__file__), so the folder can be
//    moved), then sets training mode as the C++ modules have it;
//  - forward is gm.code() byte for byte, indented into the class as torch.fx
//    does (_addindent). The exception: the `torch.fx._symbolic_trace.wrap(
//    "fn")` lines of a graph with wrapped functions are moved to module
//    level, before the class, because torch.fx.wrap must be called at the
//    top level of a module; there they keep `fn` a leaf when the loaded
//    module is traced again.
// Unlike torch.fx, no module is pickled: every module must be describable
// (registered with ModuleRegistry with a describe function).
//
// The folder is written as a set. Everything is generated and checked
// before anything is written; the files then go into a fresh directory
// beside the folder (`.NAME.to_folder.PID.RANDOM`), which takes the
// folder's place in one rename: renameat2 with RENAME_NOREPLACE when there
// is no folder, else with RENAME_EXCHANGE, the old folder (now at the
// fresh name) being removed after. A crash at any point leaves the old
// folder loadable and unchanged, or the new one whole (and at worst that
// directory beside it). On a file system without RENAME_EXCHANGE the old
// folder is renamed aside first, and a crash between the two renames leaves
// it beside the folder's name.
//
// An existing folder is replaced as a whole: its package files (the names
// above, model.weights.1.pt, __pycache__) go; its other files are kept
// (hard-linked into the new folder, with its permissions and those of the
// package files it had); a directory of its own that is not __pycache__,
// the current directory (or one holding it), and a path that exists and is
// not a directory are refused, naming the path. A symlink to a directory is
// followed (the directory is replaced, the link stays). The folder's mode is
// set last, so a read-only (0555) folder is replaced too.
//
// Unlike torch.fx's to_folder, a folder holding a directory of its own other
// than __pycache__ and the current directory ('' included) or one holding it
// are refused, and replacing a folder needs write access to its parent
// directory and hard-linkable kept files (so a folder on another mount than
// its parent directory, a mount point, is refused), and leaves the caller as
// the owner of the folder and its package files, without the old folder's
// ACLs.
//
// Errors come back as a status naming what failed: a module that cannot be
// described (its path and C++ class), a get_attr / call_module target the
// module lacks, a module_name that is not a Python identifier, a folder that
// cannot be created, written or replaced (a parent directory that cannot be
// created or written in is named); nothing is changed then. Once the folder
// is replaced, old contents that cannot be removed (even after making their
// directories writable) are not an error: they stay at their
// `.NAME.to_folder.*` name beside the folder, named in a warning on stderr.
//
// Limitations: a wrapped function (or a CodeGen additional_globals entry) is
// imported by its qualified name (`import pkg.mod` / `fn = pkg.mod.fn`), so
// it must be importable from module.py (a function of `__main__` is not); a
// non-torch module type (`vendor.FancyNorm`) is imported the same way; the
// modules are rebuilt from their constructor arguments only, so a module's
// own children keep the training mode its constructor gives them.
#ifndef FX_CORE_RUNTIME_GRAPH_MODULE_FOLDER_H_
#define FX_CORE_RUNTIME_GRAPH_MODULE_FOLDER_H_

#include <string>

#include "absl/status/status.h"
#include "fx_core/runtime/graph_module.h"

namespace fx {

// Writes `gm` to `folder` (created with its parents) as described above.
absl::Status to_folder(const GraphModule& gm, const std::string& folder,
                       const std::string& module_name = "FxModule");

}  // namespace fx

#endif  // FX_CORE_RUNTIME_GRAPH_MODULE_FOLDER_H_
