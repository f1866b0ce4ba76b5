package linemodel

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/prunekit/pruner/internal/syntax"
)

// Features that read tool output (logs, test runs, compiler errors,
// listings) as well as code. The lexical columns find what the query
// names; in tool output the answer is often what it does not name: the one
// failing test among hundreds that pass, the error among routine log
// lines, the biggest entry of a listing. These columns say what kind of
// line it is without reading the query, and the model learns from the
// tool-output training cases when that matters.

// errorWords mark lines that report a problem, in the words test runners,
// compilers, linters and loggers use.
var errorWords = func() [][]byte {
	var out [][]byte
	for _, w := range []string{
		"error", "fail", "panic", "exception", "traceback", "fatal", "not ok", "assert",
		"expected", "unexpected", "warn", "cannot", "can't", "undefined", "invalid",
		"denied", "refused", "timeout", "timed out", "abort", "crash", "missing", "mismatch",
	} {
		out = append(out, []byte(w))
	}
	return out
}()

// toolInfo is the per-file state of the tool columns.
type toolInfo struct {
	isText bool
	// freq is the number of lines of the file with each line's shape (its
	// text with digit runs collapsed): routine log lines repeat their
	// shape, the lines that stand out do not.
	freq []int32
	// numRank is the rank of each line's largest size-like number among
	// the lines that have one, 1 for the largest, scaled to (0, 1]; 0 for
	// lines without a number. Equal numbers share a rank.
	numRank []float32
	// errWords and loc are the err_word and loc_ref columns.
	errWords []uint8
	loc      []bool
	// grpRank is numRank among the lines of the line's group: the lines
	// whose path has the same directory (du, find), or the lines of the
	// same section of a recursive listing (ls -lR's "dir:" headers). A
	// question about the largest files of one package asks for this rank,
	// not the global one.
	grpRank []float32
	// head marks section headers (ls -lR's "dir:" lines).
	head []bool
	// recLo and recHi bound each line's record, -1 outside any: the
	// repeating unit of a text (a git log commit, a compiler's "# package"
	// block, a listing's section), which the query's match anywhere in it
	// makes relevant as a whole. blkLo and blkHi bound its outline block:
	// the line and the lines indented under it (a failing test's YAML
	// details, a compiler note), or its parent's block when nothing is
	// indented under it. Text only; code has its definitions.
	// A record starts where recLo[i] == i.
	recLo, recHi []int32
	blkLo, blkHi []int32
	// recMax and blkMax are the best bm25n over each line's record and
	// block, set by scoreRecords once BM25 is known.
	recMax, blkMax []float32
	// dateRank is the rank of the line's date among the dated lines, 1
	// for the newest, scaled to (0, 1]; 0 without a date. dateIn is +1
	// when the date falls in the span of time the query names, -1 when it
	// does not, 0 without a date or a span.
	dateRank []float32
	dateIn   []int8
	// cmp is the query's size predicate applied to the line's number: +1
	// when it holds, -1 when the line has a number that fails it, 0
	// without a predicate or a number.
	cmp []int8
}

// maxToolScan bounds the bytes of a line that the tool columns read: what
// makes a line an error report or a file location is near its start, and
// a 50,000-character line must cost no more than a short one.
const maxToolScan = 1024

