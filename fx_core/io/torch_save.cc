#include "fx_core/io/torch_save.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/serialize.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "fx_core/io/atomic_file.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

std::string message_of(const std::exception& e) {
  if (auto* c10_error = dynamic_cast<const c10::Error*>(&e)) {
    return c10_error->what_without_backtrace();
  }
  return e.what();
}

// One instruction of a pickle program: its opcode and argument bytes.
struct PickleOp {
  size_t offset;
  size_t size;  // opcode included
  uint8_t code;
};

uint64_t little_endian(const std::string& p, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    v |= static_cast<uint64_t>(static_cast<uint8_t>(p[at + i])) << (8 * i);
  }
  return v;
}

// The size of `code`'s fixed-size argument, or 0 (none, or not fixed).
size_t fixed_argument_size(uint8_t code) {
  switch (code) {
    case 0x80:
    case 'K':
    case 'q':
    case 'h':  // 1-byte argument
      return 1;
    case 'M':
      return 2;
    case 'J':
    case 'r':
    case 'j':
      return 4;
    case 'G':
    case 0x95:
      return 8;
    default:
      return 0;
  }
}

// The size of the length before `code`'s counted argument, or 0.
size_t length_prefix_size(uint8_t code) {
  switch (code) {
    case 0x8a:
    case 0x8c:
    case 'U':
    case 'C':  // 1-byte length
      return 1;
    case 0x8b:
    case 'X':
    case 'T':
    case 'B':  // 4-byte length
      return 4;
    case 0x8d:
    case 0x8e:  // 8-byte length
      return 8;
    default:
      return 0;
  }
}

// The number of newline-terminated lines `code`'s argument has.
int argument_lines(uint8_t code) {
  switch (code) {
    case 'c':
      return 2;
    case 'I':
    case 'L':
    case 'F':
    case 'S':
    case 'V':
    case 'P':
    case 'p':
    case 'g':
      return 1;
    default:
      return 0;  // no argument, or a sized one
  }
}

std::vector<PickleOp> parse_ops(const std::string& p) {
  std::vector<PickleOp> ops;
  size_t pos = 0;
  auto need = [&](size_t n) {
    if (pos + n > p.size()) {
      throw FxError(cat("truncated pickle at byte ", pos));
    }
  };
  auto line = [&]() {
    size_t nl = p.find('\n', pos);
    if (nl == std::string::npos) throw FxError("truncated pickle line");
    pos = nl + 1;
  };
  while (pos < p.size()) {
    size_t start = pos;
    uint8_t code = static_cast<uint8_t>(p[pos++]);
    if (size_t n = fixed_argument_size(code)) {
      need(n);
      pos += n;
    } else if (size_t width = length_prefix_size(code)) {
      need(width);
      size_t n = little_endian(p, pos, width);
      need(width + n);
      pos += width + n;
    } else {
      for (int k = argument_lines(code); k > 0; --k) line();
    }
    ops.push_back({start, pos - start, code});
    if (code == '.') break;
  }
  return ops;
}

// Rewrites a pickle program for LibTorch's unpickler: a model of the
// unpickler's stack finds the ops to drop (torch.return_types calls), the
// ops to replace (APPEND, SETITEM) and where marks go; then the program is
// written again with those changes.
class PickleRewriter {
 public:
  explicit PickleRewriter(const std::string& p)
      : p_(p),
        ops_(parse_ops(p)),
        marks_before_(ops_.size() + 1, 0),
        dropped_(ops_.size(), false),
        replaced_(ops_.size(), -1) {}

  std::string rewrite() {
    for (size_t i = 0; i < ops_.size(); ++i) step(i);
    return program();
  }

 private:
  // A stack model: for each element, the op where its value starts, the
  // GLOBAL it is (if any) and the op that built it.
  struct Elem {
    size_t start = 0;
    bool mark = false;
    std::string global;
    size_t built_by = SIZE_MAX;
    size_t last_item = SIZE_MAX;  // TUPLE2: where its second item starts
  };
  static Elem elem_at(size_t start) {
    Elem e;
    e.start = start;
    return e;
  }
  Elem pop(size_t i) {
    if (stack_.empty())
      throw FxError(cat("bad pickle: stack underflow at op ", i));
    Elem e = stack_.back();
    stack_.pop_back();
    return e;
  }
  Elem pop_to_mark(size_t i) {
    while (!stack_.empty() && !stack_.back().mark) stack_.pop_back();
    if (stack_.empty()) throw FxError(cat("bad pickle: no mark at op ", i));
    Elem m = stack_.back();
    stack_.pop_back();
    return m;
  }
  uint64_t memo_index(const PickleOp& op) const {
    return little_endian(p_, op.offset + 1,
                         op.code == 'q' || op.code == 'h' ? 1 : 4);
  }

