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
		"is_text", "err_word", "loc_ref", "tmpl_freq", "num_rank",
		"grp_num_rank", "size_cmp", "date_rank", "date_in", "rec_head", "rec_head_bm25", "rec_max_bm25", "blk_max_bm25",
		"soft_share", "soft_only", "soft_win2", "quoted_hit", "quoted_win2",
		"blk_err", "rec_err", "err_near", "err_first", "loc_lib", "ok_word",
		"enc_line", "enc_win", "enc_def", "enc_best",
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
// It runs in named steps: the query's pieces and each line's matches of
// them (matchLines), their idf weights (newIDFTable), the stemmed matches'
// shares and distances (stemProximity), BM25 (scoreBM25), the query's
// identifiers (queryIdents), distances to strong hits (distanceTo), the
// parse (analyseSyntax), the definitions' statistics (newDefScorer), and
// finally one row per line (featureState.writeRow).
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
	f := prepareFeatures(ctx, query, lines, text, lang)
	if f == nil {
		return nil, 0, syntaxInfo{}
	}
	for i := range lines {
		if done(ctx, i) {
			return nil, 0, syntaxInfo{}
		}
		f.writeRow(X[i*F:(i+1)*F], i)
	}
	return X, n, f.st
}

// prepareFeatures computes what the rows of the feature matrix are made of
// (the query's matches, BM25, idf tables, the syntax analysis, definition
// statistics) for len(lines) > 0; writeRow then fills any row from it. It
// returns nil when ctx is done.
func prepareFeatures(ctx context.Context, query string, lines []string, text string, lang syntax.Language) *featureState {
	n := len(lines)
	f := featureState{lines: lines, n: n, fn: float64(n), logN: math.Log1p(float64(n))}
	var ok bool
	f.qt, f.qidx = queryPieces(query)
	if f.qm, ok = matchLines(ctx, lines, f.qt, f.qidx); !ok {
		return nil
	}
	f.exact = newIDFTable(f.qm.masks, len(f.qt), n)
	f.stemmed = newIDFTable(f.qm.smasks, len(f.qt), n)
	f.stemShare, f.distStem = stemProximity(f.qm.smasks, &f.stemmed)
	if ctx.Err() != nil {
		return nil
	}
	var err error
	if f.bm, err = scoreBM25(ctx, query, lines); err != nil {
		return nil
	}
	for i := range lines {
		f.maxShare = max(f.maxShare, f.exact.share(f.qm.masks[i]))
	}
	f.idents = queryIdents(query)
	f.distStrong = distanceTo(n, func(i int) bool { return f.bm.bm[i] > 0 && f.bm.bmn[i] >= 0.5 })
	f.st = analyseSyntax(ctx, text, lang, n)
	if ctx.Err() != nil {
		return nil
	}
	f.defs = newDefScorer(f.st, n, f.qidx, &f.qm, f.bm.bmn, &f.exact, &f.stemmed)
	f.tool = newToolInfo(ctx, query, lines, lang)
	if ctx.Err() != nil {
		return nil
	}
	f.tool.scoreRecords(f.bm.bmn)
	f.shape = newShapeInfo(&f.tool, lines)
	wv, _ := shippedWordVectors() // a build without vectors scores 0
	f.soft = newSoftMatch(ctx, wv, query, lines)
	f.quoted = newQuotedMatch(ctx, query, lines)
	if !f.tool.isText {
		// The encoder learned code from its comments; over a test log or
		// a listing its cosines only blur the tool columns (labelled tool
		// val at 10% of lines fell by 0.02-0.03 with them there).
		if ae, _ := shippedAttnEncoder(); ae != nil {
			f.enc = newAttnEncMatch(ctx, ae, query, lines, f.st.def, f.st.lastRow)
		} else {
			enc, _ := shippedEncoder() // a build without an encoder scores 0
			f.enc = newEncMatch(ctx, enc, query, lines, f.st.def, f.st.lastRow)
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return &f
}

// queryPieces returns the query's distinct lexical pieces, at most
// maxQueryPieces of them because a line's matches are a 64-bit mask (bit
// q = piece q), and the index of each piece.
func queryPieces(query string) ([]string, map[string]int) {
	qt := lexical.QueryTokens(query)
	if len(qt) > maxQueryPieces {
		qt = qt[:maxQueryPieces]
	}
	qidx := make(map[string]int, len(qt))
	for i, t := range qt {
		qidx[t] = i
	}
	return qt, qidx
}

// inflectionKeys maps the stems and 4-character prefixes of the query
// pieces to their bits: stemmed matches (retries/retry/retrying) and
// prefix matches (parse/parser) catch the words a commit message inflects
// differently from the code.
func inflectionKeys(qt []string) (qstem, qpfx map[string]uint64) {
	qstem = make(map[string]uint64, len(qt))
	qpfx = make(map[string]uint64, len(qt))
	for i, t := range qt {
		if len(t) >= 3 {
			qstem[stem(t)] |= 1 << uint(i)
		}
		if len(t) >= 4 {
			qpfx[t[:4]] |= 1 << uint(i)
		}
	}
	return qstem, qpfx
}

// queryMatch is which query pieces each line holds, as bit masks, and its
// token count.
type queryMatch struct {
	masks  []uint64 // exact matches
	smasks []uint64 // exact or stemmed matches
	pmasks []uint64 // exact, stemmed or prefix matches
	ntok   []int32
}

// matchLines tokenises every line once, recording its exact, stemmed and
// prefix matches of the query pieces (each set includes the stricter
// ones). It reports false when ctx is done.
func matchLines(ctx context.Context, lines []string, qt []string, qidx map[string]int) (queryMatch, bool) {
	n := len(lines)
	qstem, qpfx := inflectionKeys(qt)
	qm := queryMatch{masks: make([]uint64, n), smasks: make([]uint64, n), pmasks: make([]uint64, n), ntok: make([]int32, n)}
	masks, smasks, pmasks, ntok := qm.masks, qm.smasks, qm.pmasks, qm.ntok
	for i, l := range lines {
		if done(ctx, i) {
			return queryMatch{}, false
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
			return queryMatch{}, false
		}
		smasks[i] |= masks[i]
		pmasks[i] |= smasks[i]
	}
	return qm, true
}

// idfTable weighs the query pieces by their rarity among the file's lines
// (BM25's idf with lines as documents): a line that holds the one rare
// piece of the query says more than one that holds a common one.
type idfTable struct {
	idf     []float64 // per piece, 0 for pieces on no line
	sum     float64   // over the pieces found
	max     float64
	present int // pieces found on some line
}

// newIDFTable computes the idf of the nq query pieces from the lines'
// match masks (n lines).
func newIDFTable(masks []uint64, nq, n int) idfTable {
	df := make([]int, nq)
	for _, m := range masks {
		for q := range nq {
			if m&(1<<uint(q)) != 0 {
				df[q]++
			}
		}
	}
	t := idfTable{idf: make([]float64, nq)}
	for q, d := range df {
		if d > 0 {
			t.present++
			t.idf[q] = math.Log(1 + (float64(n-d)+0.5)/(float64(d)+0.5))
			t.sum += t.idf[q]
			t.max = max(t.max, t.idf[q])
		}
	}
	return t
}

// share is the idf-weighted share of the query that the pieces of m cover
// (0..1): how much of what the query is about a line mentions.
func (t *idfTable) share(m uint64) float64 {
	if t.sum == 0 || m == 0 {
		return 0
	}
	s := 0.0
	for q := range t.idf {
		if m&(1<<uint(q)) != 0 {
			s += t.idf[q]
		}
	}
	return s / t.sum
}

// maxIdf is the idf of the rarest piece in m relative to the rarest piece
// of the query: a line can be specific with a single piece.
func (t *idfTable) maxIdf(m uint64) float64 {
	if t.max == 0 {
		return 0
	}
	s := 0.0
	for q := range t.idf {
		if m&(1<<uint(q)) != 0 {
			s = max(s, t.idf[q])
		}
	}
	return s / t.max
}

// stemProximity returns each line's stemmed match share and its distance
// to the nearest line whose share is at least half the best line's: code
// near an inflected mention of the query is often what the query is about.
func stemProximity(smasks []uint64, stemmed *idfTable) ([]float64, []int32) {
	n := len(smasks)
	stemShare := make([]float64, n)
	maxStem := 0.0
	for i := range n {
		stemShare[i] = stemmed.share(smasks[i])
		maxStem = max(maxStem, stemShare[i])
	}
	distStem := distanceTo(n, func(i int) bool { return maxStem > 0 && stemShare[i] >= 0.5*maxStem })
	return stemShare, distStem
}

// distanceTo returns, for each of n rows, the distance in rows to the
// nearest row where hit holds (2^20 or more when none does), in two
// sweeps instead of a search per row.
func distanceTo(n int, hit func(i int) bool) []int32 {
	const far = 1 << 20
	dist := make([]int32, n)
	last := -far
	for i := 0; i < n; i++ {
		if hit(i) {
			last = i
		}
		dist[i] = int32(i - last)
	}
	last = 2 * far
	for i := n - 1; i >= 0; i-- {
		if hit(i) {
			last = i
		}
		dist[i] = min(dist[i], int32(last-i))
	}
	return dist
}

// bm25Scores are the lines' BM25 scores against the query, with lines as
// documents: the main lexical relevance signal.
type bm25Scores struct {
	bm   []float64 // raw scores
	bmn  []float64 // bm / its maximum (0 when nothing matches), comparable across files
	rank []int32   // 0 = best, ties in line order
	top  int       // the best line
}

// scoreBM25 scores the lines and ranks them; it fails when ctx is done.
func scoreBM25(ctx context.Context, query string, lines []string) (bm25Scores, error) {
	n := len(lines)
	bm, err := lexical.BM25Context(ctx, query, lines)
	if err != nil {
		return bm25Scores{}, err
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
	rank := make([]int32, n)
	for r, i := range order {
		rank[i] = int32(r)
	}
	return bm25Scores{bm: bm, bmn: bmn, rank: rank, top: int(order[0])}, nil
}

// queryIdents returns the exact identifiers the query names (snake_case,
// camelCase, dotted names, at least 4 characters): a line that contains
// one verbatim is very likely what the query refers to.
func queryIdents(query string) []string {
	var idents []string
	for _, w := range strings.FieldsFunc(query, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.')
	}) {
		w = strings.Trim(w, ".")
		if len(w) >= 4 && looksLikeIdent(w) {
			idents = append(idents, w)
		}
	}
	return idents
}

// defStat is the statistics of one definition that its lines share.
type defStat struct{ maxBM, share, nameShare float64 }

// defScorer answers, for the definitions (functions, classes) of the parse,
// how well each matches the query: its best BM25 line, the idf share of
// the pieces in its lines and in its name, and its rank among the file's
// definitions, so that a line knows whether it sits in the definition the
// query most likely talks about.
type defScorer struct {
	st    syntaxInfo
	n     int
	qidx  map[string]int
	exact *idfTable
	// stem is each definition's stemmed match share, rank its position
	// among the definitions by that share (0 = best).
	stem map[int32]float64
	rank map[int32]int
	// Definitions nest, so their row ranges can sum to far more than n:
	// range ORs and maxima come from segment trees, not row loops.
	mTree segTree[uint64]
	bTree segTree[float64]
	cache map[int32]defStat
}

// newDefScorer ranks the definitions that hold some line by their
// stemmed match share.
func newDefScorer(st syntaxInfo, n int, qidx map[string]int, qm *queryMatch, bmn []float64, exact, stemmed *idfTable) *defScorer {
	ds := &defScorer{st: st, n: n, qidx: qidx, exact: exact, stem: map[int32]float64{}, cache: map[int32]defStat{}}
	for i := 0; i < n; i++ {
		if d := st.def[i]; d >= 0 {
			ds.stem[d] = 0
		}
	}
	var sTree segTree[uint64]
	if len(ds.stem) > 0 {
		// bmn is never negative: a 0 floor is the old loop's start value.
		sTree, ds.mTree, ds.bTree = newSegTree(qm.smasks, 0, or64), newSegTree(qm.masks, 0, or64), newSegTree(bmn, 0, maxF)
	}
	defs := make([]int32, 0, len(ds.stem))
	for d := range ds.stem {
		ds.stem[d] = stemmed.share(sTree.query(ds.rows(d)))
		defs = append(defs, d)
	}
	// A definition's rank counts the definitions with a higher share, or
	// an equal share and a smaller node index: its position in that order.
	slices.SortFunc(defs, func(a, b int32) int {
		if va, vb := ds.stem[a], ds.stem[b]; va != vb {
			if va > vb {
				return -1
			}
			return 1
		}
		return int(a - b)
	})
	ds.rank = make(map[int32]int, len(ds.stem))
	for r, d := range defs {
		ds.rank[d] = r
	}
	return ds
}

// rows returns the rows a definition spans, clipped to the text.
func (ds *defScorer) rows(d int32) (lo, hi int) {
	nd := &ds.st.tree.Nodes[d]
	return int(nd.StartRow), min(nd.LastRow(), ds.n-1)
}

// stats returns a definition's statistics, computed once per definition
// since all its lines ask.
func (ds *defScorer) stats(d int32) defStat {
	if s, ok := ds.cache[d]; ok {
		return s
	}
	m, mx := ds.mTree.query(ds.rows(d)), ds.bTree.query(ds.rows(d))
	var nm uint64
	st := ds.st
	for _, c := range st.tree.Children(int(d)) {
		if st.tree.Nodes[c].Field() == "name" {
			for _, t := range lexical.Tokens(st.tree.Text(st.src, c)) {
				if q, ok := ds.qidx[t]; ok {
					nm |= 1 << uint(q)
				}
			}
			break
		}
	}
	s := defStat{maxBM: mx, share: ds.exact.share(m), nameShare: ds.exact.share(nm)}
	ds.cache[d] = s
	return s
}

// featureState is what the rows are computed from: the file-wide results
// of the steps of features.
type featureState struct {
	lines          []string
	n              int
	fn, logN       float64 // n and log(1+n)
	qt             []string
	qidx           map[string]int
	qm             queryMatch
	exact, stemmed idfTable
	stemShare      []float64
	distStem       []int32
	bm             bm25Scores
	maxShare       float64 // best exact share of any line
	idents         []string
	distStrong     []int32
	st             syntaxInfo
	defs           *defScorer
	tool           toolInfo
	shape          shapeInfo
	soft           softMatch
	quoted         []float32 // quoted_hit of each line
	enc            encMatch
}

// rowWriter fills a row's columns in order; skip leaves columns at 0.
type rowWriter struct {
	row []float32
	k   int
}

func (w *rowWriter) put(v float64) {
	w.row[w.k] = float32(v)
	w.k++
}

func (w *rowWriter) skip(k int) { w.k += k }

// writeRow fills line i's row of X: the column groups below, in
// FeatureNames order, then the line's syntax role one-hot.
func (f *featureState) writeRow(row []float32, i int) {
	w := rowWriter{row: row}
	f.matchColumns(&w, i)
	f.windowColumns(&w, i)
	f.definitionColumns(&w, i)
	f.proximityColumns(&w, i)
	f.layoutColumns(&w, i)
	f.queryColumns(&w)
	f.blankColumns(&w, i)
	f.stemColumns(&w, i)
	f.defRankColumns(&w, i)
	f.toolColumns(&w, i)
	f.softColumns(&w, i)
	f.shapeColumns(&w, i)
	f.encColumns(&w, i)
	role := lineRole(f.lines[i], f.st, i)
	if f.tool.isText && role == roleOther {
		// grep and blame output quote code: its role is the code's.
		if code, ok := matchedCode(f.lines[i]); ok {
			role = codeRole(code)
		}
	}
	row[w.k+role] = 1
}

// matchColumns (bm25n … exact_ident) are the line's own lexical match:
// its BM25 score, rank and log score, how many query pieces it holds, their
// idf share and rarest idf, and the query identifiers it contains verbatim.
func (f *featureState) matchColumns(w *rowWriter, i int) {
	m := f.qm.masks[i]
	w.put(f.bm.bmn[i])
	w.put(float64(f.bm.rank[i]) / f.fn)
	w.put(math.Log1p(f.bm.bm[i]))
	w.put(float64(popcount(m)) / math.Max(1, float64(f.exact.present)))
	w.put(f.exact.share(m))
	w.put(f.exact.maxIdf(m))
	ex := 0
	for _, id := range f.idents {
		if strings.Contains(f.lines[i], id) {
			ex++
		}
	}
	w.put(math.Min(float64(ex), 3))
}

// windowColumns (win1_bm25 … next_bm25) are the neighbours' matches: a
// line next to a hit is often part of the same change (the body of a
// matched call, the line after a matched condition).
func (f *featureState) windowColumns(w *rowWriter, i int) {
	n, bmn := f.n, f.bm.bmn
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
			wm |= f.qm.masks[j]
		}
		w3 = max(w3, bmn[j])
	}
	if i > 0 {
		prev = bmn[i-1]
	}
	if i+1 < n {
		next = bmn[i+1]
	}
	w.put(w1)
	w.put(w3)
	w.put(f.exact.share(wm | f.qm.masks[i]))
	w.put(prev)
	w.put(next)
}

