// The torch.fx CodeGen docs' ListCodeGen in C++: forward takes its inputs as
// one list (`def forward(self, args_list: List[torch.Tensor])`), unpacked
// into the placeholders. A custom code generator through fx::CodeGen's
// extension points (fx::RuntimeCodeGen for the runtime hook): generate_prologue
// (torch.fx's gen_fn_def), additional_globals and process_inputs.
#ifndef SDK_EXAMPLES_LIST_CODEGEN_LIST_CODEGEN_H_
#define SDK_EXAMPLES_LIST_CODEGEN_LIST_CODEGEN_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fx_core/runtime/runtime_codegen.h"

namespace sdk_examples {

class ListCodeGen : public fx::RuntimeCodeGen {
 public:
  std::unique_ptr<fx::CodeGen> clone() const override;
  // def forward(self, args_list: List[torch.Tensor]):
  //     a, b = args_list
  std::string generate_prologue(
      std::vector<std::string> free_vars,
      std::string_view return_annotation) const override;
  // ("List", "typing.List")
  std::vector<std::pair<std::string, std::string>> additional_globals()
      const override;
  // gm({list}) -> the list's elements, one per placeholder.
  std::vector<c10::IValue> process_inputs(
      std::vector<c10::IValue> inputs) const override;
};

}  // namespace sdk_examples

#endif  // SDK_EXAMPLES_LIST_CODEGEN_LIST_CODEGEN_H_