  // Op i's effect on the stack model.
  void step(size_t i) {
    const PickleOp& op = ops_[i];
    switch (op.code) {
      case 0x80:
      case 0x95:
      case '.':
      case 'p':
      case 0x94:  // MEMOIZE
        break;
      case 'q':
      case 'r':  // BINPUT, LONG_BINPUT
        if (!stack_.empty() && !stack_.back().global.empty()) {
          memo_globals_[memo_index(op)] = stack_.back().global;
        }
        break;
      case 'h':
      case 'j':  // BINGET, LONG_BINGET
        push_memo_get(i);
        break;
      case 'c':
        push_global(i);
        break;
      case '(': {
        Elem e = elem_at(i);
        e.mark = true;
        stack_.push_back(e);
        break;
      }
      case 't':
      case 'l':
      case 'd':
      case 0x91:
        push_built(i, pop_to_mark(i).start);
        break;
      case 'e':
      case 'u':
      case 0x90 /* ADDITEMS */:
      case '1':
        pop_to_mark(i);
        break;
      case 0x85:
      case 0x86:
      case 0x87:
        push_tuple(i, op.code - 0x84);
        break;
      case 'R':
        reduce(i);
        break;
      default:
        step_other(i);
        break;
    }
  }

  // The ops step() leaves: NEWOBJ, STACK_GLOBAL, the pops, SETITEM,
  // BINPERSID, DUP, and every other opcode (which pushes one value).
  void step_other(size_t i) {
    const PickleOp& op = ops_[i];
    switch (op.code) {
      case 0x81:
      case 0x93: {  // NEWOBJ, STACK_GLOBAL
        pop(i);
        Elem a = pop(i);
        stack_.push_back(elem_at(a.start));
        break;
      }
      case 'b':
      case 'a':
      case '0':
        if (op.code == 'a') {
          marks_before_[stack_.back().start] += 1;
          replaced_[i] = 'e';
        }
        pop(i);
        break;
      case 's': {  // SETITEM -> MARK key value SETITEMS
        pop(i);
        Elem key = pop(i);
        marks_before_[key.start] += 1;
        replaced_[i] = 'u';
        break;
      }
      case 'Q':
        stack_.push_back(elem_at(pop(i).start));
        break;
      case '2':
        stack_.push_back(stack_.back());
        break;
      default:  // every other opcode pushes one value
        stack_.push_back(elem_at(i));
        break;
    }
  }

  void push_memo_get(size_t i) {
    Elem e = elem_at(i);
    auto it = memo_globals_.find(memo_index(ops_[i]));
    if (it != memo_globals_.end()) e.global = it->second;
    stack_.push_back(e);
  }

  void push_global(size_t i) {
    const PickleOp& op = ops_[i];
    Elem e = elem_at(i);
    std::string text = p_.substr(op.offset + 1, op.size - 2);
    std::replace(text.begin(), text.end(), '\n', ' ');
    e.global = text;
    stack_.push_back(e);
  }

  // A value starting at op `start`, built by op i.
  void push_built(size_t i, size_t start) {
    Elem e = elem_at(start);
    e.built_by = i;
    stack_.push_back(e);
  }

  // TUPLE1..3 (n items).
  void push_tuple(size_t i, size_t n) {
    size_t start = i, last = SIZE_MAX;
    for (size_t k = 0; k < n; ++k) {
      start = pop(i).start;
      if (k == 0) last = start;
    }
    Elem e = elem_at(start);
    e.built_by = i;
    e.last_item = last;
    stack_.push_back(e);
  }

  // REDUCE.
  void reduce(size_t i) {
    Elem args = pop(i);
    Elem callable = pop(i);
    if (callable.global.rfind("torch.return_types ", 0) == 0 &&
        args.built_by != SIZE_MAX && ops_[args.built_by].code == 0x86) {
      drop_return_types(i, callable, args);
    }
    stack_.push_back(elem_at(callable.start));
  }

