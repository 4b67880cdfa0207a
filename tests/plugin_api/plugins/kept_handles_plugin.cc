// The C++ twin of kept_handles_plugin.c (issue 39): the same three passes,
// written with the C++ wrapper as a careless C++ author would, keeping
// wrapper objects (fxp::Graph, fxp::Node, fxp::ArgView) and a weight view in
// statics across passes, and recording what it saw in the output node's
// meta['seen'] in the same words as the C plugin:
//  - 'keep_then_fail' keeps the graph, its first node, the output node's
//    args[0] and a view of the parameter "weight" (never released), edits
//    the node and fails, so the graph it kept is rolled back;
//  - 'use_kept_handles' reads the kept node's name, edits it, reads the kept
//    argument and a view of an Arg that was destroyed, and records "name=NULL
//    status=FAILED_PRECONDITION arg=FAILED_PRECONDITION
//    released=FAILED_PRECONDITION" when the host refused every stale handle
//    ("nothing kept released=..." when no earlier pass of this process kept
//    any); it succeeds;
//  - 'write_kept_view_then_fail' writes 7 through the kept view, then fails.
#include <cstdint>
#include <string>

#include "fx/plugin_api.hpp"

namespace {

fxp::Graph kept_graph(nullptr);
fxp::Node kept_node;
fxp::ArgView kept_arg;
DLManagedTensor* kept_view = nullptr;

bool keep_then_fail(fxp::Graph& g, const fxp::Options&) {
  kept_graph = g;
  kept_node = *g.begin();
  kept_arg = g.output_node().arg(0);
  if (kept_view != nullptr && kept_view->deleter) kept_view->deleter(kept_view);
  kept_view = g.get_attr_tensor("weight");
  kept_node.set_meta("kept", fxp::Arg(1));
  throw fxp::Error(FX_INTERNAL, "keep_then_fail gives up");
}

// "OK", "FAILED_PRECONDITION" or "another error": how `use` ended.
template <typename Use>
std::string code_of(Use use) {
  try {
    use();
    return "OK";
  } catch (const fxp::Error& e) {
    return e.code() == FX_FAILED_PRECONDITION ? "FAILED_PRECONDITION"
                                              : "another error";
  }
}

// Reads a view of an argument after the Arg it viewed was destroyed.
std::string use_destroyed_arg() {
  fxp::ArgView view;
  {
    fxp::Arg one(int64_t{1});
    view = one.view();
  }
  return code_of([&] { view.as_int(); });
}

bool use_kept_handles(fxp::Graph& g, const fxp::Options&) {
  std::string released = use_destroyed_arg();
  std::string seen = "nothing kept released=" + released;
  if (kept_graph.get() != nullptr) {
    std::string name(kept_node.name());
    std::string status =
        code_of([&] { kept_node.set_meta("again", fxp::Arg(2)); });
    std::string arg = code_of([&] { kept_arg.node(); });
    seen = "name=" + (name.empty() ? std::string("NULL") : name) +
           " status=" + status + " arg=" + arg + " released=" + released;
  }
  g.output_node().set_meta("seen", fxp::Arg(seen));
  return true;
}

bool write_kept_view_then_fail(fxp::Graph&, const fxp::Options&) {
  if (kept_view != nullptr) {
    DLTensor& d = kept_view->dl_tensor;
    auto* data =
        reinterpret_cast<float*>(static_cast<char*>(d.data) + d.byte_offset);
    int64_t count = 1;
    for (int i = 0; i < d.ndim; ++i) count *= d.shape[i];
    for (int64_t i = 0; i < count; ++i) data[i] = 7;
  }
  throw fxp::Error(FX_INTERNAL, "write_kept_view_then_fail gives up");
}

}  // namespace

FXP_PLUGIN(
    "kept_handles_cc", "1.0",
    fxp::pass<keep_then_fail>("keep_then_fail",
                              "keeps handles and a view, edits, then fails"),
    fxp::pass<use_kept_handles>("use_kept_handles",
                                "uses the kept handles, records what it saw"),
    fxp::pass<write_kept_view_then_fail>("write_kept_view_then_fail",
                                         "writes through the kept view, fails"))
