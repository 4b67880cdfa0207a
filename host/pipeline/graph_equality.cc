#include "host/pipeline/graph_equality.h"

#include "fx_core/ir/argument.h"
#include "fx_core/ir/node.h"

namespace fx::host {
namespace {

bool same_argument(const Argument& a, const Argument& b);

template <typename Sequence>
bool same_sequence(const Sequence& x, const Sequence& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!same_argument(x[i], y[i])) return false;
  }
  return true;
}

bool same_dict(const ArgumentDict& x, const ArgumentDict& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].first != y[i].first || !same_argument(x[i].second, y[i].second)) {
      return false;
    }
  }
  return true;
}

bool same_argument(const Argument& a, const Argument& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Argument::Kind::kNode:
      return a.as_node()->name() == b.as_node()->name();
    case Argument::Kind::kList:
    case Argument::Kind::kTuple:
    case Argument::Kind::kSlice:
      return same_sequence(a.elements(), b.elements());
    case Argument::Kind::kDict:
      return same_dict(a.items(), b.items());
    default:
      return a == b;
  }
}

}  // namespace

bool structurally_equal(const Graph& a, const Graph& b) {
  if (a.size() != b.size()) return false;
  auto ib = b.nodes().begin();
  for (const Node* x : a.nodes()) {
    const Node* y = *ib;
    ++ib;
    if (x->op() != y->op() || x->name() != y->name() ||
        x->target() != y->target() || x->type() != y->type() ||
        x->type_text_override() != y->type_text_override() ||
        !same_sequence(x->args(), y->args()) ||
        !same_dict(x->kwargs(), y->kwargs()) ||
        !same_dict(x->meta(), y->meta())) {
      return false;
    }
  }
  return true;
}

}  // namespace fx::host
