package tokenizer

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/prunekit/pruner/internal/memtest"
)

var long = flag.Bool("long", false, "measure memory at full size (1M lines, 20 MB)")

// goCorpus returns n bytes of real Go: the toolchain's sources
// concatenated.
func goCorpus(tb testing.TB, n int) string {
	var b strings.Builder
	filepath.WalkDir(filepath.Join(runtime.GOROOT(), "src"), func(path string, d os.DirEntry, err error) error {
		if err != nil || b.Len() >= n {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			if data, err := os.ReadFile(path); err == nil {
				b.Write(data)
			}
		}
		return nil
	})
	if b.Len() < n {
		tb.Skipf("only %d bytes of Go source in GOROOT", b.Len())
	}
	return b.String()[:n]
}

// TestMemory reports what Encode and Count allocate for 1M empty lines,
// 20 MB of Go and 1 MB of NUL (-long; a tenth of that otherwise), and
// bounds it: the token list is 40 bytes a token, and the merges of a long
// run of one character must not add hundreds of bytes per byte.
func TestMemory(t *testing.T) {
	tok := qwen(t)
	lines, goBytes := 100_000, 2<<20
	if *long {
		lines, goBytes = 1_000_000, 20<<20
	}
	for _, c := range []struct{ name, text string }{
		{"empty lines", strings.Repeat("\n", lines)},
		{"go source", goCorpus(t, goBytes)},
		{"nul", strings.Repeat("\x00", lines)},
	} {
		var ntok int
		tot, peak := memtest.HeapUse(func() { ntok = len(tok.Encode(c.text)) })
		t.Logf("%s (%d bytes, %d tokens): Encode allocates %.1f B/byte, peak %.1f B/byte",
			c.name, len(c.text), ntok, float64(tot)/float64(len(c.text)), float64(peak)/float64(len(c.text)))
		// The list grows 1.5× to 2× at a time: at most about 3 lists of
		// 40-byte tokens at once, plus the (small) merge scratch.
		if limit := uint64(3*40*ntok + 4<<20); peak > limit {
			t.Errorf("%s: peak heap %d bytes, want at most %d", c.name, peak, limit)
		}
		tot, peak = memtest.HeapUse(func() { tok.Count(c.text) })
		t.Logf("%s: Count allocates %.2f B/byte, peak %.2f B/byte", c.name,
			float64(tot)/float64(len(c.text)), float64(peak)/float64(len(c.text)))
		// Count keeps no tokens: what it holds is the NFC copy of a text
		// that needs one (any non-ASCII character NFC could touch) and the
		// word cache.
		if limit := uint64(len(c.text)*3/2 + 8<<20); peak > limit {
			t.Errorf("%s: Count's peak heap %d bytes, want at most %d", c.name, peak, limit)
		}
	}
}
