#include "tools/opinfo_runner.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <utility>

#include "fx_core/io/python_tuples.h"
#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/graph_module_file.h"

namespace fx::opinfo {
namespace {

using Status = CaseResult::Status;
using json = nlohmann::json;

std::string first_line(std::string_view text) {
  size_t start = text.find_first_not_of(" \n");
  if (start == std::string_view::npos) return "";
  text = text.substr(start);
  return std::string(text.substr(0, text.find('\n')));
}

// The cause in a runtime message: without the node prefix the runtime puts
// before it ("cannot compile node 'add' (call_function torch.add): ",
// "while running node ...: ") and without the advice after a missing kernel,
// so that one cause is one reason whatever the node is called.
std::string cause(std::string line) {
  for (std::string_view prefix :
       {"cannot compile node '", "while running node '"}) {
    if (line.rfind(prefix, 0) != 0) continue;
    size_t end = line.find("): ");
    if (end != std::string::npos) line = line.substr(end + 3);
  }
  size_t advice = line.find(": register one with");
  if (advice != std::string::npos) line = line.substr(0, advice);
  return line;
}

// Everything of a message but its first line, cut short.
std::string rest_of(std::string_view text) {
  size_t newline = text.find('\n');
  if (newline == std::string_view::npos) return "";
  std::string rest(text.substr(newline + 1));
  if (rest.size() > 400) rest = rest.substr(0, 400) + "...";
  return rest;
}

// `text` without any occurrence of `path` (a case's own directory), so the
// same cause in two cases gives the same reason.
std::string without(std::string text, const std::string& path) {
  if (path.empty()) return text;
  for (size_t at = text.find(path); at != std::string::npos;
       at = text.find(path, at)) {
    text.erase(at, path.size());
  }
  return text;
}

std::string kind_name(const c10::IValue& v) {
  if (v.isTensor()) return "Tensor";
  if (v.isTuple()) {
    std::string name = python_tuple_name(v);  // torch.Size, return_types
    return name.empty() ? "tuple" : name;
  }
  if (v.isList()) return "list";
  if (v.isInt()) return "int";
  if (v.isDouble()) return "float";
  if (v.isBool()) return "bool";
  if (v.isNone()) return "None";
  if (v.isString()) return "str";
  if (v.isGenericDict()) return "dict";
  return v.tagKind();
}

std::string shape_text(const at::Tensor& t) {
  std::ostringstream out;
  out << t.sizes();
  return out.str();
}

std::string where_text(const std::string& path) {
  return path.empty() ? "" : " at result" + path;
}

// What differs between two tensors ("" when they match).
std::string compare_tensors(const at::Tensor& got, const at::Tensor& want,
                            bool compare_values, const std::string& path) {
  if (!got.defined() || !want.defined()) {
    if (got.defined() == want.defined()) return "";
    return "result type differs (expected " +
           std::string(want.defined() ? "a tensor" : "an undefined tensor") +
           ")" + where_text(path);
  }
  if (got.scalar_type() != want.scalar_type()) {
    return "dtype differs (expected " +
           std::string(c10::toString(want.scalar_type())) + ", got " +
           c10::toString(got.scalar_type()) + ")" + where_text(path);
  }
  if (got.sizes() != want.sizes()) {
    return "shape differs\nexpected " + shape_text(want) + ", got " +
           shape_text(got) + where_text(path);
  }
  if (got.layout() != want.layout()) {
    std::ostringstream out;
    out << "layout differs (expected " << want.layout() << ", got "
        << got.layout() << ")" << where_text(path);
    return out.str();
  }
  if (!compare_values || want.numel() == 0) return "";
  at::Tensor a = got, b = want;
  if (a.is_sparse() || a.layout() != at::kStrided) a = a.to_dense();
  if (b.is_sparse() || b.layout() != at::kStrided) b = b.to_dense();
  if (a.is_quantized()) a = a.dequantize();
  if (b.is_quantized()) b = b.dequantize();
  bool exact = !at::isFloatingType(a.scalar_type()) &&
               !at::isComplexType(a.scalar_type());
  bool same = exact ? at::equal(a, b)
                    : at::allclose(a, b, kRtol, kAtol, /*equal_nan=*/true);
  if (same) return "";
  std::ostringstream out;
  out << "values differ" << where_text(path);
  try {
    at::Tensor x = at::isComplexType(a.scalar_type()) ? a : a.to(at::kDouble);
    at::Tensor y = at::isComplexType(b.scalar_type()) ? b : b.to(at::kDouble);
    at::Tensor diff = (x - y).abs();
    diff =
        at::where(x.isnan().logical_and(y.isnan()), at::zeros_like(diff), diff);
    diff = at::where(diff.isnan(), at::full_like(diff, INFINITY), diff);
    out << "\nmax |diff| " << diff.max().item<double>() << " (shape "
        << shape_text(b) << ")";
  } catch (const std::exception&) {
  }
  return out.str();
}

std::string compare_values(const c10::IValue& got, const c10::IValue& want,
                           bool values, const std::string& path) {
  auto type_differs = [&] {
    return "result type differs (expected " + kind_name(want) + ", got " +
           kind_name(got) + ")" + where_text(path);
  };
  if (want.isTensor()) {
    if (!got.isTensor()) return type_differs();
    return compare_tensors(got.toTensor(), want.toTensor(), values, path);
  }
  if (want.isTuple() || want.isList()) {
    if (kind_name(want) != kind_name(got)) {
      return type_differs();
    }
    std::vector<c10::IValue> a = got.isTuple()
                                     ? got.toTupleRef().elements().vec()
                                     : got.toListRef().vec();
    std::vector<c10::IValue> b = want.isTuple()
                                     ? want.toTupleRef().elements().vec()
                                     : want.toListRef().vec();
    if (a.size() != b.size()) {
      return kind_name(want) + " length differs (expected " +
             std::to_string(b.size()) + ", got " + std::to_string(a.size()) +
             ")" + where_text(path);
    }
    for (size_t i = 0; i < a.size(); ++i) {
      std::string d = compare_values(a[i], b[i], values,
                                     path + "[" + std::to_string(i) + "]");
      if (!d.empty()) return d;
    }
    return "";
  }
  if (want.isGenericDict()) {
    if (!got.isGenericDict()) return type_differs();
    c10::Dict<c10::IValue, c10::IValue> a = got.toGenericDict();
    c10::Dict<c10::IValue, c10::IValue> b = want.toGenericDict();
    if (a.size() != b.size()) return "dict size differs" + where_text(path);
    for (const auto& entry : b) {
      auto found = a.find(entry.key());
      if (found == a.end()) return "dict keys differ" + where_text(path);
      std::string d = compare_values(found->value(), entry.value(), values,
                                     path + "[" + entry.key().tagKind() + "]");
      if (!d.empty()) return d;
    }
    return "";
  }
  if (want.isDouble()) {
    if (!got.isDouble()) return type_differs();
    double x = got.toDouble(), y = want.toDouble();
    if (!values || x == y || (std::isnan(x) && std::isnan(y)) ||
        std::abs(x - y) <= kAtol + kRtol * std::abs(y)) {
      return "";
    }
    std::ostringstream out;
    out << "values differ" << where_text(path) << "\nexpected "
        << std::setprecision(9) << y << ", got " << x;
    return out.str();
  }
  if (kind_name(want) != kind_name(got)) return type_differs();
  if (values && !(got == want)) {
    std::ostringstream out;
    out << "values differ" << where_text(path) << "\nexpected " << want
        << ", got " << got;
    return out.str();
  }
  return "";
}

std::vector<c10::IValue> positional(const c10::IValue& inputs) {
  if (inputs.isTuple()) return inputs.toTupleRef().elements().vec();
  return inputs.toListRef().vec();
}

std::vector<ReasonCount> count_reasons(const Summary& summary,
                                       bool (*wanted)(Status)) {
  std::map<std::string, ReasonCount> by_reason;
  std::map<std::string, std::set<std::string>> ops;
  for (const CaseResult& c : summary.cases) {
    if (!wanted(c.status)) continue;
    ReasonCount& r = by_reason[c.reason];
    if (r.count++ == 0) {
      r.reason = c.reason;
      r.example = c.op + " " + c.variant +
                  (c.sample >= 0 ? " #" + std::to_string(c.sample) : "");
    }
    ops[c.reason].insert(c.op);
  }
  std::vector<ReasonCount> out;
  for (auto& [reason, r] : by_reason) {
    r.ops = static_cast<int>(ops[reason].size());
    out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const ReasonCount& a, const ReasonCount& b) {
                     return a.count > b.count;
                   });
  return out;
}

// LibTorch's warnings (deprecations, "resized an output") would bury the
// result lines: kernels' warnings are not what the suite measures.
class QuietWarnings : public c10::WarningHandler {
 public:
  void process(const c10::SourceLocation&, const std::string&,
               const bool) override {}
};

const char* status_name(Status status) {
  switch (status) {
    case Status::kNotExported:
      return "not_exported";
    case Status::kLoadError:
      return "load_error";
    case Status::kRunError:
      return "run_error";
    case Status::kMismatch:
      return "mismatch";
    case Status::kMatch:
      return "match";
  }
  return "";
}

// Markdown table cells: no pipes or newlines.
std::string cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string percent(int part, int whole) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1)
      << (whole == 0 ? 0.0 : 100.0 * part / whole) << "%";
  return out.str();
}

}  // namespace

