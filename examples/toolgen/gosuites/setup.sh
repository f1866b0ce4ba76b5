#!/bin/sh
# Fetches the pinned modules (sources with their _test.go files) through
# the Go module proxy into $REPOS/<dir>, downloads their test
# dependencies, and warms the build cache, so generation runs offline.
# Needs Go >= 1.22 (apt-get install -y golang-go, or the go.dev tarball).
set -eu
REPOS=${1:-/tmp/gosuites-repos}
export GOFLAGS=-mod=mod GOTOOLCHAIN=local
mkdir -p "$REPOS"
# dir<TAB>module@version, as in MANIFEST.tsv and main.go's catalog.
while read -r dir mv; do
	[ -d "$REPOS/$dir" ] && continue
	src=$(go mod download -json "$mv" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	cp -r "$src" "$REPOS/$dir"
	chmod -R u+w "$REPOS/$dir"
	(cd "$REPOS/$dir" && go mod download all >/dev/null 2>&1 || true; go test -count=1 ./... >/dev/null 2>&1 || echo "warning: $mv tests fail unmutated" >&2)
done <<'LIST'
chi	github.com/go-chi/chi/v5@v5.5.0
mux	github.com/gorilla/mux@v1.8.1
yaml	gopkg.in/yaml.v3@v3.0.1
echo	github.com/labstack/echo/v4@v4.16.4
gin	github.com/gin-gonic/gin@v1.12.0
zap	go.uber.org/zap@v1.28.0
uuid	github.com/google/uuid@v1.6.0
humanize	github.com/dustin/go-humanize@v1.1.0
semver	github.com/Masterminds/semver/v3@v3.5.0
pflag	github.com/spf13/pflag@v1.1.0
gocmp	github.com/google/go-cmp@v0.7.0
httprouter	github.com/julienschmidt/httprouter@v1.3.0
toml	github.com/pelletier/go-toml/v2@v2.4.3
gjson	github.com/tidwall/gjson@v1.20.2
LIST
