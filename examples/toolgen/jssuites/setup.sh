#!/usr/bin/env bash
# Installs the tools jssuites runs and makes the checkouts it runs them in,
# the way CI would on a fresh Debian machine with Node 20.
#
#   examples/toolgen/jssuites/setup.sh [TOOLS_DIR] [REPOS_DIR]
#
# TOOLS_DIR (default /tmp/jstools) gets node_modules with mocha, tape,
# typescript and the dev dependencies the suites require (fill-range for
# picomatch's brace tests, lru-cache 4 for ejs's cache tests);
# REPOS_DIR (default /tmp/jsrepos) gets one checkout per repository of
# MANIFEST.tsv, from the bare mirrors under
# /work/.mirror (or a clone from GitHub when there is none).
set -euo pipefail
TOOLS=${1:-/tmp/jstools}
REPOS=${2:-/tmp/jsrepos}
if ! command -v node >/dev/null; then
	apt-get update && apt-get install -y nodejs npm
fi
mkdir -p "$TOOLS" "$REPOS"
npm install --no-audit --no-fund --prefix "$TOOLS" \
	mocha@10.8.2 tape@5.9.0 typescript@5.6.3 fill-range@7.1.1 lru-cache@4.1.5
here=$(cd "$(dirname "$0")" && pwd)
grep -v '^#' "$here/MANIFEST.tsv" | while IFS=$'\t' read -r repo commit _; do
	[ -n "$repo" ] || continue
	name=${repo/\//+}
	dst="$REPOS/$name"
	[ -d "$dst" ] && continue
	mkdir -p "$dst"
	if [ -d "/work/.mirror/$name/repo" ]; then
		git --git-dir="/work/.mirror/$name/repo" archive "$commit" | tar -x -C "$dst"
	else
		git clone -q "https://github.com/$repo" "$dst.git" && git -C "$dst.git" archive "$commit" | tar -x -C "$dst" && rm -rf "$dst.git"
	fi
done
