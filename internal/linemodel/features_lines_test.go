package linemodel

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/evalset"
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
