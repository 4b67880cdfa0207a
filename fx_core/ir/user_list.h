// fx::UserList: the users of a Node, in torch.fx's order, with O(1) removal.
//
// torch.fx keeps `Node.users` as a dict: insertion-ordered, O(1) to add a user
// at the end and O(1) to remove one from anywhere. Every argument update
// removes the node from each old input's users and appends it to each new
// input's, so a node with many users (a weight, a graph input) sees a removal
// from the middle of its list for every edit of one of its users. A plain
// vector makes that O(users) each, and an edit pass over a graph quadratic.
//
// UserList keeps the same order with the same costs as the dict:
//  - up to two users live inline (most nodes have one or two);
//  - a longer list lives in a heap vector; removing from a short one shifts;
//  - once a removal meets a list of kIndexedFrom users or more, the list
//    builds a position index (user -> slot) and from then on a removal clears
//    the user's slot instead of shifting. Cleared slots are squeezed out when
//    they outnumber the live users, so removal is O(1) amortised and the list
//    never holds more than twice its users. A graph that is only built (traced,
//    loaded) never pays for an index.
//
// Reading never modifies the list: size(), empty() and iteration (which skips
// cleared slots) are O(1) per step; operator[], front() and back() are O(1)
// unless the list has cleared slots, in which case they scan (O(index +
// cleared slots)).
//
// A UserList is 24 bytes, like the absl::InlinedVector<Node*, 2> it replaces.
#ifndef FX_CORE_IR_USER_LIST_H_
#define FX_CORE_IR_USER_LIST_H_

#include <cstddef>
#include <cstdint>
#include <iterator>

namespace fx {

class Node;

class UserList {
 public:
  // Lists this long get a position index at their first removal.
  static constexpr size_t kIndexedFrom = 16;

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Node*;
    using difference_type = std::ptrdiff_t;
    using pointer = Node* const*;
    using reference = Node* const&;

    const_iterator() = default;
    reference operator*() const { return *p_; }
    pointer operator->() const { return p_; }
    const_iterator& operator++() {
      ++p_;
      skip();
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const const_iterator& o) const { return p_ == o.p_; }
    bool operator!=(const const_iterator& o) const { return p_ != o.p_; }

   private:
    friend class UserList;
    const_iterator(Node* const* p, Node* const* end) : p_(p), end_(end) {
      skip();
    }
    void skip() {
      while (p_ != end_ && *p_ == nullptr) ++p_;
    }
    Node* const* p_ = nullptr;
    Node* const* end_ = nullptr;
  };
  using iterator = const_iterator;
  using value_type = Node*;
  using size_type = size_t;

  UserList() = default;
  UserList(const UserList&) = delete;
  UserList& operator=(const UserList&) = delete;
  ~UserList();

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const_iterator begin() const { return {slots(), slots() + num_slots()}; }
  const_iterator end() const {
    Node* const* e = slots() + num_slots();
    return {e, e};
  }
  // The i-th user (i < size()).
  Node* operator[](size_t i) const;
  Node* front() const { return (*this)[0]; }
  Node* back() const { return (*this)[size_ - 1]; }

  // Appends `user`, which must not be in the list.
  void push_back(Node* user);
  // Removes `user` when present, keeping the others' order. Returns whether it
  // was there.
  bool erase(const Node* user);

 private:
  struct Heap;
  static constexpr uint32_t kOnHeap = UINT32_MAX;

  bool on_heap() const { return inline_count_ == kOnHeap; }
  Node* const* slots() const;
  size_t num_slots() const;
  void move_to_heap();
  void squeeze();

  union {
    Node* inline_[2] = {nullptr, nullptr};
    Heap* heap_;
  };
  uint32_t size_ = 0;          // live users
  uint32_t inline_count_ = 0;  // users in inline_, or kOnHeap
};

}  // namespace fx

#endif  // FX_CORE_IR_USER_LIST_H_