func newToolInfo(ctx context.Context, query string, lines []string, lang syntax.Language) toolInfo {
	n := len(lines)
	t := toolInfo{isText: !lang.IsCode(), freq: make([]int32, n), numRank: make([]float32, n),
		errWords: make([]uint8, n), loc: make([]bool, n), grpRank: make([]float32, n),
		head: make([]bool, n), cmp: make([]int8, n), dateRank: make([]float32, n), dateIn: make([]int8, n)}
	span, hasSpan := parseDateRange(query)
	var dates []num
	shapes := make([]uint64, n)
	count := make(map[uint64]int32)
	var nums []num
	// group keys: a directory's name, or "\x00" and the section's header
	// line number for lines that name no directory.
	groups := make(map[string][]num)
	section := -1
	maxV := 0.0
	for i, l := range lines {
		if done(ctx, i) {
			return t
		}
		shapes[i] = lineShape(l)
		count[shapes[i]]++
		head := l[:min(len(l), maxToolScan)]
		if t.head[i] = isSectionHeader(lines, i); t.head[i] {
			section = i
		}
		if v, ok := largestNumber(head); ok {
			nums = append(nums, num{v, i})
			maxV = max(maxV, v)
			key, ok := pathDir(head)
			if !ok {
				key = "\x00" + strconv.Itoa(section)
			}
			groups[key] = append(groups[key], num{v, i})
		}
		if d := lineDate(head); d != 0 {
			r := d
			if r/1e10 == 0 {
				// ls -l prints a time instead of the year for the
				// files of the last six months: the newest.
				r += 9999e10
			}
			dates = append(dates, num{float64(r), i})
			if hasSpan {
				t.dateIn[i] = -1
				if span.holds(d) {
					t.dateIn[i] = 1
				}
			}
		}
		t.errWords[i] = uint8(min(errorWordCount(head), 2))
		t.loc[i] = hasLocation(head)
	}
	for i, h := range shapes {
		t.freq[i] = count[h]
	}
	if t.isText {
		t.findRecords(lines)
	}
	if p, ok := parseSizePredicate(query); ok {
		// A threshold no line reaches, on a listing in kilobyte blocks
		// (du -k), is read in kilobytes.
		if p.v >= 1024 && maxV < p.v {
			p.v /= 1024
		}
		for _, x := range nums {
			t.cmp[x.i] = -1
			if p.holds(x.v) {
				t.cmp[x.i] = 1
			}
		}
	}
	rankInto(t.numRank, nums)
	rankInto(t.dateRank, dates)
	for _, g := range groups {
		rankInto(t.grpRank, g)
	}
	return t
}

// findRecords sets the records and outline blocks of a text's lines.
// Records start at the lines whose first word (digit runs collapsed)
// is that of the text's first line, at indent 0 and found at least
// twice ("commit …", "# package"); failing that at section headers.
func (t *toolInfo) findRecords(lines []string) {
	n := len(lines)
	t.recLo, t.recHi = make([]int32, n), make([]int32, n)
	t.blkLo, t.blkHi = make([]int32, n), make([]int32, n)
	start := t.recLo // the record starts, marked before recLo is set
	first := -1
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			first = i
			break
		}
	}
	for i := range n {
		t.recLo[i], t.recHi[i], t.blkLo[i], t.blkHi[i] = -1, -1, -1, -1
	}
	if first < 0 {
		return
	}
	starts := 0
	if IndentWidth(lines[first]) == 0 {
		w0 := firstWordShape(lines[first])
		for i := first; i < n; i++ {
			if IndentWidth(lines[i]) == 0 && firstWordShape(lines[i]) == w0 {
				start[i] = 1
				starts++
			}
		}
	}
	if starts < 2 {
		for i, h := range t.head {
			start[i] = -1
			if h {
				start[i] = 1
			}
		}
	}
	lo := int32(-1)
	for i := range n {
		if start[i] == 1 {
			if lo >= 0 {
				for k := lo; k < int32(i); k++ {
					t.recHi[k] = int32(i - 1)
				}
			}
			lo = int32(i)
		}
		t.recLo[i] = lo
	}
	if lo >= 0 {
		for k := lo; k < int32(n); k++ {
			t.recHi[k] = int32(n - 1)
		}
	}
	// Outline blocks: a stack of the open heads, each closed by the next
	// line indented no deeper. blkHi holds each head's last line and
	// blkLo each line's parent until the second pass turns them into
	// the blocks: a head's block is final before the lines under it ask
	// for it.
	type open struct{ i, ind int }
	var stack []open
	end, parent := t.blkHi, t.blkLo
	last := -1 // last non-blank line
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		d := IndentWidth(l)
		for len(stack) > 0 && stack[len(stack)-1].ind >= d {
			end[stack[len(stack)-1].i] = int32(last)
			stack = stack[:len(stack)-1]
		}
		parent[i] = -1
		if len(stack) > 0 {
			parent[i] = int32(stack[len(stack)-1].i)
		}
		end[i] = int32(i)
		stack = append(stack, open{i, d})
		last = i
	}
	for _, o := range stack {
		end[o.i] = int32(last)
	}
	for i := range lines {
		switch {
		case end[i] < 0: // blank
		case end[i] > int32(i):
			t.blkLo[i] = int32(i)
		case parent[i] >= 0:
			t.blkHi[i] = t.blkHi[parent[i]]
		default:
			t.blkLo[i] = int32(i)
		}
	}
}

