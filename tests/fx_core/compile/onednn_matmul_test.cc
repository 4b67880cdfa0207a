// fx::OnednnMatmul against torch.matmul (times the scale, as
// fx_inference.matmul's reference computes) on attention's strided operands
// at the suite transformer's shapes, on 2-d and 3-d ones; fits() refuses
// other layouts; create() refuses what oneDNN would compute differently.
#include "fx_core/compile/onednn_matmul.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace fx {
namespace {

StridedLayout layout(const at::Tensor& t) {
  return {t.sizes().vec(), t.strides().vec()};
}

void check(const at::Tensor& a, const at::Tensor& b, double scale,
           const std::string& what) {
  auto mm = OnednnMatmul::create(layout(a), layout(b), scale);
  ASSERT_NE(mm, nullptr) << what;
  ASSERT_TRUE(mm->fits(a, b)) << what;
  at::Tensor want = at::matmul(a, b) * scale;
  EXPECT_EQ(mm->output_sizes(), want.sizes().vec()) << what;
  at::Tensor out = at::empty(mm->output_sizes());
  for (int run = 0; run < 2; ++run) {
    mm->run(a, b, out);
    EXPECT_TRUE(at::allclose(out, want, 1e-4, 1e-5))
        << what
        << ": max |got - want| = " << (out - want).abs().max().item<double>();
  }
}

TEST(OnednnMatmul, AttentionOperandsWhereTheyLie) {
  at::manual_seed(0);
  // qkv as the transformer's view + permute: 3 x [1, 4, 128, 64] views.
  at::Tensor qkv = at::randn({1, 128, 768})
                       .view({1, 128, 3, 4, 64})
                       .permute({2, 0, 3, 1, 4});
  at::Tensor q = qkv[0], k = qkv[1], v = qkv[2];
  check(q, k.transpose(-2, -1), 0.125, "q @ k^T * scale");
  at::Tensor att = at::softmax(at::matmul(q, k.transpose(-2, -1)), -1);
  check(att, v, 1.0, "att @ v");
}

TEST(OnednnMatmul, WritesTheHeadsSideBySide) {
  at::manual_seed(2);
  // att [2, 3, 5, 5] @ v [2, 3, 5, 4] into [2, 5, 3 * 4]: heads side by side.
  at::Tensor att = at::softmax(at::randn({2, 3, 5, 5}), -1);
  at::Tensor v = at::randn({2, 5, 3, 4}).permute({0, 2, 1, 3});
  auto mm = OnednnMatmul::create(layout(att), layout(v), 1.0, {60, 4, 12, 1});
  ASSERT_NE(mm, nullptr);
  at::Tensor out = at::full({2, 5, 12}, std::nan(""));
  mm->run(att, v, out);
  at::Tensor want = at::matmul(att, v).transpose(1, 2).reshape({2, 5, 12});
  EXPECT_TRUE(at::allclose(out, want, 1e-4, 1e-5))
      << (out - want).abs().max().item<double>();
  EXPECT_EQ(OnednnMatmul::create(layout(att), layout(v), 1.0, {60, 4, 0, 1}),
            nullptr)
      << "a zero output stride";
}

TEST(OnednnMatmul, TwoAndThreeDimensionalOperands) {
  at::manual_seed(1);
  check(at::randn({7, 5}), at::randn({5, 3}), 1.0, "2-d");
  check(at::randn({9, 7}).t(), at::randn({9, 4}), -2.0, "transposed 2-d");
  at::Tensor x = at::randn({2, 6, 24});
  check(x, x.transpose(1, 2), 0.25, "x @ x^T");
  check(at::randn({3, 1, 8}), at::randn({3, 8, 1}), 1.0, "size-1 rows");
}

TEST(OnednnMatmul, FitsOnlyThePlannedLayout) {
  at::Tensor a = at::randn({2, 3, 4}), b = at::randn({2, 4, 5});
  auto mm = OnednnMatmul::create(layout(a), layout(b), 1.0);
  ASSERT_NE(mm, nullptr);
  EXPECT_TRUE(mm->fits(a, b));
  EXPECT_FALSE(mm->fits(a.to(at::kDouble), b));
  EXPECT_FALSE(mm->fits(at::randn({2, 4, 3}).transpose(1, 2), b));
  EXPECT_FALSE(mm->fits(a, at::randn({2, 4, 6})));
}

TEST(OnednnMatmul, RefusesWhatItCannotComputeAlike) {
  auto create = [](const at::Tensor& a, const at::Tensor& b) {
    return OnednnMatmul::create(layout(a), layout(b), 1.0);
  };
  EXPECT_EQ(create(at::randn({4}), at::randn({4})), nullptr);           // 1-d
  EXPECT_EQ(create(at::randn({2, 3, 4}), at::randn({4, 5})), nullptr);  // ranks
  EXPECT_EQ(create(at::randn({2, 3, 4}), at::randn({1, 4, 5})), nullptr);
  EXPECT_EQ(create(at::randn({3, 4}), at::randn({5, 2})), nullptr);  // inner
  EXPECT_EQ(create(at::randn({0, 4}), at::randn({4, 2})), nullptr);  // empty
  EXPECT_EQ(create(at::randn({3, 4}), at::randn({4, 1}).expand({4, 6})),
            nullptr);  // stride 0
}

}  // namespace
}  // namespace fx
