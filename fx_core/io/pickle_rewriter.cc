// The checks and rewrite of a torch.save pickle program for LibTorch's
// unpickler (pickle_rewriter.h): a model of the unpickler's stack over the
// program's instructions (pickle_ops.h), then the program written again.
#include "fx_core/io/pickle_rewriter.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fx_core/io/pickle_ops.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using pickle::fixed_or_counted;
using pickle::hex_byte;
using pickle::little_endian;
using pickle::parse_ops;
using pickle::PickleOp;
using pickle::refuse;
using pickle::storage_element_size;

// The calls LibTorch's unpickler cannot make, which the reader makes after
// it (tagged tuples): the tuple opcode Python builds their arguments with,
// or 0 for any other global.
int tagged_call_args(const std::string& global) {
  if (global == "torch Size") return 0x85;                       // ((d, ...),)
  if (global.rfind("torch.return_types ", 0) == 0) return 0x86;  // (t, {})
  if (global == "torch.serialization _get_layout") return 0x85;  // (name,)
  // AdaptiveLogSoftmaxWithLoss's namedtuple, built by NEWOBJ.
  if (global == "torch.nn.modules.adaptive _ASMoutput") return 0x86;
  if (global == "torch._utils _rebuild_sparse_tensor" ||
      global == "torch._utils _rebuild_sparse_csr_tensor") {
    return 0x86;  // (layout, (indices..., values, size))
  }
  return 0;
}

// Rewrites a pickle program for LibTorch's unpickler: a model of the
// unpickler's stack checks every op and finds the ops to drop
// (torch.return_types calls), the ops to replace (APPEND, SETITEM) and where
// marks go; then the program is written again with those changes.
class PickleRewriter {
 public:
  PickleRewriter(const std::string& p, RecordBytes record_bytes)
      : record_bytes_(std::move(record_bytes)),
        p_(p),
        ops_(parse_ops(p)),
        marks_before_(ops_.size() + 1, 0),
        replaced_(ops_.size(), -1),
        text_(ops_.size()) {}

  std::string rewrite() {
    for (size_t i = 0; i < ops_.size(); ++i) step(i);
    return program();
  }

 private:
  // What the model knows of one object: how deep its contents nest, and
  // whether it is inside a container already (then nothing is added to it:
  // torch.save fills every container before storing it, and adding later
  // is how a container comes to hold itself).
  struct Object {
    size_t depth = 0;
    bool inside = false;
  };
  // A stack element: the op where its value starts, the GLOBAL or string it
  // is (if any), the op that built it, and its object.
  struct Elem {
    size_t start = 0;
    bool mark = false;
    std::string global;
    std::string text;  // a string's value
    size_t built_by = SIZE_MAX;
    std::shared_ptr<Object> object = std::make_shared<Object>();
    std::optional<int64_t> integer;  // an int's value
    // A tuple's items (what tensors' rebuild calls are checked on).
    std::shared_ptr<const std::vector<Elem>> items;
    // A storage's number of elements, from its record's size.
    std::optional<uint64_t> storage_elements;
    // A tensor rebuilt from a storage of the file: how it reaches past that
    // storage, "" when it stays inside; nullopt for anything else and when
    // its bounds are not known.
    std::optional<std::string> outside_storage;
  };

  [[noreturn]] void fail(size_t i, std::string_view what) const {
    refuse(ops_[i].offset, cat(what, " (opcode ", hex_byte(ops_[i].code), ")"));
  }

  static Elem elem_at(size_t start) {
    Elem e;
    e.start = start;
    return e;
  }

  Elem& top(size_t i) {
    if (stack_.empty()) fail(i, "the stack is empty");
    if (stack_.back().mark) fail(i, "a value expected, a MARK found");
    return stack_.back();
  }
  Elem pop(size_t i) {
    Elem e = top(i);
    stack_.pop_back();
    return e;
  }
  // The items above the last MARK, and the MARK.
  std::vector<Elem> pop_to_mark(size_t i, Elem* mark) {
    auto it = std::find_if(stack_.rbegin(), stack_.rend(),
                           [](const Elem& e) { return e.mark; });
    if (it == stack_.rend()) fail(i, "no MARK on the stack");
    std::vector<Elem> items(it.base(), stack_.end());
    *mark = *it;
    stack_.erase(std::prev(it.base()), stack_.end());
    return items;
  }

  // DICT and SETITEMS take keys and values in pairs. LibTorch 1.13's
  // unpickler reads the value of an unpaired last key from past the end of
  // its stack (memory a destroyed value left), so an odd count is refused.
  void require_pairs(size_t i, const std::vector<Elem>& items) const {
    if (items.size() % 2 != 0) {
      fail(i, cat("an odd number of items after the MARK (", items.size(),
                  "): a key without its value"));
    }
  }

