package astrepair

import (
	"testing"

	"github.com/stretchr/testify/require"

	linerule "github.com/prunekit/pruner/internal/lines"
)

// FuzzLineIndex: the compact index numbers lines as the library's rule
// (internal/lines.Split) does, offsets included.
func FuzzLineIndex(f *testing.F) {
	for _, s := range []string{"", "a", "a\n", "a\r\nb\r", "\n\n\r\n", "x\vy\u2028z\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		li := newLineIndex(text)
		want := linerule.Split(text)
		require.Equal(t, len(want), li.n())
		for r, l := range want {
			require.Equal(t, l.Start, li.start(r))
			require.Equal(t, l.End, li.end(r))
			require.Equal(t, l.TermEnd, li.termEnd(r))
		}
	})
}