int Summary::count(CaseResult::Status status) const {
  return static_cast<int>(
      std::count_if(cases.begin(), cases.end(),
                    [&](const CaseResult& c) { return c.status == status; }));
}
int Summary::exported() const {
  return static_cast<int>(cases.size()) - count(Status::kNotExported);
}
int Summary::loaded() const { return exported() - count(Status::kLoadError); }
int Summary::ran() const { return loaded() - count(Status::kRunError); }
int Summary::matched() const { return count(Status::kMatch); }
int Summary::matched_without_values() const {
  return static_cast<int>(
      std::count_if(cases.begin(), cases.end(), [](const CaseResult& c) {
        return c.status == Status::kMatch && !c.values_compared;
      }));
}
double Summary::match_rate() const {
  return exported() == 0 ? 0.0 : static_cast<double>(matched()) / exported();
}

std::string compare_results(const c10::IValue& got, const c10::IValue& want,
                            bool compare_values_too) {
  try {
    return compare_values(got, want, compare_values_too, "");
  } catch (const c10::Error& e) {
    return "comparison failed\n" + first_line(e.what_without_backtrace());
  } catch (const std::exception& e) {
    return "comparison failed\n" + first_line(e.what());
  }
}

CaseResult run_case(const std::string& base_dir, const std::string& dir,
                    int64_t seed, bool reproducible,
                    const RunOptions& options) {
  namespace fs = std::filesystem;
  CaseResult result;
  result.dir = dir;
  result.values_compared = reproducible;
  std::string path = (fs::path(base_dir) / dir).string();
  auto start = std::chrono::steady_clock::now();
  auto fail = [&](Status status, std::string_view message) {
    std::string text = without(std::string(message), path + "/");
    text = without(std::move(text), path);
    result.status = status;
    result.reason = cause(first_line(text));
    result.detail = first_line(text);
    std::string rest = rest_of(text);
    if (!rest.empty()) result.detail += "\n" + rest;
  };
  auto finish = [&] {
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    return result;
  };
  absl::StatusOr<std::shared_ptr<GraphModule>> gm;
  try {
    gm = read_graph_module(path + "/graph.fx.json");
  } catch (const std::exception& e) {  // a reader must not throw: say so
    fail(Status::kLoadError, std::string("load threw: ") + e.what());
    return finish();
  }
  if (!gm.ok()) {
    fail(Status::kLoadError, std::string(gm.status().message()));
    return finish();
  }
  // The reader's messages name the file (the case's directory left out).
  absl::StatusOr<c10::IValue> inputs = read_value_file(path + "/input.pt");
  if (!inputs.ok()) {
    fail(Status::kLoadError, std::string(inputs.status().message()));
    return finish();
  }
  absl::StatusOr<c10::IValue> expected = read_value_file(path + "/expected.pt");
  if (!expected.ok()) {
    fail(Status::kLoadError, std::string(expected.status().message()));
    return finish();
  }
  c10::IValue got;
  try {
    // Each module keeps the training mode the bundle records for it, as
    // the exporter ran it.
    at::manual_seed(seed);
    at::NoGradGuard no_grad;  // as the exporter's torch.no_grad()
    got = (*gm)->forward(positional(*inputs));
  } catch (const c10::Error& e) {
    fail(Status::kRunError, e.what_without_backtrace());
    return finish();
  } catch (const std::exception& e) {
    fail(Status::kRunError, e.what());
    return finish();
  }
  std::string differs = compare_results(got, *expected, reproducible);
  if (differs.empty()) {
    result.status = Status::kMatch;
  } else {
    fail(Status::kMismatch, "mismatch: " + differs);
    if (options.save_mismatches) {
      absl::Status saved = write_value_file(path + "/output.pt", got);
      if (!saved.ok()) result.detail += "\n" + std::string(saved.message());
    }
  }
  return finish();
}

