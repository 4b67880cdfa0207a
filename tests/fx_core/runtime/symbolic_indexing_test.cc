// fx::symbolic_getitem against LibTorch's own indexing: for each index, the
// symbolic sizes and view strides, evaluated at several sizes, must be
// those of the same index applied eagerly (at::Tensor::index, the C++ twin
// of Python's Tensor.__getitem__) to a tensor of those sizes, and every
// guard taken at the hints must hold at the other sizes.
#include "fx_core/runtime/symbolic/symbolic_indexing.h"

#include <ATen/ATen.h>
#include <ATen/TensorIndexing.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "fx_core/support/error.h"

namespace fx {
namespace {

using at::indexing::Ellipsis;
using at::indexing::None;
using at::indexing::Slice;
using sym::Expr;

using Eager = std::function<at::Tensor(const at::Tensor&)>;

struct Case {
  std::string name;
  Argument index;
  Eager eager;
};

Argument slice(Argument start, Argument stop, Argument step = Argument()) {
  return Argument::slice(std::move(start), std::move(stop), std::move(step));
}

std::vector<Case> cases() {
  const Argument all = slice(Argument(), Argument());
  return {
      {"int", Argument(0), [](const at::Tensor& x) { return x.index({0}); }},
      {"negative_int", Argument::tuple({all, Argument(-1)}),
       [](const at::Tensor& x) {
         return x.index({Slice(), -1});
       }},
      {"slice", Argument::tuple({all, slice(Argument(1), Argument())}),
       [](const at::Tensor& x) {
         return x.index({Slice(), Slice(1, None)});
       }},
      {"step", slice(Argument(), Argument(), Argument(2)),
       [](const at::Tensor& x) { return x.index({Slice(None, None, 2)}); }},
      {"none", Argument(), [](const at::Tensor& x) { return x.index({None}); }},
      {"ellipsis_none", Argument::tuple({Argument::ellipsis(), Argument()}),
       [](const at::Tensor& x) {
         return x.index({Ellipsis, None});
       }},
      {"alias", Argument::ellipsis(),
       [](const at::Tensor& x) { return x.index({Ellipsis}); }},
      {"mixed",
       Argument::tuple({slice(Argument(1), Argument()), Argument(),
                        Argument::ellipsis(),
                        slice(Argument(2), Argument(-1))}),
       [](const at::Tensor& x) {
         return x.index({Slice(1, None), None, Ellipsis, Slice(2, -1)});
       }},
      {"clamped",
       Argument::tuple({slice(Argument(-2), Argument()), all,
                        slice(Argument(3), Argument(100))}),
       [](const at::Tensor& x) {
         return x.index({Slice(-2, None), Slice(), Slice(3, 100)});
       }},
      {"true", Argument(true),
       [](const at::Tensor& x) { return x.index({true}); }},
      {"false_int", Argument::tuple({Argument(false), Argument(1)}),
       [](const at::Tensor& x) {
         return x.index({false, 1});
       }},
      {"int_list", Argument::list({Argument(0), Argument(2)}),
       [](const at::Tensor& x) {
         return x.index({at::tensor(std::vector<int64_t>{0, 2})});
       }},
      {"int_list_inner",
       Argument::tuple({all, Argument::list({Argument(1), Argument(0)}),
                        slice(Argument(1), Argument())}),
       [](const at::Tensor& x) {
         return x.index(
             {Slice(), at::tensor(std::vector<int64_t>{1, 0}), Slice(1, None)});
       }},
  };
}

const std::vector<sym::Bindings>& sizes_to_check() {
  static const auto* values =
      new std::vector<sym::Bindings>{{{"B", 4}, {"C", 6}, {"H", 8}},
                                     {{"B", 3}, {"C", 9}, {"H", 5}},
                                     {{"B", 7}, {"C", 5}, {"H", 11}}};
  return *values;
}

std::vector<int64_t> evaluated(const std::vector<Expr>& exprs,
                               const sym::Bindings& values) {
  std::vector<int64_t> out;
  for (const Expr& e : exprs) out.push_back(e.evaluate(values));
  return out;
}

const SymbolicValue& no_node(const Node&) {
  throw FxError("the index refers to no node");
}

TEST(SymbolicIndexing, SizesAndViewStridesAreLibTorchsAtOtherSizes) {
  const std::vector<Expr> sizes = {Expr::symbol("B"), Expr::symbol("C"),
                                   Expr::symbol("H")};
  const Expr& c = sizes[1];
  const Expr& h = sizes[2];
  const std::vector<Expr> strides = {c * h, h, Expr::integer(1)};
  for (const Case& test : cases()) {
    sym::GuardRecorder guards(sizes_to_check()[0]);
    std::optional<SymbolicIndexing> got =
        symbolic_getitem(sizes, strides, test.index, no_node, guards);
    ASSERT_TRUE(got.has_value()) << test.name;
    for (const sym::Bindings& values : sizes_to_check()) {
      at::Tensor x =
          at::empty({values.at("B"), values.at("C"), values.at("H")});
      at::Tensor y = test.eager(x);
      EXPECT_EQ(evaluated(got->sizes, values), y.sizes().vec()) << test.name;
      for (const sym::Relation& guard : guards.guards()) {
        EXPECT_TRUE(guard.evaluate(values)) << test.name << ": " << guard.str();
      }
      // Strides exactly for the views (index.Tensor makes a new tensor).
      EXPECT_EQ(got->strides.empty(), !y.is_alias_of(x)) << test.name;
      if (got->strides.empty()) continue;
      std::vector<int64_t> mine = evaluated(got->strides, values);
      for (int64_t d = 0; d < y.dim(); ++d) {
        if (y.size(d) == 1) continue;  // any stride
        EXPECT_EQ(mine[d], y.stride(d)) << test.name << " dimension " << d;
      }
    }
  }
}

TEST(SymbolicIndexing, TooManyIndicesAreRefused) {
  sym::GuardRecorder guards({{"B", 4}});
  EXPECT_THROW(symbolic_getitem({Expr::symbol("B")}, {},
                                Argument::tuple({Argument(0), Argument(0)}),
                                no_node, guards),
               FxError);
}

TEST(SymbolicIndexing, ANonPositiveStepIsRefused) {
  sym::GuardRecorder guards({{"B", 4}});
  EXPECT_THROW(symbolic_getitem({Expr::symbol("B")}, {},
                                slice(Argument(), Argument(), Argument(-1)),
                                no_node, guards),
               FxError);
}

}  // namespace
}  // namespace fx
