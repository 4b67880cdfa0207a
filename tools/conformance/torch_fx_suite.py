#!/usr/bin/python3
"""torch_fx_suite: measures fx_sdk against the GraphModules that torch.fx's
own test programs build.

    nice -n 10 /usr/bin/python3 tools/conformance/torch_fx_suite.py \
        --tests DIR [--out DIR] [--only NAME]... [--vision] [--op-db] \
        [--expected FILE]

--tests is a directory holding PyTorch 1.13.1's test/test_fx.py,
test/test_fx_experimental.py, test/test_fx_passes.py,
test/test_fx_reinplace_pass.py, test/fx/ and test/expect/ (they are
PyTorch's code: keep them outside this repository). Each test file runs
under pytest in a process of its own, with this module loaded as a pytest
plugin (`-p torch_fx_suite`), so a test that kills the process is counted,
not fatal. The plugin wraps torch.fx.GraphModule.__init__ and recompile()
(every state of every GraphModule torch.fx makes code for: traced,
hand-built, copied or made by a pass) and GraphModule's wrapped __call__
(the first call of each state with real inputs). Each state is checked
then, in a forked child (one per state, so a SIGSEGV or a hang is that
graph's result; a GraphModule made while a tracer, dispatch mode or torch
function mode is active waits for the end of its test):

    accepted        fx_sdk.from_torch_fx(gm) takes it
    text            sdk_gm.graph_text == str(gm.graph) (num_users form)
    code            sdk_gm.code == gm.code
    numbers         sdk_gm(*inputs) equals gm(*inputs) (nested outputs,
                    rtol 1e-4, atol 1e-5), at the first call with inputs,
                    torch.fx's run first (keyword arguments are passed
                    positionally in placeholder order)
    roundtrip_text  str(to_torch_fx(sdk_gm).graph) == str(gm.graph)
    roundtrip_code  to_torch_fx(sdk_gm).code == gm.code
    export          tools/torchfx_export.py's graph_document(gm) takes it
                    and check_storable its weights (as its export() does)
    fx_print        `fx print graph.fx.json` == str(gm.graph)
    fx_code         `fx code graph.fx.json` == gm.code

The pytest process imports fx_sdk and runs each conversion once before the
first fork (the children inherit what the SDK builds on first use), and
`fx print` / `fx code` run in tools/conformance/fx_batch, one process for
all bundles that calls what the fx binary's main() calls (--fx-batch; ''
runs the fx binary once a command, half a second each).

States are told apart by graph text and code (each is checked once).
Output: OUT/report.json (every state's results, tests' outcomes, crashes)
and OUT/report.txt (the counts and the failure groups, largest first: errors
clustered by check and normalised first line). Torch runs on one thread.

With --expected torch_fx_suite_expected.py it is a CI test (exit 1 unless
the results are exactly as that file says): //tests/tools:torch_fx_suite_*,
one target a unit, on the files tools/setup.sh fetches
(fetch_pytorch_tests.py; PyTorch's files are never in this repository).
"""

import argparse
import collections
import hashlib
import json
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# Test classes instantiated per op of torch's op_db (hundreds of tests, one
# small graph each, op by op): run only with --op-db.
OP_DB_CLASSES = ("TestNormalizeOperatorsCPU", "TestOperatorSignaturesCPU")
VISION_CLASS = "TestVisionTracing"

# What runs, in order: (unit name, file, pytest -k expression or None).
# test_fx.py imports most test classes of fx/*.py; a class already run is
# deselected in later files.
UNITS = (
    ("test_fx.py", "test_fx.py", "not " + VISION_CLASS),
    ("fx", "fx", None),
    ("test_fx_experimental.py", "test_fx_experimental.py", None),
    ("test_fx_passes.py", "test_fx_passes.py", None),
    ("test_fx_reinplace_pass.py", "test_fx_reinplace_pass.py", None),
    ("test_fx.py:vision", "test_fx.py", VISION_CLASS),
)

CHILD_TIMEOUT = 60  # seconds for one GraphModule's checks
FX_TIMEOUT = 60


# --------------------------------------------------------------------------
# The plugin: runs inside each pytest process (FXSUITE_JOURNAL set).
# --------------------------------------------------------------------------

class _State:
    journal = None        # open file: one JSON object a line
    current = None        # the running test's nodeid
    seen = {}             # key -> "static" / "numbers" checks done (run-wide)
    busy = False          # inside our own code or a check: record nothing
    in_init = 0           # GraphModule.__init__ frames under way
    classes = set()       # test classes run in this process
    called = None         # WeakKeyDictionary: gm -> key its numbers ran for
    pending = []          # GraphModules made while tracing: checked later


def _emit(obj):
    _State.journal.write(json.dumps(obj, default=str) + "\n")
    _State.journal.flush()


def pytest_configure(config):
    path = os.environ.get("FXSUITE_JOURNAL")
    if not path:
        return
    import weakref
    import torch
    import torch.fx
    torch.set_num_threads(1)
    _State.journal = open(path, "a")
    _State.called = weakref.WeakKeyDictionary()
    seen_path = os.environ.get("FXSUITE_SEEN")
    if seen_path and os.path.exists(seen_path):
        with open(seen_path) as f:
            _State.seen = {k: set(v) for k, v in json.load(f).items()}
    if os.environ.get("FXSUITE_WARM_UP", "1") == "1":
        _warm_up(torch)
    _FxServer.start()
    _install_hooks(torch)
    _tolerate_missing_torchbind(torch)


def _warm_up(torch):
    """Imports fx_sdk and runs each conversion once in this process before
    any check forks, so the children inherit what the SDK and LibTorch
    build on first use (about 0.5 s in every child otherwise). The graph is
    built by hand: no tracing, and no test is running (nothing recorded)."""
    import io
    import fx_sdk
    from fx_sdk import torchfx_export
    root = torch.nn.Module()
    root.linear = torch.nn.Linear(2, 2)
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    y = graph.call_module("linear", (x,))
    y = graph.call_function(torch.relu, (y,))
    y = graph.call_method("add", (y, 1))
    graph.output(y)
    gm = torch.fx.GraphModule(root, graph)
    sdk = fx_sdk.from_torch_fx(gm)
    _ = (sdk.graph_text, sdk.code)
    with torch.no_grad():
        sdk(torch.ones(1, 2))
    back = fx_sdk.to_torch_fx(sdk, lazy=False)
    _ = (str(back.graph), back.code)
    _, weights = torchfx_export.graph_document(gm)
    torch.save(weights, io.BytesIO())


