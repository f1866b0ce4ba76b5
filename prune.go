package pruner

import (
	"context"
	"fmt"
	"slices"

	"github.com/prunekit/pruner/astrepair"
	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/swecompat"
	"github.com/prunekit/pruner/internal/syntax"
)

// Prune keeps the lines of text that matter for query and folds the rest
// into placeholders. Kept lines are byte-identical to the input and in input
// order. It is safe for concurrent use and stops between model batches when
// ctx is cancelled, returning ctx.Err().
//
// An empty text gives an empty Result; a blank query returns the text whole,
// with the reason in Result.Unpruned. Input that looks binary is refused
// with ErrBinaryInput (see WithBinaryInput).
func (p *Pruner) Prune(ctx context.Context, query, text string) (res *Result, err error) {
	defer recoverTo(&err)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := p.checkSize(text); err != nil {
		return nil, err
	}
	if err := p.checkBinary(text); err != nil {
		return nil, err
	}
	if isBlank(query) {
		return p.unpruned(ctx, text, "empty query")
	}
	if text == "" {
		return &Result{Scorer: p.kind}, nil
	}
	// The language is detected once: the line model's features and the
	// repair pass both need it, and detection reads the text. It comes
	// first so that a bad WithLanguage fails whatever the text's size.
	lang, err := p.language(text)
	if err != nil {
		return nil, err
	}
	// A language read from the content must also parse as that language
	// (syntax.Plausible): tool output that quotes code (a git blame, a
	// test log) is text, or the repair pass would keep whole runs of it
	// as the rest of a statement. The line model parses the text anyway,
	// so its parse confirms after scoring; a slow scorer's prework needs
	// the language first, so its detection window is parsed now.
	confirm := lang.IsCode() && p.cfg.language == "" && !syntax.Named(p.cfg.fileName)
	if confirm && p.sc.slow() {
		lang, confirm = syntax.Confirm(ctx, text, lang), false
	}
	if why, err := p.tooSmall(ctx, text); err != nil || why != "" {
		if err != nil {
			return nil, err
		}
		res, err := p.unpruned(ctx, text, why)
		if err != nil {
			return nil, err
		}
		if confirm {
			lang = syntax.Confirm(ctx, text, lang)
		}
		res.Language = string(lang)
		return res, nil
	}
	var pre *prework
	if p.cfg.renderer != RenderSWEPruner && p.sc.slow() && len(text) <= maxPreworkBytes {
		pctx, cancel := context.WithCancel(ctx)
		pre = p.startPrework(pctx, text, lang)
		defer func() {
			cancel()
			pre.wait()
		}()
	}
	var verdict relevanceVerdict
	ts, err := p.sc.score(ctx, p, query, text, lang)
	if err != nil {
		return nil, err
	}
	if err := p.checkFinite(ts); err != nil {
		return nil, err
	}
	if confirm {
		plausible := ts.Tree != nil && syntax.Plausible(ts.Tree, text) ||
			ts.Tree == nil && syntax.Confirm(ctx, text, lang).IsCode()
		if !plausible {
			lang = syntax.Text
			if ts, err = p.sc.score(ctx, p, query, text, lang); err != nil {
				return nil, err
			}
			if err := p.checkFinite(ts); err != nil {
				return nil, err
			}
		}
	}
	if p.cfg.renderer == RenderSWEPruner {
		res = p.renderCompat(text, ts)
	} else {
		verdict, err = p.judgeRelevance(ctx, ts)
		if err != nil {
			return nil, err
		}
		res, err = p.renderLibrary(ctx, text, ts, lang, verdict, pre)
		if err != nil {
			return nil, err
		}
	}
	res.Score = ts.Doc
	if verdict.judged {
		res.Score = verdict.prob
	}
	res.Scorer = p.kind
	if ts.TokenLevel {
		res.TokenScores = make([]TokenScore, len(ts.ByteSpans(text)))
		for i, b := range ts.ByteSpans(text) {
			res.TokenScores[i] = TokenScore{Start: b.Start, End: b.End, Score: b.Score}
		}
	}
	res.Windows = ts.Windows
	res.Notes = append(res.Notes, ts.Notes...)
	kept := res.Tokens.Kept
	if p.cfg.renderer == RenderSWEPruner {
		if kept, err = p.tok.CountContext(ctx, res.Text); err != nil {
			return nil, err
		}
	}
	res.Tokens = TokenCounts{Input: ts.InputToks, ModelInput: ts.ModelToks, Kept: kept}
	return res, nil
}

