// FreeList<kSize>: blocks of kSize bytes recycled per thread, for objects
// made and destroyed by the million on one thread (the symbolic capture's
// integers). A freed block goes on the freeing thread's list, at most
// kMaxFree of them (the rest go back to operator delete); a thread's list is
// returned to operator delete when the thread ends, and a block released
// after that (an object destroyed at exit, after the thread's thread_locals)
// goes straight back too. Under AddressSanitizer every block comes from and
// returns to operator new / delete, so a use after free is still reported.
// Use it from a final class's operator new / delete:
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

#if defined(__SANITIZE_ADDRESS__)
#define FX_FREE_LIST_ENABLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FX_FREE_LIST_ENABLED 0
#endif
#endif
#ifndef FX_FREE_LIST_ENABLED
#define FX_FREE_LIST_ENABLED 1
#endif

namespace fx {

template <size_t kSize, size_t kMaxFree = 4096>
class FreeList {
  static_assert(kSize >= sizeof(void*), "a block must hold a pointer");

 public:
  // A block of n bytes, from the thread's list when n is kSize.
  static void* allocate(size_t n) {
    State& s = state();
    if (!FX_FREE_LIST_ENABLED || n != kSize || s.head == nullptr) {
      return ::operator new(n);
    }
    Block* b = s.head;
    s.head = b->next;
    --s.count;
    return b;
  }

  // A block of n bytes from allocate(n), given back.
  static void release(void* p, size_t n) {
    if (p == nullptr) return;
    State& s = state();
    if (!FX_FREE_LIST_ENABLED || n != kSize || s.count >= kMaxFree || s.ended) {
      ::operator delete(p);
      return;
    }
    Block* b = static_cast<Block*>(p);
    b->next = s.head;
    s.head = b;
    ++s.count;
  }

 private:
  struct Block {
    Block* next;
  };
  // Trivially destructible, so it stays valid until the thread's storage
  // goes; the Reaper (a separate thread_local) empties it at thread exit.
  struct State {
    Block* head;
    size_t count;
    bool ended;
  };
  struct Reaper {
    State* state;
    ~Reaper() {
      while (state->head != nullptr) {
        Block* next = state->head->next;
        ::operator delete(state->head);
        state->head = next;
      }
      state->count = 0;
      state->ended = true;
    }
  };
  static State& state() {
    static thread_local State s{nullptr, 0, false};
    static thread_local Reaper reaper{&s};
    (void)reaper;
    return s;
  }
};

}  // namespace fx

#endif  // FX_CORE_SUPPORT_FREE_LIST_H_
