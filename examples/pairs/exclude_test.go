package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExcluded(t *testing.T) {
	ex := newExclusions()
	tests := []struct {
		name     string
		excluded bool
	}{
		{"go:github.com/spf13/cobra@v1.10.2", true},
		{"go:github.com/!burnt!sushi/toml@v1.4.0", true},
		{"github.com/BurntSushi/toml", true},
		{"go:github.com/sirupsen/logrus@v1.9.3", true},
		{"go:github.com/urfave/cli/v2@v2.27.1", true},
		{"go:github.com/hashicorp/go-retryablehttp@v0.7.7", true},
		{"go:github.com/fsnotify/fsnotify@v1.7.0", true},
		{"go:golang.org/x/sys@v0.49.0", true},
		{"go:golang.org/x/text@v0.43.0", true},
		{"go:golang.org/toolchain@v0.0.1-go1.26.0.linux-amd64", true},
		{"go:github.com/twitchyliquid64/golang-asm@v0.15.1", true},
		{"go:github.com/rogpeppe/go-internal@v1.14.1", true},
		{"pip/_vendor/requests/api.py", true},
		{"py:requests@2.28.1", true},
		{"py:attr@22.2.0", true},
		{"py:attrs@22.2.0", true},
		{"py:dateutil@2.8.2", true},
		{"py:cloudpickle@2.2.0", true},
		{"py:blinker@1.5", true},
		{"py:flask@2.2.2", true},
		{"py:click@8.1.3", true},
		{"py:toml@0.10.2", true},
		{"toml.py", true},
		{"setuptools/_distutils/core.py", true},
		{"py:typing_extensions@4.4.0", true},
		{"/usr/lib/python3.11/json/__init__.py", true},
		{"node_modules/commander/index.js", true},
		{"npm:commander@12.0.0", true},
		{"npm:express@4.18.2", true},
		{"npm:zod@3.22.4", true},
		{"npm:hono@4.0.0", true},
		{"npm:node-fetch@3.3.2", true},
		{"git:clap-rs/clap@history", true},
		{"git:rust-lang/log@history", true},
		{"git:hyperium/http@history", true},
		{"git:square/okhttp@history", true},
		{"git:google/gson@history", true},
		{"git:apache/commons-io@history", true},
		{"git:tj/commander.js@history", true},
		{"git:BurntSushi/ripgrep@history", true},
		{"git:pallets/flask@history", true},
		{"git:psf/requests@history", true},
		{"git:colinhacks/zod@history", true},
		{"git:DaveGamble/cJSON@history", true},
		{"git:lua/lua@history", true},
		{"npm:immer@10.0.0", true},
		{"npm:superstruct@1.0.0", true},
		{"git:square/moshi@history", true},
		{"vendor/spdlog/include/spdlog/spdlog.h", true},

		{"go:github.com/gin-gonic/gin@v1.12.0", false},
		{"go:github.com/x-cray/logrus-prefixed-formatter@v0.5.2", false},
		{"go:github.com/spf13/pflag@v1.0.10", false},
		{"git:pallets/jinja@history", false},
		{"git:encode/httpx@history", false},
		{"py:urllib3@1.26.12", false},
		{"npm:@npmcli/arborist@7.0.0", false},
		// Generic names match only as owner/name: a log or http
		// directory is not rust-lang/log or hyperium/http.
		{"go:go.uber.org/zap@v1.27.0", false},
		{"internal/log/log.go", false},
		{"lib/http/client.js", false},
		{"src/cli/main.rs", false},
	}
	for _, tc := range tests {
		got := ex.excluded(tc.name)
		assert.Equal(t, tc.excluded, got != "", "%s (rule %q)", tc.name, got)
	}
}

func TestExclusionsLoad(t *testing.T) {
	ex := newExclusions()
	md := filepath.Join(t.TempDir(), "EXCLUDE.md")
	require.NoError(t, os.WriteFile(md, []byte("# x\n\n## Repositories\n- acme/widget\n- `acme/log`\n\n## Packages\n- gizmo\n"), 0o644))
	require.NoError(t, ex.load(md))
	assert.NotEmpty(t, ex.excluded("go:github.com/acme/widget@v1.0.0"))
	assert.NotEmpty(t, ex.excluded("py:widget@1.0"))
	assert.NotEmpty(t, ex.excluded("npm:gizmo@1.0.0"))
	assert.NotEmpty(t, ex.excluded("git:acme/log@history"))
	assert.Empty(t, ex.excluded("pkg/log/log.go"))
	require.NoError(t, ex.load(filepath.Join(t.TempDir(), "missing.md")))
	// The real list, where present, is covered by the built-in one.
	if _, err := os.Stat("../../../shared/evalsets/EXCLUDE.md"); err == nil {
		full := newExclusions()
		require.NoError(t, full.load("../../../shared/evalsets/EXCLUDE.md"))
		assert.Equal(t, newExclusions().repos, full.repos, "EXCLUDE.md names a repository the built-in list lacks")
	}
}

// TestManifestExclusions: no source in the committed manifest of the full
// run is one the eval sets draw on.
func TestManifestExclusions(t *testing.T) {
	f, err := os.Open("MANIFEST.tsv")
	require.NoError(t, err)
	defer f.Close()
	ex := newExclusions()
	rows := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "#") || strings.HasPrefix(l, "source\t") || l == "" {
			continue
		}
		cols := strings.Split(l, "\t")
		require.Len(t, cols, 5, "row %q", l)
		rows++
		assert.Empty(t, ex.excluded(cols[0]+"@"+cols[1]), "manifest row %q is an excluded source", l)
		assert.False(t, strings.HasPrefix(cols[0], "go:std") || strings.HasPrefix(cols[0], "go:cmd"), l)
	}
	require.NoError(t, sc.Err())
	assert.Greater(t, rows, 0)
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"v1.10.0", "v1.9.3", 1},
		{"v1.2.0", "v1.2.0", 0},
		{"v1.2.0-rc.1", "v1.2.0", -1},
		{"v0.0.0-20180628173108-788fd7840127", "v0.0.0-20170206155736-9520e82c474b", 1},
		{"v4.20.0+incompatible", "v4.3.0", 1},
		{"v0.1.15", "v0.1.2", 1},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, compareVersions(tc.a, tc.b), "%s vs %s", tc.a, tc.b)
	}
	assert.Equal(t, "github.com/BurntSushi/toml", unescapeModule("github.com/!burnt!sushi/toml"))
}
