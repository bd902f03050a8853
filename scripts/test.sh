#!/usr/bin/env bash
# Runs the whole ccproxy test suite on a fresh machine that has Go, Node/npm and apt.
#
# It installs what the suite needs (pinned npm packages into ./.deps, which git
# ignores), then runs `go vet ./...`, builds and vets every package for Windows
# (amd64) and macOS (arm64), and runs `go test ./...` (with -race on the
# packages that run goroutines). Extra arguments are passed to `go test`.
#
# With CI=true a test whose real dependency (the Claude Code CLI, an MCP server,
# chromium) is missing fails instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

deps=${CCPROXY_DEPS:-$root/.deps}
export CCPROXY_DEPS=$deps

# npm packages, pinned. Keep in step with internal/testkit/deps.go.
npm_pkgs=(
  "@anthropic-ai/claude-code@2.1.329"
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/server-memory@2026.8.31"
  "typescript@5.9.3"
  "@agentclientprotocol/sdk@2.4.0"
)

installed_version() { # $1 = package name; prints the installed version or nothing
  local pj="$deps/node_modules/$1/package.json"
  [ -f "$pj" ] && node -e 'process.stdout.write(require(process.argv[1]).version)' "$pj" 2>/dev/null || true
}

missing=()
for spec in "${npm_pkgs[@]}"; do
  name=${spec%@*}; want=${spec##*@}
  [ "$(installed_version "$name")" = "$want" ] || missing+=("$spec")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "test.sh: installing npm packages into $deps: ${missing[*]}" >&2
  mkdir -p "$deps"
  npm install --prefix "$deps" --no-audit --no-fund --no-save --loglevel=error "${npm_pkgs[@]}" >&2
fi

# Debian packages the browser tests need.
if ! command -v chromium >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "test.sh: installing chromium with apt-get" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >&2 \
      || echo "test.sh: could not install chromium; browser tests will fail in CI" >&2
  else
    echo "test.sh: chromium is missing and cannot be installed here (needs root and apt-get)" >&2
  fi
fi

echo "test.sh: go vet ./..." >&2
go vet ./...

# Every platform builds: only Linux runs the suite, the others are compile-
# checked here (go build, and go vet, which also compiles the tests). A
# failure is reported and fails the run at the end; the tests still run.
# $CCPROXY_CROSS_TARGETS picks other targets (scripts/release.sh builds all
# six release targets).
status=0
for target in ${CCPROXY_CROSS_TARGETS:-windows/amd64 darwin/arm64}; do
  echo "test.sh: $target: go build ./... && go vet ./..." >&2
  if ! out=$(GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 go build ./... 2>&1 &&
    GOOS=${target%/*} GOARCH=${target#*/} CGO_ENABLED=0 go vet ./... 2>&1); then
    printf '%s\n' "$out" >&2
    echo "test.sh: FAIL: $target does not build or vet" >&2
    status=1
  fi
done

# Packages with concurrency run under the race detector; the rest run plain.
race_pkgs=$(go list ./... | grep -E '/(proxy|mcpconfig|history|internal/testkit|internal/replay|internal/childproc)(/|$)' || true)
plain_pkgs=$(go list ./... | grep -v -E '/(proxy|mcpconfig|history|internal/testkit|internal/replay|internal/childproc)(/|$)' || true)

echo "test.sh: go test" >&2
# shellcheck disable=SC2086
go test -count=1 $plain_pkgs "$@" || status=$?
if [ -n "$race_pkgs" ]; then
  # shellcheck disable=SC2086
  go test -count=1 -race $race_pkgs "$@" || status=$?
fi
exit $status
