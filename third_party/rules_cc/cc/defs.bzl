"""Forwards @rules_cc//cc:defs.bzl to Bazel 4.2.3's native C++ rules.

Debian's bazel-rules-cc needs a newer Bazel (use_cpp_toolchain); BUILD files keep
loading @rules_cc//cc:defs.bzl so they move to the real rules_cc unchanged.
"""

def cc_library(**attrs):
    native.cc_library(**attrs)

def cc_binary(**attrs):
    native.cc_binary(**attrs)

def cc_test(**attrs):
    native.cc_test(**attrs)

def cc_import(**attrs):
    native.cc_import(**attrs)

def cc_toolchain(**attrs):
    native.cc_toolchain(**attrs)

def cc_toolchain_suite(**attrs):
    native.cc_toolchain_suite(**attrs)
