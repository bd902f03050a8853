#!/usr/bin/env bash
# Runs the whole ccproxy test suite on a fresh machine that has Go, Node/npm and apt.
#
# It installs what the suite needs (pinned npm packages into ./.deps, which git
# ignores; the newest Claude Code CLI into its own prefix .deps/claude-<version>;
# Debian's chromium and caddy), then runs `go vet ./...`, vets every package
# and builds ccproxy for Windows (amd64) and macOS (arm64) in the background at
# the lowest CPU priority, and runs `go test ./...` (with -race on the
# packages that run goroutines, the two runs side by side) against the pinned
# Claude Code CLI. Then each of the two runs the tests of its own that used
# the real CLI again against the newest CLI, without -race
# ($CCPROXY_CLAUDE_NEWEST, 2.1.332 by default; set it empty to skip that run).
# Extra arguments are passed to `go test`, in both runs.
#
# With CI=true a test whose real dependency (the Claude Code CLI, an MCP server,
# chromium) is missing fails instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

deps=${CCPROXY_DEPS:-$root/.deps}
export CCPROXY_DEPS=$deps

# npm packages, pinned. Keep the CLI's version in step with
# internal/testkit/deps.go (PinnedClaudeVersion).
claude_pinned=2.1.329
# The newest Claude Code CLI: the real-CLI tests run against it too, from its
# own npm prefix (testkit.ClaudeInstallDir). Empty: no second run.
claude_newest=${CCPROXY_CLAUDE_NEWEST-2.1.332}
npm_pkgs=(
  "@anthropic-ai/claude-code@$claude_pinned"
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/server-memory@2026.8.31"
  "typescript@5.9.3"
  "ws@8.23.0" # the websocket of @ccproxy/client's Node tests (protocol/ts), whose package.json pins the same
  "json-schema-to-typescript@16.0.0" # generates ts/protocol.gen.ts from the schemas (protocol/internal/gen)
  "@agentclientprotocol/sdk@2.4.0"
)

installed_version() { # $1 = package name, $2 = npm prefix (default $deps); prints the installed version or nothing
  local pj="${2:-$deps}/node_modules/$1/package.json"
  [ -f "$pj" ] && node -e 'process.stdout.write(require(process.argv[1]).version)' "$pj" 2>/dev/null || true
}

