// torch.save files written by Python load in C++, including what LibTorch
// 1.13's unpickler rejects on its own (one-element lists and dicts, i.e.
// pickle's APPEND and SETITEM, and torch.return_types), and what C++ writes
// loads in Python. Python's side needs python3-torch (skipped without it).
#include "fx_core/io/torch_save.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "fx_core/format/graph_json.h"
#include "fx_core/io/atomic_file.h"
#include "fx_core/io/python_tuples.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

std::vector<int64_t> sequence_ints(const c10::IValue& tuple) {
  std::vector<int64_t> out;
  for (const c10::IValue& v : tuple.toTupleRef().elements()) {
    out.push_back(v.toInt());
  }
  return out;
}

std::string tmp(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

bool python(const std::string& code) {
  std::string command = "/usr/bin/python3 -c \"" + code + "\" 2>&1";
  return std::system(command.c_str()) == 0;
}

// Runs a Python script given as text with one argument; true when it exits
// with 0 (its output, an assertion's message, goes to the test's log).
bool python_script(const std::string& code, const std::string& arg) {
  std::string path = tmp("script.py");
  if (!write_file_atomically(path, code).ok()) return false;
  std::string command = "/usr/bin/python3 " + path + " " + arg + " 2>&1";
  return std::system(command.c_str()) == 0;
}

class TorchSave : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!python("import torch")) GTEST_SKIP() << "python3-torch is missing";
  }
};

TEST_F(TorchSave, OneElementListFromPythonLoads) {
  ASSERT_TRUE(
      python("import torch; torch.save([torch.arange(6.).view(2, 3)], '" +
             tmp("list1.pt") + "')"));
  auto v = read_value_file(tmp("list1.pt"));
  ASSERT_TRUE(v.ok()) << v.status().message();
  ASSERT_EQ(v->toListRef().size(), 1u);
  EXPECT_TRUE(
      at::equal(v->toListRef()[0].toTensor(), at::arange(6.0).view({2, 3})));
}

TEST_F(TorchSave, OneEntryDictFromPythonLoads) {
  ASSERT_TRUE(python("import torch; torch.save({'w': torch.arange(4)}, '" +
                     tmp("dict1.pt") + "')"));
  auto d = read_tensor_dict(tmp("dict1.pt"));
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_EQ(d->size(), 1u);
  EXPECT_EQ((*d)[0].first, "w");
  EXPECT_TRUE(at::equal((*d)[0].second, at::arange(4)));
}

TEST_F(TorchSave, ReturnTypesKeepTheirNameAndFields) {
  ASSERT_TRUE(
      python("import torch; torch.save(torch.topk(torch.arange(5.), 2), '" +
             tmp("topk.pt") + "')"));
  auto v = read_value_file(tmp("topk.pt"));
  ASSERT_TRUE(v.ok()) << v.status().message();
  ASSERT_TRUE(v->isTuple());
  EXPECT_EQ(python_tuple_name(*v), "torch.return_types.topk");
  std::optional<c10::IValue> indices_field = named_tuple_field(*v, "indices");
  ASSERT_TRUE(indices_field.has_value());
  auto [values, indices] = at::topk(at::arange(5.0), 2);
  EXPECT_TRUE(at::equal(v->toTupleRef().elements()[0].toTensor(), values));
  EXPECT_TRUE(at::equal(v->toTupleRef().elements()[1].toTensor(), indices));
  EXPECT_TRUE(at::equal(indices_field->toTensor(), indices));
}

