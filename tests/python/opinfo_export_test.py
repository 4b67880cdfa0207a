"""tools/opinfo_export.py's "reproducible" flag: a case whose eager result is
read from uninitialised memory is marked not reproducible every time (its
values are never compared), and a deterministic case never is.

The empty family's scalar results used to escape: a block of 16 bytes or
less comes back from glibc holding its own free-list links, never the
poison written before it was freed, so five eager runs could agree by
chance and the runner then compared garbage. The exporter now also runs each
case with c10's allocator zero-filling and junk-filling new blocks."""

import json
import os
import subprocess
import sys

import pytest

RUNFILES = os.path.join(os.environ.get("TEST_SRCDIR", ""),
                        os.environ.get("TEST_WORKSPACE", ""))
EXPORTER = os.path.join(RUNFILES, "tools", "opinfo_export.py")
if not os.path.exists(EXPORTER):  # run from the source tree
    EXPORTER = os.path.join(os.path.dirname(__file__), "..", "..", "tools",
                            "opinfo_export.py")

UNINITIALISED = ["empty", "empty_like", "new_empty", "new_empty_strided"]
DETERMINISTIC = ["add", "zeros_like", "ones", "full_like"]


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    out = tmp_path_factory.mktemp("opinfo")
    subprocess.run(
        [sys.executable, EXPORTER, "-o", str(out), "--ops",
         ",".join(UNINITIALISED + DETERMINISTIC)], check=True)
    with open(out / "index.json") as f:
        index = json.load(f)
    import torch
    exported = []
    for case in index["cases"]:
        if "dir" not in case:
            continue
        expected = torch.load(out / case["dir"] / "expected.pt")
        case["numel"] = expected.numel()
        exported.append(case)
    return exported


def test_every_op_was_exported(cases):
    ops = {c["op"] for c in cases}
    assert ops == set(UNINITIALISED + DETERMINISTIC)


def test_uninitialised_results_are_never_compared(cases):
    flagged = [(c["op"], c["variant"], c["sample"], c["call"]) for c in cases
               if c["op"] in UNINITIALISED and c["numel"] > 0
               and c["reproducible"]]
    assert flagged == []
    # The scalar samples, the ones poisoning could not reach, are among them.
    scalars = [c for c in cases if c["op"] == "empty" and c["numel"] == 1]
    assert scalars and not any(c["reproducible"] for c in scalars)


def test_empty_results_and_deterministic_ops_are_compared(cases):
    flagged = [(c["op"], c["variant"], c["sample"], c["call"]) for c in cases
               if (c["op"] in DETERMINISTIC or c["numel"] == 0)
               and not c["reproducible"]]
    assert flagged == []


def test_allocator_fill_reaches_libtorch():
    """The mechanism itself: the flags are found in the loaded libc10 and
    decide what a new block holds, a scalar's included."""
    import torch
    sys.path.insert(0, os.path.dirname(EXPORTER))
    from opinfo_export import AllocatorFill
    assert set(AllocatorFill.flags()) == {"zero", "junk"}
    with AllocatorFill("zero"):
        zero = [torch.empty(()), torch.empty(3), torch.empty_like(torch.ones(5))]
    with AllocatorFill("junk"):
        junk = [torch.empty(()), torch.empty(3), torch.empty_like(torch.ones(5))]
    assert all(bool((t == 0).all()) for t in zero)
    assert all(bool(t.isnan().all()) for t in junk)  # 0x7fedbeef: a NaN
    # Off again on leaving: a later block is whatever malloc gives.
    assert not any(flag.value for flag in AllocatorFill.flags().values())
