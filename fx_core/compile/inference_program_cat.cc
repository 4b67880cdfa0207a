// InferencePlan::Program: concatenations written in place.
//
// DenseNet concatenates every earlier feature map before each layer
// (torch.cat([x0, n1, ..., nk], 1), then the layer's BatchNorm and ReLU:
// one fused pointwise step), and once more at the end of each block: a
// block of L layers copies O(L^2) feature maps, 7% of densenet121 at batch 1
// (2.5 of 35 ms, FX_PLAN_PROFILE). Here the cats of one such family share
// one buffer of the widest cat's layout: each piece is copied into its
// slice once, by the first cat that holds it, and every cat's result is the
// view of the buffer's first pieces (the widest's: the buffer itself).
//
// A family: the torch.cat calls of one alias group (a registry call's
// result joins its arguments' group, so cats sharing pieces are one
// group), all along one dimension, each concatenating a prefix of the
// widest one's list of pieces; their results float32 CPU tensors that do
// not reach the graph's output, read only by elementwise steps the plan
// runs itself (direct ATen kernels, fused pointwise steps: they take a
// strided view as it lies; their registry kernels too, should binding
// them fail). The group lives until its last reader, so the buffer does.
// A piece that is a planned buffer is copied by an iterator built with
// the plan; any other piece from its slot, at run time. A run that left
// the plan runs the cats' registry kernel (at::cat), as for any other
// direct step; their readers then do the same.
#include <algorithm>
#include <map>

#include "fx_core/compile/inference_program.h"