TEST_F(TorchSave, TorchSizeFromPythonIsATorchSize) {
  ASSERT_TRUE(
      python("import torch; torch.save([torch.Size([2, 3]), "
             "torch.Size([]), (torch.Size([7]),)], '" +
             tmp("sizes.pt") + "')"));
  auto v = read_value_file(tmp("sizes.pt"));
  ASSERT_TRUE(v.ok()) << v.status().message();
  const auto& items = v->toListRef();
  ASSERT_EQ(items.size(), 3u);
  EXPECT_TRUE(is_torch_size(items[0]));
  EXPECT_EQ(sequence_ints(items[0]), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(is_torch_size(items[1]));
  EXPECT_TRUE(items[1].toTupleRef().elements().empty());
  ASSERT_TRUE(items[2].isTuple());
  EXPECT_EQ(python_tuple_name(items[2]), "");
  EXPECT_TRUE(is_torch_size(items[2].toTupleRef().elements()[0]));
}

// Every kind of value fx writes, loaded by Python's torch.load and compared
// (types included: tuple vs list, torch.Size, return_types) with the same
// value built in Python.
TEST_F(TorchSave, WrittenValuesLoadInPythonWithPythonsTypes) {
  at::Tensor base = at::arange(12.0).view({3, 4});
  auto [max_values, max_indices] = at::max(base, 1);
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  dict.insert("view", base.select(1, 2));
  dict.insert("base", base);
  dict.insert("empty", c10::impl::GenericList(c10::AnyType::get()));
  c10::impl::GenericList list(c10::AnyType::get());
  for (c10::IValue v : std::vector<c10::IValue>{
           int64_t{0}, int64_t{255}, int64_t{256}, int64_t{70000}, int64_t{-3},
           int64_t{1} << 40, -(int64_t{1} << 40),
           std::numeric_limits<int64_t>::min(), 1.5, -0.0, true, false,
           c10::IValue(), std::string("a b\n\"c'"), c10::Device("cpu")}) {
    list.push_back(v);
  }
  c10::IValue value = c10::ivalue::Tuple::create(std::vector<c10::IValue>{
      make_torch_size(std::vector<int64_t>{2, 3}),
      make_torch_size(std::vector<int64_t>{}),
      make_return_type("max", {max_values, max_indices}), dict, list,
      c10::ivalue::Tuple::create(std::vector<c10::IValue>{}),
      at::scalar_tensor(7, at::kLong), base.t(),
      at::ones({2}).requires_grad_(true), at::zeros({0, 3}),
      at::ones({2}, at::kBool), at::ones({2}, at::kHalf)});
  ASSERT_TRUE(write_value_file(tmp("values.pt"), value).ok());
  EXPECT_TRUE(python_script(R"PY(
import sys, torch
def same(a, b):
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape, (a, b)
        assert a.stride() == b.stride() and torch.equal(a, b), (a, b)
        assert a.requires_grad == b.requires_grad
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b): same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b), (a, b)
        for k in a: same(a[k], b[k])
    else:
        assert repr(a) == repr(b), (a, b)
base = torch.arange(12.).view(3, 4)
want = (torch.Size([2, 3]), torch.Size([]), torch.max(base, 1),
        {'view': base[:, 2], 'base': base, 'empty': []},
        [0, 255, 256, 70000, -3, 2**40, -2**40, -2**63, 1.5, -0.0,
         True, False, None, 'a b\n"c\'', torch.device('cpu')],
        (), torch.tensor(7), base.t(), torch.ones(2, requires_grad=True),
        torch.zeros(0, 3), torch.ones(2, dtype=torch.bool),
        torch.ones(2, dtype=torch.half))
got = torch.load(sys.argv[1])
same(got, want)
view, whole = got[3]['view'], got[3]['base']
assert view.storage().data_ptr() == whole.storage().data_ptr()
)PY",
                            tmp("values.pt")));
  // ... and read back here as the same value.
  auto back = read_value_file(tmp("values.pt"));
  ASSERT_TRUE(back.ok()) << back.status().message();
  const auto& items = back->toTupleRef().elements();
  EXPECT_TRUE(is_torch_size(items[0]));
  EXPECT_EQ(python_tuple_name(items[2]), "torch.return_types.max");
  EXPECT_TRUE(at::equal(items[7].toTensor(), base.t()));
}

TEST_F(TorchSave, WeightsLoadWithWeightsOnly) {
  ASSERT_TRUE(write_tensor_dict(tmp("weights.pt"),
                                {{"conv.weight", at::ones({2, 3})},
                                 {"conv.bias", at::zeros({2}, at::kDouble)},
                                 {"bn.num_batches_tracked", at::tensor(3)}})
                  .ok());
  EXPECT_TRUE(python("import torch; d = torch.load('" + tmp("weights.pt") +
                     "', weights_only=True); "
                     "assert list(d) == ['conv.weight', 'conv.bias', "
                     "'bn.num_batches_tracked'], d; "
                     "assert torch.equal(d['conv.weight'], torch.ones(2, 3))"));
}