class _FxServer:
    """tools/conformance/fx_batch (FXSUITE_FX_BATCH): `fx` commands run in
    one process that loaded LibTorch once, started by the pytest process
    and used by its forked checks one at a time (a child writes one request
    and reads its answer). A check that found it dead, hung or out of step
    says so (the "_fx_server" entry); the pytest process then starts
    another. Without FXSUITE_FX_BATCH each command runs the fx binary."""
    proc = None

    @classmethod
    def start(cls):
        path = os.environ.get("FXSUITE_FX_BATCH")
        if path:
            cls.proc = subprocess.Popen([path], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE)

    @classmethod
    def restart(cls):
        """Stops the server; returns how it ended (a signal's name or
        None); starts another."""
        ended = None
        if cls.proc is not None:
            code = cls.proc.poll()
            if code is None:
                cls.proc.kill()
                code = cls.proc.wait()
            if code < 0:
                ended = signal.Signals(-code).name
            for stream in (cls.proc.stdin, cls.proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
        cls.start()
        return ended

    @classmethod
    def stop(cls):
        if cls.proc is not None:
            try:
                cls.proc.stdin.close()
                cls.proc.wait(timeout=30)
            except Exception:  # noqa: BLE001
                cls.proc.kill()
            cls.proc = None

    @classmethod
    def request(cls, args, timeout):
        """In a check's child: runs `fx ARGS...` in the server; returns
        (status, stdout, stderr). Raises _ServerBroken when the server died,
        hung or answered out of step."""
        proc = cls.proc
        data = (json.dumps(args) + "\n").encode()
        try:
            while data:
                data = data[os.write(proc.stdin.fileno(), data):]
        except OSError as e:
            raise _ServerBroken("fx_batch ended (%s)" % e) from None
        fd = proc.stdout.fileno()
        buf = b""
        deadline = time.time() + timeout
        while not buf.endswith(b"\n"):
            left = deadline - time.time()
            if left <= 0:
                raise _ServerBroken("timeout after %d s" % timeout)
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise _ServerBroken("fx_batch ended")
                buf += chunk
        if buf.count(b"\n") != 1:
            raise _ServerBroken("fx_batch answered out of step")
        answer = json.loads(buf)
        return answer["status"], answer["out"], answer["err"]


class _ServerBroken(Exception):
    pass


def _tolerate_missing_torchbind(torch):
    """TestFX.setUp loads the test library libtorchbind_test.so, which
    Debian's packages do not ship: without it every TestFX test would fail
    before building anything. Its absence is ignored; the few tests that
    use its classes fail on their own."""
    load = torch.ops.load_library

    def load_library(path):
        if (os.path.basename(str(path)) == "libtorchbind_test.so"
                and not os.path.exists(str(path))):
            return
        return load(path)
    torch.ops.load_library = load_library


def _active():
    return _State.current is not None and not _State.busy


def _tracing(torch):
    """True inside symbolic tracing, a dispatch mode (make_fx) or a torch
    function mode: a forked check would run under it. Checks wait."""
    from torch.fx._symbolic_trace import is_fx_tracing
    from torch.utils._python_dispatch import _get_current_dispatch_mode
    return (is_fx_tracing() or _get_current_dispatch_mode() is not None
            or torch._C._is_torch_function_mode_enabled())


def _install_hooks(torch):
    """GraphModule.__init__ and recompile(): the static checks on the code
    torch.fx just made; GraphModule's wrapped __call__: the numbers, on the
    first call with real inputs of each state, before torch.fx runs it."""
    gm_cls = torch.fx.GraphModule
    init = gm_cls.__init__
    recompile = gm_cls.recompile

    def recording_init(self, *args, **kwargs):
        _State.in_init += 1
        try:
            init(self, *args, **kwargs)
        finally:
            _State.in_init -= 1
        if _active() and not _State.in_init:
            _check_static(self, "init")

    def recording_recompile(self, *args, **kwargs):
        out = recompile(self, *args, **kwargs)
        if _active() and not _State.in_init:
            _check_static(self, "recompile")
        return out

    recording_init.__wrapped__ = init
    recording_recompile.__wrapped__ = recompile
    gm_cls.__init__ = recording_init
    gm_cls.recompile = recording_recompile

    wrapped_call = torch.fx.graph_module._WrappedCall
    call = wrapped_call.__call__

    def recording_call(self, obj, *args, **kwargs):
        if _active() and isinstance(obj, gm_cls):
            _State.busy = True
            try:
                _check_numbers(torch, obj, args, kwargs)
            finally:
                _State.busy = False
        return call(self, obj, *args, **kwargs)

    wrapped_call.__call__ = recording_call


def _state_key(gm):
    text, code = str(gm.graph), gm.code
    return hashlib.sha1((text + "\0" + code).encode()).hexdigest()[:16]


def _class_name(gm):
    cls = type(gm)
    while cls.__name__ == "GraphModuleImpl" and len(cls.__mro__) > 1:
        cls = cls.__mro__[1]
    return cls.__module__ + "." + cls.__qualname__


def _check_static(gm, when):
    import torch
    if _tracing(torch):
        _State.pending.append((gm, when))
        return
    _State.busy = True
    try:
        try:
            text = str(gm.graph)
            key = _state_key(gm)
        except Exception as e:  # noqa: BLE001 (torch.fx cannot print it)
            _emit({"kind": "unprintable", "test": _State.current,
                   "error": _first_line(e)})
            return
        done = _State.seen.setdefault(key, set())
        if "static" in done:
            return
        done.add("static")
        started = time.time()
        results = _run_isolated(_static_checks, gm, None)
        seconds = time.time() - started
        broken = results.pop("_fx_server", None)
        if broken is not None and _FxServer.proc is not None:
            ended = _FxServer.restart()
            for check in ("fx_print", "fx_code"):
                r = results.get(check, {})
                if ended and r.get("status") == "crash" and \
                        r.get("error", "").startswith("crash: fx_batch"):
                    r["error"] = "crash: " + ended
        _emit({"kind": "gm", "test": _State.current, "key": key,
               "when": when, "class": _class_name(gm),
               "nodes": len(gm.graph.nodes), "results": results,
               "seconds": round(seconds, 4),
               "graph_head": "\n".join(text.splitlines()[:12])})
    finally:
        _State.busy = False


def _check_numbers(torch, gm, args, kwargs):
    if _State.called.get(gm) is not None:
        return  # numbers ran for this object (until it recompiles)
    if _tracing(torch) or not _real(torch, (args, kwargs)):
        return
    try:
        key = _state_key(gm)
    except Exception:  # noqa: BLE001
        return
    _State.called[gm] = key
    done = _State.seen.setdefault(key, set())
    if "numbers" in done:
        return
    done.add("numbers")
    started = time.time()
    results = _run_isolated(_numbers_check, gm, (args, kwargs))
    results.pop("_fx_server", None)
    _emit({"kind": "numbers", "test": _State.current, "key": key,
           "class": _class_name(gm), "results": results,
           "seconds": round(time.time() - started, 4)})


def _real(torch, value):
    """True when the arguments hold only real values: no proxies, no fake
    or other tensor subclasses, no meta tensors."""
    def ok(v):
        if isinstance(v, torch.fx.Proxy):
            return False
        if isinstance(v, torch.Tensor):
            return (type(v) in (torch.Tensor, torch.nn.Parameter)
                    and v.device.type != "meta")
        if isinstance(v, (list, tuple)):
            return all(ok(x) for x in v)
        if isinstance(v, dict):
            return all(ok(x) for x in v.values())
        return True
    try:
        return ok(value)
    except Exception:  # noqa: BLE001
        return False


def _snapshot(torch, value):
    """A copy of a call's arguments with tensors cloned."""
    def copy(v):
        if isinstance(v, torch.Tensor):
            c = v.detach().clone()
            if v.requires_grad and c.is_floating_point():
                c.requires_grad_(True)
            return c
        if isinstance(v, tuple) and hasattr(v, "_fields"):
            return type(v)(*[copy(x) for x in v])
        if isinstance(v, (list, tuple)):
            items = [copy(x) for x in v]
            try:
                return type(v)(items)
            except Exception:  # noqa: BLE001
                return items if isinstance(v, list) else tuple(items)
        if isinstance(v, dict):
            items = {k: copy(x) for k, x in v.items()}
            try:
                return type(v)(items)
            except Exception:  # noqa: BLE001
                return items
        return v
    return copy(value)


def pytest_collection_modifyitems(session, config, items):
    if _State.journal is None:
        return
    skip = set(filter(None, os.environ.get("FXSUITE_SKIP_CLASSES",
                                           "").split(",")))
    if os.environ.get("FXSUITE_OP_DB") != "1":
        skip.update(OP_DB_CLASSES)
    keep, drop = [], []
    for item in items:
        cls = item.cls.__name__ if getattr(item, "cls", None) else ""
        (drop if cls in skip else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_runtest_logreport(report):
    if _State.journal is None:
        return
    if report.when == "call" or report.outcome != "passed":
        _emit({"kind": "test", "nodeid": report.nodeid, "when": report.when,
               "outcome": report.outcome})


def _hookwrapper(fn):
    try:
        import pytest
        return pytest.hookimpl(hookwrapper=True)(fn)
    except ImportError:
        return fn


@_hookwrapper
def pytest_runtest_protocol(item, nextitem):
    if _State.journal is None:
        yield
        return
    if getattr(item, "cls", None) is not None:
        _State.classes.add(item.cls.__name__)
    _State.current = item.nodeid
    _emit({"kind": "test_start", "nodeid": item.nodeid})
    started = time.time()
    yield
    pending, _State.pending = _State.pending, []
    for gm, when in pending:  # made while tracing: their state at the end
        _check_static(gm, when + " (checked at test end)")
    _State.current = None
    _emit({"kind": "test_end", "nodeid": item.nodeid,
           "seconds": round(time.time() - started, 3)})


def pytest_sessionfinish(session, exitstatus):
    if _State.journal is None:
        return
    _FxServer.stop()
    _emit({"kind": "classes", "names": sorted(_State.classes)})
    seen_path = os.environ.get("FXSUITE_SEEN")
    if seen_path:
        with open(seen_path, "w") as f:
            json.dump({k: sorted(v) for k, v in _State.seen.items()}, f)


def _run_isolated(checks, gm, inputs):
    """Runs checks(gm, inputs, out) in a forked child; returns
    {check: result}.
    A child killed by a signal or stopped at the timeout marks the check it
    was in."""
    fd, path = tempfile.mkstemp(prefix="fxsuite_", suffix=".jsonl")
    os.close(fd)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child
        code = 0
        try:
            with open(path, "a") as out:
                checks(gm, inputs, out)
        except BaseException:  # noqa: BLE001
            code = 3
        finally:
            os._exit(code)
    deadline = time.time() + CHILD_TIMEOUT
    status, timed_out = None, False
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.time() > deadline:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            timed_out = True
            break
        time.sleep(0.02)
    results, started = {}, None
    with open(path) as f:
        for line in f:
            entry = json.loads(line)
            if entry.get("start"):
                started = entry["check"]
            elif entry["check"] == "_fx_server":
                results["_fx_server"] = entry
            else:
                results[entry["check"]] = entry
                started = None
    os.unlink(path)
    if started is not None:
        if timed_out:
            error = f"timeout after {CHILD_TIMEOUT} s"
        elif os.WIFSIGNALED(status):
            error = f"crash: {signal.Signals(os.WTERMSIG(status)).name}"
        else:
            error = f"child exited {os.WEXITSTATUS(status)}"
        results[started] = {"check": started, "status": "crash",
                            "error": error}
    if timed_out or started is not None or not os.WIFEXITED(status) or \
            os.WEXITSTATUS(status) != 0:
        results["_fx_server"] = {"check": "_fx_server", "status": "broken"}
    return results


def _first_line(e):
    text = f"{type(e).__name__}: {e}"
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:300]
    return type(e).__name__


def _users_form(text):
    return re.sub(r"\[#users=", "[num_users=", text)


def _first_difference(want, got):
    """'line N: want `...` got `...`' for the first line that differs."""
    w, g = want.split("\n"), got.split("\n")
    for i in range(max(len(w), len(g))):
        a = w[i] if i < len(w) else "<end>"
        b = g[i] if i < len(g) else "<end>"
        if a != b:
            return f"line {i + 1}: want `{a.strip()[:160]}` got `{b.strip()[:160]}`"
    return "differs in whitespace at the end"


def _runner(out):
    """run(check, fn): fn in try/except, one JSON line as the check starts
    and one as it ends (so a crash names its check). fn returns None (ok)
    or ("skip" | "fail", why)."""
    def run(check, fn):
        out.write(json.dumps({"check": check, "start": True}) + "\n")
        out.flush()
        started = time.time()
        try:
            detail = fn()
            entry = {"check": check, "status": "ok"}
            if isinstance(detail, tuple):
                entry = {"check": check, "status": detail[0],
                         "error": detail[1]}
        except _Crash as e:
            entry = {"check": check, "status": "crash", "error": str(e)}
        except Exception as e:  # noqa: BLE001
            entry = {"check": check, "status": "fail", "error": _first_line(e),
                     "where": _where(e)}
        entry["ms"] = round(1000 * (time.time() - started), 1)
        out.write(json.dumps(entry, default=str) + "\n")
        out.flush()
        return entry["status"] == "ok"
    return run


class _Crash(Exception):
    """A check whose process (the fx command) died or hung: status
    "crash"."""


def _same(want, got):
    return None if want == got else ("fail", _first_difference(want, got))


def _numbers_check(gm, inputs, out):
    """gm(*inputs) first (a FoldedGraphModule folds its constants on its
    first call), then from_torch_fx(gm) and sdk_gm(*inputs)."""
    import torch
    torch.set_num_threads(1)
    _runner(out)("numbers", lambda: _numbers(torch, gm, inputs))


def _static_checks(gm, inputs, out):
    """Every check but the numbers."""
    import torch
    torch.set_num_threads(1)
    run = _runner(out)
    same = _same
    want_text = _users_form(str(gm.graph))
    want_code = gm.code
    state = {}
    import fx_sdk

    def accepted():
        state["sdk"] = fx_sdk.from_torch_fx(gm)

    if run("accepted", accepted):
        sdk = state["sdk"]
        run("text", lambda: same(want_text, sdk.graph_text))
        run("code", lambda: same(want_code, sdk.code))

        def roundtrip():
            state["back"] = fx_sdk.to_torch_fx(sdk, lazy=False)
        if run("roundtrip", roundtrip):
            back = state["back"]
            run("roundtrip_text",
                lambda: same(want_text, _users_form(str(back.graph))))
            run("roundtrip_code", lambda: same(want_code, back.code))

    bundle = tempfile.mkdtemp(prefix="fxsuite_bundle_")
    try:
        def export():
            from fx_sdk import torchfx_export
            document, weights = torchfx_export.graph_document(gm)
            torchfx_export.check_storable(weights)  # as export() does
            if weights:
                document["weights"] = "model.weights.pt"
                torch.save(weights, os.path.join(bundle, "model.weights.pt"))
            with open(os.path.join(bundle, "graph.fx.json"), "w") as f:
                json.dump(document, f, indent=1)
        if run("export", export):
            fx = os.environ.get("FXSUITE_FX", os.path.join(
                REPO, "bazel-bin", "tools", "fx"))
            path = os.path.join(bundle, "graph.fx.json")

            def fx_command(command, want):
                if _FxServer.proc is not None:
                    try:
                        code, got, err = _FxServer.request([command, path],
                                                           FX_TIMEOUT)
                    except _ServerBroken as e:
                        out.write(json.dumps({"check": "_fx_server",
                                              "status": "broken"}) + "\n")
                        if str(e).startswith("timeout"):
                            raise _Crash("hang: fx " + str(e)) from None
                        raise _Crash("crash: " + str(e)) from None
                else:
                    try:
                        proc = subprocess.run([fx, command, path],
                                              capture_output=True, text=True,
                                              timeout=FX_TIMEOUT)
                    except subprocess.TimeoutExpired:
                        raise _Crash("hang: fx timeout after %d s" %
                                     FX_TIMEOUT) from None
                    code, got, err = proc.returncode, proc.stdout, proc.stderr
                    if code < 0:
                        raise _Crash("crash: " + signal.Signals(-code).name)
                if code != 0:
                    lines = [x.replace(bundle + os.sep, "")
                             for x in err.splitlines() if x.strip()]
                    return ("fail", "fx exited %d: %s" % (
                        code, lines[0][:300] if lines else ""))
                if got != want and got.rstrip("\n") == want.rstrip("\n"):
                    return None
                return same(want, got)
            run("fx_print", lambda: fx_command("print", want_text))
            run("fx_code", lambda: fx_command("code", want_code))
    finally:
        shutil.rmtree(bundle, ignore_errors=True)


def _where(e):
    tb = traceback.extract_tb(e.__traceback__)
    return f"{os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""


def _positional(gm, args, kwargs):
    """args and kwargs as one positional list, in the order of forward's
    parameters (pytree code generation: the original arguments; else the
    placeholders). The SDK's GraphModule is called positionally."""
    if not kwargs:
        return list(args)
    info = getattr(getattr(gm.graph, "_codegen", None), "pytree_info", None)
    names = list(info.orig_args) if info is not None else [
        n.target for n in gm.graph.nodes if n.op == "placeholder"]
    values = list(args)
    for name in names[len(args):]:
        plain = name.lstrip("*")
        if plain in kwargs:
            values.append(kwargs[plain])
        else:
            break
    return values


def _numbers(torch, gm, inputs):
    import fx_sdk
    first, second = _snapshot(torch, inputs), _snapshot(torch, inputs)
    torch.manual_seed(0)
    try:
        with torch.no_grad():
            want = gm(*first[0], **first[1])
    except Exception as e:  # noqa: BLE001
        return ("skip", "torch.fx raises on the recorded inputs: " +
                _first_line(e))
    try:
        sdk = fx_sdk.from_torch_fx(gm)
    except Exception as e:  # noqa: BLE001
        return ("fail", "from_torch_fx: " + _first_line(e))
    torch.manual_seed(0)
    with torch.no_grad():
        got = sdk(*_positional(gm, second[0], second[1]))
    difference = _compare(torch, want, got, "out")
    return None if difference is None else ("fail", difference)


def _compare(torch, want, got, where):
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return f"{where}: a tensor in torch.fx, {type(got).__name__} here"
        if want.shape != got.shape:
            return f"{where}: shape {list(want.shape)} vs {list(got.shape)}"
        if want.dtype != got.dtype:
            return f"{where}: dtype {want.dtype} vs {got.dtype}"
        if want.is_quantized:
            want = want.dequantize()
        if got.is_quantized:
            got = got.dequantize()
        if want.layout != torch.strided:
            want = want.to_dense()
        if got.layout != torch.strided:
            got = got.to_dense()
        try:
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5,
                                       equal_nan=True, check_device=False,
                                       check_stride=False, check_dtype=False)
        except AssertionError as e:
            line = [x for x in str(e).splitlines() if x.strip()]
            return f"{where}: values differ ({line[0][:120] if line else ''})"
        return None
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)):
            return f"{where}: {type(want).__name__} vs {type(got).__name__}"
        if type(want) is not type(got) and (
                hasattr(want, "_fields") or hasattr(got, "_fields")
                or isinstance(want, tuple) != isinstance(got, tuple)):
            return (f"{where}: container {type(want).__name__} vs "
                    f"{type(got).__name__}")
        if len(want) != len(got):
            return f"{where}: length {len(want)} vs {len(got)}"
        for i, (a, b) in enumerate(zip(want, got)):
            d = _compare(torch, a, b, f"{where}[{i}]")
            if d:
                return d
        return None
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"{where}: dict vs {type(got).__name__}"
        if list(want.keys()) != list(got.keys()):
            return f"{where}: keys {list(want)[:5]} vs {list(got)[:5]}"
        for k in want:
            d = _compare(torch, want[k], got[k], f"{where}[{k!r}]")
            if d:
                return d
        return None
    try:
        if want == got or (want != want and got != got):
            return None
    except Exception:  # noqa: BLE001
        pass
    if (type(want) is type(got) and type(want).__eq__ is object.__eq__
            and not isinstance(want, (type, torch.nn.Module))
            and isinstance(getattr(want, "__dict__", None), dict)
            and where.count(".__dict__") < 8):
        # Two instances of a class without __eq__ (a ProxyableClassMeta
        # output) are never ==: compared attribute by attribute.
        return _compare(torch, dict(vars(want)), dict(vars(got)),
                        f"{where}.__dict__")
    return f"{where}: {str(want)[:60]!r} vs {str(got)[:60]!r}"