// definitionColumns (def_max_bm25 … has_def) describe the innermost
// definition holding the line (zeros outside any): whether it matches the
// query as a whole or by name, and where the line sits in it (a header
// line, early or late in a long body).
func (f *featureState) definitionColumns(w *rowWriter, i int) {
	d := f.st.def[i]
	if d < 0 {
		w.skip(7)
		return
	}
	s := f.defs.stats(d)
	nd := f.st.tree.Nodes[d]
	size := nd.LastRow() - int(nd.StartRow) + 1
	w.put(s.maxBM)
	w.put(s.share)
	w.put(s.nameShare)
	w.put(b2f(int(nd.StartRow) == i))
	w.put(math.Log1p(float64(size)) / 6)
	w.put(float64(i-int(nd.StartRow)) / math.Max(1, float64(size)))
	w.put(1)
}

// proximityColumns (dist_strong, dist_top1) are the distances to the
// strong BM25 hits and to the best line, log-scaled: relevance decays with
// distance from where the query is mentioned.
func (f *featureState) proximityColumns(w *rowWriter, i int) {
	w.put(math.Log1p(math.Min(float64(f.distStrong[i]), 1000)) / 7)
	w.put(math.Log1p(math.Abs(float64(i-f.bm.top))) / 7)
}

// layoutColumns (tree_depth … line_tokens) place the line in the file and
// its structure: nesting depth, indentation, position from either end,
// file size and the line's own length, which separate headers from bodies
// and boilerplate from code without reading the query.
func (f *featureState) layoutColumns(w *rowWriter, i int) {
	l, n := f.lines[i], f.n
	w.put(math.Min(float64(f.st.depth[i]), 30) / 10)
	w.put(math.Min(float64(IndentWidth(l)), 64) / 16)
	w.put(float64(i) / f.fn)
	w.put(math.Log1p(float64(i)) / 7)
	w.put(math.Log1p(float64(n-1-i)) / 7)
	w.put(f.logN / 7)
	w.put(math.Log1p(float64(len(l))) / 5)
	w.put(math.Log1p(float64(f.qm.ntok[i])) / 4)
}

