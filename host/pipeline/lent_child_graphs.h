// The graphs of child GraphModules a running pass borrowed
// (GraphSubmoduleGraph), as one part of the pass's transaction.
//
// The first time a pass is lent a child's graph, the graph is copied (a
// snapshot, as PassTarget keeps of the main graph) and a store is bound to
// it that shows the child's attributes as the owner's under the child's
// name ("a.weight" of the child "t1" is the owner's "t1.a.weight"): every
// attribute the pass changes through the child goes through the owner's
// journal. After the pass its changes to the lent graphs can be told,
// linted, sent from an isolated worker to the host, and rolled back; a
// commit or rollback ends the lending (the bound stores go).
#ifndef HOST_PIPELINE_LENT_CHILD_GRAPHS_H_
#define HOST_PIPELINE_LENT_CHILD_GRAPHS_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace fx {
class Graph;
class GraphModule;
}  // namespace fx

namespace fx::host {

class AttributeStore;

class LentChildGraphs {
 public:
  // `owner` is the store of the graph whose module holds the children.
  explicit LentChildGraphs(AttributeStore& owner);
  ~LentChildGraphs();
  LentChildGraphs(const LentChildGraphs&) = delete;
  LentChildGraphs& operator=(const LentChildGraphs&) = delete;

  // The graph of `child`, the owner's submodule at `qualified_name`, noted
  // the first time in a pass; the same graph after that.
  Graph* lend(std::string_view qualified_name,
              const std::shared_ptr<GraphModule>& child);

  // The lent child at `qualified_name` or below it (a module replacing
  // that one would take a lent graph from the pass), or "" when none.
  std::string lent_at_or_below(std::string_view qualified_name) const;

  // The name of a lent child that is no longer `owner`'s submodule at that
  // name, or "" when every one is.
  std::string detached_from(const GraphModule& owner) const;

  // Whether a lent graph differs from its snapshot.
  bool changed() const;
  // Lints every lent graph; throws FxError naming the child at fault.
  void lint() const;
  // A lent graph the pass changed, as a worker sends it to the host.
  struct Change {
    std::string qualified_name;
    std::string json;      // the graph as an fx-graph JSON text
    bool namespace_reset;  // the pass reset its namespace
  };
  std::vector<Change> encode() const;
  // In the host: the child at change.qualified_name gets the graph in
  // change.json, lent first so a rollback restores it, keeping the names
  // the host's graph handed out unless the pass reset its namespace; an
  // error when it is not a GraphModule or the text does not read.
  absl::Status apply(GraphModule& owner, const Change& change);

  // Puts every lent graph back as it was lent, then ends the lending.
  void rollback();
  // Ends the lending, keeping the graphs as the pass left them.
  void clear();

 private:
  struct Lent;
  Lent& note(std::string_view qualified_name,
             const std::shared_ptr<GraphModule>& child);

  AttributeStore& owner_;
  std::vector<std::unique_ptr<Lent>> lent_;
};

}  // namespace fx::host

#endif  // HOST_PIPELINE_LENT_CHILD_GRAPHS_H_
