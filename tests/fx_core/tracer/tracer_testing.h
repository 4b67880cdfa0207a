// Helpers the tracer suites share: running Python torch.fx for goldens,
// loading torch.fx's weights into a C++ module, comparing values.
#ifndef TESTS_TRACER_TRACER_TESTING_H_
#define TESTS_TRACER_TRACER_TESTING_H_

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>

#include <cstdlib>
#include <string>

#include "fx_core/io/torch_save.h"
#include "fx_core/runtime/module_path.h"
#include "fx_core/tracer/proxy.h"
#include "tests/testing/python.h"

namespace fx::testing {

// Copies a state dict written by torch.save into `module` by qualified
// name. Every entry must name a parameter or buffer of `module`.
inline void load_weights(torch::nn::Module& module, const std::string& path) {
  auto weights = read_tensor_dict(path);
  ASSERT_TRUE(weights.ok()) << weights.status().message();
  at::NoGradGuard no_grad;
  for (const auto& [name, tensor] : *weights) {
    auto attr = tensor_at(module, name);
    ASSERT_TRUE(attr.has_value()) << "no parameter or buffer " << name;
    ASSERT_EQ(attr->tensor.sizes(), tensor.sizes()) << name;
    attr->tensor.copy_(tensor);
  }
}

// Expects two runtime values to be equal (tensors within rtol/atol), element
// by element for lists and tuples.
inline void expect_same(const c10::IValue& a, const c10::IValue& b,
                        double rtol = 1e-5, double atol = 1e-6,
                        const std::string& where = "output") {
  if (a.isTensor() && b.isTensor()) {
    const at::Tensor& x = a.toTensor();
    const at::Tensor& y = b.toTensor();
    ASSERT_EQ(x.sizes(), y.sizes()) << where;
    ASSERT_EQ(x.scalar_type(), y.scalar_type()) << where;
    if (x.is_floating_point()) {
      EXPECT_TRUE(at::allclose(x, y, rtol, atol))
          << where << ": max |diff| " << (x - y).abs().max().item<double>();
    } else {
      EXPECT_TRUE(at::equal(x, y)) << where;
    }
    return;
  }
  if ((a.isTuple() || a.isList()) && (b.isTuple() || b.isList())) {
    auto xs =
        a.isTuple() ? a.toTupleRef().elements().vec() : a.toListRef().vec();
    auto ys =
        b.isTuple() ? b.toTupleRef().elements().vec() : b.toListRef().vec();
    ASSERT_EQ(xs.size(), ys.size()) << where;
    for (size_t i = 0; i < xs.size(); ++i) {
      expect_same(xs[i], ys[i], rtol, atol,
                  where + "[" + std::to_string(i) + "]");
    }
    return;
  }
  EXPECT_EQ(a, b) << where;
}

}  // namespace fx::testing

#endif  // TESTS_TRACER_TRACER_TESTING_H_
