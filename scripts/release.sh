#!/usr/bin/env bash
# Builds the release binaries of ccproxy, reproducibly, with one command:
#
#   scripts/release.sh [VERSION]
#
# VERSION (default: `git describe --tags --always --dirty`) is stamped into the
# binary (main.version, which `ccproxy version` prints). The binaries go to
# $RELEASE_DIR (default dist/), one per target, named
# ccproxy_VERSION_OS_ARCH[.exe], with SHA256SUMS next to them. $RELEASE_TARGETS
# (default: linux, darwin and windows on amd64 and arm64) picks other targets,
# e.g. RELEASE_TARGETS="linux/amd64".
#
# Reproducible: the same commit built with the same Go version gives the same
# bytes on any machine, in any directory, from a clone or a worktree: no cgo,
# -trimpath (no local paths), the VCS revision and commit time stamped (no
# build time), and nothing else from the environment. Only the Go toolchain is needed; nothing is
# downloaded beyond the module's own dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:-$(git describe --tags --always --dirty)}
case $version in
'' | *[!A-Za-z0-9._+-]*)
  echo "release.sh: bad version \"$version\": use letters, digits and . _ + -" >&2
  exit 2
  ;;
esac
out=${RELEASE_DIR:-dist}
targets=${RELEASE_TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}

# The VCS revision, its time and whether the tree was modified are stamped
# with -X, not by the go command (-buildvcs): it stamps nothing in a git
# worktree (.git is a file there), so a worktree and a clone of the same
# commit would give different bytes.
rev=$(git rev-parse HEAD)
rev_time=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ)
dirty=false
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  dirty=true
  echo "release.sh: warning: the work tree has uncommitted changes; the binaries say so (modified)" >&2
fi

# Only what is set here may influence the build (GOFLAGS set here also
# overrides one from `go env -w`).
unset GOEXPERIMENT GOAMD64 GOARM64 GO386 GOARM
export CGO_ENABLED=0 GOFLAGS=-mod=readonly

# The same bytes need the same toolchain: say which one this is.
echo "release.sh: $(go version), commit $rev" >&2
mkdir -p "$out"
files=()
for t in $targets; do
  goos=${t%/*}
  goarch=${t#*/}
  name="ccproxy_${version}_${goos}_${goarch}"
  [ "$goos" = windows ] && name="$name.exe"
  echo "release.sh: $goos/$goarch -> $out/$name" >&2
  GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=false \
    -ldflags "-s -w -X main.version=$version -X main.revision=$rev -X main.revisionTime=$rev_time -X main.modified=$dirty" \
    -o "$out/$name" ./cmd/ccproxy
  files+=("$name")
done

(cd "$out" && sha256sum "${files[@]}" >SHA256SUMS)
cat "$out/SHA256SUMS"
