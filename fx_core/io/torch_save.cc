#include "fx_core/io/torch_save.h"

#include <ATen/ATen.h>
#include <ATen/quantized/QTensorImpl.h>
#include <ATen/quantized/Quantizer.h>
#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/read_adapter_interface.h>
#include <torch/csrc/jit/serialization/unpickler.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "fx_core/io/atomic_file.h"
#include "fx_core/io/pickle_rewriter.h"
#include "fx_core/io/python_tuples.h"
#include "fx_core/io/regular_file.h"
#include "fx_core/io/tensor_bounds.h"
#include "fx_core/io/torch_pickler.h"
#include "fx_core/io/zip_directory.h"
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

// The archive's bytes, read in place (PyTorchStreamReader's source).
class BytesAdapter : public caffe2::serialize::ReadAdapterInterface {
 public:
  explicit BytesAdapter(std::string_view bytes) : bytes_(bytes) {}
  size_t size() const override { return bytes_.size(); }
  size_t read(uint64_t pos, void* buf, size_t n,
              const char* /*what*/) const override {
    if (pos >= bytes_.size()) return 0;
    n = std::min<uint64_t>(n, bytes_.size() - pos);
    // miniz reads an empty record (stored, declared size 0) into a null
    // buffer; memcpy must not see a null pointer even for 0 bytes.
    if (n == 0) return 0;
    std::memcpy(buf, bytes_.data() + pos, n);
    return n;
  }

 private:
  std::string_view bytes_;
};

// A regular file's bytes, read where the archive's reader asks, so that
// only its records (not the whole file as well) are held in memory.
class FileAdapter : public caffe2::serialize::ReadAdapterInterface {
 public:
  explicit FileAdapter(std::unique_ptr<RegularFileReader> file)
      : file_(std::move(file)) {}
  size_t size() const override { return file_->size(); }
  size_t read(uint64_t pos, void* buf, size_t n,
              const char* /*what*/) const override {
    return n == 0 ? 0 : file_->read(pos, buf, n);
  }

 private:
  std::unique_ptr<RegularFileReader> file_;
};

// Where storages' bytes came from: a data pointer's zip record and size.
struct Record {
  std::string name;
  size_t size;
};
using Records = absl::flat_hash_map<const void*, Record>;

// Walks a loaded value without recursion: every tensor inside its record's
// bytes, no container inside itself, nesting within kMaxPickleDepth. Errors
// name the place (`['linear.weight']`, `[0][1]`).
class LoadedValueCheck {
 public:
  explicit LoadedValueCheck(const Records& records) : records_(records) {}

  void run(const c10::IValue& root) {
    todo_.push_back({&root, "", 0, false});
    while (!todo_.empty()) {
      Pending p = todo_.back();
      todo_.pop_back();
      if (p.leaving) {
        on_path_.erase(p.value->internalToPointer());
        done_.insert(p.value->internalToPointer());
      } else {
        visit(p);
      }
    }
  }

 private:
  struct Pending {
    const c10::IValue* value;
    std::string place;
    size_t depth;
    bool leaving;
  };

  static std::string shown(const std::string& place) {
    return place.empty() ? "the top-level value" : cat("the value ", place);
  }

  void visit(const Pending& p) {
    const c10::IValue& v = *p.value;
    if (v.isTensor()) return check_tensor(v.toTensor(), p.place);
    if (!v.isList() && !v.isTuple() && !v.isGenericDict()) return;
    const void* key = v.internalToPointer();
    if (on_path_.contains(key)) {
      throw FxError(cat(shown(p.place), " contains itself"));
    }
    if (done_.contains(key)) return;
    if (p.depth >= kMaxPickleDepth) {
      throw FxError(cat(shown(p.place), " nests deeper than ", kMaxPickleDepth,
                        " levels"));
    }
    on_path_.insert(key);
    todo_.push_back({p.value, p.place, p.depth, true});
    push_children(p);
  }

