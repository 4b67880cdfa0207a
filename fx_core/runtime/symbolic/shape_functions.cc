#include "fx_core/runtime/symbolic/shape_functions.h"

#include <torch/csrc/api/include/torch/jit.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/operator.h>
#include <torch/csrc/jit/runtime/symbolic_shape_registry.h>

#include <map>
#include <mutex>
#include <string>

#include "fx_core/support/strings.h"

namespace fx {
namespace {

// Operators whose shape rule is LibTorch's rule for another schema with the
// same leading arguments ("name.overload", "" for the default overload).
const std::map<std::string, std::string>& donors() {
  static const auto* kDonors = new std::map<std::string, std::string>{
      // The shape of self.
      {"aten::clone.", "aten::relu."},
      {"aten::detach.", "aten::relu."},
      {"aten::alias.", "aten::relu."},
      {"aten::lift_fresh_copy.", "aten::relu."},
      {"aten::_to_copy.", "aten::relu."},
      {"aten::_softmax.", "aten::relu."},
      {"aten::_log_softmax.", "aten::relu."},
      {"aten::log_softmax.int", "aten::relu."},
      {"aten::fill_.Scalar", "aten::relu."},
      {"aten::fill.Scalar", "aten::relu."},
      {"aten::zero_.", "aten::relu."},
      {"aten::copy_.", "aten::relu."},
      {"aten::masked_fill.Scalar", "aten::relu."},
      {"aten::masked_fill_.Scalar", "aten::relu."},
      {"aten::scatter.src", "aten::relu."},
      {"aten::scatter.value", "aten::relu."},
      {"aten::bitwise_not.", "aten::relu."},
      {"aten::logical_not.", "aten::relu."},
      {"aten::sign.", "aten::relu."},
      {"aten::sgn.", "aten::relu."},
      {"aten::square.", "aten::relu."},
      {"aten::exp2.", "aten::relu."},
      {"aten::hardtanh_backward.", "aten::relu."},
      {"aten::threshold_backward.", "aten::relu."},
      {"aten::_masked_scale.", "aten::relu."},
      {"aten::add.Scalar", "aten::relu."},
      {"aten::leaky_relu.", "aten::relu."},
      {"aten::clamp_min.", "aten::relu."},
      {"aten::clamp_max.", "aten::relu."},
      {"aten::pow.Tensor_Scalar", "aten::relu."},
      {"aten::rsub.Scalar", "aten::relu."},
      {"aten::relu_.", "aten::relu."},
      {"aten::native_dropout_backward.", "aten::relu."},
      // Broadcast of the first two tensors.
      {"aten::pow.Tensor_Tensor", "aten::add.Tensor"},
      {"aten::maximum.", "aten::add.Tensor"},
      {"aten::minimum.", "aten::add.Tensor"},
      {"aten::logical_and.", "aten::add.Tensor"},
      {"aten::logical_or.", "aten::add.Tensor"},
      {"aten::logical_xor.", "aten::add.Tensor"},
      {"aten::bitwise_and.Tensor", "aten::add.Tensor"},
      {"aten::bitwise_or.Tensor", "aten::add.Tensor"},
      {"aten::masked_fill.Tensor", "aten::add.Tensor"},
      {"aten::rsub.Tensor", "aten::add.Tensor"},
      {"aten::floor_divide.", "aten::add.Tensor"},
      // view's rule (an inferred -1 included).
      {"aten::_unsafe_view.", "aten::view."},
      {"aten::reshape.", "aten::view."},
      {"aten::view.", "aten::view."},
      // Reductions over dims.
      {"aten::amax.", "aten::sum.dim_IntList"},
      {"aten::amin.", "aten::sum.dim_IntList"},
      {"aten::mean.dim", "aten::sum.dim_IntList"},
      // Adaptive pooling to output sizes.
      {"aten::_adaptive_avg_pool2d.", "aten::adaptive_avg_pool2d."},
  };
  return *kDonors;
}

// Rules LibTorch 1.13 does not have, in its own form (TorchScript functions
// of the inputs' sizes).
constexpr const char* kOwnSource = R"TS(
def same_size(self: List[int], size: List[int]):
    out: List[int] = []
    for s in size:
        out.append(s)
    return out

def factory(size: List[int]):
    out: List[int] = []
    for s in size:
        assert s >= 0
        out.append(s)
    return out

def two_of_self(self: List[int]):
    a: List[int] = []
    b: List[int] = []
    for s in self:
        a.append(s)
        b.append(s)
    return a, b

def wrap_dim(dim: int, rank: int):
    if rank <= 0:
        rank = 1
    assert dim >= -rank and dim < rank
    if dim < 0:
        dim += rank
    return dim

def split_with_sizes(self: List[int], split_sizes: List[int], dim: int = 0):
    d = wrap_dim(dim, len(self))
    total = 0
    out: List[List[int]] = []
    for n in split_sizes:
        part: List[int] = []
        for s in self:
            part.append(s)
        part[d] = n
        total = total + n
        out.append(part)
    assert total == self[d]
    return out

def split(self: List[int], split_size: int, dim: int = 0):
    d = wrap_dim(dim, len(self))
    assert split_size > 0
    chunks = (self[d] + split_size - 1) // split_size
    out: List[List[int]] = []
    for i in range(chunks):
        part: List[int] = []
        for s in self:
            part.append(s)
        if i == chunks - 1:
            part[d] = self[d] - split_size * (chunks - 1)
        else:
            part[d] = split_size
        out.append(part)
    return out

def unbind(self: List[int], dim: int = 0):
    d = wrap_dim(dim, len(self))
    out: List[List[int]] = []
    for i in range(self[d]):
        part: List[int] = []
        for j in range(len(self)):
            if j != d:
                part.append(self[j])
        out.append(part)
    return out

def stack(tensors: List[List[int]], dim: int = 0):
    assert len(tensors) > 0
    d = wrap_dim(dim, len(tensors[0]) + 1)
    for t in tensors:
        assert len(t) == len(tensors[0])
        for j in range(len(t)):
            assert t[j] == tensors[0][j]
    out: List[int] = []
    for s in tensors[0]:
        out.append(s)
    out.insert(d, len(tensors))
    return out

def native_group_norm(input: List[int], weight: Optional[List[int]], bias: Optional[List[int]], N: int, C: int, HxW: int, group: int):
    out: List[int] = []
    for s in input:
        out.append(s)
    return out, [N, group], [N, group]

def var_mean(self: List[int], dim: Optional[List[int]], correction: Optional[int], keepdim: bool = False):
    out: List[int] = []
    dims: List[int] = []
    if dim is not None:
        for d in dim:
            dims.append(wrap_dim(d, len(self)))
    for i in range(len(self)):
        reduced = dim is None or len(dims) == 0 or i in dims
        if not reduced:
            out.append(self[i])
        elif keepdim:
            out.append(1)
    return out, out

def bmm_like(self: List[int], batch1: List[int], batch2: List[int]):
    assert len(batch1) == 3 and len(batch2) == 3
    assert batch1[0] == batch2[0] and batch1[2] == batch2[1]
    return [batch1[0], batch1[1], batch2[2]]

def gather(self: List[int], dim: int, index: List[int]):
    out: List[int] = []
    for s in index:
        out.append(s)
    return out

def constant_pad_nd(self: List[int], pad: List[int]):
    assert len(pad) % 2 == 0 and len(pad) // 2 <= len(self)
    out: List[int] = []
    for s in self:
        out.append(s)
    n = len(self)
    for i in range(len(pad) // 2):
        out[n - 1 - i] = out[n - 1 - i] + pad[2 * i] + pad[2 * i + 1]
        assert out[n - 1 - i] >= 0
    return out

def upsample(self: List[int], output_size: List[int]):
    assert len(self) == len(output_size) + 2
    out: List[int] = [self[0], self[1]]
    for s in output_size:
        assert s > 0
        out.append(s)
    return out

def avg_pool2d(self: List[int], kernel_size: List[int], stride: List[int], padding: List[int], ceil_mode: bool = False):
    assert not ceil_mode
    assert len(self) == 3 or len(self) == 4
    kh = kernel_size[0]
    kw = kh if len(kernel_size) == 1 else kernel_size[1]
    sh = kh if len(stride) == 0 else stride[0]
    sw = sh if len(stride) <= 1 else stride[1]
    ph = padding[0]
    pw = ph if len(padding) == 1 else padding[1]
    n = len(self)
    out: List[int] = []
    for i in range(n - 2):
        out.append(self[i])
    out.append((self[n - 2] + 2 * ph - kh) // sh + 1)
    out.append((self[n - 1] + 2 * pw - kw) // sw + 1)
    return out
)TS";

// Own rules by "name.overload": the function's name.
const std::map<std::string, std::string>& own_rules() {
  static const auto* kOwn = new std::map<std::string, std::string>{
      {"aten::_reshape_alias.", "same_size"},
      {"aten::new_zeros.", "same_size"},
      {"aten::new_ones.", "same_size"},
      {"aten::new_empty.", "same_size"},
      {"aten::new_full.", "same_size"},
      {"aten::expand_copy.", "same_size"},
      {"aten::empty.memory_format", "factory"},
      {"aten::zeros.", "factory"},
      {"aten::ones.", "factory"},
      {"aten::full.", "factory"},
      {"aten::rand.", "factory"},
      {"aten::randn.", "factory"},
      {"aten::native_dropout.", "two_of_self"},
      {"aten::split_with_sizes.", "split_with_sizes"},
      {"aten::split.Tensor", "split"},
      {"aten::unbind.int", "unbind"},
      {"aten::stack.", "stack"},
      {"aten::native_group_norm.", "native_group_norm"},
      {"aten::var_mean.correction", "var_mean"},
      {"aten::baddbmm.", "bmm_like"},
      {"aten::gather.", "gather"},
      {"aten::constant_pad_nd.", "constant_pad_nd"},
      {"aten::avg_pool2d.", "avg_pool2d"},
      // The upsampling operators given output sizes (interpolate's).
      {"aten::upsample_nearest1d.", "upsample"},
      {"aten::upsample_nearest2d.", "upsample"},
      {"aten::upsample_nearest3d.", "upsample"},
      {"aten::_upsample_nearest_exact1d.", "upsample"},
      {"aten::_upsample_nearest_exact2d.", "upsample"},
      {"aten::_upsample_nearest_exact3d.", "upsample"},
      {"aten::upsample_linear1d.", "upsample"},
      {"aten::upsample_bilinear2d.", "upsample"},
      {"aten::upsample_bicubic2d.", "upsample"},
      {"aten::upsample_trilinear3d.", "upsample"},
      {"aten::_upsample_bilinear2d_aa.", "upsample"},
      {"aten::_upsample_bicubic2d_aa.", "upsample"},
  };
  return *kOwn;
}

std::shared_ptr<const torch::jit::Graph> own_graph(const std::string& name) {
  static std::mutex mutex;
  static std::shared_ptr<torch::jit::CompilationUnit> unit;
  static std::map<std::string, std::shared_ptr<torch::jit::Graph>> graphs;
  std::lock_guard<std::mutex> lock(mutex);
  if (!unit) unit = torch::jit::compile(kOwnSource);
  auto& g = graphs[name];
  if (!g) {
    g = toGraphFunction(unit->get_function(name)).graph()->copy();
    torch::jit::Inline(*g);
    torch::jit::EliminateDeadCode(g);
  }
  return g;
}

// LibTorch's registered rule for the operator `key` ("aten::relu.").
std::shared_ptr<const torch::jit::Graph> registered(const std::string& key) {
  size_t dot = key.rfind('.');
  std::string name = key.substr(0, dot), overload = key.substr(dot + 1);
  for (const auto& op :
       torch::jit::getAllOperatorsFor(c10::Symbol::fromQualString(name))) {
    if (op->schema().overload_name() != overload) continue;
    auto g = torch::jit::shapeComputeGraphForSchema(op->schema());
    if (g) return *g;
  }
  return nullptr;
}

}  // namespace

std::shared_ptr<const torch::jit::Graph> shape_graph_for(
    const c10::FunctionSchema& schema) {
  if (auto g = torch::jit::shapeComputeGraphForSchema(schema)) return *g;
  std::string key = cat(schema.name(), ".", schema.overload_name());
  if (auto d = donors().find(key); d != donors().end()) {
    return registered(d->second);
  }
  if (auto o = own_rules().find(key); o != own_rules().end()) {
    return own_graph(o->second);
  }
  return registered(key);
}

}  // namespace fx