# --------------------------------------------------------------------------
# The driver: runs the units, then aggregates.
# --------------------------------------------------------------------------

def _run_unit(args, name, target, k_expr, skip_classes, out_dir):
    journal = os.path.join(out_dir, re.sub(r"[^\w.]+", "_", name) + ".jsonl")
    if os.path.exists(journal):
        os.unlink(journal)
    env = dict(os.environ)
    env.update({
        "FXSUITE_JOURNAL": journal,
        "FXSUITE_SEEN": args.seen,
        "FXSUITE_SKIP_CLASSES": ",".join(sorted(skip_classes)),
        "FXSUITE_OP_DB": "1" if args.op_db else "0",
        "FXSUITE_FX": args.fx,
        "FXSUITE_FX_BATCH": args.fx_batch or "",
        "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        "PYTHONPATH": os.pathsep.join(
            [HERE, os.path.join(HERE, "shims"), args.sdk, args.tests]
            + [p for p in [os.environ.get("PYTHONPATH")] if p]),
        "PYTHONDONTWRITEBYTECODE": "1",
    })
    command = [sys.executable, "-m", "pytest", "-p", "torch_fx_suite",
               "-p", "no:cacheprovider", "-q", "--tb=line", "-rN",
               "-W", "ignore", target]
    expressions = [e for e in (k_expr, args.k) if e]
    if expressions:
        command += ["-k", " and ".join(f"({e})" for e in expressions)]
    started = time.time()
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = cpu.ru_utime + cpu.ru_stime
    with open(journal + ".log", "w") as log:
        try:
            proc = subprocess.run(command, cwd=args.tests, env=env,
                                  stdout=log, stderr=subprocess.STDOUT,
                                  timeout=args.timeout)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    args.cpu[name] = after.ru_utime + after.ru_stime - cpu
    return journal, code, time.time() - started


