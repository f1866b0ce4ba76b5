package pruner

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

// pyBlameSource is the Python class pyBlame annotates.
func pyBlameSource() string {
	var src strings.Builder
	src.WriteString("import os\n\n\nclass Settings:\n    \"\"\"Values read from the environment.\"\"\"\n\n    def __init__(self, prefix):\n        self.prefix = prefix\n        self.cache = {}\n")
	for _, name := range []string{"host", "port", "user", "password", "timeout", "retries"} {
		fmt.Fprintf(&src, "\n    def %s(self, default=None):\n        if %q in self.cache:\n            return self.cache[%q]\n        value = os.environ.get(self.prefix + %q.upper(), default)\n        self.cache[%q] = value\n        return value\n", name, name, name, name, name)
	}
	return src.String()
}

// pyBlame is git blame output over a Python class: content detection alone
// reads the quoted code as Python.
func pyBlame() string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(pyBlameSource(), "\n"), "\n") {
		fmt.Fprintf(&b, "%08x (Ann Lee      2025-09-01 10:%02d:00 +0000 %2d) %s\n", 0x3300d215+i%4, i%60, i+1, l)
	}
	return b.String()
}

// TestToolOutputNotTakenForCode: piped tool output that reads like code
// but does not parse is pruned as text, without repair (which would keep
// whole runs of it as the rest of one statement), by every kind of
// scorer: the line model confirms with its own parse, the others parse
// first; named, it is code.
func TestToolOutputNotTakenForCode(t *testing.T) {
	ctx := context.Background()
	text := pyBlame()
	require.Equal(t, syntax.Python, syntax.Detect(text, ""), "the fixture must fool content detection")
	line, err := Load(ctx, "")
	require.NoError(t, err)
	lexical, err := Load(ctx, "", WithScorer(ScorerLexical))
	require.NoError(t, err)
	custom, err := New(grepScorer{})
	require.NoError(t, err)
	for name, p := range map[string]*Pruner{"line": line, "lexical": lexical, "custom": custom} {
		t.Run(name, func(t *testing.T) {
			res, err := p.Prune(ctx, "who last changed how the port is read?", text)
			require.NoError(t, err)
			assert.Equal(t, "", res.Language)
			for _, l := range res.Lines {
				if l.Kept {
					assert.Contains(t, []Reason{ReasonModel, ReasonBlank, ReasonCheaper, ReasonAlwaysKeep}, l.Reason, "line %d", l.Number)
				}
			}
			named, err := p.With(WithFileName("settings.py"))
			require.NoError(t, err)
			res, err = named.Prune(ctx, "who last changed how the port is read?", text)
			require.NoError(t, err)
			assert.Equal(t, "python", res.Language, "a file name is trusted")
		})
	}
	// Code without a name is still code, confirmed by the same parse.
	res, err := line.Prune(ctx, "how is the port read?", pyBlameSource())
	require.NoError(t, err)
	assert.Equal(t, "python", res.Language)
}
