#include "fx_core/ir/user_list.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace fx {

struct UserList::Heap {
  std::vector<Node*> slots;  // in order; nullptr where a user was removed
  // user -> its slot; set once the list reaches kIndexedFrom users.
  std::unique_ptr<absl::flat_hash_map<const Node*, uint32_t>> index;
  uint32_t cleared = 0;  // nullptr slots
};

UserList::~UserList() {
  if (on_heap()) delete heap_;
}

Node* const* UserList::slots() const {
  return on_heap() ? heap_->slots.data() : inline_;
}

size_t UserList::num_slots() const {
  return on_heap() ? heap_->slots.size() : inline_count_;
}

Node* UserList::operator[](size_t i) const {
  if (!on_heap()) return inline_[i];
  if (heap_->cleared == 0) return heap_->slots[i];
  auto it = begin();
  std::advance(it, static_cast<std::ptrdiff_t>(i));
  return *it;
}

void UserList::move_to_heap() {
  auto* heap = new Heap;
  heap->slots.reserve(4);
  heap->slots.assign(inline_, inline_ + inline_count_);
  heap_ = heap;
  inline_count_ = kOnHeap;
}

void UserList::push_back(Node* user) {
  ++size_;
  if (!on_heap()) {
    if (inline_count_ < 2) {
      inline_[inline_count_++] = user;
      return;
    }
    move_to_heap();
  }
  Heap& h = *heap_;
  if (h.index) h.index->emplace(user, static_cast<uint32_t>(h.slots.size()));
  h.slots.push_back(user);
}

bool UserList::erase(const Node* user) {
  if (!on_heap()) {
    for (uint32_t i = 0; i < inline_count_; ++i) {
      if (inline_[i] != user) continue;
      if (i == 0) inline_[0] = inline_[1];
      inline_[--inline_count_] = nullptr;
      --size_;
      return true;
    }
    return false;
  }
  Heap& h = *heap_;
  if (!h.index && h.slots.size() >= kIndexedFrom) {
    // The first removal from a long list: index it from now on.
    h.index = std::make_unique<absl::flat_hash_map<const Node*, uint32_t>>();
    h.index->reserve(h.slots.size());
    for (uint32_t i = 0; i < h.slots.size(); ++i)
      h.index->emplace(h.slots[i], i);
  }
  if (!h.index) {
    auto it = std::find(h.slots.begin(), h.slots.end(), user);
    if (it == h.slots.end()) return false;
    h.slots.erase(it);
    --size_;
    return true;
  }
  auto it = h.index->find(user);
  if (it == h.index->end()) return false;
  uint32_t slot = it->second;
  h.index->erase(it);
  --size_;
  if (slot + 1 == h.slots.size()) {
    h.slots.pop_back();  // the usual "remove the last user" costs nothing more
    while (!h.slots.empty() && h.slots.back() == nullptr) {
      h.slots.pop_back();
      --h.cleared;
    }
  } else {
    h.slots[slot] = nullptr;
    ++h.cleared;
    if (h.cleared > size_) squeeze();
  }
  return true;
}

// Drops the cleared slots and renumbers the index: O(slots), paid for by the
// more than size() removals that cleared them.
void UserList::squeeze() {
  Heap& h = *heap_;
  uint32_t out = 0;
  for (Node* u : h.slots) {
    if (u == nullptr) continue;
    if (h.index) (*h.index)[u] = out;
    h.slots[out++] = u;
  }
  h.slots.resize(out);
  h.cleared = 0;
  if (out < kIndexedFrom / 2) h.index.reset();
}

}  // namespace fx