def _read_journal(path):
    entries = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    entries.append(json.loads(line))
                except ValueError:
                    pass  # a line cut by a crash
    return entries


def _normalise(message):
    m = re.sub(r"/\S*fxsuite_bundle_\w+/", "", message)
    m = re.sub(r"0x[0-9a-fA-F]+", "0x…", m)
    m = re.sub(r"`[^`]*`", "`…`", m)
    m = re.sub(r"'[^']*'", "'…'", m)
    m = re.sub(r'"[^"]*"', '"…"', m)
    m = re.sub(r"\d+", "N", m)
    return m[:160]


def _diff_kind(error):
    """A finer group for text and code differences: what the first
    differing lines are about."""
    m = re.match(r"line \d+: want `(.*)` got `(.*)`$", error)
    if not m:
        return _normalise(error)
    want, got = m.groups()
    if "pytree" in want or "_in_spec" in want or "_out_spec" in want:
        return "pytree code (tree_flatten_spec / _in_spec / _out_spec)"
    if want.startswith("def forward") or got.startswith("def forward"):
        return "forward signature: " + _signature_kind(want, got)
    if "placeholder" in want or "placeholder" in got:
        return "placeholder line: " + _signature_kind(want, got)
    if want == "<end>" or got == "<end>":
        return "one side is longer"
    if "return" in want or "output" in want:
        return "return/output line: " + _signature_kind(want, got)
    return "node line: " + _signature_kind(want, got)


