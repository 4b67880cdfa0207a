// FreeList<kSize>: blocks of kSize bytes recycled per thread, for objects
// made and destroyed by the million on one thread (the symbolic capture's
// integers). A freed block goes on the freeing thread's list, at most
// kMaxFree of them (the rest go back to operator delete); a thread's list is
// returned to operator delete when the thread ends. Use it from a final
// class's operator new / delete:
//   static void* operator new(size_t n) {
//     return FreeList<sizeof(T)>::allocate(n);
//   }
//   static void operator delete(void* p, size_t n) {
//     FreeList<sizeof(T)>::release(p, n);
//   }
#ifndef FX_CORE_SUPPORT_FREE_LIST_H_
#define FX_CORE_SUPPORT_FREE_LIST_H_

#include <cstddef>
#include <new>

namespace fx {

template <size_t kSize, size_t kMaxFree = 4096>
class FreeList {
  static_assert(kSize >= sizeof(void*), "a block must hold a pointer");

 public:
  // A block of kSize bytes; `n` (operator new's argument) must be kSize.
  static void* allocate(size_t n) {
    if (n != kSize) return ::operator new(n);
    Cache& c = cache();
    if (c.head == nullptr) return ::operator new(kSize);
    Block* b = c.head;
    c.head = b->next;
    --c.count;
    return b;
  }

  // A block from allocate(n), given back.
  static void release(void* p, size_t n) {
    if (p == nullptr) return;
    Cache& c = cache();
    if (n != kSize || c.count >= kMaxFree || c.ended) {
      ::operator delete(p);
      return;
    }
    Block* b = static_cast<Block*>(p);
    b->next = c.head;
    c.head = b;
    ++c.count;
  }

 private:
  struct Block {
    Block* next;
  };
  struct Cache {
    Block* head = nullptr;
    size_t count = 0;
    // Set when the thread's list is gone: a block released later (by an
    // object destroyed after the thread's thread_locals, at exit) goes
    // straight back to operator delete.
    bool ended = false;
    ~Cache() {
      while (head != nullptr) {
        Block* next = head->next;
        ::operator delete(head);
        head = next;
      }
      count = 0;
      ended = true;
    }
  };
  static Cache& cache() {
    thread_local Cache c;
    return c;
  }
};

}  // namespace fx

#endif  // FX_CORE_SUPPORT_FREE_LIST_H_
