"""A stand-in for @rules_java//java:defs.bzl, for Bazel 4 offline.

Installed as PREFIX/share/fx-sdk/bazel/rules_java/java/defs.bzl. Bazel 4's
own tools (@bazel_tools//tools/jdk, which every build's toolchain resolution
reads, C++ builds included) load these names from @rules_java, which its
WORKSPACE suffix would otherwise download. Each forwards to Bazel's native
rule of the same name, as rules_java 4 itself does.
"""

def java_binary(**attrs):
    native.java_binary(**attrs)

def java_import(**attrs):
    native.java_import(**attrs)

def java_library(**attrs):
    native.java_library(**attrs)

def java_plugin(**attrs):
    native.java_plugin(**attrs)

def java_test(**attrs):
    native.java_test(**attrs)

def java_runtime(**attrs):
    native.java_runtime(**attrs)

def java_toolchain(**attrs):
    native.java_toolchain(**attrs)

def java_package_configuration(**attrs):
    native.java_package_configuration(**attrs)
