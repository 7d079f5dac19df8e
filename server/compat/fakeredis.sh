#!/usr/bin/env bash
# Compatibility run: the public fakeredis project's own test suite, its real-server variants only
# (pytest -m real: the redis-py sync and async clients, RESP2 and RESP3), against bloomkv-server or,
# as a reference, redis-server. Prints one line "fakeredis V against SERVER: P passed, F failed,
# E errors, S skipped of T", then the failing tests grouped by test file (top 25 files). Not CI.
# Needs python3 >= 3.10 with venv, and PyPI (the fakeredis sdist and the test dependencies, pinned
# below, go to a venv in $CACHE on the first run).
#
#   cargo build --release -p bloomkv-server
#   bash server/compat/fakeredis.sh                              # target/release/bloomkv-server
#   SERVER_BIN=/path/to/bloomkv-server bash server/compat/fakeredis.sh
#   SERVER=redis bash server/compat/fakeredis.sh                 # redis-server from PATH
#
# fakeredis's tests hard-code the real server at localhost:6390 (test/conftest.py and others), so
# the server is started on port 6390 and the script stops at once if something listens there.
# Environment: CACHE (default ~/.cache/bloomkv-compat), TEST_TIMEOUT (seconds per test, default 10),
# PYTEST_ARGS (extra pytest arguments, e.g. "-k zadd" or a test file), SERVER_ARGS (extra server
# flags), PYTHON (default python3). Results: $CACHE/fakeredis-<server>.xml (junit) and
# $CACHE/fakeredis-<server>.failures.txt (each failing test and its error's first line).
# Not run: fakeredis's fake-only tests, test/test_hypothesis (differential, not marked real) and
# test/test_stack's modules other than Bloom and cuckoo filters (ignored: time series, JSON,
# t-digest, top-k, count-min and vector sets are not this server's; pyprobables, pinned, lets
# test_bloomfilter.py and test_cuckoofilter.py run).
set -euo pipefail

FAKEREDIS_VERSION=2.41.0
PINS=(
  pytest==9.2.0 pytest-asyncio==1.5.0 pytest-timeout==2.4.0 pytest-mock==3.17.0
  hypothesis==6.170.17 redis==8.1.0 valkey==6.2.0 lupa==2.8 sortedcontainers==2.4.0
  packaging==26.4 xxhash==4.1.0 pyprobables==0.7.0
)
PORT=6390 # fixed by fakeredis's tests

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${CACHE:-$HOME/.cache/bloomkv-compat}
TEST_TIMEOUT=${TEST_TIMEOUT:-10}
PYTHON=${PYTHON:-python3}
SERVER=${SERVER:-bloomkv}
SERVER_BIN=${SERVER_BIN:-$ROOT/target/release/bloomkv-server}
VENV=$CACHE/fakeredis-venv
SRC=$CACHE/fakeredis-$FAKEREDIS_VERSION

die() { echo "fakeredis.sh: $*" >&2; exit 1; }
mkdir -p "$CACHE"

# --- venv and the fakeredis sdist (its tests are not in the wheel) -------------------------------
stamp="fakeredis==$FAKEREDIS_VERSION ${PINS[*]}"
if [[ ! -x $VENV/bin/python || $(cat "$VENV/.bloomkv-stamp" 2>/dev/null) != "$stamp" ]]; then
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
    die "$PYTHON is older than 3.10 (fakeredis's tests need 3.10+); set PYTHON"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "${PINS[@]}"
fi
if [[ ! -f $SRC/test/conftest.py ]]; then
  dl=$CACHE/download
  mkdir -p "$dl"
  "$VENV/bin/pip" download -q --disable-pip-version-check --no-binary :all: --no-deps \
    -d "$dl" "fakeredis==$FAKEREDIS_VERSION"
  rm -rf "$SRC"
  tar -xzf "$dl/fakeredis-$FAKEREDIS_VERSION.tar.gz" -C "$CACHE"
  [[ -f $SRC/test/conftest.py ]] || die "the fakeredis $FAKEREDIS_VERSION sdist has no test/conftest.py"
fi
if [[ $(cat "$VENV/.bloomkv-stamp" 2>/dev/null) != "$stamp" ]]; then
  # fakeredis reads its own version from package metadata, so it is installed too (from the sdist).
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps \
    "$CACHE/download/fakeredis-$FAKEREDIS_VERSION.tar.gz"
  echo "$stamp" > "$VENV/.bloomkv-stamp"
fi

# --- the server on port 6390 ---------------------------------------------------------------------
port_busy() {
  "$VENV/bin/python" - "$PORT" <<'EOF'
import socket, sys
port = int(sys.argv[1])
for fam, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    try:
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(1)
        s.connect((addr, port))
        sys.exit(0)  # something answers
    except OSError:
        pass
    finally:
        s.close()
sys.exit(1)
EOF
}
port_busy && die "port $PORT is in use (fakeredis's tests hard-code localhost:$PORT): stop what listens there"

