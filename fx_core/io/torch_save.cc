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
    switch (code) {
      case 0x80:
      case 'K':
      case 'q':
      case 'h':  // 1-byte argument
        need(1);
        pos += 1;
        break;
      case 'M':
        need(2);
        pos += 2;
        break;
      case 'J':
      case 'r':
      case 'j':
        need(4);
        pos += 4;
        break;
      case 'G':
      case 0x95:
        need(8);
        pos += 8;
        break;
      case 0x8a:
      case 0x8c:
      case 'U':
      case 'C': {  // 1-byte length
        need(1);
        size_t n = static_cast<uint8_t>(p[pos]);
        need(1 + n);
        pos += 1 + n;
        break;
      }
      case 0x8b:
      case 'X':
      case 'T':
      case 'B': {  // 4-byte length
        need(4);
        size_t n = little_endian(p, pos, 4);
        need(4 + n);
        pos += 4 + n;
        break;
      }
      case 0x8d:
      case 0x8e: {  // 8-byte length
        need(8);
        size_t n = little_endian(p, pos, 8);
        need(8 + n);
        pos += 8 + n;
        break;
      }
      case 'c':
        line();
        line();
        break;
      case 'I':
      case 'L':
      case 'F':
      case 'S':
      case 'V':
      case 'P':
      case 'p':
      case 'g':
        line();
        break;
      default:
        break;  // no argument
    }
    ops.push_back({start, pos - start, code});
    if (code == '.') break;
  }
  return ops;
}

}  // namespace

std::string rewrite_pickle_for_libtorch(const std::string& p) {
  std::vector<PickleOp> ops = parse_ops(p);
  // A stack model: for each element, the op where its value starts, the
  // GLOBAL it is (if any) and the op that built it.
  struct Elem {
    size_t start = 0;
    bool mark = false;
    std::string global;
    size_t built_by = SIZE_MAX;
    size_t last_item = SIZE_MAX;  // TUPLE2: where its second item starts
  };
  auto elem_at = [](size_t start) {
    Elem e;
    e.start = start;
    return e;
  };
  std::vector<Elem> stack;
  absl::flat_hash_map<uint64_t, std::string> memo_globals;
  std::vector<int> marks_before(ops.size() + 1, 0);
  std::vector<bool> dropped(ops.size(), false);
  std::vector<int> replaced(ops.size(), -1);

  auto pop = [&](size_t i) {
    if (stack.empty())
      throw FxError(cat("bad pickle: stack underflow at op ", i));
    Elem e = stack.back();
    stack.pop_back();
    return e;
  };
  auto pop_to_mark = [&](size_t i) {
    while (!stack.empty() && !stack.back().mark) stack.pop_back();
    if (stack.empty()) throw FxError(cat("bad pickle: no mark at op ", i));
    Elem m = stack.back();
    stack.pop_back();
    return m;
  };
  auto memo_index = [&](const PickleOp& op) -> uint64_t {
    return little_endian(p, op.offset + 1,
                         op.code == 'q' || op.code == 'h' ? 1 : 4);
  };

  for (size_t i = 0; i < ops.size(); ++i) {
    const PickleOp& op = ops[i];
    switch (op.code) {
      case 0x80:
      case 0x95:
      case '.':
      case 'p':
        break;
      case 'q':
      case 'r':  // BINPUT, LONG_BINPUT
        if (!stack.empty() && !stack.back().global.empty()) {
          memo_globals[memo_index(op)] = stack.back().global;
        }
        break;
      case 0x94:  // MEMOIZE
        break;
      case 'h':
      case 'j': {  // BINGET, LONG_BINGET
        Elem e = elem_at(i);
        auto it = memo_globals.find(memo_index(op));
        if (it != memo_globals.end()) e.global = it->second;
        stack.push_back(e);
        break;
      }
      case 'c': {
        Elem e = elem_at(i);
        std::string text = p.substr(op.offset + 1, op.size - 2);
        std::replace(text.begin(), text.end(), '\n', ' ');
        e.global = text;
        stack.push_back(e);
        break;
      }
      case '(': {
        Elem e = elem_at(i);
        e.mark = true;
        stack.push_back(e);
        break;
      }
      case 't':
      case 'l':
      case 'd':
      case 0x91: {
        Elem m = pop_to_mark(i);
        Elem e = elem_at(m.start);
        e.built_by = i;
        stack.push_back(e);
        break;
      }
      case 'e':
      case 'u':
      case 0x90 /* ADDITEMS */:
      case '1':
        pop_to_mark(i);
        break;
      case 0x85:
      case 0x86:
      case 0x87: {
        size_t n = op.code - 0x84;
        size_t start = i, last = SIZE_MAX;
        for (size_t k = 0; k < n; ++k) {
          start = pop(i).start;
          if (k == 0) last = start;
        }
        Elem e = elem_at(start);
        e.built_by = i;
        e.last_item = last;
        stack.push_back(e);
        break;
      }
      case 'R': {
        Elem args = pop(i);
        Elem callable = pop(i);
        if (callable.global.rfind("torch.return_types ", 0) == 0 &&
            args.built_by != SIZE_MAX && ops[args.built_by].code == 0x86) {
          // return_types.X((values, indices), {}) -> (values, indices):
          // drop the callable (and its memo), the dict, the args tuple and
          // the call. (LibTorch's unpickler has no POP either.)
          dropped[callable.start] = true;
          size_t next = callable.start + 1;
          if (next < ops.size() &&
              (ops[next].code == 'q' || ops[next].code == 'r')) {
            dropped[next] = true;
          } else if (next < ops.size() && ops[next].code == 0x94) {
            throw FxError("unsupported pickle: MEMOIZE after return_types");
          }
          for (size_t k = args.last_item; k <= args.built_by; ++k) {
            dropped[k] = true;
          }
          dropped[i] = true;
        }
        stack.push_back(elem_at(callable.start));
        break;
      }
      case 0x81:
      case 0x93: {  // NEWOBJ, STACK_GLOBAL
        pop(i);
        Elem a = pop(i);
        stack.push_back(elem_at(a.start));
        break;
      }
      case 'b':
      case 'a':
      case '0':
        if (op.code == 'a') {
          marks_before[stack.back().start] += 1;
          replaced[i] = 'e';
        }
        pop(i);
        break;
      case 's': {  // SETITEM -> MARK key value SETITEMS
        pop(i);
        Elem key = pop(i);
        marks_before[key.start] += 1;
        replaced[i] = 'u';
        break;
      }
      case 'Q':
        stack.push_back(elem_at(pop(i).start));
        break;
      case '2':
        stack.push_back(stack.back());
        break;
      default:  // every other opcode pushes one value
        stack.push_back(elem_at(i));
        break;
    }
  }

  std::string out;
  out.reserve(p.size() + 16);
  for (size_t i = 0; i < ops.size(); ++i) {
    out.append(static_cast<size_t>(marks_before[i]), '(');
    if (dropped[i]) continue;
    if (replaced[i] >= 0) {
      out.push_back(static_cast<char>(replaced[i]));
      out.append(p, ops[i].offset + 1, ops[i].size - 1);
    } else {
      out.append(p, ops[i].offset, ops[i].size);
    }
  }
  return out;
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