// checkFinite refuses a model's scores that are not numbers in [0,1]: a
// checkpoint whose weights load but overflow float32 in use scores NaN,
// which no decision can read (a Scorer's scores are checked where they
// are returned, with ErrScorer).
func (p *Pruner) checkFinite(ts *tokenScores) error {
	bad := func(what string, v float64) error {
		return fmt.Errorf("pruner: %w: the %s model scored %s %v, outside [0,1] (weights that overflow float32?)", ErrBadCheckpoint, p.kind, what, v)
	}
	if !(ts.Doc >= 0 && ts.Doc <= 1) { // NaN included
		return bad("the document", ts.Doc)
	}
	for _, s := range ts.Spans {
		if !(s.Score >= 0 && s.Score <= 1) {
			return bad("a token", s.Score)
		}
	}
	for i, v := range ts.LineScores {
		if !(v >= 0 && v <= 1) {
			return bad(fmt.Sprintf("line %d", i+1), v)
		}
	}
	return nil
}

// checkSize enforces WithMaxInputBytes and WithMaxInputLines before any
// work is done.
func (p *Pruner) checkSize(text string) error {
	if p.cfg.maxInputBytes > 0 && len(text) > p.cfg.maxInputBytes {
		return fmt.Errorf("pruner: %w: %d bytes > limit %d (WithMaxInputBytes)", ErrInputTooLarge, len(text), p.cfg.maxInputBytes)
	}
	if p.cfg.maxInputLines > 0 && len(text) > p.cfg.maxInputLines {
		// Counting is a fast byte scan; a text shorter than the limit in
		// bytes cannot exceed it in lines.
		if n := chunk.CountLines(text); n > p.cfg.maxInputLines {
			return fmt.Errorf("pruner: %w: %d lines > limit %d (WithMaxInputLines)", ErrInputTooLarge, n, p.cfg.maxInputLines)
		}
	}
	return nil
}

// tooSmall says why text comes back whole under WithMinInputTokens ("" when
// it is pruned): without a budget, a text that small is not worth folding.
// The SWE-Pruner renderer is exempt (the reference prunes every text).
func (p *Pruner) tooSmall(ctx context.Context, text string) (string, error) {
	n := p.cfg.minInputTokens
	if n == 0 || p.cfg.budget.set() || p.cfg.renderer == RenderSWEPruner {
		return "", nil
	}
	// No token is longer than this in practice; a longer text is pruned
	// without counting it first.
	const maxTokenBytes = 64
	if len(text) > n*maxTokenBytes {
		return "", nil
	}
	got, err := p.tok.CountContext(ctx, text)
	if err != nil {
		return "", err
	}
	if got >= n {
		return "", nil
	}
	return fmt.Sprintf("shorter than %d tokens (%d): not worth folding (WithMinInputTokens)", n, got), nil
}

// unpruned returns text whole with the reason. Counting its tokens is the
// one pass over a text returned whole, so it stops when ctx is done.
func (p *Pruner) unpruned(ctx context.Context, text, why string) (*Result, error) {
	n, err := p.tok.CountContext(ctx, text)
	if err != nil {
		return nil, err
	}
	res := &Result{Text: text, Scorer: p.kind, Unpruned: why}
	for _, l := range chunk.SplitLines(text) {
		res.Lines = append(res.Lines, Line{Number: l.Number, Kept: true, Reason: ReasonUnpruned})
	}
	res.Tokens = TokenCounts{Input: n, Kept: n}
	return res, nil
}

// renderCompat reproduces the SWE-Pruner service: Python splitlines
// numbering, its character aggregation quirks and its renderer.
func (p *Pruner) renderCompat(text string, ts *tokenScores) *Result {
	spans := make([][2]int, len(ts.Spans))
	scores := make([]float64, len(ts.Spans))
	for i, s := range ts.Spans {
		spans[i] = [2]int{s.Start, s.End}
		scores[i] = s.Score
	}
	lineScores := swecompat.AggregateLines(text, spans, scores)
	lines := swecompat.SplitLines(text)
	always := p.compatAlways(lines)
	kept := swecompat.KeptLinesAlways(text, lineScores, p.threshold(), func(n int) bool { return always[n] })
	pruned, phs := swecompat.RenderLinesMapped(text, kept)
	res := &Result{Text: pruned, Placeholders: compatPlaceholders(phs)}
	res.src = &expandSource{p: p, text: text, compat: true}
	n := len(lines)
	res.Lines = make([]Line, n)
	for i := range res.Lines {
		num := i + 1
		s, ok := lineScores[num]
		l := Line{Number: num, Score: s}
		if _, found := slices.BinarySearch(kept, num); found {
			l.Kept = true
			switch {
			case ok && s >= p.threshold():
				l.Reason = ReasonModel
			case always[num]:
				l.Reason = ReasonAlwaysKeep
			default:
				l.Reason = ReasonGap
			}
		}
		res.Lines[i] = l
	}
	return res
}

