// TargetSignature (C ABI version 14) against Python torch 1.13: for every
// call_function target the host registry holds and every built-in module
// kind, what the host answers is what inspect.signature says in torch
// (target_signature_cases.py, run at test time; skipped without
// python3-torch):
//  - a call_function target TargetSignature answers for: the parameters'
//    names, kinds and default values (typed: 1.0 is no 1) of
//    inspect.signature(inspect.unwrap(fn)), fn the Python object the target
//    names (the if_true branch of torch.nn.functional's boolean
//    dispatches, as torch.fx's normalize_function reads them); a target
//    Python holds as a builtin has no signature there, so the host must not
//    give one;
//  - a target TargetSignature says FX_NOT_FOUND for: Python must hold it as
//    a builtin (or cannot import it), not as a Python function;
//  - a module kind: the forward of a module of that kind (built from a
//    config giving each required constructor argument 1, a submodule of a
//    GraphModule, asked through TargetSignature) is its Python class's
//    forward without self; for the kinds such a config does not build
//    (nested module configs, quantized norms' float qparams, Softmax's
//    dim=None), the kind's registered forward signature is compared.
// Targets and classes Python cannot import (torchvision's when it is
// absent, the host's own helpers) are counted and skipped. Every
// difference is either listed in kKnown below with its reason, or fails.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fx/plugin_api.hpp"
#include "fx_core/ir/graph.h"
#include "fx_core/runtime/graph_module.h"
#include "fx_core/runtime/module_registry.h"
#include "fx_core/runtime/op_registry.h"
#include "host/capi/c_api.h"
#include "tests/testing/python.h"

namespace fx::host {
namespace {

// A default value as target_signature_cases.py's encode() spells it.
std::string encode(fxp::ArgView v) {
  switch (v.kind()) {
    case FX_ARG_NONE:
      return "None";
    case FX_ARG_BOOL:
      return v.as_bool() ? "True" : "False";
    case FX_ARG_INT:
      return "int:" + std::to_string(v.as_int());
    case FX_ARG_FLOAT: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "float:%.17g", v.as_float());
      return buf;
    }
    case FX_ARG_STRING:
      return "str:" + v.as_string();
    case FX_ARG_DTYPE:
    case FX_ARG_MEMORY_FORMAT:
    case FX_ARG_LAYOUT:
      return v.as_string();
    case FX_ARG_TUPLE:
    case FX_ARG_LIST: {
      const bool tuple = v.kind() == FX_ARG_TUPLE;
      std::string s = tuple ? "(" : "[";
      for (size_t i = 0; i < v.size(); ++i) {
        if (i > 0) s += ", ";
        s += encode(v[i]);
      }
      return s + (tuple ? ")" : "]");
    }
    default:
      return "?kind " + std::to_string(v.kind());
  }
}

// A registered default (an OpParam's IValue) spelled as encode() spells
// the FxArg; dtypes, memory formats and layouts are ints there, and no
// forward signature has one.
std::string encode(const c10::IValue& v) {
  if (v.isNone()) return "None";
  if (v.isBool()) return v.toBool() ? "True" : "False";
  if (v.isInt()) return "int:" + std::to_string(v.toInt());
  if (v.isDouble()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "float:%.17g", v.toDouble());
    return buf;
  }
  if (v.isString()) return "str:" + v.toStringRef();
  if (v.isTuple() || v.isList()) {
    const bool tuple = v.isTuple();
    std::vector<c10::IValue> items =
        tuple ? v.toTupleRef().elements().vec() : v.toList().vec();
    std::string s = tuple ? "(" : "[";
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) s += ", ";
      s += encode(items[i]);
    }
    return s + (tuple ? ")" : "]");
  }
  return "?" + v.tagKind();
}

using Lines = std::vector<std::string>;

const char* kind_name(OpParam::Kind kind) {
  switch (kind) {
    case OpParam::Kind::kPositional:
      return "POSITIONAL_OR_KEYWORD";
    case OpParam::Kind::kKeywordOnly:
      return "KEYWORD_ONLY";
    case OpParam::Kind::kVarPositional:
      return "VAR_POSITIONAL";
    case OpParam::Kind::kVarKeyword:
      return "VAR_KEYWORD";
  }
  return "?";
}