  void push_children(const Pending& p) {
    const c10::IValue& v = *p.value;
    auto push = [&](const c10::IValue& child, std::string step) {
      todo_.push_back({&child, p.place + step, p.depth + 1, false});
    };
    if (v.isList()) {
      c10::ArrayRef<c10::IValue> items = v.toListRef();
      for (size_t i = 0; i < items.size(); ++i)
        push(items[i], cat("[", i, "]"));
    } else if (v.isTuple()) {
      const auto& items = v.toTupleRef().elements();
      for (size_t i = 0; i < items.size(); ++i)
        push(items[i], cat("[", i, "]"));
    } else {
      for (const auto& item : v.toGenericDict()) {
        const c10::IValue& k = item.key();
        std::string step = k.isString() ? cat("['", k.toStringRef(), "']")
                                        : cat("[<", k.tagKind(), ">]");
        push(k, step + " (key)");
        push(item.value(), step);
      }
    }
  }

  void check_tensor(const at::Tensor& t, const std::string& place) {
    std::string where = cat("tensor ", place.empty() ? "at the top" : place);
    if (!t.defined() || !t.has_storage()) return;
    size_t claimed = t.storage().nbytes();
    if (claimed > 0) {
      auto it = records_.find(t.storage().data());
      if (it == records_.end()) {
        throw FxError(cat(where, ": its storage is not a record of the file"));
      }
      if (claimed > it->second.size) {
        throw FxError(cat(where, ": its storage claims ", claimed,
                          " bytes; record '", it->second.name, "' holds ",
                          it->second.size));
      }
    }
    // A quantized storage rebuilt as a plain tensor (_rebuild_tensor_v2, not
    // _rebuild_qtensor) has no quantizer: every use of it throws.
    if (t.is_quantized() &&
        dynamic_cast<const at::UnknownQuantizer*>(
            at::get_qtensorimpl(t)->quantizer().get()) != nullptr) {
      throw FxError(cat(where, ": a ", c10::toString(t.scalar_type()),
                        " tensor without quantization parameters"));
    }
    std::string outside = tensor_outside_storage(t);
    if (!outside.empty()) throw FxError(cat(where, ": ", outside));
    check_quantizer(t, place);
  }

  // A quantized tensor's quantization: scales positive and finite, zero
  // points inside the range of its integer type (torch.load accepts any
  // number, and a zero or NaN scale divides by zero in every kernel); a
  // per-channel tensor's scales and zero points (tensors of the file the
  // quantizer holds, out of the value's tree) each inside its record, one
  // number per channel of the axis.
  void check_quantizer(const at::Tensor& t, const std::string& place) {
    if (!t.is_quantized()) return;
    const at::QScheme scheme = t.qscheme();
    if (scheme == at::kPerTensorAffine) {
      check_qparams(t, place, at::scalar_tensor(t.q_scale(), at::kDouble),
                    at::scalar_tensor(t.q_zero_point(), at::kLong));
      return;
    }
    if (scheme != at::kPerChannelAffine &&
        scheme != at::kPerChannelAffineFloatQParams) {
      return;
    }
    const int64_t axis = t.q_per_channel_axis();
    const at::Tensor scales = t.q_per_channel_scales();
    const at::Tensor zero_points = t.q_per_channel_zero_points();
    check_tensor(scales, cat(place, " (scales)"));
    check_tensor(zero_points, cat(place, " (zero points)"));
    if (axis < 0 || axis >= t.dim() || scales.numel() != t.size(axis) ||
        zero_points.numel() != t.size(axis)) {
      throw FxError(cat("tensor ", place.empty() ? "at the top" : place,
                        ": a per-channel quantized tensor whose axis ", axis,
                        " or number of scales and zero points does not fit "
                        "its sizes ",
                        c10::str(t.sizes())));
    }
    check_qparams(t, place, scales, zero_points);
  }