// compatAlways marks the lines (1-based, Python splitlines numbering) the
// keep options keep under the SWE-Pruner renderer: the first line as the
// service's always_keep_first_frags, and the last line and the lines
// WithKeepLines matches, which the service has no option for, selected the
// same way (before its one-line gap filling).
func (p *Pruner) compatAlways(lines []string) []bool {
	always := make([]bool, len(lines)+1)
	if len(lines) == 0 {
		return always
	}
	always[1] = p.cfg.keepFirst
	always[len(lines)] = always[len(lines)] || p.cfg.keepLast
	if p.cfg.keepLine != nil {
		for i, l := range lines {
			if p.cfg.keepLine(l) {
				always[i+1] = true
			}
		}
	}
	return always
}

// renderLibrary is the library's own path: lines split on "\n", character
// weighted line scores, threshold or budget, repair, folding and
// placeholder rendering.
//
// pre, when not nil, is the analysis and line costs started beside the
// scorer; the tree a scorer made (ts.Tree) is used before it.
func (p *Pruner) renderLibrary(ctx context.Context, text string, ts *tokenScores, lang syntax.Language, verdict relevanceVerdict, pre *prework) (*Result, error) {
	if pre != nil {
		pre.wait()
	}
	lines := ts.Lines
	if lines == nil && pre != nil {
		lines = pre.lines
	} else if lines == nil {
		lines = chunk.SplitLines(text)
	}
	scores, covered := ts.LineScores, ts.Covered
	if scores == nil {
		scores, covered = chunk.LineScores(text, lines, ts.ByteSpans(text))
	}
	res := &Result{Lines: make([]Line, len(lines)), Language: string(lang)}
	for i := range lines {
		res.Lines[i] = Line{Number: i + 1, Score: scores[i]}
	}
	var a *astrepair.Analysis
	var err error
	if pre != nil && ts.Tree == nil {
		a, err = pre.a, pre.aErr
	} else {
		a, err = astrepair.AnalyzeTree(ctx, text, lang, ts.Tree)
	}
	// The analysis keeps what it needs of the parse; dropping the tree (32
	// bytes a node, 200 MB for 20 MB of Go) lets the collector take it
	// before the folding's allocations.
	ts.Tree = nil
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// A text the parser refuses (e.g. too large) is still rendered, in
		// the language's comment syntax but without repair.
		res.Notes = append(res.Notes, fmt.Sprintf("syntax pass skipped: %v", err))
		a = nil
	}
	if a != nil && lang.IsCode() && p.cfg.repair && a.ParseErrors() > 0 {
		// Repair keeps parseable what parsed; where tree-sitter could not
		// read the input (a construct its grammar lacks, a file cut
		// mid-statement) it cannot promise that of the output.
		res.Notes = append(res.Notes, fmt.Sprintf("the %s parser found %d syntax errors in the input: the output may not parse where it could not read it", lang, a.ParseErrors()))
	}
	hops := p.cfg.depHops
	if hops < 0 {
		// Measured on the val split at a 20% line budget with the line
		// model: one hop of definitions costs 0.036 recall and 0.036 hit.
		hops = astrepair.DefaultMaxHops
		if p.cfg.budget.set() {
			hops = 0
		}
	}
	var tokCost []int
	if pre != nil && pre.costErr == nil && len(pre.cost) == len(lines) {
		tokCost = pre.cost
	} else if tokCost, err = p.lineTokens(ctx, text, lines); err != nil {
		return nil, err
	}
	f := &folder{
		p: p, text: text, lines: lines, lang: lang, a: a,
		repair:     p.cfg.repair && a != nil && lang != syntax.Text,
		repairOpts: []astrepair.Option{astrepair.WithMaxHops(hops)},
		tokCost:    tokCost,
		mass:       ts.Mass,
	}
	if !p.cfg.noNames {
		f.naming = astrepair.DefaultNaming
	}
	always := p.alwaysKeep(text, lines)
	var fo *folding
	if p.cfg.budget.set() {
		fo, err = f.budgeted(ctx, scores, covered, always, ts.InputToks)
	} else {
		fo, err = f.thresholded(ctx, scores, covered, always, verdict, ts.InputToks)
	}
	if err != nil {
		return nil, err
	}
	if fo.whole != "" {
		if fo.keep != nil {
			// The lines the decision kept say why; the rest are back
			// because the text is.
			for i := range res.Lines {
				res.Lines[i].Kept, res.Lines[i].Reason = true, ReasonUnpruned
				if fo.keep[i] {
					res.Lines[i].Reason = fo.why[i]
				}
			}
		}
		return p.wholeResult(res, text, fo.whole, ts.InputToks), nil
	}
	var hints []astrepair.Hint
	if p.cfg.foldHints > 0 && a != nil {
		limit := 0
		if p.cfg.budget.set() && p.cfg.budget.lines == 0 {
			limit, _, _ = p.budgetCost(lines, tokCost, ts.InputToks, lang)
		}
		if hints, err = f.hint(ctx, fo, scores, covered, limit, ts.InputToks); err != nil {
			return nil, err
		}
	}
	res.Notes = append(res.Notes, fo.notes...)
	for i := range res.Lines {
		res.Lines[i].Kept = fo.keep[i]
		res.Lines[i].Reason = fo.why[i]
	}
	res.Text = fo.out.Text
	res.Placeholders = libraryPlaceholders(fo.out.Placeholders)
	// Expand renders without a budget: full names, whatever a budget left.
	res.src = &expandSource{p: p, text: text, lang: lang}
	if !p.cfg.noNames {
		res.src.naming = astrepair.DefaultNaming
	}
	res.src.naming.Hints = hints
	res.Tokens.Kept = fo.outToks
	return res, nil
}