TEST(TorchSaveWrite, ValuesWithoutAPythonSpellingAreRefusedByPlace) {
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  dict.insert("w", at::empty({2}, at::TensorOptions().device(at::kMeta)));
  auto written = write_value_file(
      tmp("meta.pt"),
      c10::ivalue::Tuple::create(std::vector<c10::IValue>{at::ones(1), dict}));
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.message(),
            tmp("meta.pt") +
                ": cannot serialise: [1]['w']: cannot save a non-CPU tensor");
  EXPECT_FALSE(std::ifstream(tmp("meta.pt")).good());
}

// Quantized tensors both ways (PyTorch's quantized models keep their weights
// so): per-tensor quint8 and qint32, per-channel qint8 on axis 1, as
// torch.save writes them and as torch.load reads ours.
TEST_F(TorchSave, QuantizedTensorsRoundTripWithPython) {
  const std::string make =
      "import torch; x = torch.linspace(-2, 2, 24).view(2, 3, 4); "
      "qs = [torch.quantize_per_tensor(x, 0.05, 3, torch.quint8), "
      "torch.quantize_per_tensor(x, 0.01, -2, torch.qint32), "
      "torch.quantize_per_channel(x, torch.tensor([0.02, 0.03, 0.04], "
      "dtype=torch.double), torch.tensor([0, 1, -1]), 1, torch.qint8)]; ";
  ASSERT_TRUE(python(make + "torch.save(qs, '" + tmp("q_py.pt") + "')"));
  auto v = read_value_file(tmp("q_py.pt"));
  ASSERT_TRUE(v.ok()) << v.status().message();
  const auto& qs = v->toListRef();
  ASSERT_EQ(qs.size(), 3u);
  at::Tensor x = at::linspace(-2, 2, 24).view({2, 3, 4});
  at::Tensor a = qs[0].toTensor();
  EXPECT_EQ(a.scalar_type(), at::kQUInt8);
  EXPECT_EQ(a.qscheme(), at::kPerTensorAffine);
  EXPECT_DOUBLE_EQ(a.q_scale(), 0.05);
  EXPECT_EQ(a.q_zero_point(), 3);
  EXPECT_TRUE(
      at::equal(a.int_repr(),
                at::quantize_per_tensor(x, 0.05, 3, at::kQUInt8).int_repr()));
  at::Tensor c = qs[2].toTensor();
  EXPECT_EQ(c.qscheme(), at::kPerChannelAffine);
  EXPECT_EQ(c.q_per_channel_axis(), 1);
  EXPECT_TRUE(at::equal(c.q_per_channel_zero_points(),
                        at::tensor({0, 1, -1}, at::kLong)));
  ASSERT_TRUE(write_value_file(tmp("q_cpp.pt"), *v).ok());
  EXPECT_TRUE(python(make + "ours = torch.load('" + tmp("q_cpp.pt") +
                     "'); "
                     "assert all(o.dtype == q.dtype and o.qscheme() == "
                     "q.qscheme() and torch.equal(o.int_repr(), q.int_repr()) "
                     "for o, q in zip(ours, qs)); "
                     "assert ours[0].q_scale() == 0.05 and "
                     "ours[0].q_zero_point() == 3; "
                     "assert torch.equal(ours[2].q_per_channel_scales(), "
                     "qs[2].q_per_channel_scales()) and "
                     "ours[2].q_per_channel_axis() == 1"));
}