// firstWordShape hashes a line's first word as lineShape hashes lines.
func firstWordShape(l string) uint64 {
	l = strings.TrimSpace(l)
	if j := strings.IndexAny(l, " \t"); j >= 0 {
		l = l[:j]
	}
	return lineShape(l)
}

// scoreRecords sets recMax and blkMax from the lines' bm25n.
func (t *toolInfo) scoreRecords(bmn []float64) {
	if t.recLo == nil {
		return
	}
	n := len(bmn)
	tree := newSegTree(bmn, 0, maxF)
	t.recMax, t.blkMax = make([]float32, n), make([]float32, n)
	for i := range n {
		// Lines of one record or block ask for the same range: query it
		// once.
		if lo := t.recLo[i]; lo >= 0 {
			if i > 0 && t.recLo[i-1] == lo {
				t.recMax[i] = t.recMax[i-1]
			} else {
				t.recMax[i] = float32(tree.query(int(lo), int(t.recHi[i])))
			}
		}
		if lo := t.blkLo[i]; lo >= 0 {
			t.blkMax[i] = float32(tree.query(int(lo), int(t.blkHi[i])))
		}
	}
}

// rankInto sets dst[x.i] for each x of nums to its rank by value, 1 for
// the largest, scaled to (0, 1]. Ties by line: equal numbers share a
// rank, and the order is deterministic.
func rankInto(dst []float32, nums []num) {
	slices.SortStableFunc(nums, func(a, b num) int {
		switch {
		case a.v > b.v:
			return -1
		case a.v < b.v:
			return 1
		}
		return a.i - b.i
	})
	for r, x := range nums {
		if r > 0 && x.v == nums[r-1].v {
			dst[x.i] = dst[nums[r-1].i]
			continue
		}
		dst[x.i] = float32(1 - float64(r)/float64(len(nums)))
	}
}

// num is a line's largest number and the line's index.
type num struct {
	v float64
	i int
}

// toolColumns (is_text … blk_max_bm25): whether the text is not code, how
// many problem words the line holds, whether it points at a file location,
// how common its shape is in the file, how large its number is in the
// file and in its directory, whether its number meets the query's size
// predicate, how recent its date is and whether it falls in the span of
// time the query names, and, in text, whether it starts a record, how well the
// record's first line and its best line match the query, and the best
// match in its outline block.
func (f *featureState) toolColumns(w *rowWriter, i int) {
	w.put(b2f(f.tool.isText))
	if len(f.tool.freq) != f.n {
		w.skip(12)
		return
	}
	w.put(float64(f.tool.errWords[i]) / 2)
	w.put(b2f(f.tool.loc[i]))
	w.put(math.Log1p(float64(f.tool.freq[i]-1)) / math.Log1p(f.fn))
	w.put(float64(f.tool.numRank[i]))
	w.put(float64(f.tool.grpRank[i]))
	w.put(float64(f.tool.cmp[i]))
	w.put(float64(f.tool.dateRank[i]))
	w.put(float64(f.tool.dateIn[i]))
	if f.tool.recMax == nil {
		w.skip(4)
		return
	}
	w.put(b2f(f.tool.recLo[i] == int32(i)))
	if lo := f.tool.recLo[i]; lo >= 0 {
		w.put(f.bm.bmn[lo])
	} else {
		w.put(0)
	}
	w.put(float64(f.tool.recMax[i]))
	w.put(float64(f.tool.blkMax[i]))
}