  // The first scale that is not positive and finite, or zero point outside
  // the integer type's range (float zero points: finite), refused naming it.
  static void check_qparams(const at::Tensor& t, const std::string& place,
                            const at::Tensor& scales,
                            const at::Tensor& zero_points) {
    const auto [low, high] = quantized_range(t.scalar_type());
    const at::Tensor s = scales.to(at::kDouble).contiguous();
    const at::Tensor z = zero_points.to(at::kDouble).contiguous();
    const bool integral = !at::isFloatingType(zero_points.scalar_type());
    for (int64_t i = 0; i < s.numel(); ++i) {
      const double scale = s.data_ptr<double>()[i];
      const double zero = z.data_ptr<double>()[i];
      const std::string which = s.dim() == 0 ? "" : cat(" ", i);
      if (!(scale > 0) || !std::isfinite(scale)) {
        throw FxError(cat("tensor ", place.empty() ? "at the top" : place,
                          ": a ", c10::toString(t.scalar_type()),
                          " tensor whose scale", which, " is ", c10::str(scale),
                          " (a quantization scale is positive and finite)"));
      }
      if (!std::isfinite(zero) || (integral && (zero < low || zero > high))) {
        throw FxError(cat("tensor ", place.empty() ? "at the top" : place,
                          ": a ", c10::toString(t.scalar_type()),
                          " tensor whose zero point", which, " is ",
                          c10::str(zero), ", outside [", low, ", ", high, "]"));
      }
    }
  }

  // The range of a quantized type's integers.
  static std::pair<int64_t, int64_t> quantized_range(at::ScalarType type) {
    switch (type) {
      case at::kQUInt8:
        return {0, 255};
      case at::kQInt8:
        return {-128, 127};
      case at::kQUInt4x2:
        return {0, 15};
      case at::kQUInt2x4:
        return {0, 3};
      default:
        return {std::numeric_limits<int32_t>::min(),
                std::numeric_limits<int32_t>::max()};
    }
  }

  const Records& records_;
  std::vector<Pending> todo_;
  absl::flat_hash_set<const void*> on_path_;
  absl::flat_hash_set<const void*> done_;
};

// torch._utils._rebuild_sparse_tensor(layout, (indices, values, size)) and
// _rebuild_sparse_csr_tensor(layout, (crow, col, values, size)), checked as
// torch.load checks them (indices inside the size, compressed indices
// well-formed) before anyone can use the tensor.
at::Tensor rebuild_sparse(const std::string& layout,
                          const std::vector<c10::IValue>& data) {
  auto size = [&](const c10::IValue& v) {
    if (!v.isTuple()) throw FxError("a sparse tensor's size is not a tuple");
    std::vector<int64_t> dims;
    for (const c10::IValue& d : v.toTupleRef().elements()) {
      if (!d.isInt()) throw FxError("a sparse tensor's size holds a non-int");
      dims.push_back(d.toInt());
    }
    return dims;
  };
  auto tensor = [&](size_t i) {
    if (i >= data.size() || !data[i].isTensor()) {
      throw FxError(
          cat("a ", layout, " tensor's part ", i, " is not a tensor"));
    }
    return data[i].toTensor();
  };
  if (layout == "torch.sparse_coo" && data.size() == 3) {
    std::vector<int64_t> dims = size(data[2]);
    at::_validate_sparse_coo_tensor_args(tensor(0), tensor(1), dims);
    return at::_sparse_coo_tensor_unsafe(tensor(0), tensor(1), dims);
  }
  if (layout == "torch.sparse_csr" && data.size() == 4) {
    std::vector<int64_t> dims = size(data[3]);
    at::_validate_sparse_csr_tensor_args(tensor(0), tensor(1), tensor(2), dims);
    return at::_sparse_csr_tensor_unsafe(
        tensor(0), tensor(1), tensor(2), dims,
        tensor(2).options().layout(at::kSparseCsr));
  }
  throw FxError(cat("cannot rebuild a sparse tensor of layout '", layout,
                    "' from ", data.size(), " parts"));
}