// queryColumns (query_len … parse_errors) are the same on every line of a
// file: how long the query is, how much of it the file covers, the best
// line's share and whether the parse had errors. They tell the model how
// far to trust the lexical columns.
func (f *featureState) queryColumns(w *rowWriter) {
	nq := float64(len(f.qt))
	w.put(math.Log1p(nq) / 4)
	w.put(float64(f.exact.present) / math.Max(1, nq))
	w.put(f.maxShare)
	w.put(b2f(f.st.errors > 0))
}

// blankColumns (prev_blank, next_blank) mark blank neighbours, the
// paragraph breaks of code: a line after a blank one starts a block.
func (f *featureState) blankColumns(w *rowWriter, i int) {
	w.put(b2f(i > 0 && strings.TrimSpace(f.lines[i-1]) == ""))
	w.put(b2f(i+1 < f.n && strings.TrimSpace(f.lines[i+1]) == ""))
}

// stemColumns (stem_share … dist_stem) are the inflection-tolerant
// matches: the stemmed share, whether the line matches only through
// stems, the best stemmed share within ±2 lines, the prefix share and
// the distance to a strong stemmed hit.
func (f *featureState) stemColumns(w *rowWriter, i int) {
	w.put(f.stemShare[i])
	w.put(b2f(f.qm.smasks[i]&^f.qm.masks[i] != 0))
	sw := 0.0
	for j := max(0, i-2); j <= min(f.n-1, i+2); j++ {
		if j != i {
			sw = max(sw, f.stemShare[j])
		}
	}
	w.put(sw)
	w.put(f.stemmed.share(f.qm.pmasks[i]))
	w.put(math.Log1p(math.Min(float64(f.distStem[i]), 1000)) / 7)
}