// Quantization parameters no kernel can use (issue 33's bad input): a scale
// of zero, NaN, infinity or below zero, a zero point outside its type's
// range. torch.save writes them and torch.load reads them back unchecked;
// here each is refused naming the tensor and the number.
TEST_F(TorchSave, QuantizationParametersNoKernelCanUseAreRefused) {
  struct Case {
    std::string make;  // the Python expression of the quantized tensor
    std::string error;
  };
  const std::string x = "torch.linspace(-2, 2, 6).view(2, 3)";
  const std::string per_channel =
      "torch._make_per_channel_quantized_tensor(torch.zeros(2, 3, "
      "dtype=torch.int8), torch.tensor([0.1, %s], dtype=torch.double), "
      "torch.tensor([0, %s]), 0)";
  auto channel = [&](const std::string& scale, const std::string& zero) {
    std::string text = per_channel;
    text.replace(text.find("%s"), 2, scale);
    text.replace(text.find("%s"), 2, zero);
    return text;
  };
  const std::vector<Case> cases = {
      {"torch._make_per_tensor_quantized_tensor(torch.zeros(2, 3, "
       "dtype=torch.uint8), 0.0, 3)",
       "tensor [1]: a QUInt8 tensor whose scale is 0 (a quantization scale "
       "is positive and finite)"},
      {"torch.quantize_per_tensor(" + x + ", float('nan'), 3, torch.quint8)",
       "tensor [1]: a QUInt8 tensor whose scale is nan"},
      {"torch.quantize_per_tensor(" + x + ", float('inf'), 3, torch.quint8)",
       "tensor [1]: a QUInt8 tensor whose scale is inf"},
      {"torch.quantize_per_tensor(" + x + ", -0.5, 3, torch.qint8)",
       "tensor [1]: a QInt8 tensor whose scale is -0.5"},
      {"torch._make_per_tensor_quantized_tensor(torch.zeros(2, 3, "
       "dtype=torch.uint8), 0.1, 300)",
       "tensor [1]: a QUInt8 tensor whose zero point is 300, outside [0, "
       "255]"},
      {"torch._make_per_tensor_quantized_tensor(torch.zeros(2, 3, "
       "dtype=torch.int8), 0.1, -129)",
       "a QInt8 tensor whose zero point is -129, outside [-128, 127]"},
      {channel("0.0", "0"),
       "tensor [1]: a QInt8 tensor whose scale 1 is 0 (a quantization scale "
       "is positive and finite)"},
      {channel("0.2", "200"),
       "tensor [1]: a QInt8 tensor whose zero point 1 is 200, outside "
       "[-128, 127]"},
  };
  // One Python writes every file and reads each back.
  std::string script = "import torch\n";
  auto path = [&](size_t i) {
    return tmp("bad_qparams_" + std::to_string(i) + ".pt");
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    script += "torch.save([torch.ones(1), " + cases[i].make + "], '" + path(i) +
              "'); torch.load('" + path(i) + "')\n";
  }
  ASSERT_TRUE(python_script(script, ""));
  for (size_t i = 0; i < cases.size(); ++i) {
    auto v = read_value_file(path(i));
    ASSERT_FALSE(v.ok()) << cases[i].make;
    EXPECT_NE(v.status().message().find(cases[i].error), std::string::npos)
        << v.status().message();
    EXPECT_NE(v.status().message().find(path(i)), std::string::npos)
        << v.status().message();
  }
}

// Sparse COO and CSR tensors both ways: Python's files load here (checked
// as torch.load checks them), ours load in Python.
TEST_F(TorchSave, SparseTensorsRoundTripWithPython) {
  ASSERT_TRUE(
      python("import torch; x = torch.tensor([[0, 1.5], [2, 0]]); "
             "torch.save([x.to_sparse(), x.to_sparse_csr()], '" +
             tmp("sparse_py.pt") + "')"));
  auto v = read_value_file(tmp("sparse_py.pt"));
  ASSERT_TRUE(v.ok()) << v.status().message();
  at::Tensor dense = at::tensor({0.0, 1.5, 2.0, 0.0}).view({2, 2});
  at::Tensor coo = v->toListRef()[0].toTensor();
  at::Tensor csr = v->toListRef()[1].toTensor();
  EXPECT_EQ(coo.layout(), at::kSparse);
  EXPECT_EQ(csr.layout(), at::kSparseCsr);
  EXPECT_TRUE(at::equal(coo.to_dense(), dense));
  EXPECT_TRUE(at::equal(csr.to_dense(), dense));
  ASSERT_TRUE(write_value_file(tmp("sparse_cpp.pt"), *v).ok());
  EXPECT_TRUE(python(
      "import torch; a, b = torch.load('" + tmp("sparse_cpp.pt") +
      "'); x = torch.tensor([[0, 1.5], [2, 0]]); "
      "assert a.layout == torch.sparse_coo and torch.equal(a.to_dense(), x); "
      "assert b.layout == torch.sparse_csr and torch.equal(b.to_dense(), x)"));
}

