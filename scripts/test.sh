#!/usr/bin/env bash
# Runs the whole ccproxy test suite on a fresh machine that has Go, Node/npm and apt.
#
# It installs what the suite needs (pinned npm packages into ./.deps, which git
# ignores; the newest Claude Code CLI into its own prefix .deps/claude-<version>;
# Debian's chromium and caddy), then runs `go vet ./...`, builds and vets every
# package for Windows (amd64) and macOS (arm64) in the background at the lowest
# CPU priority, and runs `go test ./...` (with -race on the
# packages that run goroutines, the two runs side by side) against the pinned
# Claude Code CLI. Then it runs
# the tests that used the real CLI again against the newest CLI, without -race
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
# checked (go build, and go vet, which also compiles the tests). The checks
# run in the background at the lowest CPU priority (nice 19) while the tests
# run: the tests spend much of their time waiting on processes, and the
# checks take what CPU the tests leave (with a cold build cache they are
# minutes of compiling). Their output is shown, and a failure fails the run,
# at the end. $CCPROXY_CROSS_TARGETS picks other targets (scripts/release.sh
# builds all six release targets).
status=0
cross_dir=$(mktemp -d "${TMPDIR:-/tmp}/ccproxy-cross.XXXXXX")
cross_targets=${CCPROXY_CROSS_TARGETS:-windows/amd64 darwin/arm64}
echo "test.sh [${SECONDS}s]: go build ./... && go vet ./... for $cross_targets, in the background" >&2
(
  for target in $cross_targets; do
    log=$cross_dir/${target%/*}-${target#*/}
    start=$SECONDS
    if GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 nice -n 19 go build ./... >"$log.log" 2>&1 &&
      GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 nice -n 19 go vet ./... >>"$log.log" 2>&1; then
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

# The tests that use the real CLI (testkit.Claude) record themselves here, as
# "<package dir>\t<top-level test>" lines, for the second run: in a temporary
# file, or in $CCPROXY_CLAUDE_TESTS_LOG, which is emptied first and kept.
if [ -n "${CCPROXY_CLAUDE_TESTS_LOG:-}" ]; then
  claude_tests=$CCPROXY_CLAUDE_TESTS_LOG
  : >"$claude_tests"
else
  claude_tests=$(mktemp "${TMPDIR:-/tmp}/ccproxy-claude-tests.XXXXXX")
  trap 'rm -f "$claude_tests"' EXIT
fi

# The plain and the race runs share nothing but the machine, and their tests
# spend most of their time waiting on processes (the CLI, MCP servers,
# chromium): they run side by side. Each line of their output is prefixed
# "plain| " or "race| " so that the two can be told apart.
side_by_side() { # $1 = CLI version, $2 = plain packages, $3 = race packages, then go test's extra arguments
  local version=$1 plain=$2 race=$3 rcdir pids=() kind rc
  shift 3
  rcdir=$(mktemp -d "${TMPDIR:-/tmp}/ccproxy-test-rc.XXXXXX")
  if [ -n "$plain" ]; then
    # shellcheck disable=SC2086
    # (set -e would end the group at a failing go test, before its status
    # is written: "|| rc=$?" keeps it going.)
    { rc=0; CCPROXY_CLAUDE_VERSION=$version go test -count=1 -timeout 30m $plain "$@" 2>&1 || rc=$?; echo "$rc" >"$rcdir/plain"; } | sed -u 's/^/plain| /' &
    pids+=($!)
  fi
  if [ -n "$race" ]; then
    # shellcheck disable=SC2086
    { rc=0; CCPROXY_CLAUDE_VERSION=$version go test -count=1 -timeout 30m -race $race "$@" 2>&1 || rc=$?; echo "$rc" >"$rcdir/race"; } | sed -u 's/^/race| /' &
    pids+=($!)
  fi
  for pid in "${pids[@]}"; do wait "$pid" || true; done
  for kind in plain race; do
    case $kind in
      plain) [ -n "$plain" ] || continue ;;
      race) [ -n "$race" ] || continue ;;
    esac
    # A run that wrote no status failed (it never got to write it).
    rc=$(cat "$rcdir/$kind" 2>/dev/null || echo "unknown")
    [ "$rc" = 0 ] || { echo "test.sh [${SECONDS}s]: FAIL: the $kind run (Claude Code $version) exited $rc" >&2; status=1; }
  done
  rm -rf "$rcdir"
}

echo "test.sh [${SECONDS}s]: go test (Claude Code $claude_pinned): plain and -race side by side" >&2
CCPROXY_CLAUDE_TESTS_LOG=$claude_tests side_by_side "$claude_pinned" "$plain_pkgs" "$race_pkgs" "$@"

# Second run: only the tests recorded above, in only their packages, against
# the newest CLI, with the same flags as the first run. One -run pattern for
# all of them: a test in one of these packages that shares its name with a
# real-CLI test of another runs too, which costs a little time and nothing else.
if [ -n "$claude_newest" ] && [ "$claude_newest" != "$claude_pinned" ]; then
  if [ ! -s "$claude_tests" ]; then
    echo "test.sh [${SECONDS}s]: no test used the real Claude Code CLI; no run against $claude_newest" >&2
  else
    names=$(cut -f2 "$claude_tests" | sort -u | paste -sd'|' -)
    pkgs=()
    while IFS= read -r dir; do
      pkgs+=("$(cd "$dir" && go list .)")
    done < <(cut -f1 "$claude_tests" | sort -u)
    again_race=() again_plain=()
    for p in "${pkgs[@]}"; do
      if grep -qxF "$p" <<<"$race_pkgs"; then again_race+=("$p"); else again_plain+=("$p"); fi
    done
    echo "test.sh [${SECONDS}s]: go test (Claude Code $claude_newest): $(cut -f2 "$claude_tests" | sort -u | wc -l) real-CLI tests in ${#pkgs[@]} packages" >&2
    # Without -race: the first run covered the races; this one is about the CLI.
    side_by_side "$claude_newest" "${again_plain[*]} ${again_race[*]}" "" "$@" -run "^($names)\$"
  fi
fi
echo "test.sh [${SECONDS}s]: waiting for the builds of $cross_targets" >&2
wait "$cross_pid" || true
for target in $cross_targets; do
  log=$cross_dir/${target%/*}-${target#*/}
  if [ "$(cat "$log.rc" 2>/dev/null || echo unknown)" != 0 ]; then
    cat "$log.log" >&2 2>/dev/null || true
    echo "test.sh: FAIL: $target does not build or vet" >&2
    status=1
  else
    echo "test.sh: $target: go build and go vet clean ($(cat "$log.secs")s in the background)" >&2
  fi
done
rm -rf "$cross_dir"
echo "test.sh [${SECONDS}s]: done, exit $status" >&2
exit $status
