// How an `fx` subcommand declares its arguments: one list binding each
// option's name to the field of the command's arguments struct that takes
// it, so a name is written once and both the parser (which options a
// command takes, which of them are flags) and the filling of the struct
// read that list. The field's type says the option's kind:
//
//   std::string*               --key VALUE; the last one given wins
//   std::vector<std::string>*  --key VALUE, repeatable; every one, in order
//   bool*                      --key, a flag: true when given
//   Cleared                    --key, a flag: the field false when given
//                              (--no-default-plugins)
//   int*                       --key N, an integer from 1 to 1000000
//
// An option not given leaves its field as the struct initialised it.
#ifndef TOOLS_COMMAND_OPTIONS_H_
#define TOOLS_COMMAND_OPTIONS_H_

#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace fx::tools {

// A flag's field that giving the flag turns off.
struct Cleared {
  bool* field;
};

struct CommandOption {
  std::string_view name;  // without the leading "--"
  std::variant<std::string*, std::vector<std::string>*, bool*, Cleared, int*>
      field;

  bool is_flag() const;
};

// A command's arguments: the one FILE it takes (none when `file` is null)
// and its options, bound to the fields of one arguments struct.
struct CommandSignature {
  std::string* file = nullptr;
  std::vector<CommandOption> options;
};

// Every value given for each option, in order (flags: "true").
using OptionValues = std::map<std::string, std::vector<std::string>>;

// Fills the fields `options` are bound to from `values`. False, with
// "fx COMMAND: --KEY expects a positive integer, got 'TEXT'" on `err`, when
// an integer option's value is not one; options are filled in the order
// listed.
bool fill_options(std::string_view command,
                  const std::vector<CommandOption>& options,
                  const OptionValues& values, std::ostream& err);

}  // namespace fx::tools

#endif  // TOOLS_COMMAND_OPTIONS_H_
