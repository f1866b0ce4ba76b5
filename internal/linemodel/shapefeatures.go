package linemodel

import (
	"bytes"
	"math"
	"strings"
)

// Shape columns read a tool output's structure the way a person skims an
// unfamiliar runner's log: which blocks and records hold a problem, how
// near a line sits to the nearest problem line, which block's problem
// line comes first, whether a location points into a library or runtime
// rather than the project, and whether the line reports success. None of
// them knows a particular tool: they build on the outline blocks and
// records of findRecords and on the problem words, so a runner never seen
// in training still reads as blocks with a failing one among them.

// libMarkers are path pieces of code that is not the project's: runtimes,
// standard libraries, installed packages, the test frameworks themselves.
var libMarkers = func() [][]byte {
	var out [][]byte
	for _, w := range []string{
		"site-packages/", "dist-packages/", "node_modules/", "node:internal", "<frozen ", "/usr/lib/", "/usr/local/lib/",
		"/usr/local/go/", "/usr/share/", "go/pkg/mod/", "/pkg/mod/", "runtime/", "testing/testing.go", "/rustc/", ".cargo/registry",
		"library/std/", "library/core/", "java.base/", "jdk.internal", "org.junit.", "junit.framework", "sun.reflect", "java.lang.reflect",
		"/unittest/", "_pytest/", "pluggy/", "<anonymous>", "internal/process/", "internal/modules/", "/lib/python3",
	} {
		out = append(out, []byte(w))
	}
	return out
}()

// okMarkers are the words runners use for a passing test or step. Case
// matters: "ok" as a TAP status or a Go package line, "PASS" as Go's.
var okMarkers = []string{"--- PASS", "PASS", "✓", "✔", "√", " passed", " ok", "ok ", "[ OK ]", "[PASS]", "SUCCESS", "... ok"}

// shapeInfo holds the shape columns of a text's lines; nil slices for code.
type shapeInfo struct {
	blkErr, recErr, errNear  []float32
	errFirst, locLib, okWord []bool
}

func newShapeInfo(t *toolInfo, lines []string) shapeInfo {
	n := len(lines)
	if !t.isText || len(t.errWords) != n || len(t.recLo) != n {
		return shapeInfo{}
	}
	s := shapeInfo{blkErr: make([]float32, n), recErr: make([]float32, n), errNear: make([]float32, n),
		errFirst: make([]bool, n), locLib: make([]bool, n), okWord: make([]bool, n)}
	// pre[i] counts problem lines before line i, so any range's count is
	// a difference.
	pre := make([]int32, n+1)
	for i := range n {
		pre[i+1] = pre[i]
		if t.errWords[i] > 0 {
			pre[i+1]++
		}
	}
	count := func(lo, hi int32) float32 {
		if lo < 0 || hi < lo {
			return 0
		}
		c := float64(pre[hi+1] - pre[lo])
		return float32(math.Min(1, math.Log1p(c)/math.Log(4)))
	}
	for i := range n {
		s.blkErr[i] = count(t.blkLo[i], t.blkHi[i])
		s.recErr[i] = count(t.recLo[i], t.recHi[i])
	}
	// Distance to the nearest problem line, both ways, in lines.
	const far = 1 << 30
	last := -far
	dist := make([]int, n)
	for i := range n {
		if t.errWords[i] > 0 {
			last = i
		}
		dist[i] = i - last
	}
	last = far
	for i := n - 1; i >= 0; i-- {
		if t.errWords[i] > 0 {
			last = i
		}
		dist[i] = min(dist[i], last-i)
		if dist[i] < 64 {
			s.errNear[i] = float32(math.Exp(-float64(dist[i]) / 3))
		}
	}
	// The first problem line of each block (or of each record, for lines
	// outside any block).
	for i := range n {
		if t.errWords[i] == 0 {
			continue
		}
		lo := t.blkLo[i]
		if lo < 0 {
			lo = t.recLo[i]
		}
		s.errFirst[i] = lo < 0 || pre[i]-pre[lo] == 0
	}
	var buf [maxToolScan]byte
	for i, l := range lines {
		head := l[:min(len(l), maxToolScan)]
		if t.loc[i] {
			b := append(buf[:0], head...)
			for _, m := range libMarkers {
				if bytes.Contains(b, m) {
					s.locLib[i] = true
					break
				}
			}
		}
		if t.errWords[i] == 0 {
			for _, m := range okMarkers {
				if strings.Contains(head, m) {
					s.okWord[i] = true
					break
				}
			}
		}
	}
	return s
}

// shapeColumns (blk_err … ok_word): how many problem lines the line's
// outline block and record hold, how near the nearest problem line is,
// whether the line is its block's first problem line, whether its location
// is in library or runtime code, and whether it reports success.
func (f *featureState) shapeColumns(w *rowWriter, i int) {
	s := &f.shape
	if len(s.blkErr) != f.n {
		w.skip(6)
		return
	}
	w.put(float64(s.blkErr[i]))
	w.put(float64(s.recErr[i]))
	w.put(float64(s.errNear[i]))
	w.put(b2f(s.errFirst[i]))
	w.put(b2f(s.locLib[i]))
	w.put(b2f(s.okWord[i]))
}
