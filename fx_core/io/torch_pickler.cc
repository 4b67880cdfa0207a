#include "fx_core/io/torch_pickler.h"

#include <c10/core/ScalarType.h>
#include <caffe2/serialize/inline_container.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fx_core/io/python_tuples.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

// Deeper than any value a graph builds; what torch.save files may hold.
constexpr size_t kMaxDepth = 1000;

// Python's name for a storage of `type`'s elements (torch.FloatStorage).
const char* storage_type_name(c10::ScalarType type) {
  switch (type) {
    case c10::kFloat:
      return "FloatStorage";
    case c10::kDouble:
      return "DoubleStorage";
    case c10::kHalf:
      return "HalfStorage";
    case c10::kBFloat16:
      return "BFloat16Storage";
    case c10::kLong:
      return "LongStorage";
    case c10::kInt:
      return "IntStorage";
    case c10::kShort:
      return "ShortStorage";
    case c10::kChar:
      return "CharStorage";
    case c10::kByte:
      return "ByteStorage";
    case c10::kBool:
      return "BoolStorage";
    case c10::kComplexFloat:
      return "ComplexFloatStorage";
    case c10::kComplexDouble:
      return "ComplexDoubleStorage";
    case c10::kQInt8:
      return "QInt8Storage";
    case c10::kQUInt8:
      return "QUInt8Storage";
    case c10::kQInt32:
      return "QInt32Storage";
    default:
      return nullptr;
  }
}

// One storage written as record data/KEY.
struct StorageRecord {
  std::string key;
  c10::ScalarType type;
  at::Storage storage;
};

// Writes the pickle program of a value (Python's pickle opcodes, protocol
// 2) and collects the storages its tensors use.
class Pickler {
 public:
  std::string program(const c10::IValue& value) {
    out_.append("\x80\x02");
    push(value, "", 0);
    out_.push_back('.');  // STOP
    return std::move(out_);
  }
  const std::vector<StorageRecord>& storages() const { return storages_; }

 private:
  void push(const c10::IValue& v, const std::string& place, size_t depth) {
    if (depth > kMaxDepth) {
      // The place has a step per level: its start is enough to find it.
      constexpr size_t kShown = 60;
      fail(place.size() <= kShown
               ? place
               : cat(place.substr(0, kShown), "... (", depth, " levels)"),
           cat("nested deeper than ", kMaxDepth, " containers"));
    }
    if (v.isNone()) return op('N');
    if (v.isBool()) return op(v.toBool() ? '\x88' : '\x89');
    if (v.isInt()) return push_int(v.toInt());
    if (v.isDouble()) return push_double(v.toDouble());
    if (v.isString()) return push_string(v.toStringRef());
    if (v.isTensor()) return push_tensor(v.toTensor(), place);
    if (v.isDevice()) return push_call("torch", "device", {v.toDevice().str()});
    if (v.isTuple()) return push_tuple(v, place, depth);
    if (v.isList()) return push_list(v.toListRef(), place, depth);
    if (v.isGenericDict()) return push_dict(v.toGenericDict(), place, depth);
    fail(place, cat("cannot save a value of kind ", v.tagKind()));
  }

  void op(char code) { out_.push_back(code); }

  void push_int(int64_t x) {
    if (x >= 0 && x < 256) {
      op('K');
      out_.push_back(static_cast<char>(x));
    } else if (x >= 0 && x < 65536) {
      op('M');
      little_endian(static_cast<uint64_t>(x), 2);
    } else if (x >= INT32_MIN && x <= INT32_MAX) {
      op('J');
      little_endian(static_cast<uint64_t>(x), 4);
    } else {
      // LONG1: the fewest two's-complement bytes, little-endian.
      size_t n = 8;
      while (n > 1) {
        unsigned shift = 64 - 8 * static_cast<unsigned>(n - 1);
        int64_t shorter =
            static_cast<int64_t>(static_cast<uint64_t>(x) << shift) >> shift;
        if (shorter != x) break;
        --n;
      }
      op('\x8a');
      out_.push_back(static_cast<char>(n));
      little_endian(static_cast<uint64_t>(x), n);
    }
  }

  void push_double(double x) {
    uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    op('G');
    for (int i = 7; i >= 0; --i) {
      out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
    }
  }

  void push_string(const std::string& s) {
    op('X');
    little_endian(s.size(), 4);
    out_.append(s);
  }

  void push_global(const char* module, const char* name) {
    out_.append(cat("c", module, "\n", name, "\n"));
  }

  // module.name(*args) for string arguments.
  void push_call(const char* module, const char* name,
                 const std::vector<std::string>& args) {
    push_global(module, name);
    op('(');
    for (const std::string& a : args) push_string(a);
    op('t');
    op('R');
  }

