#include "fx_core/format/json_text.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using Json = nlohmann::ordered_json;
using DomParser = nlohmann::detail::json_sax_dom_parser<Json>;

// The path components shown before a long path is cut short.
constexpr size_t kShownPathParts = 12;

// One open array or object: where the parser is inside it.
struct Frame {
  bool object = false;
  size_t index = 0;  // arrays: the element being read
  std::string key;   // objects: the key being read
  absl::flat_hash_set<std::string> keys;
};

// A SAX handler that checks the limits and forwards to nlohmann's DOM
// builder. The first refusal stops the parse and is kept in error().
class CheckingParser {
 public:
  CheckingParser(Json& root, size_t max_depth)
      : dom_(root, /*allow_exceptions=*/false), max_depth_(max_depth) {}

  const std::string& error() const { return error_; }

  bool null() { return value() && dom_.null(); }
  bool boolean(bool v) { return value() && dom_.boolean(v); }
  bool number_integer(Json::number_integer_t v) {
    return value() && dom_.number_integer(v);
  }
  bool number_unsigned(Json::number_unsigned_t v) {
    return value() && dom_.number_unsigned(v);
  }
  bool number_float(Json::number_float_t v, const std::string& text) {
    if (text.find_first_of(".eE") == std::string::npos) {
      return refuse(cat("integer ", text, " out of range (beyond 64 bits)"));
    }
    return value() && dom_.number_float(v, text);
  }
  bool string(std::string& v) { return value() && dom_.string(v); }
  bool binary(Json::binary_t& v) { return value() && dom_.binary(v); }

  bool start_object(size_t n) { return open(true) && dom_.start_object(n); }
  bool end_object() { return close() && dom_.end_object(); }
  bool start_array(size_t n) { return open(false) && dom_.start_array(n); }
  bool end_array() { return close() && dom_.end_array(); }

  bool key(std::string& k) {
    Frame& f = frames_.back();
    f.key = k;
    if (!f.keys.insert(k).second) {
      return refuse(cat("duplicate key '", k, "'"), /*in_value=*/false);
    }
    return dom_.key(k);
  }

  bool parse_error(size_t position, const std::string& token,
                   const nlohmann::detail::exception& e) {
    if (e.id == 406) {  // out_of_range: number overflow
      return refuse(cat("number ", token, " out of range (beyond a double)"));
    }
    if (error_.empty()) {
      error_ = cat("malformed JSON: ", e.what());
      (void)position;
    }
    return false;
  }

 private:
  // A value was read at the current place; the next one is one further on.
  bool value() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
    return true;
  }

  bool open(bool object) {
    if (frames_.size() >= max_depth_) {
      return refuse(cat("nested deeper than ", max_depth_, " levels"));
    }
    frames_.emplace_back();
    frames_.back().object = object;
    return true;
  }

  bool close() {
    frames_.pop_back();
    return value();
  }

  // `nodes[3].args[0]`, the place being read (the array element, or the
  // object key's value; with in_value false, the object holding the key).
  std::string place(bool in_value) const {
    std::string out;
    size_t shown = 0, count = frames_.size();
    for (size_t i = 0; i < count; ++i) {
      const Frame& f = frames_[i];
      if (f.object && !in_value && i + 1 == count) break;
      if (++shown > kShownPathParts) {
        append(&out, "... (", count, " levels)");
        break;
      }
      if (f.object) {
        if (!out.empty()) out += '.';
        out += f.key;
      } else {
        append(&out, "[", f.index, "]");
      }
    }
    return out.empty() ? "the top level" : out;
  }

  bool refuse(std::string what, bool in_value = true) {
    if (error_.empty()) error_ = cat(std::move(what), " at ", place(in_value));
    return false;
  }

  DomParser dom_;
  size_t max_depth_;
  std::vector<Frame> frames_;
  std::string error_;
};

}  // namespace

absl::StatusOr<nlohmann::ordered_json> parse_json_text(std::string_view text,
                                                       std::string_view source,
                                                       size_t max_depth) {
  Json root;
  CheckingParser checker(root, max_depth);
  bool ok = Json::sax_parse(text.begin(), text.end(), &checker,
                            nlohmann::json::input_format_t::json,
                            /*strict=*/true, /*ignore_comments=*/false);
  if (!ok || !checker.error().empty()) {
    std::string what =
        checker.error().empty() ? "malformed JSON" : checker.error();
    return absl::InvalidArgumentError(cat(source, ": ", what));
  }
  return root;
}

}  // namespace fx
