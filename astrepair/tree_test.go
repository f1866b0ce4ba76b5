package astrepair

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

// An analysis built on a caller's parse equals one that parses itself.
func TestAnalyzeTreeMatchesAnalyze(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		lang syntax.Language
		src  string
	}{
		{syntax.Python, "import os\n\nclass A:\n    def f(self, x):\n        if x:\n            return os.path.join(x)\n        return None\n"},
		{syntax.Go, "package p\n\nimport \"fmt\"\n\nfunc F(x int) {\n\tif x > 0 {\n\t\tfmt.Println(x)\n\t}\n}\n"},
		{syntax.Text, "just words\nmore words\n"},
	}
	for _, tc := range tests {
		t.Run(string(tc.lang), func(t *testing.T) {
			want, err := Analyze(ctx, tc.src, tc.lang)
			require.NoError(t, err)
			var tree *syntax.Tree
			if tc.lang.IsCode() {
				tree, err = syntax.Parse(ctx, tc.lang, []byte(tc.src))
				require.NoError(t, err)
			}
			got, err := AnalyzeTree(ctx, tc.src, tc.lang, tree)
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
}