// defRankColumns (def_rank, def_best, def_stem_share) rank the line's
// definition among the file's (zeros outside any): the query usually
// talks about one definition, and its lines should rank together.
func (f *featureState) defRankColumns(w *rowWriter, i int) {
	d := f.st.def[i]
	if d < 0 {
		w.skip(3)
		return
	}
	r := f.defs.rank[d]
	w.put(1 / (1 + float64(r)))
	w.put(b2f(r == 0 && f.defs.stem[d] > 0))
	w.put(f.defs.stem[d])
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

// IndentWidth is a line's indentation in columns, a tab counting 4.
func IndentWidth(l string) int {
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
	kind   []int8  // typeKind of head's type (set where head is)
	errors int
}

// kindCache holds typeKind by grammar symbol for one tree (a tree is of one
// language, so a symbol names one type): typeKind's string tests, run for
// every named node, took 14% of the line model's time on 20 MB of Go.
type kindCache []int8 // typeKind + 1; 0: not computed yet

func (c *kindCache) of(nd *syntax.Node) int {
	s := int(nd.Symbol)
	if nd.Symbol == syntax.ErrorSymbol {
		return typeKind(nd.Type())
	}
	if s >= len(*c) {
		*c = append(*c, make([]int8, s+1-len(*c))...)
	}
	if k := (*c)[s]; k != 0 {
		return int(k) - 1
	}
	k := typeKind(nd.Type())
	(*c)[s] = int8(k + 1)
	return k
}

func analyseSyntax(ctx context.Context, text string, lang syntax.Language, n int) syntaxInfo {
	st := syntaxInfo{head: make([]int32, n), depth: make([]int32, n), def: make([]int32, n), kind: make([]int8, n)}
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
	var kinds kindCache
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
		k := kinds.of(nd)
		r := int(nd.StartRow)
		if r < n && st.head[r] < 0 {
			st.head[r] = int32(j)
			st.depth[r] = nodeDepth[j]
			st.kind[r] = int8(k)
		}
		if k == roleDef || k == roleClass {
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
// lastRow is definition node d's last row.
func (st *syntaxInfo) lastRow(d int32) int { return st.tree.Nodes[d].LastRow() }

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
	return int(st.kind[i])
}

// hasWord reports whether a "_"-separated part of t is one of words. It
// walks the parts in place: it runs for every line, and splitting into a
// slice made it the features' largest garbage (120 MB on 20 MB of Go).
func hasWord(t string, words ...string) bool {
	for {
		p, rest, more := strings.Cut(t, "_")
		for _, w := range words {
			if p == w {
				return true
			}
		}
		if !more {
			return false
		}
		t = rest
	}
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
