#include "host/pipeline/named_pipelines.h"

#include "fx_core/support/strings.h"

namespace fx::host {
namespace {

// Which first-party plugin provides each pass the table names.
struct PassHome {
  std::string_view pass;
  std::string_view plugin;
  std::string_view library;
};

constexpr PassHome kPassHomes[] = {
    {"dce", "fx_passes", "libfx_passes.so"},
    {"cse", "fx_passes", "libfx_passes.so"},
    {"shape_prop", "fx_shape_prop", "libfx_shape_prop.so"},
    {"fold_bn", "fx_inference", "libfx_inference.so"},
    {"fuse_conv", "fx_inference", "libfx_inference.so"},
    {"fuse_linear", "fx_inference", "libfx_inference.so"},
    {"fuse_matmul", "fx_inference", "libfx_inference.so"},
    {"fuse_window_attention", "fx_inference", "libfx_inference.so"},
    {"fuse_pointwise", "fx_inference", "libfx_inference.so"},
};

}  // namespace

const std::vector<NamedPipeline>& named_pipelines() {
  // The inference plugin's rewrites in the order its README gives
  // (BENCHMARKS.md's fast path); each keeps tensor_meta and declares its
  // tolerance.
  static const auto* table = new std::vector<NamedPipeline>{
      {"O1",
       "cleanups that never change a number: dead code, then common "
       "subexpressions",
       "dce,cse", "graph_module"},
      {"O2",
       "O1, then BatchNorm folded into convolutions and the conv, linear, "
       "matmul, windowed attention and elementwise fusions of the "
       "InferencePlan",
       "dce,cse,shape_prop,fold_bn,fuse_conv,fuse_linear,fuse_matmul,"
       "fuse_window_attention,fuse_pointwise",
       "inference_plan"},
      {"inference",
       "the InferencePlan's fast path (BENCHMARKS.md): BatchNorm folded, "
       "conv/linear/matmul with their tails on oneDNN, Swin's windowed "
       "attention as one step, elementwise chains fused",
       "shape_prop,fold_bn,fuse_conv,fuse_linear,fuse_matmul,"
       "fuse_window_attention,fuse_pointwise",
       "inference_plan"},
  };
  return *table;
}

const NamedPipeline* find_named_pipeline(std::string_view name) {
  for (const NamedPipeline& p : named_pipelines()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

bool uses_pass(const NamedPipeline& pipeline, std::string_view pass) {
  for (std::string_view p : split(pipeline.passes, ',')) {
    if (p == pass) return true;
  }
  return false;
}

std::string named_pipeline_names() {
  std::vector<std::string_view> names;
  for (const NamedPipeline& p : named_pipelines()) names.push_back(p.name);
  return join(names, ", ");
}

std::string first_party_plugin_of(std::string_view pass) {
  for (const PassHome& home : kPassHomes) {
    if (home.pass == pass) return cat(home.plugin, " (", home.library, ")");
  }
  return {};
}

}  // namespace fx::host
