#!/usr/bin/env bash
# Pipelines spread by Bazel's remote cache (issue 37 item 3):
#   1. start a local HTTP remote cache: Debian's nginx (nginx-light has the
#      WebDAV module: PUT stores, GET serves) on a free port of 127.0.0.1,
#      its config, store, logs and temporary files under TEST_TMPDIR,
#      stopped when the test ends;
#   2. a fresh workspace on the moved install (fx_workspace.sh) with 20
#      fx_library targets: the template's model through 20 different
#      pipelines (passes, orders, named pipelines);
#   3. build their bundles, and the first target's C++ library, with
#      --remote_cache=http://127.0.0.1:PORT and no disk cache: all 20
#      FxPipeline actions (and the library's fx code and compile actions)
#      execute and are uploaded;
#   4. build them again from a new, empty output base: Bazel's execution
#      log (--execution_log_json_file) shows every FxPipeline action a
#      remote cache hit, and the build's summary line says that no process
#      ran but remote cache hits (and the internal ones): the C++ library's
#      generated code and its compiles come from the cache too;
#   5. the bundles of both builds are byte-identical.
# Of the C++ libraries only the first is built: compiling a target's
# generated C++ against LibTorch takes 30-60 s on CI's two cores, and one
# shows the compile actions cached alike (install_fx_library_test runs the
# C++ half: the program, NAME_test and NAME_benchmark).
set -euo pipefail
source "$TEST_SRCDIR/fx_sdk/tests/tools/fx_workspace.sh"

nginx=/usr/sbin/nginx
[ -x "$nginx" ] || fail "no $nginx (tools/setup.sh installs Debian's nginx-light)"
work="$TEST_TMPDIR/work"
rm -rf "$work"
mkdir -p "$work/home"
test_start=$(date +%s.%N)

step "nginx: an HTTP remote cache on 127.0.0.1"
cache="$work/cache"
mkdir -p "$cache/store" "$cache/tmp"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
{
  # As root, nginx's workers would otherwise run as nobody, who cannot
  # write the store.
  [ "$(id -u)" -ne 0 ] || echo "user root root;"
  cat <<EOT
worker_processes 1;
error_log $cache/error.log;
pid $cache/nginx.pid;
events { worker_connections 64; }
http {
  access_log $cache/access.log;
  client_body_temp_path $cache/tmp/body;
  proxy_temp_path $cache/tmp/proxy;
  fastcgi_temp_path $cache/tmp/fastcgi;
  uwsgi_temp_path $cache/tmp/uwsgi;
  scgi_temp_path $cache/tmp/scgi;
  server {
    listen 127.0.0.1:$port;
    root $cache/store;
    client_max_body_size 1g;
    location / {
      dav_methods PUT;
      create_full_put_path on;
      dav_access user:rw group:r all:r;
    }
  }
}
EOT
} >"$cache/nginx.conf"
"$nginx" -e "$cache/error.log" -p "$cache" -c "$cache/nginx.conf" -g 'daemon off;' &
nginx_pid=$!
trap 'kill "$nginx_pid" 2>/dev/null; wait "$nginx_pid" 2>/dev/null || true' EXIT
url="http://127.0.0.1:$port"
# http METHOD PATH [BODY]: the response's body (fails on an HTTP error).
http() {
  python3 -c 'import sys, urllib.request as u
r = u.Request(sys.argv[2], data=sys.argv[3].encode() if len(sys.argv) > 3 else None, method=sys.argv[1])
sys.stdout.write(u.urlopen(r, timeout=5).read().decode())' "$1" "$url$2" "${@:3}" 2>/dev/null
}
for _ in $(seq 50); do
  http PUT /probe probe >/dev/null && break
  kill -0 "$nginx_pid" 2>/dev/null || { cat "$cache/error.log"; fail "nginx did not start"; }
  sleep 0.1
done
[ "$(http GET /probe)" = probe ] || { cat "$cache/error.log"; fail "nginx does not store what is PUT"; }