missing=()
for spec in "${npm_pkgs[@]}"; do
  name=${spec%@*}; want=${spec##*@}
  [ "$(installed_version "$name")" = "$want" ] || missing+=("$spec")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "test.sh [${SECONDS}s]: installing npm packages into $deps: ${missing[*]}" >&2
  mkdir -p "$deps"
  npm install --prefix "$deps" --no-audit --no-fund --no-save --loglevel=error "${npm_pkgs[@]}" >&2
fi

if [ -n "$claude_newest" ] && [ "$claude_newest" != "$claude_pinned" ]; then
  newest_prefix=$deps/claude-$claude_newest
  if [ "$(installed_version @anthropic-ai/claude-code "$newest_prefix")" != "$claude_newest" ]; then
    echo "test.sh [${SECONDS}s]: installing Claude Code $claude_newest into $newest_prefix" >&2
    mkdir -p "$newest_prefix"
    npm install --prefix "$newest_prefix" --no-audit --no-fund --no-save --loglevel=error \
      "@anthropic-ai/claude-code@$claude_newest" >&2
  fi
fi

# Warn when Node is older than a Claude Code CLI's package.json asks for
# (engines.node, of the form ">=X.Y.Z"): its installer and wrapper run on Node.
check_engines() { # $1 = package.json
  [ -f "$1" ] || return 0
  node -e '
    const pj = require(process.argv[1]);
    const want = ((pj.engines || {}).node || "").trim();
    if (!want) process.exit(0);
    const m = /^>=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(want);
    if (!m) {
      console.log(`test.sh: warning: cannot check Node ${process.versions.node} against ${pj.name} ${pj.version} engines.node ${JSON.stringify(want)}`);
      process.exit(0);
    }
    const need = [m[1], m[2] || 0, m[3] || 0].map(Number);
    const have = process.versions.node.split(".").map(Number);
    for (let i = 0; i < 3; i++) {
      if (have[i] > need[i]) process.exit(0);
      if (have[i] < need[i]) {
        console.log(`test.sh: warning: Node ${process.versions.node} is older than ${pj.name} ${pj.version} needs (engines.node ${want}, in ${process.argv[1]})`);
        process.exit(0);
      }
    }' "$1" >&2
}
check_engines "$deps/node_modules/@anthropic-ai/claude-code/package.json"
[ -z "${newest_prefix:-}" ] || check_engines "$newest_prefix/node_modules/@anthropic-ai/claude-code/package.json"

# Debian packages: chromium for the browser tests (package webui), caddy
# for the reverse-proxy test (a real Caddy in front of serve --public-url).
apt_missing=()
command -v chromium >/dev/null 2>&1 || apt_missing+=(chromium)
command -v caddy >/dev/null 2>&1 || apt_missing+=(caddy)
if [ ${#apt_missing[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    # apt's output goes to a log, shown only when it fails.
    apt_log=$deps/apt-get.log
    mkdir -p "$deps"
    echo "test.sh [${SECONDS}s]: installing ${apt_missing[*]} with apt-get (log: $apt_log)" >&2
    if ! (apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${apt_missing[@]}") \
      >"$apt_log" 2>&1 </dev/null; then
      cat "$apt_log" >&2
      echo "test.sh [${SECONDS}s]: could not install ${apt_missing[*]} (apt-get output above); the tests that need them will fail in CI" >&2
    fi
  else
    echo "test.sh [${SECONDS}s]: ${apt_missing[*]} missing and cannot be installed here (needs root and apt-get)" >&2
  fi
fi

echo "test.sh [${SECONDS}s]: go vet ./..." >&2
go vet ./...

# Every platform builds: only Linux runs the suite, the others are compile-
# checked: go vet ./... type-checks every package and its tests for the
# target, and go build links ccproxy itself (linking every main package of
# ./..., the internal bench and capture tools too, cost a minute of CPU
# more for nothing vet does not already check). The checks
# run in the background at the lowest CPU priority (nice 19) while the tests
# run: the tests spend much of their time waiting on processes, and the
# checks take what CPU the tests leave (with a cold build cache they are
# minutes of compiling). Their output is shown, and a failure fails the run,
# at the end. $CCPROXY_CROSS_TARGETS picks other targets (scripts/release.sh
# builds all six release targets).
status=0
cross_dir=$(mktemp -d "${TMPDIR:-/tmp}/ccproxy-cross.XXXXXX")
cross_targets=${CCPROXY_CROSS_TARGETS:-windows/amd64 darwin/arm64}
echo "test.sh [${SECONDS}s]: go vet ./... && go build ./cmd/ccproxy for $cross_targets, in the background" >&2
(
  for target in $cross_targets; do
    log=$cross_dir/${target%/*}-${target#*/}
    start=$SECONDS
    if GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 nice -n 19 go vet ./... >"$log.log" 2>&1 &&
      GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 nice -n 19 go build -o "$log.bin" ./cmd/ccproxy >>"$log.log" 2>&1; then
      echo 0 >"$log.rc"
    else
      echo 1 >"$log.rc"
    fi
    echo "$((SECONDS - start))" >"$log.secs"
  done
) &
cross_pid=$!

# Packages with concurrency run under the race detector; the rest run plain
# (webui among them: its browser tests drive a built ccproxy binary, with
# CI=true they fail when chromium is missing).
race_pkgs=$(go list ./... | grep -E '/(acp|proxy|mcpconfig|history|internal/testkit|internal/replay|internal/childproc)(/|$)' || true)
plain_pkgs=$(go list ./... | grep -v -E '/(acp|proxy|mcpconfig|history|internal/testkit|internal/replay|internal/childproc)(/|$)' || true)

# go test starts its packages' test binaries in the order it is given them,
# -p (GOMAXPROCS) at a time: the longest go first, so that the longest of
# all (proxy under -race) starts at once instead of after the packages
# alphabetically before it. The rest keep go list's order.
module=$(go list -m)
longest_first() { # $1 = packages, one a line; then directories of the module, longest first; prints the packages reordered
  local pkgs=$1 dir first=()
  shift
  for dir in "$@"; do
    if grep -qxF "$module/$dir" <<<"$pkgs"; then first+=("$module/$dir"); fi
  done
  [ ${#first[@]} -eq 0 ] || printf '%s\n' "${first[@]}"
  grep -vxF -f <(printf '%s\n' "${first[@]}" "-") <<<"$pkgs" || true
}
race_pkgs=$(longest_first "$race_pkgs" proxy acp mcpconfig/probe internal/testkit/capture mcpconfig internal/testkit/mcptest history)
plain_pkgs=$(longest_first "$plain_pkgs" webui cmd/ccproxy protocol)

# The tests that use the real CLI (testkit.Claude) record themselves, as
# "<package dir>\t<top-level test>" lines, for the second run: each run in
# a file of its own in $work; $CCPROXY_CLAUDE_TESTS_LOG, if set, is emptied
# first and gets both lists at the end.
work=$(mktemp -d "${TMPDIR:-/tmp}/ccproxy-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -n "${CCPROXY_CLAUDE_TESTS_LOG:-}" ]; then
  : >"$CCPROXY_CLAUDE_TESTS_LOG"
fi
second_run=
if [ -n "$claude_newest" ] && [ "$claude_newest" != "$claude_pinned" ]; then second_run=1; fi

# run_kind runs one kind of packages (plain or race): go test against the
# pinned CLI, then the tests of that run that used the real CLI again, in
# only their packages, against the newest CLI, with the same flags but
# without -race (the first run covered the races; this one is about the
# CLI). One -run pattern for all of them: a test in one of these packages
# that shares its name with a real-CLI test of another runs too, which
# costs a little time and nothing else. The run's status goes to
# $work/$kind.rc.
# pinned_test runs go test against the pinned CLI for run_kind, with its
# flags and its list of real-CLI tests ($flags and $log, run_kind's locals);
# its arguments are go test's packages and flags.
pinned_test() {
  CCPROXY_CLAUDE_TESTS_LOG=$log CCPROXY_CLAUDE_VERSION=$claude_pinned go test -count=1 -timeout 30m "${flags[@]}" "$@" 2>&1
}

run_kind() { # $1 = plain or race, $2 = packages, then go test's extra arguments
  local kind=$1 pkgs=$2 log=$work/$1.claude-tests rc=0 flags=() names dir recorded=() again=()
  shift 2
  : >"$log"
  if [ "$kind" = race ]; then flags=(-race); fi
  # proxy runs in two go tests of its own beside the other packages: its
  # end-to-end tests (TestE2E*, nearly all parallel) in one, its other tests
  # in the other. go test runs a package's serial tests first and its
  # parallel ones after them, so in one process proxy's ~140 serial tests
  # and its E2E tests took their turns: the longest chain of the whole run.
  # Not when the caller passes go test arguments (a -run of theirs would
  # meet these).
  local proxy_pids=() pid proxy_rc rest=$pkgs
  if [ "$kind" = race ] && [ $# -eq 0 ] && grep -qxF "$module/proxy" <<<"$pkgs"; then
    # Every test binary built first (a run of no test), so that the three
    # go tests do not compile the packages they share side by side. A
    # failure here shows again, package by package, in the runs below.
    # shellcheck disable=SC2086
    go test -count=1 "${flags[@]}" -run '^$' $pkgs >"$work/$kind.build" 2>&1 || true
    pinned_test -run '^TestE2E' "$module/proxy" &
    proxy_pids+=($!)
    pinned_test -skip '^TestE2E' "$module/proxy" &
    proxy_pids+=($!)
    rest=$(grep -vxF "$module/proxy" <<<"$pkgs" || true)
  fi
  # shellcheck disable=SC2086
  [ -z "$rest" ] || pinned_test $rest "$@" || rc=$?
  for pid in "${proxy_pids[@]}"; do
    proxy_rc=0
    wait "$pid" || proxy_rc=$?
    [ "$proxy_rc" = 0 ] || [ "$rc" != 0 ] || rc=$proxy_rc
  done
  if [ "$rc" != 0 ]; then
    echo "test.sh [${SECONDS}s]: FAIL: the $kind run (Claude Code $claude_pinned) exited $rc" >&2
    echo "$rc" >"$work/$kind.rc"
    rc=0
  fi
  if [ -n "$second_run" ] && [ -s "$log" ]; then
    names=$(cut -f2 "$log" | sort -u | paste -sd'|' -)
    while IFS= read -r dir; do
      recorded+=("$(cd "$dir" && go list .)")
    done < <(cut -f1 "$log" | sort -u)
    # In the first run's order (the longest first).
    mapfile -t again < <(grep -xF -f <(printf '%s\n' "${recorded[@]}") <<<"$pkgs")
    echo "test.sh [${SECONDS}s]: go test (Claude Code $claude_newest): the $(cut -f2 "$log" | sort -u | wc -l) real-CLI tests of the $kind run, in ${#again[@]} packages" >&2
    # (It records nothing: its list would be the same.)
    [ ${#again[@]} -eq 0 ] || CCPROXY_CLAUDE_TESTS_LOG= CCPROXY_CLAUDE_VERSION=$claude_newest go test -count=1 -timeout 30m "${again[@]}" "$@" -run "^($names)\$" 2>&1 || rc=$?
    if [ "$rc" != 0 ]; then
      echo "test.sh [${SECONDS}s]: FAIL: the $kind run's real-CLI tests (Claude Code $claude_newest) exited $rc" >&2
      echo "$rc" >"$work/$kind.rc"
    fi
  fi
  [ -e "$work/$kind.rc" ] || echo 0 >"$work/$kind.rc"
}

# The plain and the race runs share nothing but the machine, and their tests
# spend most of their time waiting on processes (the CLI, MCP servers,
# chromium): they run side by side, each followed at once by its second
# run (the plain one ends long before the race one). Each line of their
# output is prefixed "plain| " or "race| " so that the two can be told
# apart.
echo "test.sh [${SECONDS}s]: go test (Claude Code $claude_pinned): plain and -race side by side${second_run:+, each then its real-CLI tests against $claude_newest}" >&2
pids=()
for kind in plain race; do
  case $kind in
    plain) pkgs=$plain_pkgs ;;
    race) pkgs=$race_pkgs ;;
  esac
  [ -n "$pkgs" ] || continue
  run_kind "$kind" "$pkgs" "$@" | sed -u "s/^/$kind| /" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || true; done
for kind in plain race; do
  case $kind in
    plain) [ -n "$plain_pkgs" ] || continue ;;
    race) [ -n "$race_pkgs" ] || continue ;;
  esac
  # A run that wrote no status failed (it never got to write it).
  rc=$(cat "$work/$kind.rc" 2>/dev/null || echo "unknown")
  [ "$rc" = 0 ] || { echo "test.sh [${SECONDS}s]: FAIL: the $kind run exited $rc" >&2; status=1; }
  [ -z "${CCPROXY_CLAUDE_TESTS_LOG:-}" ] || cat "$work/$kind.claude-tests" >>"$CCPROXY_CLAUDE_TESTS_LOG" 2>/dev/null || true
done
echo "test.sh [${SECONDS}s]: waiting for the builds of $cross_targets" >&2
wait "$cross_pid" || true
for target in $cross_targets; do
  log=$cross_dir/${target%/*}-${target#*/}
  if [ "$(cat "$log.rc" 2>/dev/null || echo unknown)" != 0 ]; then
    cat "$log.log" >&2 2>/dev/null || true
    echo "test.sh: FAIL: $target does not build or vet" >&2
    status=1
  else
    echo "test.sh: $target: go vet and go build ./cmd/ccproxy clean ($(cat "$log.secs")s in the background)" >&2
  fi
done
rm -rf "$cross_dir"
echo "test.sh [${SECONDS}s]: done, exit $status" >&2
exit $status
