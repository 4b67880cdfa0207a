#include "tools/command_options.h"

#include <cstdlib>

namespace fx::tools {
namespace {

// The integer `text` stands for, 1 to 1000000; false when it is not one.
bool parse_positive_int(const std::string& text, int* value) {
  char* end = nullptr;
  long n = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n < 1 || n > 1000000) return false;
  *value = static_cast<int>(n);
  return true;
}

}  // namespace

bool CommandOption::is_flag() const {
  return std::holds_alternative<bool*>(field) ||
         std::holds_alternative<Cleared>(field);
}

bool fill_options(std::string_view command,
                  const std::vector<CommandOption>& options,
                  const OptionValues& values, std::ostream& err) {
  for (const CommandOption& option : options) {
    auto given = values.find(std::string(option.name));
    if (given == values.end()) continue;
    const std::vector<std::string>& all = given->second;
    const auto& field = option.field;
    if (auto* text = std::get_if<std::string*>(&field)) {
      **text = all.back();
    } else if (auto* list = std::get_if<std::vector<std::string>*>(&field)) {
      **list = all;
    } else if (auto* flag = std::get_if<bool*>(&field)) {
      **flag = true;
    } else if (auto* cleared = std::get_if<Cleared>(&field)) {
      *cleared->field = false;
    } else if (!parse_positive_int(all.back(), std::get<int*>(field))) {
      err << "fx " << command << ": --" << option.name
          << " expects a positive integer, got '" << all.back() << "'\n";
      return false;
    }
  }
  return true;
}

}  // namespace fx::tools