absl::StatusOr<Summary> run_index(const std::string& index_path,
                                  const RunOptions& options) {
  std::ifstream in(index_path);
  if (!in) return absl::NotFoundError(index_path + ": cannot read");
  json index;
  try {
    index = json::parse(in);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(index_path + ": " + e.what());
  }
  std::string base_dir =
      std::filesystem::path(index_path).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  Summary summary;
  QuietWarnings quiet;
  c10::Warning::WarningHandlerGuard quiet_guard(&quiet);
  try {
    summary.torch_version = index.value("torch", "");
    summary.ops = index.value("ops", 0);
    summary.max_samples_per_op = index.value("max_samples_per_op", 0);
    for (const json& c : index.at("cases")) {
      CaseResult result;
      if (c.contains("dir")) {
        result = run_case(base_dir, c.at("dir").get<std::string>(),
                          c.value("seed", int64_t{0}),
                          c.value("reproducible", true), options);
        result.target = c.value("target", "");
      } else {
        result.status = Status::kNotExported;
        result.reason = c.value("skip", "not exported (no reason given)");
      }
      result.op = c.at("op").get<std::string>();
      result.variant = c.at("variant").get<std::string>();
      result.sample = c.at("sample").is_null() ? -1 : c.at("sample").get<int>();
      result.call = c.value("call", "");
      if (options.lines != nullptr) {
        *options.lines << result_line(result) << "\n" << std::flush;
      }
      summary.cases.push_back(std::move(result));
    }
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(index_path + ": " + e.what());
  }
  return summary;
}

