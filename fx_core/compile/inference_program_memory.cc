// InferencePlan::Program: planning the direct steps' result buffers from
// liveness (alias groups, the buffer pool, results written in place).
#include "fx_core/compile/inference_program.h"

namespace fx {

// Binds direct candidates in graph order (operands may come from earlier
// candidates' buffers), giving them buffers planned from liveness.
void InferencePlan::Program::plan_direct() {
  AliasGroups groups(num_slots);
  std::vector<bool> candidate = find_candidates(groups);
  GroupLiveness live = group_liveness(groups);
  residuals_in_place(candidate, groups, &live);
  // The groups whose last use is each step; escaping groups keep theirs.
  std::vector<std::vector<int32_t>> groups_ending(steps.size());
  for (size_t s = 0; s < num_slots; ++s) {
    if (groups.is_root(s) && !live.escapes[s]) {
      groups_ending[live.last[s]].push_back(static_cast<int32_t>(s));
    }
  }
  std::vector<int> family_of;
  std::vector<CatFamily> families =
      find_cat_families(candidate, groups, live, &family_of);
  BufferPool pool(num_slots, shared_buffers);
  for (size_t i = 0; i < steps.size(); ++i) {
    if (family_of[i] >= 0) {
      place_cat_in_place(steps[i], families[family_of[i]], pool);
    } else if (candidate[i] && steps[i].onednn) {
      place_onednn(steps[i], groups, live, pool);
    } else if (candidate[i]) {
      place_direct(steps[i], i, groups, live, pool);
    }
    for (int32_t r : groups_ending[i]) pool.release_group(r);
  }
  buffers = pool.tensors();
  if (shared_buffers) buffers_generation = shared_buffers->generation();
}

// The steps a direct kernel may run. Any other call's result may alias its
// tensor arguments (views, in-place modules): one group.
std::vector<bool> InferencePlan::Program::find_candidates(AliasGroups& groups) {
  std::vector<bool> candidate(steps.size(), false);
  for (size_t i = 0; i < steps.size(); ++i) {
    Step& step = steps[i];
    candidate[i] = step.onednn || bind_direct(step);
    if (!candidate[i] && step.is_call()) {
      for (const Source& s : step.params) {
        s.for_each_slot([&](int32_t slot) { groups.unite(step.slot, slot); });
      }
    }
  }
  return candidate;
}

InferencePlan::Program::GroupLiveness InferencePlan::Program::group_liveness(
    AliasGroups& groups) const {
  std::vector<bool> escapes(num_slots, false);
  for (const Step& step : steps) {
    if (step.kind != Step::Kind::kOutput) continue;
    for (const Source& s : step.params) {
      s.for_each_slot([&](int32_t slot) { escapes[slot] = true; });
    }
  }
  GroupLiveness live{std::vector<size_t>(num_slots, 0),
                     std::vector<bool>(num_slots, false)};
  for (size_t s = 0; s < num_slots; ++s) {
    int32_t r = groups.find(static_cast<int32_t>(s));
    live.last[r] = std::max(live.last[r], last_use[s]);
    if (escapes[s]) live.escapes[r] = true;
  }
  return live;
}

// The step's result buffer (fresh each run when its group escapes; a dead
// operand's, else one from the pool) and its TensorIterator; on failure the
// step is left to the registry (its group keeps the buffer taken until the
// group's end).
void InferencePlan::Program::place_direct(Step& step, size_t index,
                                          AliasGroups& groups,
                                          const GroupLiveness& live,
                                          BufferPool& pool) {
  const int32_t r = groups.find(step.slot);
  step.fresh = live.escapes[r];
  at::Tensor out;
  if (step.fresh) {
    out = at::empty_strided(step.out_meta.sizes, step.out_meta.strides,
                            at::TensorOptions().dtype(step.out_meta.dtype));
  } else {
    step.in_place = take_dead_operand(step, index, groups, live, pool, &out);
    if (!step.in_place) out = pool.take(step.out_meta, r, &buffer_bytes);
    step.buffer = out;
  }
  make_operands(step);
  bool ok = true;
  try {
    at::TensorIterator it =
        step.pointwise ? step.pointwise->make_iterator(out, step.operands)
                       : make_iterator(step.direct_op, out, step.operands);
    ok = iterates_in_place(it, out, step.operands);
    if (ok) step.iter.emplace(std::move(it));
  } catch (const c10::Error&) {
    ok = false;
  }
  if (!ok) {
    step.variable.clear();
    step.operands.clear();
    step.buffer = at::Tensor();
    step.pointwise.reset();
    step.in_place = false;
    return;
  }
  step.direct = true;
  if (step.fresh) step.buffer = at::Tensor();
}

// In place: an operand held in a planned buffer (a direct or oneDNN step's,
// not fresh) whose alias group is dead after step `index` and whose layout
// is the result's gives the result its buffer (handed over to the result's
// group). Elementwise kernels read each element before writing it at the
// same offset, so out may be that operand.
bool InferencePlan::Program::take_dead_operand(Step& step, size_t index,
                                               AliasGroups& groups,
                                               const GroupLiveness& live,
                                               BufferPool& pool,
                                               at::Tensor* out) {
  const bool pointwise = step.direct_op == DirectOp::kPointwise;
  for (size_t i = 0; i < step.num_operands; ++i) {
    const Source& s = operand_source(step, i, pointwise);
    if (s.kind != Source::Kind::kSlot) continue;
    const Step& producer = steps[s.slot];
    const int32_t g = groups.find(s.slot);
    if (!producer.direct || producer.fresh || !producer.buffer.defined() ||
        live.escapes[g] || live.last[g] != index ||
        !producer.out_meta.same_layout(step.out_meta) ||
        producer.out_meta.device != step.out_meta.device) {
      continue;
    }
    if (!only_reader_of_group(step, s.slot, groups) ||
        !pool.transfer(producer.buffer, g, groups.find(step.slot))) {
      continue;
    }
    *out = producer.buffer;
    return true;
  }
  return false;
}

// Whether no operand of `step` but `slot` itself may alias `slot` (a view of
// it read at other offsets would see the result being written).
bool InferencePlan::Program::only_reader_of_group(const Step& step,
                                                  int32_t slot,
                                                  AliasGroups& groups) const {
  const bool pointwise = step.direct_op == DirectOp::kPointwise;
  const int32_t g = groups.find(slot);
  for (size_t i = 0; i < step.num_operands; ++i) {
    const Source& s = operand_source(step, i, pointwise);
    if (s.kind == Source::Kind::kSlot && s.slot != slot &&
        groups.find(s.slot) == g) {
      return false;
    }
  }
  return true;
}

}  // namespace fx