def _strip_annotations(line):
    """line without its type annotations (` : T` up to the next `,`, `)`,
    ` =` or ` [` at bracket depth 0)."""
    out, i, n = [], 0, len(line)
    while i < n:
        if line.startswith(" : ", i) or (line[i] == ":" and i + 1 < n and
                                         line[i + 1] == " " and out and
                                         out[-1].isidentifier()):
            i += 2 if line[i] == ":" else 3
            depth = 0
            while i < n:
                c = line[i]
                if c in "([{":
                    depth += 1
                elif c in ")]}":
                    if depth == 0:
                        break
                    depth -= 1
                elif depth == 0 and (c == "," or line.startswith(" =", i)
                                     or line.startswith(" [", i)):
                    break
                i += 1
            continue
        out.append(line[i])
        i += 1
    return "".join(out)


def _signature_kind(want, got):
    if _strip_annotations(want) == _strip_annotations(got):
        if "TensorType" in want + got or "Dyn" in want + got:
            return "annotations differ (gradual typing TensorType / Dyn)"
        return "annotations differ"
    if "typing" in want or "typing" in got:
        return "typing names differ"
    return "other"


def _aggregate(units_run, out_dir):
    gms = {}           # key -> static entry
    numbers = {}       # key -> numbers entry
    unprintable = []
    tests = collections.Counter()
    crashes = []       # pytest processes that died
    profile = []       # per unit: where its time went
    failed_tests = []  # pytest tests that failed (any phase)
    tests_run = set()
    for name, journal, code, seconds in units_run:
        entries = _read_journal(journal)
        started, ended = [], set()
        spent = collections.Counter()
        for e in entries:
            if e["kind"] in ("gm", "numbers"):
                e["unit"] = name
                spent["states" if e["kind"] == "gm" else "numbers"] += 1
                spent["forked checks (s)"] += e.get("seconds", 0)
                for check, r in e["results"].items():
                    spent[check + " (s)"] += r.get("ms", 0) / 1000
            if e["kind"] == "gm":
                gms.setdefault(e["key"], e)
            elif e["kind"] == "numbers":
                numbers.setdefault(e["key"], e)
            elif e["kind"] == "unprintable":
                unprintable.append(e)
            elif e["kind"] == "test":
                tests[e["outcome"]] += 1
                if e["outcome"] == "failed":
                    failed_tests.append({"unit": name, "test": e["nodeid"],
                                         "when": e["when"]})
            elif e["kind"] == "test_start":
                started.append(e["nodeid"])
                tests_run.add(e["nodeid"])
            elif e["kind"] == "test_end":
                ended.add(e["nodeid"])
        profile.append({"unit": name, "seconds": round(seconds, 1),
                        **{k: round(v, 1) for k, v in spent.items()}})
        if code not in (0, 1, 5):
            lost = [n for n in started if n not in ended]
            crashes.append({"unit": name, "exit": code,
                            "signal": signal.Signals(-code).name
                            if isinstance(code, int) and code < 0 else None,
                            "test": lost[-1] if lost else None})
    stale = []  # called after a graph edit without recompile()
    for key, n in numbers.items():
        e = gms.get(key)
        if e is None:
            stale.append(n)
            continue
        e["has_inputs"] = True
        e["numbers_test"] = n["test"]
        e["results"]["numbers"] = n["results"].get(
            "numbers", {"check": "numbers", "status": "fail",
                        "error": "no result"})
    for e in gms.values():
        e.setdefault("has_inputs", False)

    entries = list(gms.values())
    total = len(entries)
    counts = collections.OrderedDict()

    def count(check, among=None):
        pool = entries if among is None else [e for e in entries if among(e)]
        ok = sum(1 for e in pool
                 if e["results"].get(check, {}).get("status") == "ok")
        return ok, len(pool)

    counts["GraphModules (distinct)"] = (total, total)
    counts["from_torch_fx accepts"] = count("accepted")
    counts["graph text identical"] = count("text")
    counts["code identical"] = count("code")
    with_inputs = lambda e: e["has_inputs"]  # noqa: E731
    counts["with inputs"] = (sum(1 for e in entries if e["has_inputs"]),
                             total)
    counts["numbers equal (of those with inputs)"] = count(
        "numbers", with_inputs)
    numbers_skipped = sum(1 for e in entries if e["results"].get(
        "numbers", {}).get("status") == "skip")
    counts["to_torch_fx text identical"] = count("roundtrip_text")
    counts["to_torch_fx code identical"] = count("roundtrip_code")
    counts["bundle export accepts"] = count("export")
    exported = lambda e: e["results"].get("export", {}).get(  # noqa: E731
        "status") == "ok"
    counts["fx print identical (of exported)"] = count("fx_print", exported)
    counts["fx code identical (of exported)"] = count("fx_code", exported)
    check_crashes = [(e["test"], c, r["error"]) for e in entries
                     for c, r in e["results"].items()
                     if r.get("status") == "crash"]

    groups = collections.defaultdict(list)
    for e in entries:
        for check, r in e["results"].items():
            if r.get("status") in ("fail", "crash"):
                error = r.get("error", "")
                if check == "numbers" and error.startswith("from_torch_fx:"):
                    continue  # the "accepted" group has it
                if check in ("text", "code", "roundtrip_text",
                             "roundtrip_code", "fx_print", "fx_code") and \
                        error.startswith("line "):
                    label = _diff_kind(error)
                else:
                    label = _normalise(error)
                check_name = "roundtrip" if check == "roundtrip" else check
                groups[(check_name, label)].append(
                    {"test": e["test"], "key": e["key"], "error": error})
    ordered = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    report = {
        "counts": {k: list(v) for k, v in counts.items()},
        "numbers_skipped_reference_raises": numbers_skipped,
        "tests": dict(tests),
        "failed_tests": failed_tests,
        "tests_run": sorted(tests_run),
        "process_crashes": crashes,
        "check_crashes": check_crashes,
        "units": [{"unit": n, "exit": c, "seconds": round(s, 1)}
                  for n, _, c, s in units_run],
        "profile": profile,
        "groups": [{"check": c, "group": g, "count": len(items),
                    "examples": items[:5]} for (c, g), items in ordered],
        "unprintable": unprintable,
        "numbers_on_stale_code": len(stale),
        "graph_modules": entries,
    }
    return report