// A kind's forward as the script's lines, read from the registry (for the
// kinds no config of 1s builds, so no GraphModule can hold one).
Lines registered_forward(const ModuleKind& kind) {
  Lines lines;
  for (const OpParam& p : kind.forward_schema.params()) {
    lines.push_back(p.name + "\t" + kind_name(p.kind) + "\t" +
                    (p.has_default ? encode(p.default_value) : "-"));
  }
  return lines;
}

// TargetSignature's answer as the script's lines, or why there is none
// ("! not found").
Lines answer(FxGraph* g, FxOpcode op, const std::string& target) {
  FxArg* out = nullptr;
  StatusText s =
      take_status(api()->TargetSignature(g, op, target.c_str(), &out));
  if (s.code == FX_NOT_FOUND) return {"! not found"};
  if (s.code != FX_OK) return {"! error " + s.message};
  const fxp::Arg list = fxp::Arg::adopt(out);
  Lines lines;
  for (size_t i = 0; i < list.view().size(); ++i) {
    const fxp::ArgView d = list.view()[i];
    std::string name, kind, value = "-";
    for (size_t k = 0; k < d.size(); ++k) {
      if (d.key(k) == "name") name = d[k].as_string();
      if (d.key(k) == "kind") kind = d[k].as_string();
      if (d.key(k) == "default") value = encode(d[k]);
    }
    lines.push_back(name + "\t" + kind + "\t" + value);
  }
  return lines;
}

// The script's output: "= F TARGET" / "= M TYPE", then its lines.
std::map<std::string, Lines> parse(const std::string& text) {
  std::map<std::string, Lines> cases;
  std::istringstream in(text);
  std::string line;
  Lines* current = nullptr;
  while (std::getline(in, line)) {
    if (line.rfind("= ", 0) == 0) {
      current = &cases[line.substr(2)];
    } else if (current != nullptr) {
      current->push_back(line);
    }
  }
  return cases;
}

std::string join(const Lines& lines) {
  std::string s;
  for (const std::string& l : lines) s += "\n      " + l;
  return s;
}

// Where the host's answer differs from torch 1.13's on purpose or for a
// reason outside the registrations, keyed "F TARGET" / "M TYPE". Each must
// still differ (a fixed one is taken off the list).
const std::map<std::string, std::string>& known_differences() {
  // None: the builtins torch.nn.functional re-exports (F.conv2d), the
  // Python functions torch.NAME re-exports (torch.split) and the nested
  // boolean dispatches (torch.unique) are told apart by the generated
  // fx_core/runtime/python_declarations.inc.
  static const auto* known = new std::map<std::string, std::string>{};
  return *known;
}

// A module of `type` built from a config giving each constructor parameter
// without a default the int 1 (Conv2d(1, 1, 1), Linear(1, 1), ...);
// nullptr when that config does not build one.
std::shared_ptr<torch::nn::Module> build(const ModuleKind& kind,
                                         std::string* why) {
  ArgumentDict config;
  for (const OpParam& p : kind.init_schema.params()) {
    if (!p.has_default && p.kind == OpParam::Kind::kPositional) {
      config.emplace_back(p.name, Argument(int64_t{1}));
    }
  }
  try {
    return ModuleRegistry::global().create(kind.type, config);
  } catch (const std::exception& e) {
    *why = e.what();
    *why = why->substr(0, why->find('\n'));  // c10's: no stack
    return nullptr;
  }
}

