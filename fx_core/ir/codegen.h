// fx::CodeGen: turns a Graph into Python source exactly as torch.fx does.
//
// gen_python_code() is torch.fx's `CodeGen._gen_python_code`: operators
// pretty-printed (`x + y`, `x[0]`), qualified paths formatted
// (`getattr(self.features, "0")`), each value freed after its last use
// (`;  a = b = None`), `wrap("fn")` lines for wrapped functions, annotations,
// placeholder defaults and `pass` for an empty body. The output of the default
// CodeGen is byte-identical to torch.fx's `gm.code` for the same graph.
//
// Subclasses customise the text through torch.fx's extension points:
//   generate_prologue   the `def forward(...)` line (torch.fx's gen_fn_def);
//   generate_output     the `return ...` statement;
//   additional_globals  names the generated code needs in scope.
// torch.fx's two runtime hooks (process_inputs, process_outputs) need
// LibTorch values, so they are not here: a code generator that needs them
// derives from fx::RuntimeCodeGen (fx_core/runtime/runtime_codegen.h).
// A subclass must override clone() so graph copies keep it.
#ifndef FX_CORE_IR_CODEGEN_H_
#define FX_CORE_IR_CODEGEN_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fx_core/ir/argument.h"

namespace fx {

class Graph;

struct PythonCode {
  // The Python source of the module's forward (GraphModule.code).
  std::string src;
  // Globals the source refers to: name in the code -> qualified name of the
  // object ("math_sqrt" -> "math.sqrt", "torch" -> "torch").
  std::vector<std::pair<std::string, std::string>> globals;
};

class CodeGen {
 public:
  virtual ~CodeGen();
  virtual std::unique_ptr<CodeGen> clone() const;

  // `def forward(self, x, y) -> torch.Tensor:`. `free_vars` are the
  // placeholders as they appear in the signature (`x`, `y : int = 3`).
  virtual std::string generate_prologue(
      std::vector<std::string> free_vars,
      std::string_view return_annotation) const;
  // `return add`: the statement for the output node's argument.
  virtual std::string generate_output(const Argument& output_args) const;
  // (name, qualified object name) pairs to add to the code's globals.
  virtual std::vector<std::pair<std::string, std::string>> additional_globals()
      const;

  // Generates the code for `graph`; `root_module` is the name the code uses
  // for the module (`self`).
  PythonCode gen_python_code(const Graph& graph,
                             std::string_view root_module) const;
};

// `base.a.b`, with getattr(base, "0") for path atoms that are not identifiers
// (torch.fx's _format_target).
std::string format_target(std::string_view base, std::string_view target);

// True for the call_function targets torch.fx writes as an augmented
// assignment followed by a copy of its left side (its inplace_methods):
// `a *= b;  imul = a`, `a[i] = v;  setitem = a`. The node's value is the
// left side after the statement, and for `X=` operators on a node `a` every
// later read of `a` sees that value (ints and tuples rebound, tensors and
// lists the same object). Engines follow this to compute what gm(...) does.
bool is_inplace_operator(std::string_view target);

}  // namespace fx

#endif  // FX_CORE_IR_CODEGEN_H_