// What a tagged call (tag + name, args) the pickle rewriter made stands
// for: torch.Size, torch.return_types.NAME, a layout's name, a sparse
// tensor.
c10::IValue call_tagged(const std::string& name,
                        const std::vector<c10::IValue>& args) {
  auto arg_tuple = [&](size_t i) {
    if (i >= args.size() || !args[i].isTuple()) {
      throw FxError(cat(name, "() argument ", i, " is not a tuple"));
    }
    return args[i].toTupleRef().elements().vec();
  };
  if (name == kTorchSizeName) return make_torch_size(arg_tuple(0));
  if (name.rfind(kReturnTypesPrefix, 0) == 0) {
    return make_return_type(name.substr(std::strlen(kReturnTypesPrefix)),
                            arg_tuple(0));
  }
  if (name == kAsmOutputName && args.size() == 2 && args[0].isTensor() &&
      args[1].isTensor()) {
    return make_asm_output(args[0].toTensor(), args[1].toTensor());
  }
  if (name == "torch.serialization._get_layout" && args.size() == 1 &&
      args[0].isString()) {
    return args[0];
  }
  if (name.rfind("torch._utils._rebuild_sparse", 0) == 0 && args.size() == 2 &&
      args[0].isString()) {
    return rebuild_sparse(args[0].toStringRef(), arg_tuple(1));
  }
  throw FxError(cat("unexpected arguments for ", name, "()"));
}

// The tagged tuple (tag + "torch.Size", ((d, ...),)) the pickle rewriter
// makes of a call, as the value of that call; any other value as is.
c10::IValue untag(const c10::IValue& v) {
  if (!v.isTuple() || v.toTupleRef().elements().size() != 2) return v;
  const c10::IValue& tag = v.toTupleRef().elements()[0];
  const c10::IValue& args = v.toTupleRef().elements()[1];
  if (!tag.isString() || !args.isTuple()) return v;
  std::string_view text = tag.toStringRef();
  if (text.substr(0, kPythonTupleTag.size()) != kPythonTupleTag) return v;
  return call_tagged(std::string(text.substr(kPythonTupleTag.size())),
                     args.toTupleRef().elements().vec());
}

// Every tagged tuple inside `v` (already checked: no cycles, bounded depth)
// replaced by its named tuple; lists and dicts are changed in place.
c10::IValue restore_python_tuples(const c10::IValue& v) {
  if (v.isTuple()) {
    std::vector<c10::IValue> items;
    bool changed = false;
    for (const c10::IValue& e : v.toTupleRef().elements()) {
      items.push_back(restore_python_tuples(e));
      changed |= !items.back().isSameIdentity(e);
    }
    if (!changed) return untag(v);  // most tuples: nothing inside to untag
    return untag(c10::ivalue::Tuple::create(std::move(items)));
  }
  if (v.isList() && !v.isTensorList() && !v.isIntList() && !v.isDoubleList() &&
      !v.isBoolList()) {
    c10::List<c10::IValue> list = v.toList();
    for (size_t i = 0; i < list.size(); ++i) {
      list.set(i, restore_python_tuples(list.get(i)));
    }
  } else if (v.isGenericDict()) {
    for (const auto& entry : v.toGenericDict()) {
      entry.setValue(restore_python_tuples(entry.value()));
    }
  }
  return v;
}