std::string result_line(const CaseResult& r) {
  std::string head;
  switch (r.status) {
    case Status::kMatch:
      head = r.values_compared ? "MATCH" : "MATCH(shape)";
      break;
    case Status::kNotExported:
      head = "SKIP";
      break;
    default:
      head = "FAIL";
  }
  std::string line = head + " " + r.op + " " + r.variant;
  if (r.sample >= 0) line += " #" + std::to_string(r.sample);
  if (!r.target.empty()) line += " " + r.target;
  if (!r.call.empty()) line += " " + r.call;
  if (r.status != Status::kMatch) line += ": " + r.reason;
  return line;
}

std::vector<ReasonCount> failure_reasons(const Summary& summary) {
  return count_reasons(summary, [](Status s) {
    return s == Status::kLoadError || s == Status::kRunError ||
           s == Status::kMismatch;
  });
}

std::vector<ReasonCount> skip_reasons(const Summary& summary) {
  return count_reasons(summary,
                       [](Status s) { return s == Status::kNotExported; });
}

std::string summary_markdown(const Summary& s) {
  std::set<std::string> ops_all, ops_failing;
  for (const CaseResult& c : s.cases) {
    if (c.status == Status::kNotExported) continue;
    ops_all.insert(c.op);
    if (c.status != Status::kMatch) ops_failing.insert(c.op);
  }
  std::ostringstream out;
  int exported = s.exported();
  out << "| OpInfo float32 CPU cases (torch " << s.torch_version << ", "
      << s.ops << " OpInfos"
      << (s.max_samples_per_op > 0
              ? ", at most " + std::to_string(s.max_samples_per_op) +
                    " samples each"
              : ", every sample")
      << ") | count | of exported |\n"
      << "| --- | ---: | ---: |\n"
      << "| cases (OpInfo x variant x sample) | " << s.cases.size() << " | |\n"
      << "| exported as bundles | " << exported << " | 100% |\n"
      << "| loaded | " << s.loaded() << " | " << percent(s.loaded(), exported)
      << " |\n"
      << "| ran | " << s.ran() << " | " << percent(s.ran(), exported) << " |\n"
      << "| **match** | **" << s.matched() << "** | **"
      << percent(s.matched(), exported) << "** |\n"
      << "| (of which dtype/shape only: eager not reproducible) | "
      << s.matched_without_values() << " | |\n"
      << "| load errors | " << s.count(Status::kLoadError) << " | "
      << percent(s.count(Status::kLoadError), exported) << " |\n"
      << "| run errors | " << s.count(Status::kRunError) << " | "
      << percent(s.count(Status::kRunError), exported) << " |\n"
      << "| mismatches | " << s.count(Status::kMismatch) << " | "
      << percent(s.count(Status::kMismatch), exported) << " |\n"
      << "| OpInfos with every exported case matching | "
      << ops_all.size() - ops_failing.size() << " of " << ops_all.size()
      << " | |\n"
      << "| not exported | " << s.count(Status::kNotExported) << " | |\n";
  out << "\n| failures by reason | cases | OpInfos | example |\n"
      << "| --- | ---: | ---: | --- |\n";
  for (const ReasonCount& r : failure_reasons(s)) {
    out << "| " << cell(r.reason) << " | " << r.count << " | " << r.ops << " | "
        << cell(r.example) << " |\n";
  }
  out << "\n| not exported, by reason | cases | OpInfos | example |\n"
      << "| --- | ---: | ---: | --- |\n";
  for (const ReasonCount& r : skip_reasons(s)) {
    out << "| " << cell(r.reason) << " | " << r.count << " | " << r.ops << " | "
        << cell(r.example) << " |\n";
  }
  return out.str();
}

