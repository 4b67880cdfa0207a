// fx::UserList (a Node's users): the order and the removals of torch.fx's
// users dict, checked against a plain vector model and against torch.fx
// running the same edit script.
#include "fx_core/ir/user_list.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "fx_core/ir/graph.h"
#include "tests/testing/python.h"

namespace fx {
namespace {

// The same generator as user_order_script.py.
class Lcg {
 public:
  explicit Lcg(uint64_t seed) : state_(seed) {}
  uint64_t next(uint64_t n) {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state_ >> 33) % n;
  }

 private:
  uint64_t state_;
};

std::vector<Node*> contents(const UserList& list) {
  return std::vector<Node*>(list.begin(), list.end());
}

class UserListTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 200; ++i) {
      pool_.push_back(graph_.placeholder("p" + std::to_string(i)));
    }
  }
  Graph graph_;
  std::vector<Node*> pool_;  // distinct Node* values to store
};

TEST_F(UserListTest, StartsEmptyAndKeepsInsertionOrder) {
  UserList list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.begin(), list.end());
  for (int i = 0; i < 40; ++i) list.push_back(pool_[i]);
  ASSERT_EQ(list.size(), 40u);
  EXPECT_EQ(contents(list),
            std::vector<Node*>(pool_.begin(), pool_.begin() + 40));
  EXPECT_EQ(list.front(), pool_[0]);
  EXPECT_EQ(list.back(), pool_[39]);
}

TEST_F(UserListTest, EraseOfAnAbsentUserChangesNothing) {
  UserList list;
  EXPECT_FALSE(list.erase(pool_[0]));
  list.push_back(pool_[0]);
  EXPECT_FALSE(list.erase(pool_[1]));
  for (int i = 1; i < 30; ++i) list.push_back(pool_[i]);
  EXPECT_FALSE(list.erase(pool_[100]));
  EXPECT_EQ(list.size(), 30u);
}

TEST_F(UserListTest, RemovingFromTheMiddleOfALongListKeepsTheOthersInOrder) {
  UserList list;
  std::vector<Node*> model;
  for (int i = 0; i < 100; ++i) {
    list.push_back(pool_[i]);
    model.push_back(pool_[i]);
  }
  // Every third one, front to back: more removals than live users remain,
  // so the list squeezes out its cleared slots on the way.
  for (int i = 0; i < 100; i += 3) {
    ASSERT_TRUE(list.erase(pool_[i]));
    model.erase(std::find(model.begin(), model.end(), pool_[i]));
    ASSERT_EQ(contents(list), model) << "after removing " << i;
    ASSERT_EQ(list.size(), model.size());
    for (size_t k = 0; k < model.size(); k += 7) ASSERT_EQ(list[k], model[k]);
  }
}

// Random pushes and removals against std::vector doing the same thing.
TEST_F(UserListTest, MatchesAVectorUnderRandomEdits) {
  for (uint64_t seed : {1u, 2u, 3u, 4u}) {
    Lcg rnd(seed);
    UserList list;
    std::vector<Node*> model;
    for (int step = 0; step < 5000; ++step) {
      Node* n = pool_[rnd.next(pool_.size())];
      auto it = std::find(model.begin(), model.end(), n);
      // Grow towards about 120 users, then shrink to a handful, and again.
      bool growing = (step / 1000) % 2 == 0;
      if (it == model.end() && (growing || rnd.next(4) == 0)) {
        list.push_back(n);
        model.push_back(n);
      } else {
        ASSERT_EQ(list.erase(n), it != model.end());
        if (it != model.end()) model.erase(it);
      }
      ASSERT_EQ(list.size(), model.size())
          << "seed " << seed << " step " << step;
      if (step % 17 == 0) {
        ASSERT_EQ(contents(list), model) << "seed " << seed << " step " << step;
        if (!model.empty()) {
          size_t k = rnd.next(model.size());
          ASSERT_EQ(list[k], model[k]);
          ASSERT_EQ(list.back(), model.back());
        }
      }
    }
  }
}

// The script of user_order_script.py on fx::Graph: every node's users, one
// line per node.
std::string run_user_order_script(int num_nodes, int steps, uint64_t seed) {
  Lcg rnd(seed);
  Graph g;
  Node* x = g.placeholder("x");
  Node* w = g.placeholder("w");
  std::vector<Node*> nodes;
  for (int i = 0; i < num_nodes; ++i) {
    nodes.push_back(g.call_function("operator.add", {x, w}));
  }
  ArgumentList outputs(nodes.begin(), nodes.end());
  g.output(Argument::tuple(std::move(outputs)));
  auto source_before = [&](size_t i) {
    uint64_t j = rnd.next(i + 2);
    return j == 0 ? x : j == 1 ? w : nodes[j - 2];
  };
  for (int step = 0; step < steps; ++step) {
    uint64_t kind = rnd.next(3);
    size_t i = rnd.next(num_nodes);
    Node* node = nodes[i];
    if (kind == 0) {
      size_t index = rnd.next(2);
      node->update_arg(index, source_before(i));
    } else if (kind == 1) {
      Node* old = node->args()[rnd.next(2)].as_node();
      node->replace_input_with(old, source_before(i));
    } else {
      size_t k = rnd.next(i + 1);
      if (k == i) continue;
      size_t flag = rnd.next(2);
      node->replace_all_uses_with(
          nodes[k], [&](Node* u) { return u->name().size() % 2 == flag; });
    }
  }
  std::string out;
  for (Node* n : g.nodes()) {
    out += std::string(n->name()) + ":";
    for (Node* u : n->users()) out += " " + std::string(u->name());
    out += "\n";
  }
  return out;
}

TEST(UserOrder, SameAsTorchFxAfterAnEditScript) {
  if (!testing::have_python_torch()) GTEST_SKIP() << "no python3-torch";
  struct Case {
    int nodes, steps;
    uint64_t seed;
  };
  for (Case c : {Case{12, 200, 3}, Case{80, 600, 7}, Case{300, 3000, 11}}) {
    std::string expected =
        testing::run_python("tests/fx_core/ir/user_order_script.py",
                            {std::to_string(c.nodes), std::to_string(c.steps),
                             std::to_string(c.seed)});
    EXPECT_EQ(run_user_order_script(c.nodes, c.steps, c.seed), expected)
        << c.nodes << " nodes, " << c.steps << " steps, seed " << c.seed;
  }
}

}  // namespace
}  // namespace fx
