package linemodel

import (
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
var libMarkers = []string{
	"site-packages/", "dist-packages/", "node_modules/", "node:internal", "<frozen ", "/usr/lib/", "/usr/local/lib/",
	"/usr/local/go/", "/usr/share/", "go/pkg/mod/", "/pkg/mod/", "runtime/", "testing/testing.go", "/rustc/", ".cargo/registry",
	"library/std/", "library/core/", "java.base/", "jdk.internal", "org.junit.", "junit.framework", "sun.reflect", "java.lang.reflect",
	"/unittest/", "_pytest/", "pluggy/", "<anonymous>", "internal/process/", "internal/modules/", "/lib/python3",
}

// okMarkers are the words runners use for a passing test or step. Case
// matters: "ok" as a TAP status or a Go package line, "PASS" as Go's.
var okMarkers = []string{"--- PASS", "PASS", "✓", "✔", "√", " passed", " ok", "ok ", "[ OK ]", "[PASS]", "SUCCESS", "... ok"}

// shapeInfo holds the shape columns of a text's lines in four bytes a
// line (the hostile-input memory bound counts them); nil slices for code.
type shapeInfo struct {
	// blkErr and recErr count the problem lines of the line's outline
	// block and record, capped at 3 (the column saturates there).
	blkErr, recErr []uint8
	// near is the distance to the nearest problem line, capped at
	// nearCap (no column value).
	near []uint8
	// flags holds flagErrFirst, flagLocLib and flagOK.
	flags []uint8
}

const (
	nearCap      = 64
	flagErrFirst = 1 << iota
	flagLocLib
	flagOK
)

func newShapeInfo(t *toolInfo, lines []string) shapeInfo {
	n := len(lines)
	if !t.isText || len(t.errWords) != n || len(t.recLo) != n {
		return shapeInfo{}
	}
	s := shapeInfo{blkErr: make([]uint8, n), recErr: make([]uint8, n), near: make([]uint8, n), flags: make([]uint8, n)}
	// pre[i] counts problem lines before line i, so any range's count is
	// a difference.
	pre := make([]int32, n+1)
	for i := range n {
		pre[i+1] = pre[i]
		if t.errWords[i] > 0 {
			pre[i+1]++
		}
	}
	count := func(lo, hi int32) uint8 {
		if lo < 0 || hi < lo {
			return 0
		}
		return uint8(min(3, pre[hi+1]-pre[lo]))
	}
	for i := range n {
		s.blkErr[i] = count(t.blkLo[i], t.blkHi[i])
		s.recErr[i] = count(t.recLo[i], t.recHi[i])
	}
	// Distance to the nearest problem line, both ways, in lines.
	last := -nearCap
	for i := range n {
		if t.errWords[i] > 0 {
			last = i
		}
		s.near[i] = uint8(min(nearCap, i-last))
	}
	last = n + nearCap
	for i := n - 1; i >= 0; i-- {
		if t.errWords[i] > 0 {
			last = i
		}
		s.near[i] = min(s.near[i], uint8(min(nearCap, last-i)))
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
		if lo < 0 || pre[i]-pre[lo] == 0 {
			s.flags[i] |= flagErrFirst
		}
	}
	for i, l := range lines {
		head := l[:min(len(l), maxToolScan)]
		if t.loc[i] {
			for _, m := range libMarkers {
				if strings.Contains(head, m) {
					s.flags[i] |= flagLocLib
					break
				}
			}
		}
		if t.errWords[i] == 0 {
			for _, m := range okMarkers {
				if strings.Contains(head, m) {
					s.flags[i] |= flagOK
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
	w.put(errShare(s.blkErr[i]))
	w.put(errShare(s.recErr[i]))
	if d := s.near[i]; d < nearCap {
		w.put(float64(float32(math.Exp(-float64(d) / 3))))
	} else {
		w.put(0)
	}
	w.put(b2f(s.flags[i]&flagErrFirst != 0))
	w.put(b2f(s.flags[i]&flagLocLib != 0))
	w.put(b2f(s.flags[i]&flagOK != 0))
}

// errShare maps a count of problem lines to (0, 1]: 1 line 0.5, 3 or more 1.
func errShare(c uint8) float64 {
	return float64(float32(math.Min(1, math.Log1p(float64(c))/math.Log(4))))
}