// alwaysKeep marks the lines the options keep whatever their score.
func (p *Pruner) alwaysKeep(text string, lines []chunk.Line) []bool {
	keep := make([]bool, len(lines))
	if len(keep) == 0 {
		return keep
	}
	keep[0] = keep[0] || p.cfg.keepFirst
	keep[len(keep)-1] = keep[len(keep)-1] || p.cfg.keepLast
	if p.cfg.keepLine != nil {
		for i, l := range lines {
			if p.cfg.keepLine(text[l.Start:l.End]) {
				keep[i] = true
			}
		}
	}
	return keep
}

// wholeResult turns res into the text returned whole, for the reason why;
// lines not kept yet are kept with ReasonUnpruned.
func (p *Pruner) wholeResult(res *Result, text, why string, inputToks int) *Result {
	res.Text = text
	res.Unpruned = why
	res.Placeholders = nil
	for i := range res.Lines {
		if !res.Lines[i].Kept {
			res.Lines[i].Kept, res.Lines[i].Reason = true, ReasonUnpruned
		}
	}
	res.Tokens.Kept = inputToks
	return res
}

// bridgeBlankLines keeps blank lines whose nearest non-blank neighbours on
// both sides are kept: folding them would cost a placeholder line to save
// an empty one. fits says whether a run of blank lines may be added (a
// budget's remaining room) and adds it.
func bridgeBlankLines(text string, lines []chunk.Line, keep []bool, why []Reason, fits func(lines []int) bool) {
	lastKept := false // the last non-blank line before i is kept
	for i := 0; i < len(lines); {
		if !isBlank(text[lines[i].Start:lines[i].End]) {
			lastKept = keep[i]
			i++
			continue
		}
		j := i
		for j < len(lines) && isBlank(text[lines[j].Start:lines[j].End]) {
			j++
		}
		if lastKept && j < len(lines) && keep[j] {
			var run []int
			for b := i; b < j; b++ {
				if !keep[b] {
					run = append(run, b)
				}
			}
			if len(run) > 0 && fits(run) {
				for _, b := range run {
					keep[b] = true
					why[b] = ReasonBlank
				}
			}
		}
		i = j
	}
}

// language resolves the override, else detects from content and file name.
func (p *Pruner) language(text string) (syntax.Language, error) {
	if p.cfg.language != "" {
		lang, err := syntax.ParseLanguage(p.cfg.language)
		if err != nil {
			return "", fmt.Errorf("pruner: %w: %w", ErrOption, err)
		}
		return lang, nil
	}
	return syntax.Detect(text, p.cfg.fileName), nil
}

func repairReason(r astrepair.Reason) Reason {
	switch r {
	case astrepair.ReasonScope:
		return ReasonScope
	case astrepair.ReasonControl:
		return ReasonControl
	case astrepair.ReasonDependency:
		return ReasonDependency
	case astrepair.ReasonBracket:
		return ReasonBracket
	case astrepair.ReasonStatement:
		return ReasonStatement
	case astrepair.ReasonReturn:
		return ReasonReturn
	}
	return ReasonRepair
}