// isSectionHeader reports whether line i heads a section of a listing: a
// single path-like word ending in ':' ("src/io:", ".:") at the start of
// the text or after a blank line, as ls -R prints them.
func isSectionHeader(lines []string, i int) bool {
	l := strings.TrimSpace(lines[i])
	if len(l) < 2 || len(l) > maxToolScan || l[len(l)-1] != ':' || strings.ContainsAny(l, " \t") {
		return false
	}
	return i == 0 || strings.TrimSpace(lines[i-1]) == ""
}

// pathDir returns the directory of the last path on a line (a
// whitespace-separated token holding a '/'): "src/io" for
// "164\tsrc/io/FileUtilsTest.java".
func pathDir(l string) (string, bool) {
	// The words from the last, as strings.Fields splits them, without
	// the slice Fields would allocate for every numbered line.
	for end := len(l); end > 0; {
		for end > 0 {
			r, w := utf8.DecodeLastRuneInString(l[:end])
			if !unicode.IsSpace(r) {
				break
			}
			end -= w
		}
		start := end
		for start > 0 {
			r, w := utf8.DecodeLastRuneInString(l[:start])
			if unicode.IsSpace(r) {
				break
			}
			start -= w
		}
		if start == end {
			break
		}
		tok := strings.TrimRight(l[start:end], "/")
		if j := strings.LastIndexByte(tok, '/'); j >= 0 {
			return tok[:j], true
		}
		end = start
	}
	return "", false
}

// sizePredicate is a comparison with a size the query asks for: "larger
// than 50 KB", "below 200 bytes", "more than 10 lines", "36K or more"
// (inclusive: also "at least", ">=").
type sizePredicate struct {
	v         float64
	greater   bool
	inclusive bool
}

func (p sizePredicate) holds(v float64) bool {
	if p.inclusive && v == p.v {
		return true
	}
	if p.greater {
		return v > p.v
	}
	return v < p.v
}

var (
	greaterWords = []string{"above", "over", "exceeding", "exceed", "exceeds", "larger", "bigger", "more", "greater", "least", "beyond", "upwards", ">", ">="}
	lessWords    = []string{"below", "under", "less", "smaller", "fewer", "most", "<", "<="}
	// Words after the number: "36K or more", "1 MB and up", "10 KB or less".
	greaterAfter = []string{"more", "larger", "bigger", "greater", "above", "up", "higher", "over"}
	lessAfter    = []string{"less", "smaller", "fewer", "below", "under", "lower"}
)

// parseSizePredicate finds the first number in query that a comparison
// word precedes by at most three words ("larger than 50 KB", "at least
// 36K") or that "or more" / "or less" follows, with an optional unit after
// it (B, bytes, K/KB/KiB, M/MB/MiB, G/GB/GiB). Thousands separators
// ("30,000 bytes") are read as such; "36K+" is 36K or more.
func parseSizePredicate(query string) (sizePredicate, bool) {
	fs := strings.Fields(strings.ToLower(query))
	for k, tok := range fs {
		tok = strings.TrimRight(tok, ".,;:?!)")
		plus := strings.HasSuffix(tok, "+")
		tok = strings.TrimSuffix(tok, "+")
		numPart, unit := splitNumberUnit(thousands(tok))
		if numPart == "" {
			continue
		}
		v, err := strconv.ParseFloat(numPart, 64)
		if err != nil || math.IsInf(v, 0) {
			continue
		}
		next := k + 1
		if unit == "" && k+1 < len(fs) {
			if u := wordAt(fs, k+1); unitScale(u) != 1 || u == "b" || u == "bytes" {
				unit, next = u, k+2
			}
		}
		v *= unitScale(unit)
		if plus {
			return sizePredicate{v, true, true}, true
		}
		for b := k - 1; b >= max(0, k-3); b-- {
			w := wordAt(fs, b)
			incl := w == ">=" || w == "<=" || w == "least" || w == "most" && b > 0 && wordAt(fs, b-1) == "at"
			if slices.Contains(greaterWords, w) {
				return sizePredicate{v, true, incl}, true
			}
			if slices.Contains(lessWords, w) {
				return sizePredicate{v, false, incl}, true
			}
		}
		// "4, or more precisely" is no comparison: the number's clause ended.
		ended := strings.TrimRight(fs[next-1], ".,;:?!)") != fs[next-1]
		if !ended && next+1 < len(fs) && (fs[next] == "or" || fs[next] == "and") {
			w := wordAt(fs, next+1)
			if slices.Contains(greaterAfter, w) {
				return sizePredicate{v, true, true}, true
			}
			if slices.Contains(lessAfter, w) {
				return sizePredicate{v, false, true}, true
			}
		}
	}
	return sizePredicate{}, false
}

