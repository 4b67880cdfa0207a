#include "host/pipeline/pipeline.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "fx_core/format/json_text.h"
#include "fx_core/io/regular_file.h"
#include "fx_core/support/strings.h"
#include "host/pipeline/named_pipelines.h"

namespace fx::host {
namespace {

using json = nlohmann::ordered_json;

// A pipeline config larger than this is refused (real ones are a few KB).
constexpr uint64_t kMaxPipelineConfigBytes = 16 << 20;

absl::Status text_error(std::string_view text, size_t column,
                        std::string_view problem) {
  return absl::InvalidArgumentError(
      cat("pipeline '", text, "', column ", column + 1, ": ", problem));
}

bool is_name_char(char c) {
  return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '-';
}

// Splits the inside of `{...}` into options; `offset` is its column.
absl::Status parse_options_text(std::string_view text, std::string_view body,
                                size_t offset, PassInvocation& pass) {
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t comma = body.find(',', pos);
    if (comma == std::string_view::npos) comma = body.size();
    std::string_view item = body.substr(pos, comma - pos);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      std::string_view value = strip(item);
      if (pass.options.empty()) {
        return text_error(text, offset + pos,
                          cat("expected key=value in the options of "
                              "pass '",
                              pass.pass, "', got '", item, "'"));
      }
      // A list item continuing the previous option's value.
      append(&pass.options.back().second.text, ",", value);
    } else {
      std::string_view key = strip(item.substr(0, eq));
      bool valid = !key.empty();
      for (char c : key) valid = valid && is_name_char(c);
      if (!valid) {
        return text_error(
            text, offset + pos,
            cat("bad option name '", key, "' for pass '", pass.pass, "'"));
      }
      OptionInput input;
      input.text = std::string(strip(item.substr(eq + 1)));
      pass.options.emplace_back(std::string(key), std::move(input));
    }
    pos = comma + 1;
  }
  return absl::OkStatus();
}

// A word of a keyed setting and what it means.
template <typename E>
struct Keyword {
  std::string_view word;
  E value;
};

constexpr Keyword<FailurePolicy> kFailurePolicies[] = {
    {"stop", FailurePolicy::kStop}, {"skip", FailurePolicy::kSkip}};
constexpr Keyword<Ordering> kOrderings[] = {{"explicit", Ordering::kExplicit},
                                            {"auto", Ordering::kAuto}};

// The one parser of such words. `value` is a config's JSON value, or a word
// from the command line as a JSON string.
template <typename E, size_t N>
absl::StatusOr<E> parse_keyword(const json& value,
                                const Keyword<E> (&keywords)[N]) {
  std::vector<std::string> expected;
  for (const Keyword<E>& k : keywords) {
    if (value.is_string() && value.get<std::string>() == k.word) return k.value;
    expected.push_back(cat("\"", k.word, "\""));
  }
  return absl::InvalidArgumentError(
      cat("expected ", join(expected, " or "), ", got ", value.dump()));
}

template <typename E, size_t N>
std::string_view keyword_name(E value, const Keyword<E> (&keywords)[N]) {
  for (const Keyword<E>& k : keywords) {
    if (k.value == value) return k.word;
  }
  return "";
}

// `status` (an error) with `where` in front of its message.
absl::Status error_at(std::string_view where, const absl::Status& status) {
  return absl::InvalidArgumentError(
      cat(where, ": ", std::string(status.message())));
}

absl::StatusOr<std::vector<std::string>> string_list(const json& j,
                                                     std::string_view where) {
  if (!j.is_array()) {
    return absl::InvalidArgumentError(
        cat(where, ": expected an array of strings, got ", j.dump()));
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) {
      return absl::InvalidArgumentError(
          cat(where, "[", i, "]: expected a string, got ", j[i].dump()));
    }
    out.push_back(j[i].get<std::string>());
  }
  return out;
}

absl::StatusOr<OptionInput> option_input(const json& j,
                                         std::string_view where) {
  OptionInput in;
  if (j.is_boolean()) {
    in.kind = OptionInput::Kind::kBool;
    in.text = j.get<bool>() ? "true" : "false";
  } else if (j.is_number_integer()) {
    in.kind = OptionInput::Kind::kInt;
    in.text = j.dump();
  } else if (j.is_number()) {
    in.kind = OptionInput::Kind::kFloat;
    in.text = j.dump();
  } else if (j.is_string()) {
    in.kind = OptionInput::Kind::kString;
    in.text = j.get<std::string>();
  } else if (j.is_array()) {
    absl::StatusOr<std::vector<std::string>> list = string_list(j, where);
    if (!list.ok()) return list.status();
    in.kind = OptionInput::Kind::kList;
    in.list = *std::move(list);
    in.text = j.dump();
  } else {
    return absl::InvalidArgumentError(cat(
        where, ": expected a bool, number, string or array, got ", j.dump()));
  }
  return in;
}