  // `item` goes inside `container`.
  void insert(size_t i, Elem& container, const Elem& item) {
    item.object->inside = true;
    if (container.object->inside) {
      fail(i, "adds to a container that is inside another one already");
    }
    container.object->depth =
        std::max(container.object->depth, item.object->depth + 1);
    if (container.object->depth > kMaxPickleDepth) {
      fail(i, cat("containers nested deeper than ", kMaxPickleDepth));
    }
  }
  void insert_all(size_t i, Elem& container, const std::vector<Elem>& items) {
    for (const Elem& item : items) insert(i, container, item);
  }

  // Op i's effect on the stack model.
  void step(size_t i) {
    const PickleOp& op = ops_[i];
    switch (op.code) {
      case 0x80:
      case 0x95:
        break;
      case '.':
        pop(i);
        break;
      case 0x94:
        put(i, memo_.size());
        break;
      case 'q':
      case 'r':
        put(i, memo_index(op));
        break;
      case 'h':
      case 'j':
        get(i, memo_index(op));
        break;
      case 'c':
        push_global(i, p_.substr(op.offset + 1, op.size - 2));
        break;
      case '(': {
        Elem e = elem_at(i);
        e.mark = true;
        stack_.push_back(e);
        break;
      }
      default:
        step_built(i);
    }
  }

  // Ops that build from MARKs or from the top of the stack.
  void step_built(size_t i) {
    const PickleOp& op = ops_[i];
    Elem mark;
    switch (op.code) {
      case 't':
      case 'l':
      case 'd':
      case 0x91: {  // TUPLE, LIST, DICT, FROZENSET
        std::vector<Elem> items = pop_to_mark(i, &mark);
        if (op.code == 'd') require_pairs(i, items);
        Elem e = elem_at(mark.start);
        e.built_by = i;
        insert_all(i, e, items);
        if (op.code == 't') keep_items(&e, std::move(items));
        stack_.push_back(e);
        break;
      }
      case 'e':
      case 'u':
      case 0x90: {  // APPENDS, SETITEMS, ADDITEMS
        std::vector<Elem> items = pop_to_mark(i, &mark);
        if (op.code == 'u') require_pairs(i, items);
        insert_all(i, top(i), items);
        break;
      }
      case '1':
        pop_to_mark(i, &mark);
        break;
      case 0x85:
      case 0x86:
      case 0x87:
        push_tuple(i, op.code - 0x84);
        break;
      case 'R':
      case 0x81:
        call(i);
        break;
      default:
        step_other(i);
    }
  }

  // The pops, APPEND, SETITEM, BUILD, BINPERSID, DUP, STACK_GLOBAL and every
  // opcode that pushes one value.
  void step_other(size_t i) {
    const PickleOp& op = ops_[i];
    switch (op.code) {
      case '0':
        pop(i);
        break;
      case 'a': {  // APPEND -> MARK item APPENDS
        Elem item = pop(i);
        insert(i, top(i), item);
        marks_before_[item.start] += 1;
        replaced_[i] = 'e';
        break;
      }
      case 's': {  // SETITEM -> MARK key value SETITEMS
        Elem value = pop(i);
        Elem key = pop(i);
        insert(i, top(i), key);
        insert(i, top(i), value);
        marks_before_[key.start] += 1;
        replaced_[i] = 'u';
        break;
      }
      case 'b': {  // BUILD: state into the object below it
        Elem state = pop(i);
        insert(i, top(i), state);
        break;
      }
      case 'Q': {  // BINPERSID: a storage
        Elem id = pop(i);
        Elem e = elem_at(id.start);
        e.storage_elements = storage_elements(i, id);
        stack_.push_back(e);
        break;
      }
      case '2':
        stack_.push_back(top(i));
        break;
      case 0x93:
        stack_global(i);
        break;
      case 0x8a: {
        widen_long1(i);
        Elem e = elem_at(i);
        e.integer = long1_value(op);
        stack_.push_back(e);
        break;
      }
      default: {  // every other opcode pushes one value
        Elem e = elem_at(i);
        e.integer = small_int_value(op);
        if (op.code == 0x8c || op.code == 'X' || op.code == 0x8d) {
          size_t width = fixed_or_counted(op.code).n;
          e.text = p_.substr(op.offset + 1 + width, op.size - 1 - width);
        }
        stack_.push_back(e);
      }
    }
  }