step "install, and a workspace with 20 fx_library targets"
install_sdk "$work"
ws="$work/models"
new_workspace "$ws"
pipelines=(
  "dce" "cse" "cse,dce" "dce,cse" "shape_prop" "shape_prop,dce"
  "shape_prop,fold_bn" "shape_prop,fold_bn,dce" "shape_prop,fold_bn,cse,dce"
  "O1" "O2" "inference" "shape_prop,fold_bn,fuse_conv"
  "shape_prop,fold_bn,fuse_conv,dce" "shape_prop,fuse_pointwise"
  "shape_prop,fold_bn,fuse_pointwise" "const_fold" "const_fold,dce"
  "dce,shape_prop,fold_bn" "shape_prop,fold_bn,fuse_conv,fuse_pointwise,dce"
)
[ "${#pipelines[@]}" -eq 20 ] || fail "${#pipelines[@]} pipelines, not 20"
targets=(//cached:model_00)
{
  echo 'load("@fx_sdk//share/fx-sdk/bazel:fx_library.bzl", "fx_library")'
  i=0
  for p in "${pipelines[@]}"; do
    name="$(printf 'model_%02d' "$i")"
    targets+=("//cached:${name}_bundle")
    cat <<EOT

fx_library(
    name = "$name",
    graph = "//:model/graph.fx.json",
    weights = ["//:model/model.weights.pt"],
    inputs = "//:model/input.pt",
    pipeline = "$p",
    plugins = [
        "@fx_sdk//:libfx_inference.so",
        "@fx_sdk//:libfx_passes.so",
        "@fx_sdk//:libfx_shape_prop.so",
    ],
)
EOT
    i=$((i + 1))
  done
} >"$ws/cached.BUILD"
mkdir -p "$ws/cached"
mv "$ws/cached.BUILD" "$ws/cached/BUILD.bazel"
echo 'exports_files(glob(["model/*"]))' >>"$ws/BUILD.bazel"

# build N: the bundles in output base N, with the remote cache alone; its
# execution log in $work/exec_N.json.
build() {
  local start
  start=$(date +%s.%N)
  in_workspace "$ws" "$work/out_$1" "$work/build_$1.log" build \
    --remote_cache="$url" \
    --execution_log_json_file="$work/exec_$1.json" "${targets[@]}" ||
    { cat "$work/build_$1.log"; fail "build $1 failed"; }
  echo "build $1: $(seconds_since "$start") s; $(grep -E 'INFO: [0-9]+ processes' "$work/build_$1.log")"
  grep -q -- "--disk_cache" "$work/build_$1.log" && fail "a disk cache is in use" || true
}
# pipeline_spawns N: per FxPipeline spawn of build N, "HIT" or "RAN", with
# its progress message.
pipeline_spawns() {
  python3 - "$work/exec_$1.json" <<'EOT'
import json, sys
text = open(sys.argv[1]).read()
decoder, at = json.JSONDecoder(), 0
while True:
    while at < len(text) and text[at].isspace():
        at += 1
    if at == len(text):
        break
    spawn, at = decoder.raw_decode(text, at)
    if spawn.get("mnemonic") == "FxPipeline":
        print("HIT" if spawn.get("remoteCacheHit") else "RAN", spawn.get("progressMessage", ""))
EOT
}

step "build 1: an empty cache"
build 1
pipeline_spawns 1 >"$work/spawns_1.txt"
[ "$(grep -c '^RAN' "$work/spawns_1.txt")" -eq 20 ] ||
  { cat "$work/spawns_1.txt"; fail "build 1 did not run 20 pipeline actions"; }
stored=$(find "$cache/store/ac" -type f | wc -l)
[ "$stored" -ge 20 ] || fail "the cache holds $stored action results after build 1, not 20"
echo "the cache holds $stored action results, $(find "$cache/store/cas" -type f | wc -l) files"
for t in "${targets[@]}"; do
  n="${t#//cached:}"
  n="${n%_bundle}"
  mkdir -p "$work/first/$n"
  cp "$ws/bazel-bin/cached/${n}_bundle/graph.fx.json" "$work/first/$n/"
done
! grep -q BatchNorm "$work/first/model_07/graph.fx.json" ||
  fail "shape_prop,fold_bn,dce left a BatchNorm in model_07"

step "build 2: a new output base, the same cache"
build 2
pipeline_spawns 2 >"$work/spawns_2.txt"
cat "$work/spawns_2.txt"
[ "$(grep -c '^HIT' "$work/spawns_2.txt")" -eq 20 ] ||
  fail "build 2: $(grep -c '^HIT' "$work/spawns_2.txt") of 20 pipeline actions were remote cache hits"
! grep -q '^RAN' "$work/spawns_2.txt" || fail "build 2 executed a pipeline action"
summary="$(grep -E 'INFO: [0-9]+ processes' "$work/build_2.log")"
# "N processes: 20 remote cache hit, M internal." (internal: Bazel's own
# bookkeeping, nothing executed); any other kind (local, linux-sandbox,
# worker, remote) would be a process that ran.
kinds="$(echo "$summary" | sed 's/.*processes: //; s/\.$//' | tr ',' '\n' | sed 's/^ *//')"
hits="$(echo "$kinds" | sed -n 's/^\([0-9]*\) remote cache hit$/\1/p')"
[ -n "$hits" ] && [ "$hits" -gt 20 ] ||
  fail "build 2: not the 20 pipelines and the C++ library's actions as remote cache hits: $summary"
! echo "$kinds" | grep -Evq "^([0-9]+ remote cache hit|[0-9]+ internal)$" ||
  fail "build 2 ran processes that were not remote cache hits: $summary"
[ -f "$ws/bazel-bin/cached/libmodel_00.a" ] ||
  fail "build 2 has no C++ library of model_00"
for n in $(ls "$work/first"); do
  cmp -s "$work/first/$n/graph.fx.json" "$ws/bazel-bin/cached/${n}_bundle/graph.fx.json" ||
    fail "$n: build 2's bundle differs from build 1's"
done
echo "test wall time: $(seconds_since "$test_start") s"
echo "PASS"
