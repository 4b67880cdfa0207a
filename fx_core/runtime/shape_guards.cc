#include "fx_core/runtime/shape_guards.h"

#include <optional>
#include <string>
#include <utility>

#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"
#include "fx_core/symbolic/sym_parser.h"

namespace fx {
namespace {

// A placeholder's tensor_meta `field` ("shape", "stride"), or nullptr.
const Argument* meta_sizes(const Node& placeholder,
                           std::string_view field = "shape") {
  const Argument* meta = placeholder.meta_value("tensor_meta");
  if (meta == nullptr || !meta->is_dict()) return nullptr;
  const Argument* sizes = meta->find(field);
  return sizes != nullptr && sizes->is_sequence() ? sizes : nullptr;
}

bool has_symint(const Argument& shape) {
  for (const Argument& size : shape.elements()) {
    if (size.is_symint()) return true;
  }
  return false;
}

std::vector<sym::Expr> declared_sizes(const Node& placeholder,
                                      const Argument& shape,
                                      std::string_view field) {
  std::vector<sym::Expr> sizes;
  for (const Argument& size : shape.elements()) {
    if (size.is_int()) {
      sizes.push_back(sym::Expr::integer(size.as_int()));
      continue;
    }
    absl::StatusOr<sym::Expr> expr =
        size.is_symint() ? sym::parse_sym_expr(size.as_string())
                         : absl::InvalidArgumentError("not an int");
    if (!expr.ok()) {
      throw FxError(
          cat("placeholder '", placeholder.name(), "': tensor_meta shape [",
              sizes.size(),
              "] is not a size: ", std::string(expr.status().message())));
    }
    sizes.push_back(*std::move(expr));
  }
  return sizes;
}

}  // namespace

std::shared_ptr<const sym::ShapeEnv> graph_shape_env(
    const Graph& graph, const sym::ShapeEnv* declared) {
  bool symbolic = false;
  for (const Node* n : graph.nodes()) {
    if (n->op() != Opcode::kPlaceholder) continue;
    const Argument* shape = meta_sizes(*n);
    symbolic = symbolic || (shape != nullptr && has_symint(*shape));
  }
  if (!symbolic) return nullptr;
  auto env = std::make_shared<sym::ShapeEnv>();
  for (const Node* n : graph.nodes()) {
    if (n->op() != Opcode::kPlaceholder) continue;
    const Argument* shape = meta_sizes(*n);
    if (shape == nullptr) continue;
    const Argument* stride = meta_sizes(*n, "stride");
    env->add_input(std::string(n->name()), declared_sizes(*n, *shape, "shape"),
                   stride ? declared_sizes(*n, *stride, "stride")
                          : std::vector<sym::Expr>{});
  }
  if (declared != nullptr) {
    for (const auto& [name, hint] : declared->hints()) {
      env->set_hint(name, hint);
    }
    for (size_t i = 0; i < declared->guards().size(); ++i) {
      env->add_guard(declared->guards()[i], declared->guard_text(i));
    }
  }
  return env;
}

void check_shape_guards(const sym::ShapeEnv& env, const Graph& graph,
                        const std::vector<c10::IValue>& inputs) {
  std::vector<std::string_view> names;
  for (const Node* n : graph.nodes()) {
    if (n->op() == Opcode::kPlaceholder) names.push_back(n->name());
  }
  check_shape_guards(env, names, inputs);
}

void check_shape_guards(const sym::ShapeEnv& env,
                        const std::vector<std::string_view>& names,
                        const std::vector<c10::IValue>& inputs) {
  auto shape_of =
      [&](const std::string& placeholder) -> std::optional<sym::TensorShape> {
    for (size_t i = 0; i < names.size() && i < inputs.size(); ++i) {
      if (names[i] != placeholder) continue;
      if (!inputs[i].isTensor()) return std::nullopt;
      const at::Tensor& t = inputs[i].toTensor();
      return sym::TensorShape{t.sizes().vec(), t.strides().vec()};
    }
    return std::nullopt;
  };
  absl::StatusOr<sym::Bindings> bound = env.bind(shape_of);
  if (!bound.ok()) throw FxError(std::string(bound.status().message()));
}

}  // namespace fx