  // return_types.X((values, indices), {}) -> (values, indices): drop the
  // callable (and its memo), the dict, the args tuple and the call.
  // (LibTorch's unpickler has no POP either.)
  void drop_return_types(size_t i, const Elem& callable, const Elem& args) {
    dropped_[callable.start] = true;
    size_t next = callable.start + 1;
    if (next < ops_.size() &&
        (ops_[next].code == 'q' || ops_[next].code == 'r')) {
      dropped_[next] = true;
    } else if (next < ops_.size() && ops_[next].code == 0x94) {
      throw FxError("unsupported pickle: MEMOIZE after return_types");
    }
    for (size_t k = args.last_item; k <= args.built_by; ++k) {
      dropped_[k] = true;
    }
    dropped_[i] = true;
  }

  // The program with the marks added, the ops dropped and replaced.
  std::string program() const {
    std::string out;
    out.reserve(p_.size() + 16);
    for (size_t i = 0; i < ops_.size(); ++i) {
      out.append(static_cast<size_t>(marks_before_[i]), '(');
      if (dropped_[i]) continue;
      if (replaced_[i] >= 0) {
        out.push_back(static_cast<char>(replaced_[i]));
        out.append(p_, ops_[i].offset + 1, ops_[i].size - 1);
      } else {
        out.append(p_, ops_[i].offset, ops_[i].size);
      }
    }
    return out;
  }

  const std::string& p_;
  std::vector<PickleOp> ops_;
  std::vector<Elem> stack_;
  absl::flat_hash_map<uint64_t, std::string> memo_globals_;
  std::vector<int> marks_before_;
  std::vector<bool> dropped_;
  std::vector<int> replaced_;
};

}  // namespace

std::string rewrite_pickle_for_libtorch(const std::string& p) {
  return PickleRewriter(p).rewrite();
}

absl::StatusOr<c10::IValue> read_value_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(cat(path, ": cannot open"));
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  try {
    // Copy the zip archive, rewriting its pickle program.
    std::istringstream stream(bytes);
    caffe2::serialize::PyTorchStreamReader reader(&stream);
    std::vector<char> rewritten;
    {
      caffe2::serialize::PyTorchStreamWriter writer(
          [&](const void* data, size_t n) {
            const char* c = static_cast<const char*>(data);
            rewritten.insert(rewritten.end(), c, c + n);
            return n;
          });
      for (const std::string& name : reader.getAllRecords()) {
        if (name == "version" || name == ".data/version") continue;
        auto [data, size] = reader.getRecord(name);
        const char* begin = static_cast<const char*>(data.get());
        if (name == "data.pkl") {
          std::string program =
              rewrite_pickle_for_libtorch(std::string(begin, size));
          writer.writeRecord(name, program.data(), program.size());
        } else {
          writer.writeRecord(name, begin, size);
        }
      }
      writer.writeEndOfFile();
    }
    return torch::pickle_load(rewritten);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        cat(path, ": not a readable torch.save file: ", message_of(e)));
  }
}

absl::Status write_value_file(const std::string& path,
                              const c10::IValue& value) {
  std::vector<char> bytes;
  try {
    bytes = torch::pickle_save(value);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        cat(path, ": cannot serialise: ", message_of(e)));
  }
  return write_file_atomically(path,
                               std::string_view(bytes.data(), bytes.size()));
}

absl::StatusOr<std::vector<std::pair<std::string, at::Tensor>>>
read_tensor_dict(const std::string& path) {
  absl::StatusOr<c10::IValue> value = read_value_file(path);
  if (!value.ok()) return value.status();
  if (!value->isGenericDict()) {
    return absl::InvalidArgumentError(cat(
        path, ": expected a dict of str -> Tensor, got ", value->tagKind()));
  }
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& item : value->toGenericDict()) {
    if (!item.key().isString() || !item.value().isTensor()) {
      return absl::InvalidArgumentError(
          cat(path, ": expected a dict of str -> Tensor; entry '",
              item.key().isString() ? item.key().toStringRef() : "?", "' is a ",
              item.value().tagKind()));
    }
    out.emplace_back(item.key().toStringRef(), item.value().toTensor());
  }
  return out;
}

absl::Status write_tensor_dict(
    const std::string& path,
    const std::vector<std::pair<std::string, at::Tensor>>& tensors) {
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [key, tensor] : tensors) dict.insert(key, tensor.detach());
  return write_value_file(path, dict);
}

}  // namespace fx
