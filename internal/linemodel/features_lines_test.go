package linemodel

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/syntax"
)

func TestSplitLinesMatchesEvalset(t *testing.T) {
	for _, s := range []string{"", "\n", "a", "a\n", "a\nb", "a\nb\n", "\n\n", "a\n\nb\n\n", "x\r\ny", goSrc} {
		want := evalset.Lines(s)
		if s == "" {
			want = nil
		}
		require.Equal(t, want, textLines(s), "%q", s)
	}
}

// TestKindCacheMatchesTypeKind: the per-symbol cache gives typeKind of
// every node's type, in every language the features parse (ERROR nodes
// included), however the symbols come.
func TestKindCacheMatchesTypeKind(t *testing.T) {
	srcs := map[syntax.Language]string{
		syntax.Go:         goSrc,
		syntax.Python:     "import os\n\n@dec\nclass A(B):\n    def f(self, x):\n        if x:\n            return os.path.join(x)\n        raise ValueError(x)\n",
		syntax.JavaScript: "import x from 'y';\nclass A { m() { for (const k of x) { call(k); } } }\nconst f = (a) => a + 1;\n",
		syntax.Rust:       "use std::io;\nimpl A { fn f(&self) -> i32 { match self.x { 1 => 2, _ => 3 } } }\n",
		syntax.Java:       "package p;\n@Ann class A { int f() { try { return g(); } catch (E e) { throw e; } } }\n",
		syntax.C:          "#include <stdio.h>\nstruct s { int a; };\nint main(void) { while (1) { break; } return 0; }\n",
	}
	for lang, src := range srcs {
		for _, text := range []string{src, src + "\nfunc ( { class x = ] (\n  if {{ def\n"} {
			tree, err := syntax.Parse(context.Background(), lang, []byte(text))
			require.NoError(t, err)
			var c kindCache
			for pass := 0; pass < 2; pass++ { // computed, then cached
				for j := range tree.Nodes {
					nd := &tree.Nodes[j]
					require.Equal(t, typeKind(nd.Type()), c.of(nd), "%s: node %d (%s)", lang, j, nd.Type())
				}
			}
		}
	}
}
