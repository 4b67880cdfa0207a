#include "fx_core/rewrite/pattern_function.h"

#include <utility>

#include "fx_core/error.h"
#include "fx_core/strings.h"

namespace fx {
namespace {

// A traceable module whose forward is a type-erased function.
class FunctionModule : public TraceableModule {
 public:
  FunctionModule(std::string signature, size_t arity, const ValueFunction& body)
      : TraceableModule(std::move(signature)), arity_(arity), body_(body) {}
  Value call_forward(const std::vector<Value>& args) override {
    if (args.size() != arity_) {
      throw FxError(cat("pattern function takes ", arity_, " arguments, got ",
                        args.size()));
    }
    return body_(args);
  }
  size_t forward_arity() const override { return arity_; }

 private:
  size_t arity_;
  const ValueFunction& body_;
};

}  // namespace

std::unique_ptr<Graph> trace_function(size_t arity, const ValueFunction& body,
                                      std::string signature) {
  if (signature.empty() && arity > 1) {
    for (size_t i = 0; i < arity; ++i) {
      fx::append(&signature, i ? ", " : "", "x", i);
    }
  }
  FunctionModule module(std::move(signature), arity, body);
  Tracer tracer;
  return tracer.trace(module);
}

}  // namespace fx