std::string resolve(std::string_view base_dir, const std::string& path) {
  if (base_dir.empty() || path.empty() || path[0] == '/') return path;
  return cat(base_dir, "/", path);
}

// A pass given as {"pass": ..., "options": {...}, "on_failure": ...}.
absl::StatusOr<PassInvocation> parse_pass_object(const json& entry,
                                                 std::string_view where) {
  PassInvocation pass;
  for (const auto& [key, value] : entry.items()) {
    std::string at = cat(where, ".", key);
    if (key == "pass") {
      if (!value.is_string() || value.get<std::string>().empty()) {
        return absl::InvalidArgumentError(
            cat(at, ": expected a pass name, got ", value.dump()));
      }
      pass.pass = value.get<std::string>();
    } else if (key == "options") {
      if (!value.is_object()) {
        return absl::InvalidArgumentError(
            cat(at, ": expected an object, got ", value.dump()));
      }
      for (const auto& [name, v] : value.items()) {
        absl::StatusOr<OptionInput> in = option_input(v, cat(at, ".", name));
        if (!in.ok()) return in.status();
        pass.options.emplace_back(name, *std::move(in));
      }
    } else if (key == "on_failure") {
      absl::StatusOr<FailurePolicy> p = parse_keyword(value, kFailurePolicies);
      if (!p.ok()) return error_at(at, p.status());
      pass.on_failure = *p;
    } else {
      return absl::InvalidArgumentError(
          cat(at, ": unknown key (expected pass, options, on_failure)"));
    }
  }
  if (pass.pass.empty()) {
    return absl::InvalidArgumentError(cat(where, ": missing \"pass\""));
  }
  return pass;
}

// One entry of "pipeline": pipeline text or a pass object.
absl::Status parse_pass_entry(const json& entry, std::string_view where,
                              PipelineSpec& spec) {
  if (entry.is_string()) {
    absl::StatusOr<PipelineSpec> one =
        parse_pipeline_text(entry.get<std::string>());
    if (!one.ok()) return error_at(where, one.status());
    for (PassInvocation& p : one->passes) spec.passes.push_back(std::move(p));
    for (std::string& name : one->named_pipelines) {
      spec.named_pipelines.push_back(std::move(name));
    }
    return absl::OkStatus();
  }
  if (!entry.is_object()) {
    return absl::InvalidArgumentError(
        cat(where, ": expected a pass name or {\"pass\": ...}, got ",
            entry.dump()));
  }
  absl::StatusOr<PassInvocation> pass = parse_pass_object(entry, where);
  if (!pass.ok()) return pass.status();
  spec.passes.push_back(*std::move(pass));
  return absl::OkStatus();
}

// The config's text as JSON, within fx::parse_json_text's limits; the error
// says where it stops being JSON.
absl::StatusOr<json> parse_json(std::string_view text,
                                std::string_view source) {
  absl::StatusOr<json> root = parse_json_text(text, source);
  if (!root.ok()) return root.status();
  if (!root->is_object()) {
    return absl::InvalidArgumentError(
        cat(source, ": expected a JSON object at the top"));
  }
  return root;
}

// Reads a config's top-level keys into a PipelineSpec, one method per key.
class ConfigReader {
 public:
  ConfigReader(std::string_view source, std::string_view base_dir)
      : source_(source), base_dir_(base_dir) {}

  absl::StatusOr<PipelineSpec> read(const json& root) {
    for (const auto& [key, value] : root.items()) {
      absl::Status s = read_key(key, value);
      if (!s.ok()) return s;
    }
    if (!has_pipeline_ || spec_.passes.empty()) {
      return absl::InvalidArgumentError(
          cat(source_, ": no passes (add \"pipeline\")"));
    }
    return std::move(spec_);
  }

 private:
  using Reader = absl::Status (ConfigReader::*)(const json&,
                                                const std::string&);
  absl::Status read_key(const std::string& key, const json& value) {
    std::string at = cat(source_, ": '", key, "'");
    std::vector<std::string_view> names;
    for (const Key& k : kKeys) {
      if (k.name == key) return (this->*k.read)(value, at);
      names.push_back(k.name);
    }
    return absl::InvalidArgumentError(
        cat(at, ": unknown key (expected ", join(names, ", "), ")"));
  }