  // LONG1 of n bytes: LibTorch reads only n = 8, Python writes the fewest
  // bytes. Widened to 8 (sign-extended); more than 8 is refused.
  void widen_long1(size_t i) {
    const PickleOp& op = ops_[i];
    size_t n = static_cast<uint8_t>(p_[op.offset + 1]);
    if (n > 8) fail(i, cat("an integer of ", n, " bytes is beyond 64 bits"));
    if (n == 8) return;
    std::string bytes = p_.substr(op.offset + 2, n);
    bool negative = n > 0 && (static_cast<uint8_t>(bytes.back()) & 0x80);
    bytes.resize(8, negative ? '\xff' : '\0');
    text_[i] = cat(std::string(1, '\x8a'), std::string(1, '\x08'), bytes);
  }

  // BININT (signed), BININT1, BININT2 (unsigned): their value.
  std::optional<int64_t> small_int_value(const PickleOp& op) const {
    switch (op.code) {
      case 'J':
        return static_cast<int32_t>(little_endian(p_, op.offset + 1, 4));
      case 'K':
        return static_cast<int64_t>(little_endian(p_, op.offset + 1, 1));
      case 'M':
        return static_cast<int64_t>(little_endian(p_, op.offset + 1, 2));
      default:
        return std::nullopt;
    }
  }