TMP=$(mktemp -d)
SERVER_PID=
cleanup() {
  if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

read -r -a extra_server_args <<< "${SERVER_ARGS:-}"
case $SERVER in
  redis)
    command -v redis-server > /dev/null || die "redis-server not found"
    label="redis-server $(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')"
    name=redis
    redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$TMP" \
      "${extra_server_args[@]}" > "$CACHE/server-$name.log" 2>&1 &
    ;;
  bloomkv)
    [[ -x $SERVER_BIN ]] || die "no server binary $SERVER_BIN (cargo build --release -p bloomkv-server, or set SERVER_BIN)"
    label="bloomkv-server ($SERVER_BIN)"
    name=bloomkv
    "$SERVER_BIN" --port "$PORT" --dir "$TMP/data" "${extra_server_args[@]}" \
      > "$CACHE/server-$name.log" 2>&1 &
    ;;
  *) die "SERVER must be bloomkv or redis, not $SERVER" ;;
esac
SERVER_PID=$!
for i in $(seq 100); do
  kill -0 "$SERVER_PID" 2>/dev/null || die "the server exited at start; see $CACHE/server-$name.log"
  "$VENV/bin/python" -c "import redis; redis.Redis(port=$PORT, socket_timeout=1).ping()" 2> /dev/null && break
  [[ $i == 100 ]] && die "the server does not answer PING on port $PORT; see $CACHE/server-$name.log"
  sleep 0.1
done

# --- the tests -----------------------------------------------------------------------------------
XML=$CACHE/fakeredis-$name.xml
LOG=$CACHE/fakeredis-$name.log
rm -f "$XML"
read -r -a extra_pytest_args <<< "${PYTEST_ARGS:-}"
# Of Redis Stack's modules, only RedisBloom's Bloom and cuckoo filters are this server's.
stack_ignored=()
for f in "$SRC"/test/test_stack/test_*.py; do
  case ${f##*/} in
    test_bloomfilter.py | test_cuckoofilter.py) ;;
    *) stack_ignored+=("--ignore=test/test_stack/${f##*/}") ;;
  esac
done
echo "fakeredis $FAKEREDIS_VERSION: running pytest -m real against $label on port $PORT (log: $LOG)" >&2
rc=0
(cd "$SRC" && "$VENV/bin/python" -m pytest -m real -p no:cacheprovider -q --no-header -rN \
  --timeout="$TEST_TIMEOUT" -o junit_family=xunit1 --junitxml="$XML" \
  "${stack_ignored[@]}" "${extra_pytest_args[@]}") > "$LOG" 2>&1 || rc=$?
# 0: all passed, 1: some failed; anything else (interrupted, usage error, no tests) is no result.
if [[ $rc -gt 1 || ! -s $XML ]]; then
  tail -n 20 "$LOG" >&2
  die "pytest exited with status $rc; see $LOG"
fi

"$VENV/bin/python" - "$XML" "$FAKEREDIS_VERSION" "$label" "$CACHE/fakeredis-$name.failures.txt" <<'EOF'
import collections, sys, xml.etree.ElementTree as ET
xml, version, label, failures_path = sys.argv[1:]
# One outcome per test: junit lists a test twice when it failed and then errored in teardown.
rank = {"passed": 0, "skipped": 1, "errors": 2, "failed": 3}
outcome, detail = {}, {}
for case in ET.parse(xml).getroot().iter("testcase"):
    path = case.get("file") or case.get("classname", "?").replace(".", "/") + ".py"
    module = path[:-3].replace("/", ".")
    cls = case.get("classname", "")
    name = (cls[len(module) + 1:] + "::" if cls.startswith(module + ".") else "") + (case.get("name") or "")
    test = (path, name)
    kinds = {child.tag for child in case}
    kind = ("failed" if "failure" in kinds else "errors" if "error" in kinds
            else "skipped" if "skipped" in kinds else "passed")
    if rank[kind] >= rank[outcome.get(test, "passed")]:
        outcome[test] = kind
        if kind in ("failed", "errors"):
            node = case.find("failure") if kind == "failed" else case.find("error")
            msg = (node.get("message") or node.text or "").strip().splitlines()
            detail[test] = msg[0][:200] if msg else ""
counts = collections.Counter(outcome.values())
by_file = collections.Counter()
lines = []
for (path, name), kind in outcome.items():
    if kind in ("failed", "errors"):
        by_file[path] += 1
        lines.append(f"{path}::{name}  [{kind}] {detail[(path, name)]}")
total = sum(counts.values())
with open(failures_path, "w") as f:
    f.write("\n".join(lines) + ("\n" if lines else ""))
print(f"fakeredis {version} against {label}: {counts['passed']} passed, {counts['failed']} failed, "
      f"{counts['errors']} errors, {counts['skipped']} skipped of {total}")
if by_file:
    print(f"failing tests (failed + errors) by file, top 25 of {len(by_file)} (each: {failures_path}):")
    for path, n in by_file.most_common(25):
        print(f"  {n:5d}  {path}")
EOF