  absl::Status pipeline(const json& value, const std::string& at) {
    has_pipeline_ = true;
    if (value.is_string()) return parse_pass_entry(value, at, spec_);
    if (!value.is_array()) {
      return absl::InvalidArgumentError(
          cat(at, ": expected pipeline text or an array, got ", value.dump()));
    }
    for (size_t i = 0; i < value.size(); ++i) {
      absl::Status s = parse_pass_entry(
          value[i], cat(source_, ": 'pipeline[", i, "]'"), spec_);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  absl::Status plugins(const json& value, const std::string& at) {
    if (!value.is_array()) {
      return absl::InvalidArgumentError(
          cat(at, ": expected an array, got ", value.dump()));
    }
    for (size_t i = 0; i < value.size(); ++i) {
      absl::StatusOr<PluginReference> ref =
          plugin(value[i], cat(source_, ": 'plugins[", i, "]'"));
      if (!ref.ok()) return ref.status();
      spec_.plugins.push_back(*std::move(ref));
    }
    return absl::OkStatus();
  }

  // "path" or {"path": "path", "sha256": "64 hex digits"}.
  absl::StatusOr<PluginReference> plugin(const json& p,
                                         const std::string& at) const {
    PluginReference ref;
    if (p.is_string()) {
      ref.path = p.get<std::string>();
    } else if (p.is_object() && p.contains("path") && p["path"].is_string()) {
      ref.path = p["path"].get<std::string>();
      for (const auto& [k, v] : p.items()) {
        if (k == "path") continue;
        if (k != "sha256" || !v.is_string() ||
            v.get<std::string>().size() != 64) {
          return absl::InvalidArgumentError(
              cat(at, ".", k, ": expected \"sha256\": 64 hex digits"));
        }
        ref.sha256 = v.get<std::string>();
      }
    } else {
      return absl::InvalidArgumentError(
          cat(at, ": expected a path or {\"path\": ..., \"sha256\": ...}"));
    }
    ref.path = resolve(base_dir_, ref.path);
    return ref;
  }

  absl::Status plugin_dirs(const json& value, const std::string& at) {
    absl::StatusOr<std::vector<std::string>> dirs = string_list(value, at);
    if (!dirs.ok()) return dirs.status();
    for (const std::string& d : *dirs) {
      spec_.plugin_dirs.push_back(resolve(base_dir_, d));
    }
    return absl::OkStatus();
  }

  absl::Status ordering(const json& value, const std::string& at) {
    absl::StatusOr<Ordering> o = parse_keyword(value, kOrderings);
    if (!o.ok()) return error_at(at, o.status());
    spec_.ordering = *o;
    return absl::OkStatus();
  }

  absl::Status on_failure(const json& value, const std::string& at) {
    absl::StatusOr<FailurePolicy> p = parse_keyword(value, kFailurePolicies);
    if (!p.ok()) return error_at(at, p.status());
    spec_.on_failure = *p;
    return absl::OkStatus();
  }

  absl::Status verify_each(const json& value, const std::string& at) {
    if (!value.is_boolean()) {
      return absl::InvalidArgumentError(
          cat(at, ": expected true or false, got ", value.dump()));
    }
    spec_.verify_each = value.get<bool>();
    return absl::OkStatus();
  }

  absl::Status print_after(const json& value, const std::string& at) {
    if (value == "all") {
      spec_.print_after_all = true;
      return absl::OkStatus();
    }
    absl::StatusOr<std::vector<std::string>> l = string_list(value, at);
    if (!l.ok()) return l.status();
    spec_.print_after = *std::move(l);
    return absl::OkStatus();
  }

  absl::Status assume(const json& value, const std::string& at) {
    absl::StatusOr<std::vector<std::string>> l = string_list(value, at);
    if (!l.ok()) return l.status();
    spec_.assume = *std::move(l);
    return absl::OkStatus();
  }

  absl::Status reproducer_dir(const json& value, const std::string& at) {
    if (!value.is_string()) {
      return absl::InvalidArgumentError(
          cat(at, ": expected a directory, got ", value.dump()));
    }
    spec_.reproducer_dir = resolve(base_dir_, value.get<std::string>());
    return absl::OkStatus();
  }

  absl::Status isolate(const json& value, const std::string& at) {
    if (value.is_boolean()) {
      spec_.isolate = value.get<bool>() ? Isolation::kAll : Isolation::kNone;
      return absl::OkStatus();
    }
    if (value.is_string() && value.get<std::string>() == "auto") {
      spec_.isolate = Isolation::kAuto;
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(
        cat(at, ": expected true, false or \"auto\", got ", value.dump()));
  }

  absl::Status pass_timeout(const json& value, const std::string& at) {
    if (!value.is_number() || !(value.get<double>() > 0)) {
      return absl::InvalidArgumentError(
          cat(at, ": expected seconds (a number > 0), got ", value.dump()));
    }
    spec_.pass_timeout_seconds = value.get<double>();
    return absl::OkStatus();
  }

  absl::Status pass_memory_limit(const json& value, const std::string& at) {
    if (!value.is_number_unsigned() || value.get<uint64_t>() == 0 ||
        value.get<uint64_t>() > kMaxMemoryLimitMib) {
      return absl::InvalidArgumentError(
          cat(at, ": expected MiB (an integer from 1 to ", kMaxMemoryLimitMib,
              "), got ", value.dump()));
    }
    spec_.pass_memory_limit_mib = value.get<uint64_t>();
    return absl::OkStatus();
  }

  struct Key {
    std::string_view name;
    Reader read;
  };
  // Every key, in the order the unknown-key message lists them.
  static constexpr Key kKeys[] = {
      {"pipeline", &ConfigReader::pipeline},
      {"plugins", &ConfigReader::plugins},
      {"plugin_dirs", &ConfigReader::plugin_dirs},
      {"ordering", &ConfigReader::ordering},
      {"on_failure", &ConfigReader::on_failure},
      {"verify_each", &ConfigReader::verify_each},
      {"print_after", &ConfigReader::print_after},
      {"assume", &ConfigReader::assume},
      {"reproducer_dir", &ConfigReader::reproducer_dir},
      {"isolate", &ConfigReader::isolate},
      {"pass_timeout", &ConfigReader::pass_timeout},
      {"pass_memory_limit", &ConfigReader::pass_memory_limit},
  };

  std::string_view source_;
  std::string_view base_dir_;
  PipelineSpec spec_;
  bool has_pipeline_ = false;
};

// `pass`, read at `column` of `text`, into `spec`: a named pipeline's
// passes in its place (named_pipelines.h), or the pass itself.
absl::Status add_pass(std::string_view text, size_t column, PassInvocation pass,
                      PipelineSpec& spec) {
  const NamedPipeline* named = find_named_pipeline(pass.pass);
  if (named == nullptr) {
    spec.passes.push_back(std::move(pass));
    return absl::OkStatus();
  }
  if (!pass.options.empty()) {
    return text_error(
        text, column,
        cat("the named pipeline '", pass.pass,
            "' takes no options (it stands for ", named->passes, ")"));
  }
  absl::StatusOr<PipelineSpec> passes = parse_pipeline_text(named->passes);
  if (!passes.ok()) return passes.status();
  for (PassInvocation& p : passes->passes) spec.passes.push_back(std::move(p));
  std::vector<std::string>& used = spec.named_pipelines;
  if (std::find(used.begin(), used.end(), pass.pass) == used.end()) {
    used.push_back(pass.pass);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<FailurePolicy> parse_failure_policy(std::string_view word) {
  return parse_keyword(json(std::string(word)), kFailurePolicies);
}

absl::StatusOr<Ordering> parse_ordering(std::string_view word) {
  return parse_keyword(json(std::string(word)), kOrderings);
}

std::string_view failure_policy_name(FailurePolicy policy) {
  return keyword_name(policy, kFailurePolicies);
}

std::string_view ordering_name(Ordering ordering) {
  return keyword_name(ordering, kOrderings);
}

std::string_view isolation_name(Isolation isolation) {
  switch (isolation) {
    case Isolation::kAll:
      return "true";
    case Isolation::kAuto:
      return "auto";
    case Isolation::kNone:
      break;
  }
  return "false";
}

absl::StatusOr<PipelineSpec> parse_pipeline_text(std::string_view text) {
  PipelineSpec spec;
  size_t pos = 0;
  const size_t n = text.size();
  auto skip_spaces = [&] {
    while (pos < n && absl::ascii_isspace(text[pos])) ++pos;
  };
  skip_spaces();
  if (pos == n) {
    return absl::InvalidArgumentError("the pipeline is empty");
  }
  while (true) {
    skip_spaces();
    size_t start = pos;
    while (pos < n && is_name_char(text[pos])) ++pos;
    if (pos == start) {
      return text_error(
          text, pos,
          pos == n
              ? std::string("expected a pass name at the end")
              : cat("expected a pass name, got '", text.substr(pos, 1), "'"));
    }
    PassInvocation pass;
    pass.pass = std::string(text.substr(start, pos - start));
    skip_spaces();
    if (pos < n && text[pos] == '{') {
      size_t close = text.find('}', pos);
      size_t nested = text.find('{', pos + 1);
      if (close == std::string_view::npos) {
        return text_error(text, pos,
                          cat("the options of pass '", pass.pass,
                              "' open here but never close"));
      }
      if (nested < close) {
        return text_error(text, nested, "options cannot nest '{'");
      }
      absl::Status s = parse_options_text(
          text, text.substr(pos + 1, close - pos - 1), pos + 1, pass);
      if (!s.ok()) return s;
      pos = close + 1;
      skip_spaces();
    }
    absl::Status added = add_pass(text, start, std::move(pass), spec);
    if (!added.ok()) return added;
    if (pos == n) break;
    if (text[pos] != ',') {
      return text_error(
          text, pos,
          cat("expected ',' between passes, got '", text.substr(pos, 1), "'"));
    }
    ++pos;
  }
  return spec;
}

absl::StatusOr<PipelineSpec> parse_pipeline_config(std::string_view text,
                                                   std::string_view source,
                                                   std::string_view base_dir) {
  absl::StatusOr<json> root = parse_json(text, source);
  if (!root.ok()) return root.status();
  return ConfigReader(source, base_dir).read(*root);
}

absl::StatusOr<PipelineSpec> read_pipeline_config(const std::string& path) {
  absl::StatusOr<std::string> text =
      read_regular_file(path, kMaxPipelineConfigBytes);
  if (!text.ok()) return text.status();
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash);
  return parse_pipeline_config(*text, path, dir);
}

std::string pipeline_text(const std::vector<PassInvocation>& passes) {
  std::string out;
  for (const PassInvocation& p : passes) {
    if (!out.empty()) out += ',';
    out += p.pass;
    if (p.options.empty()) continue;
    out += '{';
    bool first = true;
    for (const auto& [name, in] : p.options) {
      if (!first) out += ',';
      first = false;
      append(
          &out, name, "=",
          in.kind == OptionInput::Kind::kList ? join(in.list, ",") : in.text);
    }
    out += '}';
  }
  return out;
}

namespace {

// A pass's options as a config's "options" object, in JSON's own types.
json options_json(
    const std::vector<std::pair<std::string, OptionInput>>& options) {
  json out = json::object();
  for (const auto& [name, in] : options) {
    switch (in.kind) {
      case OptionInput::Kind::kText:
      case OptionInput::Kind::kString:
        out[name] = in.text;
        break;
      case OptionInput::Kind::kBool:
        out[name] = in.text == "true";
        break;
      case OptionInput::Kind::kInt:
      case OptionInput::Kind::kFloat:
        out[name] = json::parse(in.text);
        break;
      case OptionInput::Kind::kList:
        out[name] = in.list;
        break;
    }
  }
  return out;
}

}  // namespace

std::string pipeline_config_json(const PipelineSpec& spec) {
  json root = json::object();
  if (!spec.plugins.empty()) {
    json plugins = json::array();
    for (const PluginReference& p : spec.plugins) {
      if (p.sha256.empty()) {
        plugins.push_back(p.path);
      } else {
        plugins.push_back({{"path", p.path}, {"sha256", p.sha256}});
      }
    }
    root["plugins"] = plugins;
  }
  if (!spec.plugin_dirs.empty()) root["plugin_dirs"] = spec.plugin_dirs;
  json passes = json::array();
  for (const PassInvocation& p : spec.passes) {
    json entry = {{"pass", p.pass}};
    if (!p.options.empty()) entry["options"] = options_json(p.options);
    if (p.on_failure) entry["on_failure"] = failure_policy_name(*p.on_failure);
    passes.push_back(entry);
  }
  root["pipeline"] = passes;
  root["ordering"] = ordering_name(spec.ordering);
  root["on_failure"] = failure_policy_name(spec.on_failure);
  root["verify_each"] = spec.verify_each;
  if (spec.print_after_all) {
    root["print_after"] = "all";
  } else if (!spec.print_after.empty()) {
    root["print_after"] = spec.print_after;
  }
  if (!spec.assume.empty()) root["assume"] = spec.assume;
  if (!spec.reproducer_dir.empty())
    root["reproducer_dir"] = spec.reproducer_dir;
  if (spec.isolate == Isolation::kAuto) {
    root["isolate"] = "auto";
  } else if (spec.isolate) {
    root["isolate"] = *spec.isolate == Isolation::kAll;
  }
  if (spec.pass_timeout_seconds > 0) {
    root["pass_timeout"] = spec.pass_timeout_seconds;
  }
  if (spec.pass_memory_limit_mib > 0) {
    root["pass_memory_limit"] = spec.pass_memory_limit_mib;
  }
  return root.dump(1) + "\n";
}

}  // namespace fx::host
