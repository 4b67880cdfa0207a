"""The `fx` command for the pytest files that check bundles through it."""

import os

import pytest


def fx_binary():
    """The `fx` command: in the test's runfiles, else bazel-bin's; skips the
    test when neither is built."""
    runfiles = os.path.join(os.environ.get("TEST_SRCDIR", ""),
                            os.environ.get("TEST_WORKSPACE", ""))
    for path in (os.path.join(runfiles, "tools", "fx"),
                 os.path.join("bazel-bin", "tools", "fx")):
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    pytest.skip("the fx command is not built (bazel build //tools:fx)")