def _format(report):
    lines = ["torch.fx's own tests (PyTorch 1.13.1) through fx_sdk", ""]
    lines.append("units: " + ", ".join(
        f"{u['unit']} (exit {u['exit']}, {u['seconds']} s)"
        for u in report["units"]))
    for p in report.get("profile", []):
        lines.append("  time: " + ", ".join(f"{k} {v}" for k, v in p.items()))
    lines.append("tests: " + ", ".join(
        f"{k} {v}" for k, v in sorted(report["tests"].items())))
    lines.append("")
    for name, (ok, of) in report["counts"].items():
        lines.append(f"  {name:45s} {ok:5d} / {of}")
    lines.append(f"  {'numbers: torch.fx raises on recorded inputs':45s} "
                 f"{report['numbers_skipped_reference_raises']:5d}")
    lines.append(f"  {'called after a graph edit, no recompile()':45s} "
                 f"{report['numbers_on_stale_code']:5d}  (not compared)")
    lines.append(f"  {'torch.fx cannot print the graph':45s} "
                 f"{len(report['unprintable']):5d}")
    lines.append("")
    lines.append(f"process crashes (pytest died): "
                 f"{len(report['process_crashes'])}")
    for c in report["process_crashes"]:
        lines.append(f"  {c['unit']}: exit {c['exit']} {c['signal'] or ''} "
                     f"in {c['test']}")
    lines.append(f"check crashes (a forked check died): "
                 f"{len(report['check_crashes'])}")
    for test, check, error in report["check_crashes"]:
        lines.append(f"  {test} [{check}]: {error}")
    lines.append("")
    lines.append("failure groups, largest first (check | group | count):")
    for g in report["groups"]:
        lines.append(f"\n[{g['count']}] {g['check']} | {g['group']}")
        for ex in g["examples"][:3]:
            lines.append(f"    {ex['test']}  ({ex['key']})")
            lines.append(f"      {ex['error'][:300]}")
    return "\n".join(lines) + "\n"