namespace fx {
namespace {

// The pieces (slots) and dimension of a call of torch.cat on a list of
// values with a constant dimension; false for any other step.
bool cat_call(const CompiledStep& step, std::vector<int32_t>* pieces,
              int64_t* dim) {
  if (step.kind != CompiledStep::Kind::kCallOp || step.slot < 0 ||
      step.op->target != "torch.cat") {
    return false;
  }
  const std::vector<const ValueSource*> args = positional_sources(step.params);
  if (args.empty() || args.size() > 2 ||
      args[0]->kind != ValueSource::Kind::kList) {
    return false;
  }
  *dim = 0;
  if (args.size() == 2) {
    if (args[1]->kind != ValueSource::Kind::kConstant ||
        !args[1]->constant.isInt()) {
      return false;
    }
    *dim = args[1]->constant.toInt();
  }
  pieces->clear();
  for (const ValueSource& s : args[0]->items) {
    if (s.kind != ValueSource::Kind::kSlot) return false;
    pieces->push_back(s.slot);
  }
  return !pieces->empty();
}

struct CatMember {
  size_t index = 0;
  int32_t slot = -1;  // the cat's result
  std::vector<int32_t> pieces;
  int64_t dim = 0;
  bool joins = true;  // false: a cat its group's family cannot hold
};

// Whether `pieces` are of `whole`'s dtype and sizes but along `dim`, where
// they add up to it.
bool pieces_fill(const std::vector<int32_t>& pieces, const TensorMeta& whole,
                 int64_t dim, const std::vector<TensorMeta>& slot_meta) {
  int64_t total = 0;
  for (int32_t p : pieces) {
    const TensorMeta& m = slot_meta[p];
    if (!m.float_cpu() || m.dtype != whole.dtype ||
        m.sizes.size() != whole.sizes.size()) {
      return false;
    }
    for (size_t d = 0; d < m.sizes.size(); ++d) {
      if (static_cast<int64_t>(d) != dim && m.sizes[d] != whole.sizes[d]) {
        return false;
      }
    }
    total += m.sizes[dim];
  }
  return total == whole.sizes[dim];
}

// Whether one alias group's cats form a family (see the top of the file):
// the widest's position in `members`, or -1.
int widest_of_family(const std::vector<CatMember>& members,
                     const std::vector<TensorMeta>& slot_meta) {
  for (const CatMember& m : members) {
    if (!m.joins) return -1;
  }
  size_t widest = 0;
  for (size_t m = 1; m < members.size(); ++m) {
    if (members[m].pieces.size() > members[widest].pieces.size()) widest = m;
  }
  const std::vector<int32_t>& all = members[widest].pieces;
  for (const CatMember& m : members) {
    const TensorMeta& meta = slot_meta[m.slot];
    if (m.dim != members[widest].dim ||
        !std::equal(m.pieces.begin(), m.pieces.end(), all.begin()) ||
        !pieces_fill(m.pieces, meta, m.dim, slot_meta)) {
      return -1;
    }
  }
  return static_cast<int>(widest);
}

}  // namespace

// Whether the family's cats (steps `members`) are read only by elementwise
// steps the plan binds (not the output, not oneDNN), and every other value
// of their alias group (`root_of` gives each slot's group) only by steps
// the plan binds: a piece copied once must keep its value until the last
// cat, so no registry call, which might change it or an alias of it in
// place, may read one. (Bound steps write into an operand's buffer only
// once that operand's whole group is dead: take_dead_operand,
// residuals_in_place.)
bool InferencePlan::Program::family_reads_safe(
    const std::vector<size_t>& members, int32_t group,
    const std::vector<int32_t>& root_of,
    const std::vector<bool>& candidate) const {
  std::vector<bool> member_slot(num_slots, false);
  for (size_t i : members) member_slot[steps[i].slot] = true;
  for (size_t r = 0; r < steps.size(); ++r) {
    const Step& reader = steps[r];
    if (reader.slot >= 0 && member_slot[reader.slot]) continue;
    bool cat = false, other = false;
    for (const Source& s : reader.params) {
      s.for_each_slot([&](int32_t slot) {
        cat = cat || member_slot[slot];
        other = other || root_of[slot] == group;
      });
    }
    const bool bound = reader.kind == Step::Kind::kCallOp && candidate[r];
    if ((cat && (!bound || reader.onednn)) || (other && !candidate[r])) {
      return false;
    }
  }
  return true;
}

std::vector<InferencePlan::Program::CatFamily>
InferencePlan::Program::find_cat_families(const std::vector<bool>& candidate,
                                          AliasGroups& groups,
                                          const GroupLiveness& live,
                                          std::vector<int>* family_of) const {
  family_of->assign(steps.size(), -1);
  std::map<int32_t, std::vector<CatMember>> by_group;
  for (size_t i = 0; i < steps.size(); ++i) {
    CatMember m;
    m.index = i;
    m.slot = steps[i].slot;
    if (candidate[i] || !cat_call(steps[i], &m.pieces, &m.dim)) continue;
    const TensorMeta& meta = slot_meta[steps[i].slot];
    const auto rank = static_cast<int64_t>(meta.sizes.size());
    if (m.dim < 0) m.dim += rank;
    const int32_t g = groups.find(steps[i].slot);
    m.joins =
        meta.float_cpu() && m.dim >= 0 && m.dim < rank && !live.escapes[g];
    by_group[g].push_back(std::move(m));
  }
  std::vector<int32_t> root_of(num_slots);
  for (size_t s = 0; s < num_slots; ++s) {
    root_of[s] = groups.find(static_cast<int32_t>(s));
  }
  std::vector<CatFamily> families;
  for (const auto& [group, members] : by_group) {
    const int widest = widest_of_family(members, slot_meta);
    std::vector<size_t> indices;
    for (const CatMember& m : members) indices.push_back(m.index);
    if (widest < 0 || !family_reads_safe(indices, group, root_of, candidate)) {
      continue;
    }
    // A cat that is a piece of a wider one would be copied into itself.
    bool nested = false;
    for (int32_t piece : members[widest].pieces) {
      for (const CatMember& m : members) nested = nested || m.slot == piece;
    }
    if (nested) continue;
    CatFamily f;
    f.group = group;
    f.dim = members[widest].dim;
    f.meta = slot_meta[steps[members[widest].index].slot];
    for (size_t i : indices) {
      (*family_of)[i] = static_cast<int>(families.size());
    }
    families.push_back(std::move(f));
  }
  return families;
}

// A family's cat: its result the view of the shared buffer's first pieces
// (the buffer taken by the family's first cat), the pieces no earlier cat
// copied set up for copying.
void InferencePlan::Program::place_cat_in_place(Step& step, CatFamily& family,
                                                BufferPool& pool) {
  if (!family.buffer.defined()) {
    family.buffer = pool.take(family.meta, family.group, &buffer_bytes);
  }
  std::vector<int32_t> pieces;
  int64_t dim = 0;  // as written; find_cat_families normalised family.dim
  cat_call(step, &pieces, &dim);
  int64_t offset = 0;
  for (size_t p = 0; p < pieces.size(); ++p) {
    const int64_t length = slot_meta[pieces[p]].sizes[family.dim];
    if (p >= family.copied) {
      CatCopy copy;
      copy.piece = pieces[p];
      copy.slice = family.buffer.narrow(family.dim, offset, length);
      const Step& producer = steps[pieces[p]];
      if (producer.direct && !producer.fresh && producer.buffer.defined() &&
          producer.out_meta.same_layout(slot_meta[pieces[p]])) {
        try {
          copy.iter = at::TensorIteratorConfig()
                          .add_owned_output(copy.slice)
                          .add_owned_input(producer.buffer)
                          .resize_outputs(false)
                          .check_all_same_dtype(true)
                          .build();
        } catch (const c10::Error&) {
          copy.iter.reset();  // copied from the slot at run time
        }
      }
      step.cat_copies.push_back(std::move(copy));
    }
    offset += length;
  }
  family.copied = std::max(family.copied, pieces.size());
  step.buffer = offset == family.meta.sizes[family.dim]
                    ? family.buffer
                    : family.buffer.narrow(family.dim, 0, offset);
  step.cat_shared = family.buffer;
  step.out_meta = TensorMeta::of(step.buffer);
  step.fresh = false;
  step.direct = true;
  step.cat_in_place = true;
}

// The new pieces copied into the shared buffer; off the plan, at::cat.
void InferencePlan::Program::run_cat_in_place(Step& step) {
  if (diverged) {
    slots[step.slot] = run_kernel(step);
    return;
  }
  for (CatCopy& copy : step.cat_copies) {
    if (copy.iter) {
      run_copy(*copy.iter);
    } else {
      copy.slice.copy_(slots[copy.piece].toTensor());
    }
  }
  slots[step.slot] = step.buffer;
}

}  // namespace fx
