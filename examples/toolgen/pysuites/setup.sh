#!/bin/sh
# Installs the tools the pysuites families run (Debian packages: PyPI is not
# needed) and makes pristine checkouts of the projects from their bare
# mirrors, each with the commit it was made from.
#   sh setup.sh [REPOS_DIR]   (default /tmp/pysuites-repos)
set -eu
REPOS=${1:-/tmp/pysuites-repos}
MIRRORS=${MIRRORS:-/work/.mirror}
apt-get install -y python3 python3-pytest python3-hypothesis python3-simplejson python3-packaging python3-pyflakes mypy git
mkdir -p "$REPOS"
for spec in more-itertools+more-itertools tkem+cachetools pytoolz+toolz mahmoud+boltons marshmallow-code+marshmallow; do
	name=${spec#*+}
	git_dir="$MIRRORS/$spec/repo"
	rm -rf "${REPOS:?}/$name"
	mkdir -p "$REPOS/$name"
	git --git-dir="$git_dir" archive HEAD | tar -x -C "$REPOS/$name"
	git --git-dir="$git_dir" rev-parse HEAD >"$REPOS/$name.commit"
done