def _classes_test_fx_imports(tests):
    """The names test_fx.py imports from fx/ (`from fx.X import Name`)."""
    with open(os.path.join(tests, "test_fx.py")) as f:
        return set(re.findall(r"^\s*from fx\.\w+ import (\w+)", f.read(),
                              re.M))


def _load_expected(path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("torch_fx_suite_expected",
                                                  path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _verify(report, expected, partial):
    """The report against the expected outcomes (--expected FILE, e.g.
    torch_fx_suite_expected.py): a list of problems, empty when every check
    of every state is ok (or torch.fx itself raised on the recorded inputs)
    but the expected failures, each on exactly its number of states; no
    crash of any kind; the tests torch.fx fails here, and only those, fail;
    each unit checks at least its number of states (not with -k: partial).
    Every check compares with torch.fx run in the same process."""
    problems = []
    units = {u["unit"] for u in report["units"]}
    for u in report["units"]:
        if u["exit"] not in (0, 1):
            problems.append(f"unit {u['unit']}: pytest exit {u['exit']}"
                            f" (0 or 1 expected: a crash, a timeout, or no "
                            f"test collected)")
    for c in report["process_crashes"]:
        problems.append(f"pytest died in {c['unit']}: exit {c['exit']} "
                        f"{c['signal'] or ''} in {c['test']}")
    entries = [e for e in expected.EXPECTED_FAILURES if e[0] in units]
    matched = collections.Counter()
    for gm in report["graph_modules"]:
        for check, r in sorted(gm["results"].items()):
            status = r.get("status")
            if status not in ("fail", "crash"):
                continue
            test = gm.get("numbers_test", gm["test"]) \
                if check == "numbers" else gm["test"]
            error = r.get("error", "")
            where = f"{test} [{check}] ({gm['key']}): {error[:300]}"
            if status == "crash":
                problems.append("crash: " + where)
                continue
            hits = [i for i, (unit, t, c, pattern, _, _) in enumerate(entries)
                    if unit == gm.get("unit") and t == test and c == check
                    and re.search(pattern, error)]
            if hits:
                matched[hits[0]] += 1
            else:
                problems.append("unexpected failure: " + where)
    ran = set(report["tests_run"])
    for i, (unit, test, check, pattern, states, reason) in enumerate(entries):
        if test not in ran:
            if not partial:
                problems.append(f"expected failure not seen, its test did not "
                                f"run: {test} [{check}]")
            continue
        if matched[i] != states:
            problems.append(
                f"expected failure on {states} state(s), seen on "
                f"{matched[i]}: {test} [{check}] /{pattern}/ ({reason}); "
                f"update tools/conformance/torch_fx_suite_expected.py")
    want_failed = {t: why for unit, t, why in expected.EXPECTED_TEST_FAILURES
                   if unit in units}
    failed = {f["test"] for f in report["failed_tests"]}
    for t in sorted(failed - set(want_failed)):
        problems.append(f"test failed, not one of EXPECTED_TEST_FAILURES "
                        f"(the suite's hooks or checks disturbing it?): {t}")
    for t in sorted(set(want_failed) - failed):
        if t in ran:
            problems.append(f"test expected to fail passed: {t} "
                            f"({want_failed[t]}); update "
                            f"torch_fx_suite_expected.py")
        elif not partial:
            problems.append(f"test expected to fail did not run: {t}")
    if not partial:
        for u in report["profile"]:
            floor = expected.MIN_STATES.get(u["unit"])
            got = u.get("states", 0)
            if floor is not None and got < floor:
                problems.append(f"unit {u['unit']}: {got} states checked, "
                                f"at least {floor} expected (were tests "
                                f"skipped? python3-z3 missing?)")
    return problems


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", required=True,
                        help="directory with test_fx.py, fx/, ...")
    parser.add_argument("--out", help="output directory (default: "
                                      "TESTS/fx_suite_out)")
    parser.add_argument("--only", action="append", default=[],
                        help="run only this unit (repeatable): " + ", ".join(
                            u[0] for u in UNITS))
    parser.add_argument("--vision", action="store_true",
                        help="also run TestVisionTracing (every torchvision "
                             "model; slow)")
    parser.add_argument("--op-db", action="store_true",
                        help="also run the op_db classes " +
                             ", ".join(OP_DB_CLASSES))
    parser.add_argument("-k", help="pytest -k for every unit without one")
    parser.add_argument("--skip-classes", default="",
                        help="comma-separated test classes to deselect "
                             "everywhere (e.g. those test_fx.py imports, "
                             "when fx/ runs in a separate invocation)")
    parser.add_argument("--timeout", type=int, default=4 * 3600,
                        help="seconds for one unit")
    parser.add_argument("--sdk", default=os.path.join(REPO, "bazel-bin",
                                                      "python"),
                        help="directory holding the fx_sdk package")
    parser.add_argument("--fx", default=os.path.join(REPO, "bazel-bin",
                                                     "tools", "fx"))
    parser.add_argument("--fx-batch", default=os.path.join(
        REPO, "bazel-bin", "tools", "fx_batch"),
        help="tools/conformance/fx_batch: `fx print` / `fx code` run in one "
             "process for all bundles ('' or a missing file: the fx binary "
             "once a bundle)")
    parser.add_argument("--expected", metavar="FILE",
                        help="exit 1 unless the results are as FILE says "
                             "(torch_fx_suite_expected.py): the CI test")
    parser.add_argument("--report-only", action="store_true",
                        help="aggregate the journals already in --out")
    parser.add_argument("--merge", action="append", default=[],
                        metavar="DIR", help="with --report-only: also the "
                        "units of another run's output directory (units "
                        "run in parallel invocations)")
    args = parser.parse_args(argv)
    args.tests = os.path.abspath(args.tests)
    if args.fx_batch and not os.path.exists(args.fx_batch):
        args.fx_batch = ""
    out_dir = os.path.abspath(args.out or os.path.join(args.tests,
                                                       "fx_suite_out"))
    os.makedirs(out_dir, exist_ok=True)
    units = [u for u in UNITS if (u[0] in args.only if args.only else
                                  (args.vision or u[2] != VISION_CLASS))]
    args.cpu = {}  # unit -> CPU seconds of its processes (this run)
    state_path = os.path.join(out_dir, "units.json")
    units_run = []
    if args.report_only:
        for directory in [out_dir] + args.merge:
            path = os.path.join(os.path.abspath(directory), "units.json")
            if os.path.exists(path):
                with open(path) as f:
                    units_run += [tuple(u) for u in json.load(f)]
    else:
        # A rerun of some units (--only) starts its own dedup set: the
        # aggregation dedups again across all units' journals.
        seen = os.path.join(out_dir, "seen_%s.json" % "_".join(
            re.sub(r"\W+", "_", u) for u in args.only) if args.only
            else "seen.json")
        args.seen = seen
        if os.path.exists(seen):
            os.unlink(seen)
        done_classes = set(filter(None, args.skip_classes.split(",")))
        names = [u[0] for u in units]
        if "fx" in names and "test_fx.py" not in names:
            # fx/ alone (a shard): without the classes test_fx.py imports
            # from it, which its own unit runs, as in a run of both.
            done_classes.update(_classes_test_fx_imports(args.tests))
        for name, target, k_expr in units:
            print(f"[{time.strftime('%H:%M:%S')}] {name} ...", flush=True)
            journal, code, seconds = _run_unit(args, name, target, k_expr,
                                               done_classes, out_dir)
            for e in _read_journal(journal):
                if e["kind"] == "classes":
                    done_classes.update(e["names"])
            print(f"    exit {code}, {seconds:.0f} s, CPU "
                  f"{args.cpu[name]:.0f} s", flush=True)
            units_run.append((name, journal, code, seconds))
        if args.only and os.path.exists(state_path):
            with open(state_path) as f:
                previous = [tuple(u) for u in json.load(f)]
            names = {u[0] for u in units_run}
            units_run = [u for u in previous if u[0] not in names] + units_run
        with open(state_path, "w") as f:
            json.dump(units_run, f)
    report = _aggregate(units_run, out_dir)
    with open(os.path.join(out_dir, "report.json"), "w") as f:
        json.dump(report, f, indent=1, default=str)
    text = _format(report)
    with open(os.path.join(out_dir, "report.txt"), "w") as f:
        f.write(text)
    print(text[:6000])
    if args.expected:
        problems = _verify(report, _load_expected(args.expected),
                           partial=bool(args.k))
        units = ", ".join(u["unit"] for u in report["units"])
        if problems:
            print(f"FAIL: {len(problems)} problem(s) in {units}:")
            for p in problems:
                print("  " + p)
            return 1
        failing = sum(1 for e in report["graph_modules"]
                      for r in e["results"].values()
                      if r.get("status") in ("fail", "crash"))
        print(f"PASS: {units}: {len(report['graph_modules'])} states, every "
              f"check as torch.fx but the {failing} expected failure(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