// Unpickles a torch.save archive: the pickle checked and rewritten, the
// storages read from their records (sizes kept), every tensor checked,
// torch.Size and torch.return_types values made named tuples again.
c10::IValue load_archive(
    std::shared_ptr<caffe2::serialize::ReadAdapterInterface> source) {
  absl::Status directory = check_zip_directory(
      source->size(), [&](uint64_t pos, void* buf, size_t n) {
        return source->read(pos, buf, n, "the zip directory");
      });
  if (!directory.ok()) throw FxError(std::string(directory.message()));
  caffe2::serialize::PyTorchStreamReader reader(std::move(source));
  auto [pickle, pickle_size] = reader.getRecord("data.pkl");
  // The storages' records, read while the pickle is checked (their sizes
  // bound the tensors rebuilt from them), handed to the unpickler after.
  std::map<std::string, std::tuple<at::DataPtr, size_t>> prefetched;
  auto record_bytes = [&](const std::string& key) -> std::optional<uint64_t> {
    std::string name = cat("data/", key);
    if (auto it = prefetched.find(name); it != prefetched.end()) {
      return std::get<1>(it->second);
    }
    if (!reader.hasRecord(name)) return std::nullopt;
    auto record = reader.getRecord(name);
    size_t size = std::get<1>(record);
    prefetched.emplace(name, std::move(record));
    return size;
  };
  std::string program = rewrite_pickle_for_libtorch(
      std::string(static_cast<const char*>(pickle.get()), pickle_size),
      record_bytes);
  size_t done = 0;
  auto read_program = [&](char* buffer, size_t n) -> size_t {
    n = std::min(n, program.size() - done);
    std::memcpy(buffer, program.data() + done, n);
    done += n;
    return n;
  };
  Records records;
  auto read_record = [&](const std::string& key) {
    std::string name = cat("data/", key);
    at::DataPtr data;
    size_t size = 0;
    if (auto it = prefetched.find(name); it != prefetched.end()) {
      std::tie(data, size) = std::move(it->second);
      prefetched.erase(it);
    } else {
      std::tie(data, size) = reader.getRecord(name);
    }
    records[data.get()] = Record{name, size};
    return data;
  };
  torch::jit::Unpickler unpickler(read_program, nullptr, nullptr, read_record,
                                  c10::nullopt);
  unpickler.set_version(reader.version());
  c10::IValue value = unpickler.parse_ivalue();
  LoadedValueCheck(records).run(value);
  return restore_python_tuples(value);
}

}  // namespace

namespace {

absl::StatusOr<c10::IValue> load_from(
    std::shared_ptr<caffe2::serialize::ReadAdapterInterface> adapter,
    std::string_view source) {
  try {
    return load_archive(std::move(adapter));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        cat(source, ": not a readable torch.save file: ", message_of(e)));
  }
}

}  // namespace

absl::StatusOr<c10::IValue> parse_value(std::string_view bytes,
                                        std::string_view source) {
  return load_from(std::make_shared<BytesAdapter>(bytes), source);
}

absl::StatusOr<c10::IValue> read_value_file(const std::string& path) {
  auto file = RegularFileReader::open(path);
  if (!file.ok()) return file.status();
  return load_from(std::make_shared<FileAdapter>(std::move(*file)), path);
}

absl::Status write_value_file(const std::string& path,
                              const c10::IValue& value) {
  std::string bytes;
  try {
    bytes = torch_save_bytes(value);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        cat(path, ": cannot serialise: ", message_of(e)));
  }
  return write_file_atomically(path, bytes);
}

namespace {

absl::StatusOr<std::vector<std::pair<std::string, at::Tensor>>> tensor_dict(
    absl::StatusOr<c10::IValue> value, std::string_view source) {
  if (!value.ok()) return value.status();
  if (!value->isGenericDict()) {
    return absl::InvalidArgumentError(cat(
        source, ": expected a dict of str -> Tensor, got ", value->tagKind()));
  }
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& item : value->toGenericDict()) {
    if (!item.key().isString() || !item.value().isTensor()) {
      return absl::InvalidArgumentError(
          cat(source, ": expected a dict of str -> Tensor; entry '",
              item.key().isString() ? item.key().toStringRef() : "?", "' is a ",
              item.value().tagKind()));
    }
    out.emplace_back(item.key().toStringRef(), item.value().toTensor());
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<std::pair<std::string, at::Tensor>>>
parse_tensor_dict(std::string_view bytes, std::string_view source) {
  return tensor_dict(parse_value(bytes, source), source);
}

absl::StatusOr<std::vector<std::pair<std::string, at::Tensor>>>
read_tensor_dict(const std::string& path) {
  return tensor_dict(read_value_file(path), path);
}

absl::Status write_tensor_dict(
    const std::string& path,
    const std::vector<std::pair<std::string, at::Tensor>>& tensors) {
  c10::Dict<std::string, at::Tensor> dict;
  for (const auto& [key, tensor] : tensors) dict.insert(key, tensor.detach());
  return write_value_file(path, dict);
}

}  // namespace fx