std::string summary_json(const Summary& s) {
  auto reasons = [](const std::vector<ReasonCount>& list) {
    json out = json::array();
    for (const ReasonCount& r : list) {
      out.push_back({{"reason", r.reason},
                     {"count", r.count},
                     {"ops", r.ops},
                     {"example", r.example}});
    }
    return out;
  };
  json cases = json::array();
  for (const CaseResult& c : s.cases) {
    json entry = {{"op", c.op},
                  {"variant", c.variant},
                  {"sample", c.sample},
                  {"status", status_name(c.status)}};
    if (!c.dir.empty()) entry["dir"] = c.dir;
    if (!c.target.empty()) entry["target"] = c.target;
    if (!c.values_compared) entry["values_compared"] = false;
    if (!c.reason.empty()) entry["reason"] = c.reason;
    if (!c.detail.empty()) entry["detail"] = c.detail;
    cases.push_back(std::move(entry));
  }
  json out = {{"torch", s.torch_version},
              {"ops", s.ops},
              {"max_samples_per_op", s.max_samples_per_op},
              {"rtol", kRtol},
              {"atol", kAtol},
              {"cases", s.cases.size()},
              {"exported", s.exported()},
              {"loaded", s.loaded()},
              {"ran", s.ran()},
              {"match", s.matched()},
              {"match_without_values", s.matched_without_values()},
              {"match_rate", s.match_rate()},
              {"load_errors", s.count(Status::kLoadError)},
              {"run_errors", s.count(Status::kRunError)},
              {"mismatches", s.count(Status::kMismatch)},
              {"failures_by_reason", reasons(failure_reasons(s))},
              {"not_exported_by_reason", reasons(skip_reasons(s))},
              {"results", std::move(cases)}};
  return out.dump(1) + "\n";
}

}  // namespace fx::opinfo