  // LONG1 of at most 8 bytes (widen_long1 refused longer ones).
  std::optional<int64_t> long1_value(const PickleOp& op) const {
    size_t n = static_cast<uint8_t>(p_[op.offset + 1]);
    if (n == 0) return 0;
    uint64_t v = little_endian(p_, op.offset + 2, n);
    if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);
    return static_cast<int64_t>(v);
  }

  uint64_t memo_index(const PickleOp& op) const {
    return little_endian(p_, op.offset + 1,
                         op.code == 'q' || op.code == 'h' ? 1 : 4);
  }

  // BINPUT, LONG_BINPUT, MEMOIZE: indices are given out in order.
  void put(size_t i, uint64_t index) {
    const Elem& value = top(i);
    if (index > memo_.size()) {
      fail(i, cat("memo index ", index, " skips ahead of the ", memo_.size(),
                  " stored"));
    }
    if (index == memo_.size()) {
      memo_.push_back(value);
    } else {
      memo_[index] = value;
    }
  }

  void get(size_t i, uint64_t index) {
    if (index >= memo_.size()) {
      fail(i, cat("memo index ", index, " was never stored"));
    }
    Elem e = memo_[index];
    e.start = i;
    e.built_by = SIZE_MAX;
    stack_.push_back(e);
  }

  // GLOBAL and STACK_GLOBAL: only the globals torch.save writes.
  void push_global(size_t i, std::string text) {
    std::replace(text.begin(), text.end(), '\n', ' ');
    if (!text.empty() && text.back() == ' ') text.pop_back();
    if (!is_allowed_pickle_global(text)) {
      fail(i, cat("refused global '", text,
                  "' (torch.save files hold only tensors, storages, "
                  "OrderedDict, torch.Size, dtypes and devices)"));
    }
    Elem e = elem_at(i);
    e.global = std::move(text);
    stack_.push_back(e);
  }

  void stack_global(size_t i) {
    Elem name = pop(i);
    Elem module = pop(i);
    if (name.text.empty() || module.text.empty()) {
      fail(i, "STACK_GLOBAL needs two strings");
    }
    push_global(i, cat(module.text, " ", name.text));
    stack_.back().start = module.start;
  }

  // TUPLE1..3 (n items).
  void push_tuple(size_t i, size_t n) {
    std::vector<Elem> items;
    for (size_t k = 0; k < n; ++k) items.push_back(pop(i));
    Elem e = elem_at(items.back().start);
    e.built_by = i;
    insert_all(i, e, items);
    std::reverse(items.begin(), items.end());
    keep_items(&e, std::move(items));
    stack_.push_back(e);
  }

  // A tuple keeps its items' integers, storages and nested tuples, and
  // their globals and strings when short (a storage's persistent id names
  // its type and record), for the checks of rebuilt tensors; nothing else
  // of them, so big pickles stay cheap to model.
  static void keep_items(Elem* tuple, std::vector<Elem> items) {
    constexpr size_t kKeptText = 256;
    for (Elem& item : items) {
      item.object = nullptr;
      if (item.global.size() > kKeptText) item.global.clear();
      if (item.text.size() > kKeptText) item.text.clear();
    }
    tuple->items = std::make_shared<const std::vector<Elem>>(std::move(items));
  }

  // REDUCE, NEWOBJ: a global called with a tuple.
  void call(size_t i) {
    Elem args = pop(i);
    Elem callable = pop(i);
    if (callable.global.empty()) fail(i, "calls something that is no global");
    std::optional<std::string> outside =
        check_rebuilt_tensor(i, callable.global, args);
    int args_op = tagged_call_args(callable.global);
    if (args_op != 0) {
      tag_python_tuple(i, callable, args, args_op);
    }
    Elem result = elem_at(callable.start);
    result.outside_storage = std::move(outside);
    result.object->depth = args.object->depth;
    stack_.push_back(result);
  }

  // _rebuild_tensor(_v2) and _rebuild_qtensor(storage, offset, size,
  // stride, ...): LibTorch's unpickler makes a negative stride positive
  // (other numbers than torch.load's) where torch.load refuses the tensor,
  // so such a tensor is refused here, by name of what is negative. Returns
  // how the tensor reaches past its storage, if it does (the loaded value's
  // checks refuse it by its place in the value; see check_quantizer_params).
  std::optional<std::string> check_rebuilt_tensor(size_t i,
                                                  const std::string& global,
                                                  const Elem& args) {
    if (global != "torch._utils _rebuild_tensor_v2" &&
        global != "torch._utils _rebuild_tensor" &&
        global != "torch._utils _rebuild_qtensor") {
      return std::nullopt;
    }
    if (!args.items || args.items->size() < 4) return std::nullopt;
    const std::vector<Elem>& a = *args.items;
    if (a[1].integer && *a[1].integer < 0) {
      fail(i, cat("a tensor with storage offset ", *a[1].integer,
                  " (torch.load refuses negative offsets)"));
    }
    const char* kWhat[] = {"size", "stride"};
    for (int k = 0; k < 2; ++k) {
      if (!a[2 + k].items) continue;
      for (const Elem& d : *a[2 + k].items) {
        if (d.integer && *d.integer < 0) {
          fail(i, cat("a tensor with ", kWhat[k], " ", *d.integer,
                      " (torch.load refuses negative ", kWhat[k], "s)"));
        }
      }
    }
    if (global == "torch._utils _rebuild_qtensor" && a.size() > 4) {
      check_quantizer_params(i, a[4]);
    }
    return outside_storage(a);
  }

  // How a tensor rebuilt from (storage, offset, size, stride) reaches past
  // its storage's record: "" when it does not, nullopt when that is not
  // known (LibTorch refuses what is not a storage and int tuples; the
  // loaded value's checks see the rest).
  static std::optional<std::string> outside_storage(
      const std::vector<Elem>& a) {
    if (!a[0].storage_elements || !a[1].integer || !a[2].items || !a[3].items ||
        a[2].items->size() != a[3].items->size()) {
      return std::nullopt;
    }
    const std::vector<Elem>& sizes = *a[2].items;
    const std::vector<Elem>& strides = *a[3].items;
    unsigned __int128 last = static_cast<uint64_t>(*a[1].integer);
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (!sizes[d].integer || !strides[d].integer) return std::nullopt;
      if (*sizes[d].integer == 0) return "";  // no element
      last += static_cast<unsigned __int128>(*sizes[d].integer - 1) *
              static_cast<uint64_t>(*strides[d].integer);
    }
    if (last < *a[0].storage_elements) return "";
    std::vector<int64_t> size, stride;
    for (size_t d = 0; d < sizes.size(); ++d) {
      size.push_back(*sizes[d].integer);
      stride.push_back(*strides[d].integer);
    }
    return cat("sizes [", join(size, ", "), "], strides [", join(stride, ", "),
               "] and storage offset ", *a[1].integer,
               " reach past its storage of ", *a[0].storage_elements,
               " elements");
  }

  // A per-channel quantizer's (qscheme, scales, zero_points, axis):
  // LibTorch's unpickler reads the scales and zero points while it rebuilds
  // the tensor, before the loaded value's checks could refuse them, so each
  // must be what torch.save writes there, a tensor rebuilt from a storage of
  // the file, and lie inside that storage (tests/fuzz crashes/torch_save
  // qtensor_scales_outside_storage: a null read). A raw storage, a tensor
  // rebuilt from another tensor or a storage of unknown size is refused.
  void check_quantizer_params(size_t i, const Elem& params) {
    if (!params.items || params.items->size() < 3) return;
    // A per-tensor quantizer's scale and zero point are numbers.
    if ((*params.items)[0].global == "torch per_tensor_affine") return;
    const char* kWhat[] = {"scales", "zero points"};
    for (int k = 0; k < 2; ++k) {
      const std::optional<std::string>& outside =
          (*params.items)[1 + k].outside_storage;
      if (!outside) {
        fail(i, cat("a per-channel quantized tensor's ", kWhat[k],
                    " are not a tensor rebuilt from a storage of the file "
                    "with a known size"));
      }
      if (!outside->empty()) {
        fail(i, cat("a per-channel quantized tensor's ", kWhat[k],
                    " (a tensor whose ", *outside, ")"));
      }
    }
  }

  // The elements of the storage a persistent id ('storage', torch.TStorage,
  // key, location, numel) names, as LibTorch's unpickler makes it: numel
  // elements on the record's bytes, and no bytes at all (a null data
  // pointer) when numel is 0, whatever the record holds; so the elements a
  // tensor may read are the fewer of numel and the record's bytes over the
  // type's size (tests/fuzz crashes/torch_save zero_numel_zero_points: a
  // null read). nullopt when not known (LibTorch then refuses the id or the
  // record). A negative numel is refused: LibTorch would size the storage
  // from it.
  //
  // The id must be what torch.save writes: LibTorch's unpickler takes its
  // second item as a dtype whatever it is (an int there indexed its dtype
  // table: crashes/torch_save/storage_type_int, a SIGSEGV), so anything else
  // is refused.
  std::optional<uint64_t> storage_elements(size_t i, const Elem& id) const {
    const size_t element = id.items && id.items->size() == 5
                               ? storage_element_size((*id.items)[1].global)
                               : 0;
    if (element == 0 || (*id.items)[0].text != "storage" ||
        (*id.items)[2].text.empty() || (*id.items)[3].text.empty() ||
        !(*id.items)[4].integer) {
      fail(i,
           "a persistent id other than torch.save's ('storage', "
           "torch.TypeStorage, key, location, numel)");
    }
    const std::vector<Elem>& parts = *id.items;
    const int64_t numel = *parts[4].integer;
    if (numel < 0) fail(i, cat("a storage of ", numel, " elements"));
    if (numel == 0) return 0;
    if (!record_bytes_) return std::nullopt;
    std::optional<uint64_t> bytes = record_bytes_(parts[2].text);
    if (!bytes) return std::nullopt;
    return std::min(*bytes / element, static_cast<uint64_t>(numel));
  }

  // torch.Size((d, ...)), torch.return_types.X(((v, ...), {})) and the
  // other tagged_call_args calls: the global becomes the string
  // kPythonTupleTag + its dotted name and the call a TUPLE2, so LibTorch's
  // unpickler builds (tag, args) for the reader to make the call on. `args`
  // must be the tuple Python writes.
  void tag_python_tuple(size_t i, const Elem& callable, const Elem& args,
                        int args_op) {
    if (args.built_by == SIZE_MAX || ops_[args.built_by].code != args_op) {
      fail(i, cat(callable.global,
                  " called with something other than the "
                  "arguments torch.save writes"));
    }
    const PickleOp& global = ops_[callable.start];
    if (global.code == 'c') {
      std::string name = callable.global;
      name[name.find(' ')] = '.';
      std::string tag = cat(kPythonTupleTag, name);
      std::string text = "X";
      for (int k = 0; k < 4; ++k) {
        text.push_back(static_cast<char>((tag.size() >> (8 * k)) & 0xff));
      }
      text_[callable.start] = text + tag;
    } else if (global.code != 'h' && global.code != 'j') {
      fail(i, cat(callable.global,
                  " named other than by GLOBAL is not supported"));
    }
    replaced_[i] = 0x86;
  }

  // The program with the marks added, the ops dropped and replaced.
  std::string program() const {
    std::string out;
    out.reserve(p_.size() + 16);
    for (size_t i = 0; i < ops_.size(); ++i) {
      out.append(static_cast<size_t>(marks_before_[i]), '(');
      if (!text_[i].empty()) {
        out.append(text_[i]);
      } else if (replaced_[i] >= 0) {
        out.push_back(static_cast<char>(replaced_[i]));
        out.append(p_, ops_[i].offset + 1, ops_[i].size - 1);
      } else {
        out.append(p_, ops_[i].offset, ops_[i].size);
      }
    }
    return out;
  }

  RecordBytes record_bytes_;
  const std::string& p_;
  std::vector<PickleOp> ops_;
  std::vector<Elem> stack_;
  std::vector<Elem> memo_;
  std::vector<int> marks_before_;
  std::vector<int> replaced_;
  std::vector<std::string> text_;  // op i written as this instead
};

}  // namespace

std::string rewrite_pickle_for_libtorch(const std::string& p,
                                        const RecordBytes& record_bytes) {
  return PickleRewriter(p, record_bytes).rewrite();
}

}  // namespace fx
