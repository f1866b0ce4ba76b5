package linemodel

import (
	"context"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/lexical"
	"github.com/prunekit/pruner/internal/syntax"
)

// Syntax roles of a line (one-hot features).
const (
	roleBlank = iota
	roleClose
	roleComment
	roleImport
	roleClass
	roleDef
	roleDecorator
	roleControl
	roleReturn
	roleAssign
	roleCall
	roleOther
	numRoles
)

var roleNames = [numRoles]string{"blank", "close", "comment", "import", "class", "def", "decorator", "control", "return", "assign", "call", "other"}

// FeatureNames lists the per-line features in column order.
var FeatureNames = func() []string {
	names := []string{
		"bm25n", "bm25_rank", "bm25_log", "qcount", "idf_share", "max_idf",
		"exact_ident", "win1_bm25", "win3_bm25", "win2_idf_share", "prev_bm25", "next_bm25",
		"def_max_bm25", "def_idf_share", "def_name_share", "def_header", "def_size", "def_relpos", "has_def",
		"dist_strong", "dist_top1", "tree_depth", "indent",
		"pos", "pos_from_start", "pos_from_end", "file_lines", "line_len", "line_tokens",
		"query_len", "coverage", "max_line_share", "parse_errors",
		"prev_blank", "next_blank",
		"stem_share", "stem_only", "stem_win2", "pfx_share", "dist_stem",
		"def_rank", "def_best", "def_stem_share",
	}
	for _, r := range roleNames {
		names = append(names, "role_"+r)
	}
	return names
}()

// NumFeatures is len(FeatureNames).
var NumFeatures = len(FeatureNames)

const maxQueryPieces = 64

// Features computes the per-line features of text for query: a row-major
// n×NumFeatures matrix, n = len(evalset.Lines(text)). lang may be
// syntax.Text (no syntax features); a parse failure is not an error.
//
// When ctx is done it returns early with no rows (nil, 0); the caller
// looks at ctx.Err().
func Features(ctx context.Context, query, text string, lang syntax.Language) ([]float32, int) {
	X, n, _ := features(ctx, query, textLines(text), text, lang)
	return X, n
}

// ctxEvery is how many lines the per-line loops process between two looks
// at the context (well under a millisecond of work).
const ctxEvery = 4096

// done reports, every ctxEvery lines, whether ctx is done.
func done(ctx context.Context, i int) bool {
	return i%ctxEvery == 0 && ctx.Err() != nil
}

