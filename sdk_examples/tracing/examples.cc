#include "sdk_examples/tracing/examples.h"

#include "fx_core/support/error.h"
#include "sdk_examples/tracing/seed_examples.h"
#include "sdk_examples/tracing/torchvision_models.h"

namespace fx::examples {

std::vector<std::string> example_names() {
  return {"seed_mymodule", "seed_topk",    "seed_static_flow",
          "seed_leaf",     "seed_dropout", "seed_dropout_functional",
          "seed_wrap",     "resnet18",     "mobilenet_v2"};
}

std::shared_ptr<TraceableModule> make_example(const std::string& name) {
  std::shared_ptr<TraceableModule> m;
  if (name == "seed_mymodule") {
    m = std::make_shared<MyModule>();
  } else if (name == "seed_topk") {
    m = std::make_shared<TopkModule>();
  } else if (name == "seed_static_flow") {
    m = std::make_shared<StaticFlowModule>(/*do_activation=*/true);
  } else if (name == "seed_leaf") {
    m = std::make_shared<LeafModule>();
  } else if (name == "seed_dropout") {
    m = std::make_shared<DropoutModule>();
  } else if (name == "seed_dropout_functional") {
    m = std::make_shared<DropoutFunctionalModule>();
  } else if (name == "seed_wrap") {
    m = std::make_shared<WrapModule>();
  } else if (name == "resnet18") {
    m = std::make_shared<ResNet18>();
    m->eval();
  } else if (name == "mobilenet_v2") {
    m = std::make_shared<MobileNetV2>();
    m->eval();
  } else {
    throw FxError("unknown example '" + name + "'");
  }
  return m;
}

std::shared_ptr<GraphModule> trace_example(const std::string& name) {
  std::shared_ptr<TraceableModule> m = make_example(name);
  return symbolic_trace(*m);
}

TracedMyModule trace_seed_mymodule() {
  TracedMyModule out;
  out.module = std::make_shared<MyModule>();
  out.graph_module = symbolic_trace(*out.module);
  return out;
}

}  // namespace fx::examples