TEST_F(TorchSave, SparseIndicesOutsideTheSizeAreRefused) {
  ASSERT_TRUE(
      python("import torch; i = torch.tensor([[0, 5], [0, 0]]); "
             "x = torch.sparse_coo_tensor(i, torch.ones(2), (2, 2), "
             "check_invariants=False) if False else "
             "torch._sparse_coo_tensor_unsafe(i, torch.ones(2), (2, 2)); "
             "torch.save(x, '" +
             tmp("bad_sparse.pt") + "')"));
  auto v = read_value_file(tmp("bad_sparse.pt"));
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("bad_sparse.pt: not a readable "
                                      "torch.save file"),
            std::string::npos)
      << v.status().message();
}

// Writes {"w": tensor over arange(12.)'s storage with `layout`} as
// torch.save would if the tensor had that offset, sizes and strides (the
// crafted file a stranger could send), then asks torch.load: prints
// "refused" or the tensor's values, strides and offset.
constexpr const char* kCraftedLayout = R"(
import sys, torch
path, offset, size, stride = sys.argv[1].split(':')
size = tuple(int(v) for v in size.split(','))
stride = tuple(int(v) for v in stride.split(','))
t, real = torch.arange(12.), torch.Tensor
saved = real.stride, real.size, real.storage_offset
real.stride = lambda self, *a: stride
real.size = lambda self, *a: torch.Size(size)
real.storage_offset = lambda self: int(offset)
try:
    torch.save({'w': t}, path)
finally:
    real.stride, real.size, real.storage_offset = saved
try:
    w = torch.load(path)['w']
    print(w.flatten().long().tolist(), w.stride(), w.storage_offset())
except RuntimeError as e:
    print('refused:', e)
)";

// torch.load's verdict on a crafted layout, as the script prints it.
std::string torch_load_verdict(const std::string& path,
                               const std::string& layout) {
  std::string script = tmp("crafted.py");
  if (!write_file_atomically(script, kCraftedLayout).ok()) return "";
  std::string command =
      "/usr/bin/python3 " + script + " " + path + ":" + layout + " 2>&1";
  FILE* out = ::popen(command.c_str(), "r");
  if (out == nullptr) return "";
  std::string text;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, out)) text += buffer;
  ::pclose(out);
  return text;
}

// The same line for what fx reads.
std::string sdk_verdict(const std::string& path) {
  auto v = read_tensor_dict(path);
  if (!v.ok()) return "refused: " + std::string(v.status().message());
  const at::Tensor& w = v->at(0).second;
  std::string values = "[";
  at::Tensor flat = w.flatten();
  for (int64_t i = 0; i < flat.numel(); ++i) {
    values += (i ? ", " : "") + std::to_string(flat[i].item<int64_t>());
  }
  std::string strides = "(";
  for (int64_t d = 0; d < w.dim(); ++d) {
    strides += (d ? ", " : "") + std::to_string(w.stride(d));
  }
  strides += w.dim() == 1 ? ",)" : ")";
  return values + "] " + strides + " " + std::to_string(w.storage_offset());
}

// Issue 34 item 6: strides, offsets and overlaps exactly as torch.load keeps
// them, and refused where torch.load refuses (LibTorch's own unpickler made
// a negative stride positive: other numbers than PyTorch's).
TEST_F(TorchSave, TensorLayoutsAreKeptOrRefusedAsTorchLoadDoes) {
  const std::vector<std::string> layouts = {
      "2:3:-1", "0:3,3:1,1", "0:2,3:0,1", "1:3,2:1,4", "3:2,2:-2,1", "0:4:-3"};
  int i = 0;
  for (const std::string& layout : layouts) {
    std::string path = tmp("layout" + std::to_string(i++) + ".pt");
    std::string torch = torch_load_verdict(path, layout);
    ASSERT_FALSE(torch.empty()) << layout;
    std::string sdk = sdk_verdict(path);
    if (torch.rfind("refused:", 0) == 0) {
      EXPECT_EQ(sdk.rfind("refused:", 0), 0u) << layout << ": " << sdk;
      EXPECT_NE(sdk.find("negative"), std::string::npos) << sdk;
    } else {
      EXPECT_EQ(sdk + "\n", torch) << layout;
    }
  }
}

TEST(TorchSaveFile, GarbageIsRefusedWithThePath) {
  ASSERT_TRUE(write_file_atomically(tmp("garbage.pt"), "nope").ok());
  auto v = read_value_file(tmp("garbage.pt"));
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("garbage.pt: not a readable torch.save"),
            std::string::npos)
      << v.status().message();
}

}  // namespace
}  // namespace fx
