"""fx_fuzz_target: one libFuzzer target and the test replaying its inputs."""

load("@rules_cc//cc:defs.bzl", "cc_binary")

def fx_fuzz_target(name, srcs, deps):
    """Declares NAME_fuzzer and NAME_replay_test.

    NAME_fuzzer is a libFuzzer binary under `--config=fuzz` (clang) and, in
    every other config, a replayer (replay_main.cc) that runs the same
    LLVMFuzzerTestOneInput over files and directories. NAME_replay_test runs
    it over the seed corpus corpus/NAME and the regression inputs
    crashes/NAME: under `--config=asan` that is the CI's sanitizer replay.

    Args:
      name: the target's name, also its corpus directory's.
      srcs: the sources defining LLVMFuzzerTestOneInput.
      deps: what they use.
    """
    cc_binary(
        name = name + "_fuzzer",
        srcs = srcs,
        deps = deps + select({
            ":libfuzzer": [],
            "//conditions:default": [":replay_main"],
        }),
        linkopts = select({
            ":libfuzzer": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
    )
    corpus = "tests/fuzz/corpus/" + name
    crashes = "tests/fuzz/crashes/" + name
    native.sh_test(
        name = name + "_replay_test",
        size = "small",
        srcs = ["replay_test.sh"],
        args = ["$(rootpath :%s_fuzzer)" % name, corpus, crashes],
        data = [":%s_fuzzer" % name, "lsan.supp"] + native.glob([
            "corpus/%s/**" % name,
            "crashes/%s/**" % name,
        ]),
    )
