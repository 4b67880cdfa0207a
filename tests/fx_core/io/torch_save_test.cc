// torch.save files written by Python load in C++, including what LibTorch
// 1.13's unpickler rejects on its own (one-element lists and dicts, i.e.
// pickle's APPEND and SETITEM, and torch.return_types), and what C++ writes
// loads in Python. Python's side needs python3-torch (skipped without it).
#include "fx_core/io/torch_save.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "fx_core/format/graph_json.h"
#include "fx_core/io/atomic_file.h"
#include "tests/testing/reference.h"

namespace fx {
namespace {

std::string tmp(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

bool python(const std::string& code) {
  std::string command = "/usr/bin/python3 -c \"" + code + "\" 2>&1";
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

TEST_F(TorchSave, ReturnTypesBecomeTuples) {
  ASSERT_TRUE(
      python("import torch; torch.save(torch.topk(torch.arange(5.), 2), '" +
             tmp("topk.pt") + "')"));
  auto v = read_value_file(tmp("topk.pt"));
  ASSERT_TRUE(v.ok()) << v.status().message();
  ASSERT_TRUE(v->isTuple());
  auto [values, indices] = at::topk(at::arange(5.0), 2);
  EXPECT_TRUE(at::equal(v->toTupleRef().elements()[0].toTensor(), values));
  EXPECT_TRUE(at::equal(v->toTupleRef().elements()[1].toTensor(), indices));
}

TEST_F(TorchSave, NestedContainersFromPythonLoad) {
  ASSERT_TRUE(
      python("import torch; torch.save({'a': [torch.ones(1)], 'b': {'c': "
             "torch.zeros(2)}}, '" +
             tmp("nested.pt") + "')"));
  auto v = read_value_file(tmp("nested.pt"));
  ASSERT_TRUE(v.ok()) << v.status().message();
  auto dict = v->toGenericDict();
  EXPECT_TRUE(at::equal(dict.at("a").toListRef()[0].toTensor(), at::ones(1)));
  EXPECT_TRUE(
      at::equal(dict.at("b").toGenericDict().at("c").toTensor(), at::zeros(2)));
}

TEST_F(TorchSave, WhatCppWritesLoadsInPython) {
  ASSERT_TRUE(write_tensor_dict(tmp("cpp.pt"), {{"x", at::arange(3)}}).ok());
  EXPECT_TRUE(python("import torch; d = torch.load('" + tmp("cpp.pt") +
                     "'); assert torch.equal(d['x'], torch.arange(3)), d"));
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