// thousands removes the separators of "30,000" and "1,048,576" (a comma
// followed by exactly three digits, between digits); other tokens are
// returned as they are.
func thousands(tok string) string {
	if !strings.Contains(tok, ",") {
		return tok
	}
	var b strings.Builder
	for i := 0; i < len(tok); i++ {
		if tok[i] == ',' && i > 0 && isDigit(tok[i-1]) && i+3 < len(tok) &&
			isDigit(tok[i+1]) && isDigit(tok[i+2]) && isDigit(tok[i+3]) && (i+4 == len(tok) || !isDigit(tok[i+4])) {
			continue
		}
		b.WriteByte(tok[i])
	}
	return b.String()
}

// splitNumberUnit splits "50kb" into "50" and "kb"; numPart is empty when
// tok does not start with a digit or is too long to be a size.
func splitNumberUnit(tok string) (numPart, unit string) {
	if tok == "" || !isDigit(tok[0]) || len(tok) > 15 {
		return "", ""
	}
	j := 0
	for j < len(tok) && (isDigit(tok[j]) || tok[j] == '.') {
		j++
	}
	return tok[:j], tok[j:]
}

func unitScale(unit string) float64 {
	switch unit {
	case "k", "kb", "kib", "kilobytes":
		return 1 << 10
	case "m", "mb", "mib", "megabytes":
		return 1 << 20
	case "g", "gb", "gib", "gigabytes":
		return 1 << 30
	}
	return 1
}