// features is Features on text split into lines, also returning the syntax
// analysis, which the model (definition pooling) and the labels (enclosing
// statements) reuse.
//
// The per-line state besides X is a few words a line: a bit mask of the
// query pieces found, counts and distances as int32, and the float64
// scores that later rank and compare lines (kept as float64 so that the
// features stay exactly what the model was trained on).
func features(ctx context.Context, query string, lines []string, text string, lang syntax.Language) ([]float32, int, syntaxInfo) {
	n := len(lines)
	F := NumFeatures
	X := make([]float32, n*F)
	if n == 0 {
		return X, 0, syntaxInfo{}
	}
	qt := lexical.QueryTokens(query)
	if len(qt) > maxQueryPieces {
		qt = qt[:maxQueryPieces]
	}
	qidx := make(map[string]int, len(qt))
	for i, t := range qt {
		qidx[t] = i
	}
	// Stemmed matches (retries/retry/retrying) and 4-character prefix
	// matches (parse/parser) of query pieces to line pieces, for the words a
	// commit message inflects differently from the code.
	qstem := make(map[string]uint64, len(qt))
	qpfx := make(map[string]uint64, len(qt))
	for i, t := range qt {
		if len(t) >= 3 {
			qstem[stem(t)] |= 1 << uint(i)
		}
		if len(t) >= 4 {
			qpfx[t[:4]] |= 1 << uint(i)
		}
	}
	masks := make([]uint64, n)
	smasks := make([]uint64, n)
	pmasks := make([]uint64, n)
	ntok := make([]int32, n)
	for i, l := range lines {
		if done(ctx, i) {
			return nil, 0, syntaxInfo{}
		}
		err := lexical.EachToken(ctx, l, func(t string) bool {
			ntok[i]++
			if q, ok := qidx[t]; ok {
				masks[i] |= 1 << uint(q)
			}
			if len(t) >= 3 {
				smasks[i] |= qstem[stem(t)]
			}
			if len(t) >= 4 {
				pmasks[i] |= qpfx[t[:4]]
			}
			return true
		})
		if err != nil {
			return nil, 0, syntaxInfo{}
		}
		smasks[i] |= masks[i]
		pmasks[i] |= smasks[i]
	}
	df := make([]int, len(qt))
	for _, m := range masks {
		for q := range qt {
			if m&(1<<uint(q)) != 0 {
				df[q]++
			}
		}
	}
	idf := make([]float64, len(qt))
	sumIdf, maxIdfAll := 0.0, 0.0
	present := 0
	for q, d := range df {
		if d > 0 {
			present++
			idf[q] = math.Log(1 + (float64(n-d)+0.5)/(float64(d)+0.5))
			sumIdf += idf[q]
			maxIdfAll = max(maxIdfAll, idf[q])
		}
	}
	share := func(m uint64) float64 {
		if sumIdf == 0 || m == 0 {
			return 0
		}
		s := 0.0
		for q := range qt {
			if m&(1<<uint(q)) != 0 {
				s += idf[q]
			}
		}
		return s / sumIdf
	}
	maxIdf := func(m uint64) float64 {
		if maxIdfAll == 0 {
			return 0
		}
		s := 0.0
		for q := range qt {
			if m&(1<<uint(q)) != 0 {
				s = max(s, idf[q])
			}
		}
		return s / maxIdfAll
	}

	sdf := make([]int, len(qt))
	for _, m := range smasks {
		for q := range qt {
			if m&(1<<uint(q)) != 0 {
				sdf[q]++
			}
		}
	}
	sidf := make([]float64, len(qt))
	sumSidf := 0.0
	for q, d := range sdf {
		if d > 0 {
			sidf[q] = math.Log(1 + (float64(n-d)+0.5)/(float64(d)+0.5))
			sumSidf += sidf[q]
		}
	}
	sshare := func(m uint64) float64 {
		if sumSidf == 0 || m == 0 {
			return 0
		}
		s := 0.0
		for q := range qt {
			if m&(1<<uint(q)) != 0 {
				s += sidf[q]
			}
		}
		return s / sumSidf
	}
	stemShare := make([]float64, n)
	maxStem := 0.0
	for i := range lines {
		stemShare[i] = sshare(smasks[i])
		maxStem = max(maxStem, stemShare[i])
	}
	distStem := make([]int32, n)
	{
		const far = 1 << 20
		last := -far
		for i := 0; i < n; i++ {
			if maxStem > 0 && stemShare[i] >= 0.5*maxStem {
				last = i
			}
			distStem[i] = int32(i - last)
		}
		last = 2 * far
		for i := n - 1; i >= 0; i-- {
			if maxStem > 0 && stemShare[i] >= 0.5*maxStem {
				last = i
			}
			distStem[i] = min(distStem[i], int32(last-i))
		}
	}

	if ctx.Err() != nil {
		return nil, 0, syntaxInfo{}
	}
	bm, err := lexical.BM25Context(ctx, query, lines)
	if err != nil {
		return nil, 0, syntaxInfo{}
	}
	bmMax := 0.0
	for _, s := range bm {
		bmMax = max(bmMax, s)
	}
	bmn := make([]float64, n)
	if bmMax > 0 {
		for i, s := range bm {
			bmn[i] = s / bmMax
		}
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	// A stable sort by decreasing score: the same order as sorting the
	// indices with sort.SliceStable.
	slices.SortStableFunc(order, func(a, b int32) int {
		switch {
		case bm[a] > bm[b]:
			return -1
		case bm[a] < bm[b]:
			return 1
		}
		return 0
	})
	top := int(order[0])
	rank := make([]int32, n)
	for r, i := range order {
		rank[i] = int32(r)
	}
	maxShare := 0.0
	for i := range lines {
		maxShare = max(maxShare, share(masks[i]))
	}

	// Exact identifiers of the query (snake_case, camelCase, dotted names).
	var idents []string
	for _, w := range strings.FieldsFunc(query, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.')
	}) {
		w = strings.Trim(w, ".")
		if len(w) >= 4 && looksLikeIdent(w) {
			idents = append(idents, w)
		}
	}

	// Distances to strong hits.
	const far = 1 << 20
	distStrong := make([]int32, n)
	last := -far
	for i := 0; i < n; i++ {
		if bm[i] > 0 && bmn[i] >= 0.5 {
			last = i
		}
		distStrong[i] = int32(i - last)
	}
	last = 2 * far
	for i := n - 1; i >= 0; i-- {
		if bm[i] > 0 && bmn[i] >= 0.5 {
			last = i
		}
		distStrong[i] = min(distStrong[i], int32(last-i))
	}

	// Syntax.
	st := analyseSyntax(ctx, text, lang, n)
	if ctx.Err() != nil {
		return nil, 0, syntaxInfo{}
	}

	// Rank of each definition among the file's definitions by its stemmed
	// match share (0 = best), so a line knows whether it sits in the
	// definition the query most likely talks about.
	defStem := map[int32]float64{}
	for i := 0; i < n; i++ {
		if d := st.def[i]; d >= 0 {
			defStem[d] = 0
		}
	}
	// Definitions nest, so their row ranges can sum to far more than n:
	// range ORs and maxima come from segment trees, not row loops.
	var sTree, mTree segTree[uint64]
	var bTree segTree[float64]
	if len(defStem) > 0 {
		// bmn is never negative: a 0 floor is the old loop's start value.
		sTree, mTree, bTree = newSegTree(smasks, 0, or64), newSegTree(masks, 0, or64), newSegTree(bmn, 0, maxF)
	}
	rows := func(d int32) (lo, hi int) {
		nd := &st.tree.Nodes[d]
		return int(nd.StartRow), min(nd.LastRow(), n-1)
	}
	defs := make([]int32, 0, len(defStem))
	for d := range defStem {
		defStem[d] = sshare(sTree.query(rows(d)))
		defs = append(defs, d)
	}
	// A definition's rank counts the definitions with a higher share, or
	// an equal share and a smaller node index: its position in that order.
	slices.SortFunc(defs, func(a, b int32) int {
		if va, vb := defStem[a], defStem[b]; va != vb {
			if va > vb {
				return -1
			}
			return 1
		}
		return int(a - b)
	})
	defRank := make(map[int32]int, len(defStem))
	for r, d := range defs {
		defRank[d] = r
	}

	// Definition-level statistics, cached per definition node.
	type defStat struct{ maxBM, share, nameShare float64 }
	defCache := map[int32]defStat{}
	defStats := func(d int32) defStat {
		if s, ok := defCache[d]; ok {
			return s
		}
		m, mx := mTree.query(rows(d)), bTree.query(rows(d))
		var nm uint64
		for _, c := range st.tree.Children(int(d)) {
			if st.tree.Nodes[c].Field() == "name" {
				for _, t := range lexical.Tokens(st.tree.Text(st.src, c)) {
					if q, ok := qidx[t]; ok {
						nm |= 1 << uint(q)
					}
				}
				break
			}
		}
		s := defStat{maxBM: mx, share: share(m), nameShare: share(nm)}
		defCache[d] = s
		return s
	}

	fn := float64(n)
	logN := math.Log1p(fn)
	for i, l := range lines {
		if done(ctx, i) {
			return nil, 0, syntaxInfo{}
		}
		row := X[i*F : (i+1)*F]
		k := 0
		put := func(v float64) {
			row[k] = float32(v)
			k++
		}
		put(bmn[i])
		put(float64(rank[i]) / fn)
		put(math.Log1p(bm[i]))
		put(float64(popcount(masks[i])) / math.Max(1, float64(present)))
		put(share(masks[i]))
		put(maxIdf(masks[i]))
		ex := 0
		for _, w := range idents {
			if strings.Contains(l, w) {
				ex++
			}
		}
		put(math.Min(float64(ex), 3))
		w1, w3, prev, next := 0.0, 0.0, 0.0, 0.0
		var wm uint64
		for j := max(0, i-3); j <= min(n-1, i+3); j++ {
			if j == i {
				continue
			}
			if j >= i-1 && j <= i+1 {
				w1 = max(w1, bmn[j])
			}
			if j >= i-2 && j <= i+2 {
				wm |= masks[j]
			}
			w3 = max(w3, bmn[j])
		}
		if i > 0 {
			prev = bmn[i-1]
		}
		if i+1 < n {
			next = bmn[i+1]
		}
		put(w1)
		put(w3)
		put(share(wm | masks[i]))
		put(prev)
		put(next)
		if d := st.def[i]; d >= 0 {
			s := defStats(d)
			nd := st.tree.Nodes[d]
			size := nd.LastRow() - int(nd.StartRow) + 1
			put(s.maxBM)
			put(s.share)
			put(s.nameShare)
			put(b2f(int(nd.StartRow) == i))
			put(math.Log1p(float64(size)) / 6)
			put(float64(i-int(nd.StartRow)) / math.Max(1, float64(size)))
			put(1)
		} else {
			k += 7
		}
		put(math.Log1p(math.Min(float64(distStrong[i]), 1000)) / 7)
		put(math.Log1p(math.Abs(float64(i-top))) / 7)
		put(math.Min(float64(st.depth[i]), 30) / 10)
		put(math.Min(float64(indentWidth(l)), 64) / 16)
		put(float64(i) / fn)
		put(math.Log1p(float64(i)) / 7)
		put(math.Log1p(float64(n-1-i)) / 7)
		put(logN / 7)
		put(math.Log1p(float64(len(l))) / 5)
		put(math.Log1p(float64(ntok[i])) / 4)
		put(math.Log1p(float64(len(qt))) / 4)
		put(float64(present) / math.Max(1, float64(len(qt))))
		put(maxShare)
		put(b2f(st.errors > 0))
		put(b2f(i > 0 && strings.TrimSpace(lines[i-1]) == ""))
		put(b2f(i+1 < n && strings.TrimSpace(lines[i+1]) == ""))
		put(stemShare[i])
		put(b2f(smasks[i]&^masks[i] != 0))
		sw := 0.0
		for j := max(0, i-2); j <= min(n-1, i+2); j++ {
			if j != i {
				sw = max(sw, stemShare[j])
			}
		}
		put(sw)
		put(sshare(pmasks[i]))
		put(math.Log1p(math.Min(float64(distStem[i]), 1000)) / 7)
		if d := st.def[i]; d >= 0 {
			r := defRank[d]
			put(1 / (1 + float64(r)))
			put(b2f(r == 0 && defStem[d] > 0))
			put(defStem[d])
		} else {
			k += 3
		}
		row[k+lineRole(l, st, i)] = 1
	}
	return X, n, st
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func popcount(m uint64) int {
	c := 0
	for m != 0 {
		m &= m - 1
		c++
	}
	return c
}

func looksLikeIdent(w string) bool {
	if strings.ContainsAny(w, "_.") {
		return true
	}
	hasLower := false
	for i, r := range w {
		if unicode.IsLower(r) {
			hasLower = true
		}
		if i > 0 && unicode.IsUpper(r) && hasLower {
			return true
		}
		if unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

func indentWidth(l string) int {
	w := 0
	for _, r := range l {
		switch r {
		case ' ':
			w++
		case '\t':
			w += 4
		default:
			return w
		}
	}
	return w
}

// syntaxInfo is what the features need from the parse tree.
type syntaxInfo struct {
	tree   *syntax.Tree
	src    []byte
	head   []int32 // first named non-root node starting on each row, -1
	depth  []int32 // ancestor count of head
	def    []int32 // innermost function/class node covering the row, -1
	errors int
}

func analyseSyntax(ctx context.Context, text string, lang syntax.Language, n int) syntaxInfo {
	st := syntaxInfo{head: make([]int32, n), depth: make([]int32, n), def: make([]int32, n)}
	for i := range st.head {
		st.head[i], st.def[i] = -1, -1
	}
	if lang == syntax.Text {
		return st
	}
	st.src = []byte(text)
	tree, err := syntax.Parse(ctx, lang, st.src)
	if err != nil || tree == nil || len(tree.Nodes) == 0 {
		return st
	}
	st.tree = tree
	st.errors = tree.Errors
	nodeDepth := make([]int32, len(tree.Nodes))
	var defNodes []int32
	for j := 1; j < len(tree.Nodes); j++ {
		if done(ctx, j) {
			return st
		}
		nd := &tree.Nodes[j]
		if nd.Parent >= 0 {
			nodeDepth[j] = nodeDepth[nd.Parent] + 1
		}
		if !nd.Named() {
			continue
		}
		r := int(nd.StartRow)
		if r < n && st.head[r] < 0 {
			st.head[r] = int32(j)
			st.depth[r] = nodeDepth[j]
		}
		if k := typeKind(nd.Type()); k == roleDef || k == roleClass {
			defNodes = append(defNodes, int32(j))
		}
	}
	st.paintDefs(defNodes, n)
	return st
}

// paintDefs sets st.def[r] to the last definition in pre-order whose rows
// hold r, which is the innermost one: a sweep over the rows with a stack of
// the open definitions, linear however deeply definitions nest (painting
// each definition's rows would be quadratic).
func (st *syntaxInfo) paintDefs(defs []int32, n int) {
	var open []int32
	next := 0
	for r := 0; r < n; r++ {
		for next < len(defs) && int(st.tree.Nodes[defs[next]].StartRow) <= r {
			open = append(open, defs[next])
			next++
		}
		for len(open) > 0 && st.tree.Nodes[open[len(open)-1]].LastRow() < r {
			open = open[:len(open)-1]
		}
		if len(open) > 0 {
			st.def[r] = open[len(open)-1]
		}
	}
}

func lineRole(l string, st syntaxInfo, i int) int {
	t := strings.TrimSpace(l)
	if t == "" {
		return roleBlank
	}
	if strings.Trim(t, "})];,) \t") == "" {
		return roleClose
	}
	if st.tree == nil || st.head[i] < 0 {
		if strings.HasPrefix(t, "//") || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*") {
			return roleComment
		}
		return roleOther
	}
	return typeKind(st.tree.Nodes[st.head[i]].Type())
}

func hasWord(t string, words ...string) bool {
	for _, p := range strings.Split(t, "_") {
		for _, w := range words {
			if p == w {
				return true
			}
		}
	}
	return false
}

func typeKind(t string) int {
	if strings.HasSuffix(t, "identifier") || strings.HasSuffix(t, "literal") && t != "func_literal" {
		return roleOther
	}
	has := func(s ...string) bool {
		for _, x := range s {
			if strings.Contains(t, x) {
				return true
			}
		}
		return false
	}
	switch {
	case has("comment"):
		return roleComment
	case has("import", "use_declaration", "preproc_include", "package_clause", "package_declaration", "extern_crate"):
		return roleImport
	case has("decorator", "annotation", "attribute_item"):
		return roleDecorator
	case has("call", "invocation"):
		return roleCall
	case has("class", "struct", "interface", "enum", "impl_item", "trait", "type_declaration", "type_spec", "type_alias"):
		return roleClass
	case has("function", "method", "constructor", "func_literal", "lambda", "closure"):
		return roleDef
	case hasWord(t, "if", "for", "while", "switch", "match", "try", "catch", "else", "case", "except", "finally", "with", "loop", "select", "do", "elif", "foreach", "defer", "guard", "default"):
		return roleControl
	case hasWord(t, "return", "throw", "raise", "break", "continue", "yield"):
		return roleReturn
	case has("assignment", "declaration", "declarator", "field", "let_", "const", "var_", "property"):
		return roleAssign
	case has("expression"):
		return roleCall
	}
	return roleOther
}

// defIDs returns the innermost definition of each of the n rows as a node
// index (-1 outside any definition, or without a parse).
func (st syntaxInfo) defIDs(n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = -1
		if i < len(st.def) {
			out[i] = st.def[i]
		}
	}
	return out
}

// enclosing returns the rows of the smallest multi-line node that contains
// row r (starting from the outermost node beginning on r and walking up)
// when it spans at most maxSpan rows.
func (st syntaxInfo) enclosing(r, maxSpan int) (lo, hi int, ok bool) {
	if st.tree == nil || r >= len(st.head) || st.head[r] < 0 {
		return 0, 0, false
	}
	j := int(st.head[r])
	for j > 0 {
		nd := &st.tree.Nodes[j]
		if nd.LastRow() > int(nd.StartRow) {
			if nd.LastRow()-int(nd.StartRow)+1 > maxSpan {
				return 0, 0, false
			}
			return int(nd.StartRow), nd.LastRow(), true
		}
		j = int(nd.Parent)
	}
	return 0, 0, false
}

// stem strips common English inflections so that retries, retrying and
// retry share a key: a deliberately crude stemmer, cheap at inference.
func stem(w string) string {
	switch {
	case len(w) > 5 && strings.HasSuffix(w, "ies"):
		w = w[:len(w)-3] + "y"
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		w = w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		w = w[:len(w)-2]
	case len(w) > 4 && strings.HasSuffix(w, "es"):
		w = w[:len(w)-2]
	case len(w) > 4 && strings.HasSuffix(w, "er"):
		w = w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		w = w[:len(w)-1]
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

// Hashed pieces: the model learns an embedding per bucket of query pieces
// (what the query is about) and of line pieces (what the line is), so it
// can condition on the query beyond exact matches.
const (
	// NumBuckets is the number of hash buckets; bucket 0 means "none".
	NumBuckets = 1 << 13
	// MaxQueryIDs and MaxLineIDs bound the pieces hashed per query and line.
	MaxQueryIDs = 32
	MaxLineIDs  = 12
)

// bucket hashes a piece (FNV-1a) into 1..NumBuckets-1.
func bucket(s string) uint16 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return uint16(1 + h%(NumBuckets-1))
}

// QueryIDs returns the hash buckets of the query's pieces (stemmed, at
// most MaxQueryIDs, distinct).
func QueryIDs(query string) []uint16 {
	var out []uint16
	for _, t := range lexical.QueryTokens(query) {
		b := bucket(stem(t))
		if !slices.Contains(out, b) {
			out = append(out, b)
			if len(out) == MaxQueryIDs {
				break
			}
		}
	}
	return out
}

// LineIDs returns, row-major n×MaxLineIDs, the hash buckets of each line's
// distinct pieces (stemmed, 0-padded).
func LineIDs(lines []string) []uint16 { return lineIDs(context.Background(), lines) }

// lineIDs is LineIDs that stops early (with a result to discard) when ctx
// is done.
func lineIDs(ctx context.Context, lines []string) []uint16 {
	out := make([]uint16, len(lines)*MaxLineIDs)
	for i, l := range lines {
		if done(ctx, i) {
			break
		}
		row := out[i*MaxLineIDs : (i+1)*MaxLineIDs]
		k := 0
		if lexical.EachToken(ctx, l, func(t string) bool {
			if len(t) < 2 {
				return true
			}
			b := bucket(stem(t))
			if !slices.Contains(row[:k], b) {
				row[k] = b
				k++
			}
			return k < MaxLineIDs
		}) != nil {
			break
		}
	}
	return out
}

// textLines splits text as evalset.Lines does (no lines for "").
func textLines(text string) []string { return splitLines(context.Background(), text) }

// splitLines is textLines that stops early (returning nil) when ctx is
// done: a megabyte of empty lines is a million strings.
func splitLines(ctx context.Context, text string) []string {
	if text == "" {
		return nil
	}
	n := evalset.CountLines(text)
	lines := make([]string, 0, n)
	for len(lines) < n {
		if done(ctx, len(lines)) {
			return nil
		}
		k := strings.IndexByte(text, '\n')
		if k < 0 {
			k = len(text)
		}
		lines = append(lines, text[:k])
		text = text[min(k+1, len(text)):]
	}
	return lines
}

// segTree answers range queries of an associative operation op with identity zero over a slice, in O(log n) each.
type segTree[T any] struct {
	n    int
	t    []T
	op   func(T, T) T
	zero T
}

func newSegTree[T any](v []T, zero T, op func(T, T) T) segTree[T] {
	t := segTree[T]{n: len(v), t: make([]T, 2*len(v)), op: op, zero: zero}
	copy(t.t[len(v):], v)
	for i := len(v) - 1; i > 0; i-- {
		t.t[i] = op(t.t[2*i], t.t[2*i+1])
	}
	return t
}

// query folds v[lo..hi] (inclusive, clipped to the slice) into zero.
func (t segTree[T]) query(lo, hi int) T {
	m := t.zero
	for l, r := max(lo, 0)+t.n, min(hi, t.n-1)+t.n+1; l < r; l, r = l/2, r/2 {
		if l&1 == 1 {
			m = t.op(m, t.t[l])
			l++
		}
		if r&1 == 1 {
			r--
			m = t.op(m, t.t[r])
		}
	}
	return m
}

func or64(a, b uint64) uint64   { return a | b }
func maxF(a, b float64) float64 { return max(a, b) }
