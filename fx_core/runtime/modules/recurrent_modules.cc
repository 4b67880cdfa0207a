// torch.nn's recurrent layers and cells (RNN, LSTM, GRU, RNNCell, LSTMCell,
// GRUCell), rebuilt from torch 1.13's torch/nn/modules/rnn.py.
//
// The parameters are Python's, in Python's order (weight_ih_l0,
// weight_hh_l0, bias_ih_l0, bias_hh_l0, weight_hr_l0, then _reverse and the
// next layer), so a bundle's weights load by name; forward is Python's:
// batch_first and unbatched inputs handled by unsqueezing, zero initial
// states, then ATen's fused operator (aten::lstm, gru, rnn_tanh, rnn_relu
// and the *_cell ones), which is what Python calls through _VF. Packed
// sequences cannot appear in a graph file, so they are not handled.
#include <ATen/ATen.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fx_core/runtime/modules/functional_module.h"
#include "fx_core/runtime/modules/module_spec.h"
#include "fx_core/runtime/value.h"
#include "fx_core/support/error.h"
#include "fx_core/support/strings.h"

namespace fx {
namespace {

using c10::IValue;
using nn::FunctionalModuleImpl;

enum class Cell { kRnnTanh, kRnnRelu, kLstm, kGru };

int64_t gate_count(Cell cell) {
  return cell == Cell::kLstm ? 4 : cell == Cell::kGru ? 3 : 1;
}

Cell rnn_cell(const std::string& nonlinearity) {
  if (nonlinearity == "tanh") return Cell::kRnnTanh;
  if (nonlinearity == "relu") return Cell::kRnnRelu;
  throw FxError(cat("Unknown nonlinearity '", nonlinearity,
                    "'. Select from 'tanh' or 'relu'."));
}

// The layer's configuration, from the constructor arguments.
struct Layers {
  int64_t input_size, hidden_size, num_layers, proj_size, directions;
  bool bias, batch_first, bidirectional;
  double dropout;
  int64_t real_hidden() const {
    return proj_size > 0 ? proj_size : hidden_size;
  }
};

Layers layers_of(const FunctionalModuleImpl& m) {
  Layers l;
  l.input_size = m.config("input_size").toInt();
  l.hidden_size = m.config("hidden_size").toInt();
  l.num_layers = m.config("num_layers").toInt();
  l.bias = m.config("bias").toBool();
  l.batch_first = m.config("batch_first").toBool();
  l.dropout = m.config("dropout").toScalar().toDouble();
  l.bidirectional = m.config("bidirectional").toBool();
  l.proj_size = m.config("proj_size").toInt();
  l.directions = l.bidirectional ? 2 : 1;
  return l;
}

// RNNBase._flat_weights_names, with each weight's shape.
std::vector<std::pair<std::string, std::vector<int64_t>>> flat_weights(
    const Layers& l, Cell cell) {
  int64_t gates = gate_count(cell) * l.hidden_size;
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  for (int64_t layer = 0; layer < l.num_layers; ++layer) {
    for (int64_t dir = 0; dir < l.directions; ++dir) {
      std::string suffix = cat("_l", layer, dir == 1 ? "_reverse" : "");
      int64_t in = layer == 0 ? l.input_size : l.real_hidden() * l.directions;
      out.push_back({cat("weight_ih", suffix), {gates, in}});
      out.push_back({cat("weight_hh", suffix), {gates, l.real_hidden()}});
      if (l.bias) {
        out.push_back({cat("bias_ih", suffix), {gates}});
        out.push_back({cat("bias_hh", suffix), {gates}});
      }
      if (l.proj_size > 0) {
        out.push_back({cat("weight_hr", suffix), {l.proj_size, l.hidden_size}});
      }
    }
  }
  return out;
}

at::Tensor parameter(FunctionalModuleImpl& m, const std::string& name) {
  c10::optional<at::Tensor> p = m.tensor(name);
  if (!p) throw FxError(cat(m.name(), " has no parameter ", name));
  return *p;
}

// The initial hidden state given to a batched call.
at::Tensor batched_state(const at::Tensor& h, bool is_batched,
                         const std::string& type) {
  int64_t want = is_batched ? 3 : 2;
  if (h.dim() != want) {
    throw FxError(cat(type, ": for ",
                      is_batched ? "batched 3-D" : "unbatched 2-D",
                      " input, hx should also be ", want, "-D but got ",
                      h.dim(), "-D tensor"));
  }
  return is_batched ? h : h.unsqueeze(1);
}

// RNN / LSTM / GRU.forward(input, hx=None)
IValue layer_forward(FunctionalModuleImpl& m, OpArgs& a, Cell cell) {
  Layers l = layers_of(m);
  at::Tensor input = a.tensor(0);
  if (input.dim() != 2 && input.dim() != 3) {
    throw FxError(cat(m.name(),
                      ": Expected input to be 2-D or 3-D but received ",
                      input.dim(), "-D tensor"));
  }
  bool is_batched = input.dim() == 3;
  int64_t batch_dim = l.batch_first ? 0 : 1;
  if (!is_batched) input = input.unsqueeze(batch_dim);
  int64_t batch = input.size(l.batch_first ? 0 : 1);
  std::vector<at::Tensor> hx;
  if (a.is_none(1)) {
    int64_t states = l.num_layers * l.directions;
    hx.push_back(at::zeros({states, batch, l.real_hidden()}, input.options()));
    if (cell == Cell::kLstm) {
      hx.push_back(at::zeros({states, batch, l.hidden_size}, input.options()));
    }
  } else if (cell == Cell::kLstm) {
    for (const IValue& h : sequence_elements(a[1])) {
      hx.push_back(batched_state(h.toTensor(), is_batched, m.name()));
    }
  } else {
    hx.push_back(batched_state(a.tensor(1), is_batched, m.name()));
  }
  std::vector<at::Tensor> weights;
  for (const auto& [name, shape] : flat_weights(l, cell)) {
    weights.push_back(parameter(m, name));
  }
  bool train = m.is_training();
  at::Tensor output;
  std::vector<at::Tensor> hidden;
  if (cell == Cell::kLstm) {
    auto [out, h, c] =
        at::lstm(input, hx, weights, l.bias, l.num_layers, l.dropout, train,
                 l.bidirectional, l.batch_first);
    output = out;
    hidden = {h, c};
  } else {
    std::tuple<at::Tensor, at::Tensor> r;
    if (cell == Cell::kGru) {
      r = at::gru(input, hx[0], weights, l.bias, l.num_layers, l.dropout, train,
                  l.bidirectional, l.batch_first);
    } else if (cell == Cell::kRnnTanh) {
      r = at::rnn_tanh(input, hx[0], weights, l.bias, l.num_layers, l.dropout,
                       train, l.bidirectional, l.batch_first);
    } else {
      r = at::rnn_relu(input, hx[0], weights, l.bias, l.num_layers, l.dropout,
                       train, l.bidirectional, l.batch_first);
    }
    output = std::get<0>(r);
    hidden = {std::get<1>(r)};
  }
  if (!is_batched) {
    output = output.squeeze(batch_dim);
    for (at::Tensor& h : hidden) h = h.squeeze(1);
  }
  if (cell != Cell::kLstm) return make_tuple({output, hidden[0]});
  return make_tuple({output, make_tuple({hidden[0], hidden[1]})});
}

// RNNCell / LSTMCell / GRUCell.forward(input, hx=None)
IValue cell_forward(FunctionalModuleImpl& m, OpArgs& a, Cell cell) {
  at::Tensor input = a.tensor(0);
  if (input.dim() != 1 && input.dim() != 2) {
    throw FxError(cat(m.name(), ": Expected input to be 1D or 2D, got ",
                      input.dim(), "D instead"));
  }
  bool is_batched = input.dim() == 2;
  if (!is_batched) input = input.unsqueeze(0);
  int64_t hidden = m.config("hidden_size").toInt();
  std::vector<at::Tensor> hx;
  if (a.is_none(1)) {
    at::Tensor zeros = at::zeros({input.size(0), hidden}, input.options());
    hx.assign(cell == Cell::kLstm ? 2 : 1, zeros);
  } else if (cell == Cell::kLstm) {
    for (const IValue& h : sequence_elements(a[1])) {
      hx.push_back(is_batched ? h.toTensor() : h.toTensor().unsqueeze(0));
    }
  } else {
    hx.push_back(is_batched ? a.tensor(1) : a.tensor(1).unsqueeze(0));
  }
  bool bias = m.config("bias").toBool();
  at::Tensor w_ih = parameter(m, "weight_ih"), w_hh = parameter(m, "weight_hh");
  c10::optional<at::Tensor> b_ih, b_hh;
  if (bias) {
    b_ih = parameter(m, "bias_ih");
    b_hh = parameter(m, "bias_hh");
  }
  auto unbatch = [is_batched](const at::Tensor& t) {
    return is_batched ? t : t.squeeze(0);
  };
  if (cell == Cell::kLstm) {
    auto [h, c] = at::lstm_cell(input, hx, w_ih, w_hh, b_ih, b_hh);
    return make_tuple({unbatch(h), unbatch(c)});
  }
  at::Tensor h = cell == Cell::kGru
                     ? at::gru_cell(input, hx[0], w_ih, w_hh, b_ih, b_hh)
                 : cell == Cell::kRnnTanh
                     ? at::rnn_tanh_cell(input, hx[0], w_ih, w_hh, b_ih, b_hh)
                     : at::rnn_relu_cell(input, hx[0], w_ih, w_hh, b_ih, b_hh);
  return unbatch(h);
}

Cell configured_cell(const FunctionalModuleImpl& m, Cell fixed) {
  if (fixed != Cell::kRnnTanh) return fixed;
  return rnn_cell(m.config("nonlinearity").toStringRef());
}

FunctionalModuleSpec layer_spec(const char* type, Cell cell) {
  std::string init =
      "input_size, hidden_size, num_layers=1, bias=True, batch_first=False, "
      "dropout=0.0, bidirectional=False, proj_size=0, device=None, "
      "dtype=None";
  if (cell == Cell::kRnnTanh) init += ", nonlinearity='tanh'";
  FunctionalModuleSpec spec{type, init, "input, hx=None", "", {}};
  spec.config_rules = {
      ints_at_least("input_size", 0), ints_at_least("hidden_size", 1),
      ints_in("num_layers", 1, kMaxRepeatCount), ints_at_least("proj_size", 0),
      float_in("dropout", 0, 1)};
  // Before the weights are sized: what the constructor refuses.
  spec.check_config = [cell, type](OpArgs& a) {
    Cell c = cell == Cell::kRnnTanh ? rnn_cell(a.to_string(10)) : cell;
    int64_t proj_size = a.to_int(7);
    if (proj_size > 0 && c != Cell::kLstm) {
      throw FxError(
          "proj_size argument is only supported for LSTM, not RNN or GRU");
    }
    if (proj_size >= a.to_int(1) && proj_size != 0) {
      throw FxError(cat(type,
                        ": proj_size has to be a positive integer "
                        "smaller than hidden_size"));
    }
  };
  spec.weight_shapes = [cell](OpArgs& a) {
    Layers l{};
    l.input_size = a.to_int(0);
    l.hidden_size = a.to_int(1);
    l.num_layers = a.to_int(2);
    l.bias = a.to_bool(3);
    l.bidirectional = a.to_bool(6);
    l.proj_size = a.to_int(7);
    l.directions = l.bidirectional ? 2 : 1;
    return flat_weights(l, cell);  // RNN: tanh or relu, one gate either way
  };
  spec.parameters = [cell, type](FunctionalModuleImpl& m, OpArgs&) {
    Cell c = configured_cell(m, cell);
    Layers l = layers_of(m);
    if (l.proj_size > 0 && c != Cell::kLstm) {
      throw FxError(
          "proj_size argument is only supported for LSTM, not RNN or GRU");
    }
    if (l.proj_size < 0 || l.proj_size >= l.hidden_size) {
      if (l.proj_size != 0) {
        throw FxError(cat(type,
                          ": proj_size has to be a positive integer "
                          "smaller than hidden_size"));
      }
    }
    for (const auto& [name, shape] : flat_weights(l, c)) {
      m.register_parameter(name, at::zeros(shape));
    }
  };
  spec.custom = [cell](FunctionalModuleImpl& m, OpArgs& a) {
    return layer_forward(m, a, configured_cell(m, cell));
  };
  return spec;
}

FunctionalModuleSpec cell_spec(const char* type, Cell cell) {
  std::string init = "input_size, hidden_size, bias=True";
  if (cell == Cell::kRnnTanh) init += ", nonlinearity='tanh'";
  init += ", device=None, dtype=None";
  FunctionalModuleSpec spec{type, init, "input, hx=None", "", {}};
  spec.config_rules = {ints_at_least("input_size", 0),
                       ints_at_least("hidden_size", 1)};
  // Before nonlinearity is checked: an LSTM or GRU cell's gate count.
  spec.weight_shapes = [cell](OpArgs& a) {
    int64_t input = a.to_int(0), hidden = a.to_int(1);
    int64_t gates = gate_count(cell) * hidden;
    WeightShapes shapes = {{"weight_ih", {gates, input}},
                           {"weight_hh", {gates, hidden}}};
    if (a.to_bool(2)) {
      shapes.push_back({"bias_ih", {gates}});
      shapes.push_back({"bias_hh", {gates}});
    }
    return shapes;
  };
  spec.parameters = [cell](FunctionalModuleImpl& m, OpArgs&) {
    Cell c = configured_cell(m, cell);
    int64_t input = m.config("input_size").toInt();
    int64_t hidden = m.config("hidden_size").toInt();
    int64_t gates = gate_count(c) * hidden;
    m.register_parameter("weight_ih", at::zeros({gates, input}));
    m.register_parameter("weight_hh", at::zeros({gates, hidden}));
    if (m.config("bias").toBool()) {
      m.register_parameter("bias_ih", at::zeros({gates}));
      m.register_parameter("bias_hh", at::zeros({gates}));
    }
  };
  spec.custom = [cell](FunctionalModuleImpl& m, OpArgs& a) {
    return cell_forward(m, a, configured_cell(m, cell));
  };
  return spec;
}

}  // namespace

void add_recurrent_specs(std::vector<FunctionalModuleSpec>* specs) {
  specs->push_back(layer_spec("RNN", Cell::kRnnTanh));
  specs->push_back(layer_spec("LSTM", Cell::kLstm));
  specs->push_back(layer_spec("GRU", Cell::kGru));
  specs->push_back(cell_spec("RNNCell", Cell::kRnnTanh));
  specs->push_back(cell_spec("LSTMCell", Cell::kLstm));
  specs->push_back(cell_spec("GRUCell", Cell::kGru));
}

}  // namespace fx
