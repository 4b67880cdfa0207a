#include "tests/testing/onednn_support.h"

#include <ATen/ATen.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <vector>

#include "fx_core/compile/onednn_conv.h"

namespace fx::testing {
namespace {

// A convolution OnednnConv::winograd_applies accepts: 16 channels, 3x3,
// stride 1, padding 1, no groups, residual or dilation.
bool onednn_builds_winograd() {
  FusedConvParams p;
  p.stride = {1, 1};
  p.padding = {1, 1};
  p.dilation = {1, 1};
  at::Tensor w = at::zeros({16, 16, 3, 3}), b = at::zeros({16});
  if (!OnednnConv::winograd_applies(w, p)) return false;
  return OnednnConv::create(w, b, p, {1, 16, 28, 28},
                            ConvAlgorithm::kWinograd) != nullptr;
}

// oneDNN's first implementation of the fused pair at `stride`, or "" when
// it has none.
std::string fused_depthwise_implementation(int stride) {
  using dnnl::memory;
  using Dt = memory::data_type;
  using Tag = memory::format_tag;
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  const memory::desc src({4, 16, 56, 56}, Dt::f32, Tag::nChw16c);
  const memory::desc dst({4, 48, 56, 56}, Dt::f32, Tag::nChw16c);
  const memory::desc weights({48, 16, 1, 1}, Dt::f32, Tag::any);
  const memory::desc bias({48}, Dt::f32, Tag::x);
  dnnl::post_ops ops;
  ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  if (stride == 1) {
    ops.append_dw_k3s1p1(Dt::f32, Dt::f32, Dt::f32, 0, {});
  } else {
    ops.append_dw_k3s2p1(Dt::f32, Dt::f32, Dt::f32, 0, {});
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  try {
    const dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        src, weights, bias, dst, {1, 1}, {0, 0}, {0, 0});
    return dnnl::convolution_forward::primitive_desc(desc, attr, engine)
        .impl_info_str();
  } catch (const dnnl::error&) {
    return "";
  }
}

}  // namespace

std::string depthwise_fusion_skip_reason() {
  static const std::string reason = [] {
    for (int stride : {1, 2}) {
      const std::string name = fused_depthwise_implementation(stride);
      if (name.empty() || name.rfind("ref", 0) == 0) {
        return "oneDNN has no kernel of its own for a 1x1 convolution with a "
               "depthwise one after it on this CPU (stride " +
               std::to_string(stride) + ": " +
               (name.empty() ? std::string("none") : name) +
               "); plans run the two apart here";
      }
    }
    return std::string();
  }();
  return reason;
}

std::string winograd_skip_reason() {
  static const bool available = onednn_builds_winograd();
  if (available) return "";
  return "oneDNN declines its Winograd convolution on this CPU (it implements "
         "it for AVX-512 only); plans run the direct kernel here";
}

}  // namespace fx::testing
