#!/usr/bin/env bash
# Vendors the web UI's third-party libraries into webui/app/vendor/,
# so that the embedded UI works offline and from `go run` on a fresh clone,
# with no npm step:
#
#   scripts/vendor-ui.sh
#
# Each package is fetched at an exact pinned version with `npm pack` (the
# npm registry's tarball), its integrity checked against the sha512 pinned
# below, and single-file ES module builds plus the license files copied
# verbatim. vendor/VERSIONS lists, per package, its name, version and npm
# integrity, and per copied file its sha256 and where in the tarball it came
# from; webui's TestVendoredUI checks the files against it, so a
# hand edit fails the tests.
#
# Reproducible: re-running gives the same bytes (the tarballs are pinned by
# integrity, files are copied unchanged, VERSIONS is written in a fixed
# order). To upgrade, change a version and its integrity (`npm view
# NAME@VERSION dist.integrity`) here and re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

out=webui/app/vendor

# name version integrity
packages=(
  "marked 18.2.1 sha512-ii4bxCTCqqwpT86XZWgJNs+ZnAIZksmLGYMViWA7PDIXYIeNo1x6cDdX3JOip9NM/cI6p8z57FxliACboTruMA=="
  "dompurify 3.4.18 sha512-ofe3wI/uNm68HInABYFJYqQxRw1EaKAjNdrFVKqjUY+UZurvNd2L/HuQe097s/4RivWiZyP6tT7aoT8atjfhwg=="
  "@highlightjs/cdn-assets 11.12.0 sha512-KvOKXODaiFmId9xaq3xc5xCL66wVLUuOngDbO9B/kewbFTqdGbn2nJxNhN3H5R1cgDTVj6R8vH0zgiNDEGjpDw=="
)

# package  path in the tarball  ->  file under vendor/
files=(
  "marked package/lib/marked.esm.js marked.esm.js"
  "marked package/LICENSE LICENSE.marked"
  "dompurify package/dist/purify.es.mjs purify.es.js"
  "dompurify package/LICENSE LICENSE.dompurify"
  "dompurify package/LICENSE-MPL LICENSE-MPL.dompurify"
  "@highlightjs/cdn-assets package/es/core.min.js highlight/core.min.js"
  "@highlightjs/cdn-assets package/styles/github.min.css highlight/github.min.css"
  "@highlightjs/cdn-assets package/styles/github-dark.min.css highlight/github-dark.min.css"
  "@highlightjs/cdn-assets package/LICENSE LICENSE.highlightjs"
)
# The highlight.js grammars the renderer registers (render.js, languages).
for lang in bash diff go javascript json markdown python shell sql typescript xml yaml; do
  files+=("@highlightjs/cdn-assets package/es/languages/$lang.min.js highlight/languages/$lang.min.js")
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

declare -A tarball
for p in "${packages[@]}"; do
  read -r name version integrity <<<"$p"
  # --ignore-scripts: packing runs nothing of the package's.
  json=$(cd "$tmp" && npm pack --json --ignore-scripts "$name@$version" 2>/dev/null)
  got=$(node -e 'const j = JSON.parse(process.argv[1]); console.log(j[0].integrity + " " + j[0].filename)' "$json")
  read -r got_integrity filename <<<"$got"
  if [ "$got_integrity" != "$integrity" ]; then
    echo "vendor-ui.sh: $name@$version has integrity $got_integrity, pinned $integrity" >&2
    exit 1
  fi
  mkdir -p "$tmp/x/$name"
  tar -xzf "$tmp/$filename" -C "$tmp/x/$name"
  tarball[$name]=$tmp/x/$name
done

rm -rf "$out"
mkdir -p "$out"
{
  echo "# Third-party files of the web UI, written by scripts/vendor-ui.sh: do not edit."
  echo "# package <name> <version> <npm integrity>"
  echo "# file <sha256> <path under vendor/> <package> <path in its npm tarball>"
  for p in "${packages[@]}"; do
    read -r name version integrity <<<"$p"
    echo "package $name $version $integrity"
  done
  for f in "${files[@]}"; do
    read -r name src dst <<<"$f"
    mkdir -p "$(dirname "$out/$dst")"
    cp "${tarball[$name]}/$src" "$out/$dst"
    chmod 0644 "$out/$dst"
    echo "file $(sha256sum "$out/$dst" | cut -d' ' -f1) $dst $name $src"
  done
} >"$out/VERSIONS"
echo "vendored ${#files[@]} files into $out"