  void little_endian(uint64_t x, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      out_.push_back(static_cast<char>((x >> (8 * i)) & 0xff));
    }
  }

  void push_items(const c10::ArrayRef<c10::IValue>& items,
                  const std::string& place, size_t depth) {
    for (size_t i = 0; i < items.size(); ++i) {
      push(items[i], cat(place, "[", i, "]"), depth + 1);
    }
  }

  void push_tuple_of(const c10::ArrayRef<c10::IValue>& items,
                     const std::string& place, size_t depth) {
    if (items.empty()) return op(')');
    if (items.size() > 3) op('(');
    push_items(items, place, depth);
    static const char kTupleN[] = {'t', '\x85', '\x86', '\x87'};
    op(items.size() > 3 ? 't' : kTupleN[items.size()]);
  }

  // torch.Size((d, ...)), torch.return_types.NAME(((v, ...), {})), (v, ...).
  void push_tuple(const c10::IValue& v, const std::string& place,
                  size_t depth) {
    c10::ArrayRef<c10::IValue> items = v.toTupleRef().elements();
    std::string name = python_tuple_name(v);
    if (name == kTorchSizeName) {
      push_global("torch", "Size");
      push_tuple_of(items, place, depth);
      op('\x85');
      op('R');
    } else if (name == kAsmOutputName) {
      push_global("torch.nn.modules.adaptive", "_ASMoutput");
      push_tuple_of(items, place, depth);
      op('\x81');  // NEWOBJ, as Python pickles a namedtuple
    } else if (name.rfind(kReturnTypesPrefix, 0) == 0) {
      std::string short_name = name.substr(sizeof(kReturnTypesPrefix) - 1);
      push_global("torch.return_types", short_name.c_str());
      push_tuple_of(items, place, depth);
      op('}');
      op('\x86');
      op('R');
    } else {
      push_tuple_of(items, place, depth);
    }
  }

  void push_list(const c10::ArrayRef<c10::IValue>& items,
                 const std::string& place, size_t depth) {
    op(']');
    if (items.empty()) return;
    op('(');
    push_items(items, place, depth);
    op('e');
  }

  void push_dict(const c10::Dict<c10::IValue, c10::IValue>& dict,
                 const std::string& place, size_t depth) {
    op('}');
    if (dict.empty()) return;
    op('(');
    for (const auto& entry : dict) {
      const c10::IValue& k = entry.key();
      std::string step = k.isString() ? cat("['", k.toStringRef(), "']")
                                      : cat("[<", k.tagKind(), ">]");
      push(k, cat(place, step, " (key)"), depth + 1);
      push(entry.value(), cat(place, step), depth + 1);
    }
    op('u');
  }

  // torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
  //                                 requires_grad, OrderedDict())
  void push_tensor(const at::Tensor& given, const std::string& place) {
    if (!given.defined()) fail(place, "cannot save an undefined tensor");
    if (given.layout() == at::kSparse) return push_sparse_coo(given, place);
    if (given.layout() == at::kSparseCsr) return push_sparse_csr(given, place);
    if (given.layout() != at::kStrided) {
      fail(place,
           cat("cannot save a tensor of layout ", c10::str(given.layout())));
    }
    if (!given.device().is_cpu()) fail(place, "cannot save a non-CPU tensor");
    if (given.is_quantized()) return push_qtensor(given, place);
    at::Tensor t = given.resolve_conj().resolve_neg();
    push_global("torch._utils", "_rebuild_tensor_v2");
    op('(');
    push_storage_view(t, place);
    push_rebuild_end(t);
  }

  // The last arguments of _rebuild_tensor_v2 and _rebuild_qtensor,
  // requires_grad and the backward hooks (an empty OrderedDict), then the
  // call.
  void push_rebuild_end(const at::Tensor& t) {
    op(t.requires_grad() ? '\x88' : '\x89');
    push_global("collections", "OrderedDict");
    op(')');
    op('R');
    op('t');
    op('R');
  }

  // The storage's persistent id, then offset, size and stride: the first
  // four arguments of _rebuild_tensor_v2 and _rebuild_qtensor.
  void push_storage_view(const at::Tensor& t, const std::string& place) {
    const char* storage_name = storage_type_name(t.scalar_type());
    if (storage_name == nullptr) {
      fail(place, cat("cannot save a tensor of dtype ",
                      c10::toString(t.scalar_type())));
    }
    const StorageRecord& record = storage_of(t, place);
    op('(');  // the persistent id
    push_string("storage");
    push_global("torch", storage_name);
    push_string(record.key);
    push_string("cpu");
    push_int(static_cast<int64_t>(t.storage().nbytes() / t.element_size()));
    op('t');
    op('Q');  // BINPERSID
    push_int(t.storage_offset());
    push_ints(t.sizes());
    push_ints(t.strides());
  }

  // torch._utils._rebuild_qtensor(storage, offset, size, stride,
  //     quantizer_params, requires_grad, OrderedDict()), quantizer_params
  // as torch 1.13's Tensor.__reduce_ex__ writes them: (torch.per_tensor_
  // affine, scale, zero_point) or (torch.per_channel_affine, scales,
  // zero_points, axis), the float-qparams scheme under the latter's name.
  void push_qtensor(const at::Tensor& t, const std::string& place) {
    const at::QScheme scheme = t.qscheme();
    const bool per_tensor = scheme == at::kPerTensorAffine;
    if (!per_tensor && scheme != at::kPerChannelAffine &&
        scheme != at::kPerChannelAffineFloatQParams) {
      fail(place, cat("cannot save a quantized tensor of scheme ",
                      c10::toString(scheme)));
    }
    push_global("torch._utils", "_rebuild_qtensor");
    op('(');
    push_storage_view(t, place);
    op('(');
    if (per_tensor) {
      push_global("torch", "per_tensor_affine");
      push_double(t.q_scale());
      push_int(t.q_zero_point());
    } else {
      push_global("torch", "per_channel_affine");
      push_tensor(t.q_per_channel_scales(), place + " (scales)");
      push_tensor(t.q_per_channel_zero_points(), place + " (zero points)");
      push_int(t.q_per_channel_axis());
    }
    op('t');
    push_rebuild_end(t);
  }

  // torch._utils._rebuild_sparse_tensor(
  //     torch.serialization._get_layout("torch.sparse_coo"),
  //     (indices, values, torch.Size(size)))
  void push_sparse_coo(const at::Tensor& t, const std::string& place) {
    push_global("torch._utils", "_rebuild_sparse_tensor");
    push_call("torch.serialization", "_get_layout", {"torch.sparse_coo"});
    push_tensor(t._indices(), place + " (indices)");
    push_tensor(t._values(), place + " (values)");
    push(make_torch_size(t.sizes()), place + " (size)", 0);
    op('\x87');
    op('\x86');
    op('R');
  }

  // torch._utils._rebuild_sparse_csr_tensor(layout,
  //     (crow_indices, col_indices, values, torch.Size(size)))
  void push_sparse_csr(const at::Tensor& t, const std::string& place) {
    push_global("torch._utils", "_rebuild_sparse_csr_tensor");
    push_call("torch.serialization", "_get_layout", {"torch.sparse_csr"});
    op('(');
    push_tensor(t.crow_indices(), place + " (crow_indices)");
    push_tensor(t.col_indices(), place + " (col_indices)");
    push_tensor(t.values(), place + " (values)");
    push(make_torch_size(t.sizes()), place + " (size)", 0);
    op('t');
    op('\x86');
    op('R');
  }

  void push_ints(c10::IntArrayRef xs) {
    if (xs.empty()) return op(')');
    op('(');
    for (int64_t x : xs) push_int(x);
    op('t');
  }

  const StorageRecord& storage_of(const at::Tensor& t,
                                  const std::string& place) {
    const void* impl = t.storage().unsafeGetStorageImpl();
    auto it = index_.find(impl);
    if (it == index_.end()) {
      it = index_.emplace(impl, storages_.size()).first;
      storages_.push_back(StorageRecord{std::to_string(storages_.size()),
                                        t.scalar_type(), t.storage()});
    }
    const StorageRecord& record = storages_[it->second];
    if (record.type != t.scalar_type()) {
      fail(place,
           cat("its storage is also viewed as ", c10::toString(record.type),
               "; a torch.save file holds one dtype per storage"));
    }
    return record;
  }

  [[noreturn]] void fail(const std::string& place, const std::string& what) {
    throw FxError(cat(place.empty() ? "the value" : place, ": ", what));
  }

  std::string out_;
  std::vector<StorageRecord> storages_;
  absl::flat_hash_map<const void*, size_t> index_;
};

}  // namespace

std::string torch_save_bytes(const c10::IValue& value) {
  Pickler pickler;
  std::string program = pickler.program(value);
  std::string bytes;
  caffe2::serialize::PyTorchStreamWriter writer(
      [&bytes](const void* data, size_t n) {
        bytes.append(static_cast<const char*>(data), n);
        return n;
      });
  writer.writeRecord("data.pkl", program.data(), program.size());
  for (const StorageRecord& s : pickler.storages()) {
    writer.writeRecord(cat("data/", s.key), s.storage.data(),
                       s.storage.nbytes());
  }
  writer.writeEndOfFile();
  return bytes;
}

}  // namespace fx
