#!/usr/bin/python3
"""fetch_pytorch_tests: PyTorch 1.13.1's own torch.fx tests, for the
conformance suite (tools/conformance/torch_fx_suite.py, the Bazel targets
//tests/tools:torch_fx_suite_*), into a cache outside the repository.

    /usr/bin/python3 tools/conformance/fetch_pytorch_tests.py [--dest DIR]
        [--tarball FILE]

From Debian's source package of python3-torch (the orig tarball,
pytorch_1.13.1+dfsg.orig.tar.xz, checked against its sha256), only
test/test_fx*.py, test/fx/ and test/expect/TestFX* are extracted, to DIR
(default $FX_PYTORCH_TESTS, else /var/cache/fx-sdk/pytorch-1.13.1-tests).
The tarball is kept beside DIR (downloaded from deb.debian.org when it is
not there, or taken from --tarball). Idempotent: nothing is done when DIR
holds this tarball's files (its FETCHED file names the sha256). Atomic:
extracted to a temporary directory beside DIR, renamed over it. Files are
PyTorch's (BSD-style licence): never copy them into this repository.
Standard library only (tools/setup.sh runs it on a fresh machine).
"""

import argparse
import hashlib
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.request

NAME = "pytorch_1.13.1+dfsg.orig.tar.xz"
SHA256 = "d0355588b8528566d477e6ebf1b4d9d036a6fd75711339f66b27472ce5879dc7"
URL = "http://deb.debian.org/debian/pool/main/p/pytorch/" + NAME
ROOT = "pytorch-1.13.1/test/"
DEFAULT_DEST = "/var/cache/fx-sdk/pytorch-1.13.1-tests"
MARKER = "FETCHED"


def wanted(path):
    """path (inside test/): the files the suite runs."""
    if "/" not in path:
        return path.startswith("test_fx") and path.endswith(".py")
    top, rest = path.split("/", 1)
    if top == "fx":
        return "/" not in rest and rest.endswith(".py")
    if top == "expect":
        return "/" not in rest and rest.startswith("TestFX")
    return False


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download(path):
    """URL to path, through a temporary file beside it, checked."""
    print(f"fetch_pytorch_tests: downloading {URL}", flush=True)
    fd, tmp = tempfile.mkstemp(prefix=".download.",
                               dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as out, \
                urllib.request.urlopen(URL, timeout=120) as response:
            shutil.copyfileobj(response, out, 1 << 20)
        got = sha256(tmp)
        if got != SHA256:
            raise SystemExit(f"fetch_pytorch_tests: {URL}: sha256 {got}, "
                             f"expected {SHA256}")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def extract(tarball, dest):
    """The wanted files of tarball into a temporary directory beside dest,
    then renamed to dest (an older one this script made removed after)."""
    parent = os.path.dirname(dest)
    tmp = tempfile.mkdtemp(prefix=".extract.", dir=parent)
    try:
        count = 0
        with tarfile.open(tarball, "r:xz") as tar:
            for member in tar:
                if not member.name.startswith(ROOT) or not member.isfile():
                    continue
                rel = member.name[len(ROOT):]
                if ".." in rel.split("/") or not wanted(rel):
                    continue
                target = os.path.join(tmp, rel)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with tar.extractfile(member) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
                count += 1
        if not os.path.exists(os.path.join(tmp, "test_fx.py")):
            raise SystemExit(f"fetch_pytorch_tests: {tarball} has no "
                             f"{ROOT}test_fx.py")
        with open(os.path.join(tmp, MARKER), "w") as f:
            f.write(f"{NAME} sha256 {SHA256}\n")
        for d, _, files in os.walk(tmp):
            os.chmod(d, 0o755)
            for name in files:
                os.chmod(os.path.join(d, name), 0o644)
        old = None
        if os.path.exists(dest):
            old = tempfile.mkdtemp(prefix=".old.", dir=parent)
            os.rename(dest, os.path.join(old, "d"))
        os.rename(tmp, dest)
        if old:
            shutil.rmtree(old, ignore_errors=True)
        return count
    finally:
        if os.path.exists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)


def fetched(dest):
    try:
        with open(os.path.join(dest, MARKER)) as f:
            return SHA256 in f.read()
    except OSError:
        return False


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dest", default=os.environ.get(
        "FX_PYTORCH_TESTS") or DEFAULT_DEST)
    parser.add_argument("--tarball", help=f"a local {NAME} (checked)")
    args = parser.parse_args(argv)
    dest = os.path.abspath(args.dest)
    if fetched(dest):
        print(f"fetch_pytorch_tests: {dest} is there")
        return 0
    if os.path.exists(dest) and not os.path.exists(
            os.path.join(dest, MARKER)):
        raise SystemExit(f"fetch_pytorch_tests: {dest} exists and is not "
                         f"one this script made (no {MARKER}): left alone; "
                         f"remove it or choose another --dest")
    parent = os.path.dirname(dest)
    os.makedirs(parent, exist_ok=True)
    tarball = os.path.join(parent, NAME)
    if args.tarball and os.path.abspath(args.tarball) != tarball:
        if sha256(args.tarball) != SHA256:
            raise SystemExit(f"fetch_pytorch_tests: {args.tarball}: not "
                             f"sha256 {SHA256}")
        tarball = os.path.abspath(args.tarball)
    elif not os.path.exists(tarball) or sha256(tarball) != SHA256:
        download(tarball)
    count = extract(tarball, dest)
    print(f"fetch_pytorch_tests: {count} files of {NAME} in {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