// errorWordCount counts the errorWords in l (at most maxToolScan bytes),
// ignoring ASCII case.
func errorWordCount(l string) int {
	var buf [maxToolScan]byte
	b := buf[:min(len(l), maxToolScan)]
	for i := range b {
		c := l[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	c := 0
	for _, w := range errorWords {
		if bytes.Contains(b, w) {
			c++
		}
	}
	return c
}

// hasLocation reports a file location: "name.ext:12" (with or without a
// column) or ", line 12" (Python tracebacks). One pass: it tracks whether
// the token since the last delimiter holds a '.' or '/', which a path has
// and a time ("12:30:01") does not.
func hasLocation(l string) bool {
	pathy := false
	for p := 0; p < len(l); p++ {
		switch c := l[p]; c {
		case ' ', '\t', '"', '\'', '(', '<', '[':
			pathy = false
		case '.', '/':
			pathy = true
		case ':':
			if pathy && p+1 < len(l) && isDigit(l[p+1]) && p > 0 {
				return true
			}
		}
	}
	for k := 0; ; {
		j := strings.Index(l[k:], "line ")
		if j < 0 {
			return false
		}
		j += k
		if (j == 0 || l[j-1] == ' ' || l[j-1] == ',') && j+5 < len(l) && isDigit(l[j+5]) {
			return true
		}
		k = j + 5
	}
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// lineShape hashes a line with its leading and trailing blanks removed
// and every run of digits (and of hexadecimal digits mixed with them, as
// in hashes and addresses) collapsed to one '0'.
func lineShape(l string) uint64 {
	// FNV-1a, inline: a hash.Hash per line would allocate on every line
	// of every text.
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	l = strings.TrimSpace(l)
	for i := 0; i < len(l); {
		c := l[i]
		i++
		if isDigit(c) {
			for i < len(l) && (isDigit(l[i]) || isHexLetter(l[i])) {
				i++
			}
			c = '0'
		}
		h = (h ^ uint64(c)) * prime
	}
	return h
}

func isHexLetter(b byte) bool { return b >= 'a' && b <= 'f' }

// isMonth reports a month's abbreviation as ls and git print it: "Jan".
func isMonth(tok string) bool {
	return len(tok) == 3 && tok[0] >= 'A' && tok[0] <= 'Z' && tok[1] >= 'a' && tok[1] <= 'z' &&
		tok[2] >= 'a' && tok[2] <= 'z' && monthOf(tok) != 0
}

// isTimeOrYear reports "05:55", "17:30:15" or a year from 1970 to 2199.
func isTimeOrYear(tok string) bool {
	if strings.ContainsRune(tok, ':') {
		return true
	}
	return len(tok) == 4 && (tok[:2] == "19" && tok[2] >= '7' || tok[:2] == "20" || tok[:2] == "21") && isDigit(tok[2]) && isDigit(tok[3])
}

// largestNumber returns the largest size-like number on a line: a
// whitespace-separated token that is a number, optionally with a K, M, G
// or T suffix (as du -h and ls -h print them). The day, time and year
// after a month's name (ls -l's and git log's dates) are not sizes.
func largestNumber(l string) (float64, bool) {
	best, ok := 0.0, false
	afterMonth := 0 // tokens since a month's name: 1 is its day
	for _, tok := range strings.Fields(l) {
		if isMonth(tok) {
			afterMonth = 1
			continue
		}
		if afterMonth == 1 || afterMonth > 1 && isTimeOrYear(tok) {
			afterMonth++
			continue
		}
		afterMonth = 0
		mult := 1.0
		switch tok[len(tok)-1] {
		case 'K', 'k':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			tok = tok[:len(tok)-1]
		}
		if tok == "" || !isDigit(tok[0]) || len(tok) > 15 {
			continue
		}
		v, err := strconv.ParseFloat(tok, 64)
		if err != nil || math.IsInf(v, 0) {
			continue
		}
		if v*mult > best || !ok {
			best, ok = v*mult, true
		}
	}
	return best, ok
}

// matchedCode returns the code a grep or blame line quotes: what follows
// "path:12:" or "path-12-" (grep -n, with context lines), "path:" when
// the path holds a '/' or a '.' (grep without -n), or the ") " that ends
// a blame annotation ("3300d2155 lib/runner.js (Ann 2025-09-01 … 4) ").
// ok is false for other lines: a log line's "Date:" or "ERROR:" is no
// path.
func matchedCode(l string) (code string, ok bool) {
	head := l[:min(len(l), maxToolScan)]
	sp := strings.IndexAny(head, " \t")
	tok := head
	if sp >= 0 {
		tok = head[:sp]
	}
	// grep: the first token holds the path and the separators; a
	// path has no ':' and names a file.
	for k := 1; k < len(tok); k++ {
		c := tok[k]
		if c != ':' && c != '-' {
			continue
		}
		path := tok[:k]
		if !looksLikePath(path) {
			if c == ':' {
				break
			}
			continue
		}
		rest := l[k+1:]
		j := 0
		for j < len(rest) && isDigit(rest[j]) {
			j++
		}
		if j > 0 && j < len(rest) && rest[j] == c {
			code = rest[j+1:]
			// "file.go:12:5: message" is a compiler's diagnostic.
			d := 0
			for d < len(code) && isDigit(code[d]) {
				d++
			}
			if d > 0 && d < len(code) && code[d] == ':' {
				return "", false
			}
			return code, true
		}
		if c == ':' {
			if j == 0 && rest != "" {
				return rest, true
			}
			break
		}
	}
	// blame: a hex hash, then "(… N) ".
	if sp > 0 && isHexWord(tok) {
		if o := strings.IndexByte(head, '('); o > 0 {
			if c := strings.IndexByte(head[o:], ')'); c > 0 && isDigit(head[o+c-1]) {
				return l[o+c+1:], true
			}
		}
	}
	return "", false
}

// looksLikePath reports a word that names a file: it holds a '/', or it
// ends in an extension of one to five letters or digits ("setup.py").
func looksLikePath(p string) bool {
	if strings.ContainsRune(p, '/') {
		return true
	}
	d := strings.LastIndexByte(p, '.')
	if d <= 0 || len(p)-d-1 < 1 || len(p)-d-1 > 5 {
		return false
	}
	for _, c := range []byte(p[d+1:]) {
		if !isDigit(c) && (c|0x20 < 'a' || c|0x20 > 'z') {
			return false
		}
	}
	return true
}

func isHexWord(t string) bool {
	t = strings.TrimPrefix(t, "^")
	if len(t) < 7 {
		return false
	}
	for i := range len(t) {
		if !isDigit(t[i]) && !isHexLetter(t[i]) {
			return false
		}
	}
	return true
}

// declPrefixes are the modifiers that may precede a declaration keyword.
var declPrefixes = []string{"export ", "default ", "pub(crate) ", "pub ", "public ", "private ", "protected ", "static ", "async ", "abstract ", "final ", "unsafe ", "inline "}

// codeRole classifies a line of quoted code by its leading words, in any
// of the languages grep runs over: the roles the syntax tree gives code.
func codeRole(code string) int {
	t := strings.TrimSpace(code[:min(len(code), maxToolScan)])
	switch {
	case t == "":
		return roleBlank
	case strings.Trim(t, "})];,) \t") == "":
		return roleClose
	case hasAnyPrefix(t, "//", "#", "/*", "* ", "*/", "--", "\"\"\""):
		if hasAnyPrefix(t, "#include", "#import") {
			return roleImport
		}
		return roleComment
	case hasAnyPrefix(t, "import ", "from ", "use ", "using ", "extern crate ", "require ") || strings.Contains(t, "require("):
		return roleImport
	case hasAnyPrefix(t, "@"):
		return roleDecorator
	}
	for changed := true; changed; {
		changed = false
		for _, p := range declPrefixes {
			if strings.HasPrefix(t, p) {
				t, changed = t[len(p):], true
			}
		}
	}
	switch {
	case hasAnyPrefix(t, "class ", "struct ", "interface ", "enum ", "trait ", "impl ", "type ", "union "):
		return roleClass
	case hasAnyPrefix(t, "func ", "def ", "fn ", "function ", "function(", "func("):
		return roleDef
	case hasAnyPrefix(t, "return ", "return;", "yield ", "raise ", "throw "):
		return roleReturn
	case hasAnyPrefix(t, "if ", "if(", "for ", "for(", "while ", "while(", "switch ", "match ", "case ", "else ", "else:", "else{", "elif ", "try:", "try ", "try{", "catch ", "catch(", "except ", "except:", "with "):
		return roleControl
	case isAssignment(t):
		return roleAssign
	case strings.ContainsRune(t, '('):
		return roleCall
	}
	return roleOther
}

func hasAnyPrefix(t string, ps ...string) bool {
	for _, p := range ps {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// isAssignment reports an '=' (or ":=", "+=", …) before any '(' that is
// not a comparison: "x = f()", "self.a.b = c", "const x = 1".
func isAssignment(t string) bool {
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '(', '"', '\'', '`':
			return false
		case '=':
			if i+1 < len(t) && (t[i+1] == '=' || t[i+1] == '>') {
				return false
			}
			if i > 0 && strings.IndexByte("!<>=", t[i-1]) >= 0 {
				return false
			}
			return true
		}
	}
	return false
}
