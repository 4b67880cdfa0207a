// dot (libfx_passes.so): the graph as Graphviz DOT text, one record per
// node (name, opcode, target, `[shape] dtype` from meta['tensor_meta']) and
// one edge per use, coloured by opcode or by a partition index in meta
// (option `color_by`); written to `path` (write_file_atomically) or to
// standard output.
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fx/plugin_api.hpp"
#include "plugins/common/plugin_util.h"
#include "plugins/passes/passes.h"

namespace fx_passes {
namespace {

using fxp::ArgView;
using fxp::Graph;
using fxp::Node;

std::string dot_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '{' || c == '}' || c == '|' || c == '<' || c == '>' || c == '"' ||
        c == '\\') {
      out += '\\';
    }
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// "1x3x224x224 torch.float32" for a tensor_meta dict (or each of a tuple's).
std::string describe_tensor_meta(ArgView m) {
  if (!m) return "";
  if (m.kind() == FX_ARG_TUPLE || m.kind() == FX_ARG_LIST) {
    std::string out;
    for (size_t i = 0; i < m.size(); ++i) {
      std::string item = describe_tensor_meta(m[i]);
      if (item.empty()) continue;
      out += (out.empty() ? "" : ", ") + item;
    }
    return out;
  }
  if (m.kind() != FX_ARG_DICT) return "";
  ArgView shape = fxp::dict_get(m, "shape");
  ArgView dtype = fxp::dict_get(m, "dtype");
  std::string out;
  if (shape) {
    out += "[";
    std::vector<std::string> sizes = fx_plugins::size_texts(shape);
    for (size_t i = 0; i < sizes.size(); ++i) out += (i ? "x" : "") + sizes[i];
    out += "]";
  }
  if (dtype) out += " " + dtype.as_string();
  ArgView q = fxp::dict_get(m, "is_quantized");
  if (q && q.as_bool()) out += " quantized";
  return out;
}

const char* op_name(FxOpcode op) {
  static const char* const kNames[] = {"placeholder",   "get_attr",
                                       "call_function", "call_method",
                                       "call_module",   "output"};
  return kNames[op];
}

const char* op_color(FxOpcode op) {
  static const char* const kColors[] = {"#c6e2ff", "#e0e0e0", "#fff2b3",
                                        "#ffd9b3", "#d5f5d5", "#f5c6cb"};
  return kColors[op];
}

// The fill colour of a node: by opcode, or with `color_by` by the int its
// meta holds under that key (a partition index: 12 colours, then again;
// white for nodes without one).
std::string fill_color(const Node& n, const std::string& color_by) {
  if (color_by.empty()) return op_color(n.op());
  static const char* const kPalette[] = {
      "#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
      "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
  fxp::ArgView v = n.meta(color_by.c_str());
  if (!v || v.kind() != FX_ARG_INT || v.as_int() < 0) return "#ffffff";
  return kPalette[v.as_int() % 12];
}

std::string to_dot(const Graph& g, const std::string& name,
                   const std::string& color_by) {
  std::ostringstream out;
  out << "digraph \"" << dot_escape(name) << "\" {\n"
      << "  rankdir=TB;\n"
      << "  node [shape=record, style=filled, fontname=\"Helvetica\", "
         "fontsize=10];\n";
  for (Node n : g) {
    std::string label = "{" + dot_escape(n.name()) + "|" + op_name(n.op());
    if (n.op() != FX_OP_OUTPUT && n.op() != FX_OP_PLACEHOLDER) {
      label += "|" + dot_escape(n.target());
    }
    std::string meta = describe_tensor_meta(n.meta("tensor_meta"));
    if (!meta.empty()) label += "|" + dot_escape(meta);
    label += "}";
    out << "  \"" << dot_escape(n.name()) << "\" [label=\"" << label
        << "\", fillcolor=\"" << fill_color(n, color_by) << "\"];\n";
  }
  for (Node n : g) {
    for (Node input : n.all_input_nodes()) {
      out << "  \"" << dot_escape(input.name()) << "\" -> \""
          << dot_escape(n.name()) << "\";\n";
    }
  }
  out << "}\n";
  return out.str();
}

}  // namespace

bool dot(Graph& g, const fxp::Options& options) {
  std::string text =
      to_dot(g, options.get_string("name"), options.get_string("color_by"));
  std::string path = options.get_string("path");
  if (path.empty() || path == "-") {
    std::cout << text << std::flush;
    return false;
  }
  fx_plugins::write_file_atomically(path, text);
  return false;
}

}  // namespace fx_passes