TEST(TargetSignatureConformance, MatchesPythonTorch) {
  if (!testing::have_python_torch()) GTEST_SKIP() << "no python3-torch";
  fxp::api() = api();

  // What the host says: every registered call_function target, then a
  // module of every kind, each a submodule of one GraphModule.
  std::map<std::string, Lines> host;
  for (const std::string& t :
       OpRegistry::global().targets(Opcode::kCallFunction)) {
    host["F " + t] = answer(nullptr, FX_OP_CALL_FUNCTION, t);
  }
  auto graph = std::make_unique<Graph>();
  Node* x = graph->placeholder("x");
  GraphModule::AttributeMap modules;
  std::map<std::string, std::string> submodule_of;  // type -> submodule
  std::map<std::string, std::string> unbuilt;       // type -> why
  for (const std::string& type : ModuleRegistry::global().types()) {
    const ModuleKind* kind = ModuleRegistry::global().find(type);
    ASSERT_NE(kind, nullptr) << type;
    std::string why;
    std::shared_ptr<torch::nn::Module> m = build(*kind, &why);
    if (m == nullptr) {
      unbuilt[type] = why;
      continue;
    }
    const std::string name = "m" + std::to_string(submodule_of.size());
    submodule_of[type] = name;
    modules.push_back({name, {m, {}, false}});
    graph->call_module(name, {x});
  }
  graph->output(x);
  GraphModule gm(modules, std::move(graph));
  for (const auto& [type, name] : submodule_of) {
    host["M " + type] = answer(to_handle(&gm.graph()), FX_OP_CALL_MODULE, name);
  }
  for (const auto& [type, why] : unbuilt) {
    host["M " + type] =
        registered_forward(*ModuleRegistry::global().find(type));
  }

  // What torch says.
  const std::string list = ::testing::TempDir() + "/target_signature_cases.txt";
  {
    std::ofstream out(list);
    for (const auto& [key, lines] : host) out << key << "\n";
  }
  const std::map<std::string, Lines> torch_says = parse(
      testing::run_python("tests/host/capi/target_signature_cases.py", {list}));
  ASSERT_EQ(torch_says.size(), host.size());

  size_t answered = 0, compared = 0, builtins = 0, skipped = 0;
  std::vector<std::string> differences, unimportable;
  std::set<std::string> still_known;
  for (const auto& [key, ours] : host) {
    const Lines& theirs = torch_says.at(key);
    const bool we_answer = ours.empty() || ours[0].rfind("! ", 0) != 0;
    if (we_answer) ++answered;
    ASSERT_TRUE(we_answer || ours[0] == "! not found") << key << ours[0];
    const bool importable =
        theirs.empty() || theirs[0].rfind("! import:", 0) != 0;
    if (!importable) {
      ++skipped;
      unimportable.push_back(key + " (" + theirs[0].substr(2) + ")");
      continue;
    }
    const bool builtin =
        !theirs.empty() && theirs[0].rfind("! builtin", 0) == 0;
    if (builtin) ++builtins;
    if (we_answer && !builtin) ++compared;
    bool same;
    if (!we_answer) {
      same = builtin;  // no signature here: torch's is a builtin too
    } else {
      same = !builtin && ours == theirs;
    }
    if (same) continue;
    if (known_differences().count(key) > 0) {
      still_known.insert(key);
      continue;
    }
    differences.push_back(key + "\n    host:" + join(ours) +
                          "\n    torch 1.13:" + join(theirs));
  }
  std::cout << host.size() << " targets and module kinds; " << answered
            << " answered by TargetSignature, " << compared
            << " compared with inspect.signature; " << builtins
            << " builtins in torch; " << skipped
            << " not importable in Python, skipped; " << unbuilt.size()
            << " module kinds not built from a config of 1s (their "
               "registered forward compared)\n";
  for (const std::string& u : unimportable)
    std::cout << "  skipped " << u << "\n";
  for (const auto& [type, why] : unbuilt) {
    std::cout << "  not built " << type << ": " << why << "\n";
  }
  for (const std::string& d : differences) ADD_FAILURE() << d;
  EXPECT_EQ(differences.size(), 0u);
  for (const auto& [key, why] : known_differences()) {
    EXPECT_EQ(still_known.count(key), 1u)
        << key << " is listed as a known difference (" << why
        << ") but matches torch now, or is no longer registered";
  }
  EXPECT_GT(compared, 250u);  // 299 with torchvision, in December 2026
}

}  // namespace
}  // namespace fx::host
