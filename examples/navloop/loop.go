package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/template"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/parallel"
	"github.com/prunekit/pruner/internal/tokenizer"
)

// What an UNFOLD may name in a setting.
const (
	unfoldNone   = ""
	unfoldRanges = "ranges" // line ranges; the reply is the whole view
	unfoldNames  = "names"  // names or ranges; the reply is the delta
)

// setting is one way of reading a case.
type setting struct {
	name   string // in transcripts
	label  string // in tables
	tight  bool   // the first view is -first's, else the default
	unfold string // what an UNFOLD may name (unfoldNone: it may not)
}

// settings are the four settings, in table order.
var settings = []setting{
	{name: "default", label: "default"},
	{name: "tight", label: "tight", tight: true},
	{name: "range", label: "tight + unfold by range", tight: true, unfold: unfoldRanges},
	{name: "name", label: "tight + unfold by name (delta)", tight: true, unfold: unfoldNames},
}

// Notes the harness sends as the reply when there is nothing to unfold.
const (
	noteMalformed = "Your reply starts with neither ANSWER: nor UNFOLD:."
	noteNoUnfold  = "Unfolding is not available here: answer from the text you have."
	noteNothing   = "Those lines are already shown: nothing new to show."
)

// message is one chat message.
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// caseRecord is everything about one case: written to the transcripts and
// read back by -rejudge.
type caseRecord struct {
	ID          string     `json:"id"`
	Kind        string     `json:"kind"`
	Source      string     `json:"source,omitempty"`
	Query       string     `json:"query"`
	Gold        []goldLine `json:"gold"`
	InputTokens int        `json:"input_tokens"`
	First       string     `json:"first"`  // the tight view, e.g. "lines:0.1"
	Reader      string     `json:"reader"` // "sim" or the model's name
	Settings    []exchange `json:"settings"`
	Full        *exchange  `json:"full,omitempty"` // the full-text reader's, for the reference answer
	Judge       *judgment  `json:"judge,omitempty"`
}

// goldLine is a gold line and its text.
type goldLine struct {
	N    int    `json:"n"`
	Text string `json:"text"`
}

// exchange is one setting's conversation and what it cost and found.
type exchange struct {
	Setting  string    `json:"setting"`
	Messages []message `json:"messages"`
	// Unfold is what the reader asked to unfold ("" when it did not ask);
	// Unfolded says the library showed lines; Error is the library's
	// refusal or the harness's note, sent as the reply.
	Unfold   string `json:"unfold,omitempty"`
	Unfolded bool   `json:"unfolded,omitempty"`
	Error    string `json:"error,omitempty"`
	// Answer is the reader's answer; Malformed says a reply did not follow
	// the protocol (the last reply is then the answer as it is).
	Answer    string `json:"answer"`
	Malformed bool   `json:"malformed,omitempty"`
	// ViewTokens and ReplyTokens are the Qwen3 tokens of the first view and
	// of the reply to the unfold (0 without one).
	ViewTokens  int `json:"view_tokens"`
	ReplyTokens int `json:"reply_tokens"`
	// Recall and Hit score the lines read (the first view's and the
	// unfold's) against the gold lines.
	Recall float64 `json:"recall"`
	Hit    float64 `json:"hit"`
}

// tokensRead is the share of the input's tokens the reader read.
func (e exchange) tokensRead(input int) float64 {
	if input == 0 {
		return 0
	}
	return float64(e.ViewTokens+e.ReplyTokens) / float64(input)
}

// turn is what a reader sees when it replies: the conversation so far,
// and, for the simulated reader, the case, the setting and the first view.
type turn struct {
	c     evalset.Case
	s     setting
	first *pruner.Result
	msgs  []message
}

// reader replies to the last message of a conversation.
type reader interface {
	reply(ctx context.Context, t *turn) (string, error)
}

// harness runs the settings of a case.
type harness struct {
	def, tight *pruner.Pruner // the first views' pruners
	first      firstView
	tok        *tokenizer.Tokenizer
	reader     reader
	readerName string
	prompts    *template.Template // "first" and "reply"
	full       bool               // also ask over the whole text
	judge      *judge             // nil: no grades
}

// measure runs every case of f's eval files.
func measure(ctx context.Context, f *flags, stderr io.Writer) ([]caseRecord, error) {
	files, err := evalset.Load(f.paths...)
	if err != nil {
		return nil, err
	}
	var cases []evalset.Case
	for _, file := range files {
		cases = append(cases, file.Cases...)
	}
	if f.limit > 0 && len(cases) > f.limit {
		cases = cases[:f.limit]
	}
	h, err := newHarness(ctx, f)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "navloop: %d cases, first view %s, reader %s\n", len(cases), f.first, h.readerName)
	recs := make([]caseRecord, len(cases))
	err = parallel.ForEach(ctx, len(cases), f.workers, func(i int) error {
		rec, err := h.runCase(ctx, cases[i])
		if err != nil {
			return fmt.Errorf("%s: %w", cases[i].ID, err)
		}
		recs[i] = rec
		return nil
	})
	return recs, err
}

// newHarness loads the pruner, the tokenizer, the prompts and the readers
// f names.
func newHarness(ctx context.Context, f *flags) (*harness, error) {
	def, err := pruner.Load(ctx, "")
	if err != nil {
		return nil, err
	}
	tight, err := def.With(f.first.option(), pruner.WithFoldHints(f.hints))
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.Qwen3()
	if err != nil {
		return nil, err
	}
	prompts, err := loadReaderPrompts(f.readerPrompt)
	if err != nil {
		return nil, err
	}
	h := &harness{def: def, tight: tight, first: f.first, tok: tok, prompts: prompts}
	if f.reader == "sim" {
		h.reader, h.readerName = simReader{}, "sim"
	} else {
		h.reader = llmReader{newChatClient(f.reader, f.readerModel, os.Getenv(envReaderKey), f)}
		h.readerName, h.full = f.readerModel, true
	}
	if f.judge != "" {
		if h.judge, err = newJudge(f); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// runCase runs the four settings of c (and the full-text reader and the
// judge, when there are).
func (h *harness) runCase(ctx context.Context, c evalset.Case) (caseRecord, error) {
	rec := caseRecord{ID: c.ID, Kind: c.Kind, Source: c.Source, Query: c.Query,
		InputTokens: h.tok.Count(c.Text), First: h.first.String(), Reader: h.readerName}
	lines := c.Lines()
	for _, g := range c.GoldLines {
		rec.Gold = append(rec.Gold, goldLine{N: g, Text: lines[g-1]})
	}
	views := map[bool]*pruner.Result{} // by setting.tight
	for _, tight := range []bool{false, true} {
		p := h.def
		if tight {
			p = h.tight
		}
		q, err := p.With(pruner.WithFileName(c.Path))
		if err != nil {
			return rec, err
		}
		if views[tight], err = q.Prune(ctx, c.Query, c.Text); err != nil {
			return rec, fmt.Errorf("prune: %w", err)
		}
	}
	for _, s := range settings {
		ex, err := h.converse(ctx, c, s, views[s.tight])
		if err != nil {
			return rec, fmt.Errorf("%s: %w", s.name, err)
		}
		rec.Settings = append(rec.Settings, ex)
	}
	if h.full {
		ex, err := h.converse(ctx, c, setting{name: "full"}, nil)
		if err != nil {
			return rec, fmt.Errorf("full text: %w", err)
		}
		rec.Full = &ex
	}
	if h.judge != nil {
		j, err := h.judge.grade(ctx, &rec)
		if err != nil {
			return rec, err
		}
		rec.Judge = j
	}
	return rec, nil
}

// promptData fills the reader's "first" template.
type promptData struct {
	Question string
	Path     string
	Tool     bool   // the text is a tool's output, not a source file
	Full     bool   // the view is the whole text
	Unfold   string // what an UNFOLD may name: "", "ranges" or "names"
	View     string
}

// replyData fills the reader's "reply" template.
type replyData struct {
	Kind  string // "view" (the whole view again), "delta", or "note" (a note or the library's error)
	Reply string
}

// converse runs one setting's conversation over first (nil: the whole
// text, unfolding refused): the first view, the reader's reply, at most one
// unfold and its reply, the answer.
func (h *harness) converse(ctx context.Context, c evalset.Case, s setting, first *pruner.Result) (exchange, error) {
	ex := exchange{Setting: s.name}
	view := c.Text
	if first != nil {
		view = first.Text
	}
	ex.ViewTokens = h.tok.Count(view)
	msg, err := h.render("first", promptData{Question: c.Query, Path: c.Path, Tool: c.Lang == "text",
		Full: first == nil, Unfold: s.unfold, View: view})
	if err != nil {
		return ex, err
	}
	t := &turn{c: c, s: s, first: first, msgs: []message{{Role: "user", Content: msg}}}
	r1, err := h.reader.reply(ctx, t)
	if err != nil {
		return ex, err
	}
	t.msgs = append(t.msgs, message{Role: "assistant", Content: r1})
	read := []*pruner.Result{first}
	kind, rest := parseReply(r1)
	if kind != replyAnswer {
		rd := replyData{Kind: "note"}
		switch {
		case kind == replyNone:
			rd.Reply, ex.Malformed, ex.Error = noteMalformed, true, noteMalformed
		case s.unfold == unfoldNone || first == nil:
			ex.Unfold = rest
			rd.Reply, ex.Error = noteNoUnfold, noteNoUnfold
		default:
			ex.Unfold = rest
			after, reply, refused, err := h.unfold(ctx, s, first, rest)
			if err != nil {
				return ex, err
			}
			rd.Reply = reply
			if refused {
				ex.Error = reply
			} else {
				ex.Unfolded = true
				read = append(read, after)
				rd.Kind = map[string]string{unfoldRanges: "view", unfoldNames: "delta"}[s.unfold]
			}
		}
		ex.ReplyTokens = h.tok.Count(rd.Reply)
		msg, err := h.render("reply", rd)
		if err != nil {
			return ex, err
		}
		t.msgs = append(t.msgs, message{Role: "user", Content: msg})
		r2, err := h.reader.reply(ctx, t)
		if err != nil {
			return ex, err
		}
		t.msgs = append(t.msgs, message{Role: "assistant", Content: r2})
		if kind, rest = parseReply(r2); kind != replyAnswer {
			rest, ex.Malformed = strings.TrimSpace(r2), true
		}
	}
	ex.Answer, ex.Messages = rest, t.msgs
	m := c.Score(readLines(c, read))
	ex.Recall, ex.Hit = m.Recall, m.Hit
	return ex, nil
}

// unfold shows what items name in first: by ranges as read_pruned did
// (Expand; the reply is the whole view again) or by names and ranges
// (Unfold; the reply is the Delta). A refusal by the library is no error:
// refused is set and reply is the library's error text.
func (h *harness) unfold(ctx context.Context, s setting, first *pruner.Result, items string) (after *pruner.Result, reply string, refused bool, err error) {
	refuse := func(err error) (*pruner.Result, string, bool, error) {
		if ctx.Err() != nil {
			return nil, "", false, ctx.Err()
		}
		return nil, err.Error(), true, nil
	}
	if strings.TrimSpace(items) == "" {
		_, err := first.Unfold(ctx, items) // the library's word on an empty item
		return refuse(err)
	}
	if s.unfold == unfoldRanges {
		rs, err := pruner.ParseLineRanges(items)
		if err != nil {
			return refuse(err)
		}
		if after, err = first.ExpandContext(ctx, rs...); err != nil {
			return refuse(err)
		}
		return after, after.Text, false, nil
	}
	if after, err = first.Unfold(ctx, items); err != nil {
		return refuse(err)
	}
	d, err := after.Delta(first)
	if err != nil {
		return nil, "", false, err // both views are of one input: a bug
	}
	if d == "" {
		d = noteNothing
	}
	return after, d, false, nil
}

// readLines returns the input lines shown by any of the views (nil: the
// whole text).
func readLines(c evalset.Case, views []*pruner.Result) []int {
	seen := map[int]bool{}
	var out []int
	for _, v := range views {
		if v == nil {
			return evalset.First(evalset.CountLines(c.Text), evalset.CountLines(c.Text))
		}
		for _, n := range v.KeptLines() {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// render fills one of the reader's templates.
func (h *harness) render(name string, data any) (string, error) {
	var b strings.Builder
	if err := h.prompts.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("reader prompt: %w", err)
	}
	return b.String(), nil
}

// Kinds of reply.
const (
	replyNone   = iota // neither ANSWER: nor UNFOLD:
	replyAnswer        // ANSWER: the rest of the reply
	replyUnfold        // UNFOLD: items on the rest of the line
)

// parseReply reads a reader's reply: the first line that starts (after
// blanks and Markdown emphasis) with ANSWER: or UNFOLD:, in any case,
// decides. An answer is the rest of the reply from there; an unfold's items
// are the rest of its line (see cleanItems).
func parseReply(s string) (kind int, rest string) {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.TrimLeft(l, " \t*#>_")
		if len(l) < 7 || l[6] != ':' {
			continue
		}
		head, tail := strings.ToUpper(l[:6]), strings.TrimLeft(l[7:], "*_")
		switch head {
		case "ANSWER":
			return replyAnswer, strings.TrimSpace(strings.Join(append([]string{tail}, lines[i+1:]...), "\n"))
		case "UNFOLD":
			return replyUnfold, cleanItems(tail)
		}
	}
	return replyNone, strings.TrimSpace(s)
}

// cleanItems undoes what a model adds around the items of an UNFOLD line:
// quotes around the whole, backticks around an item (`readEvents`,
// `120-159`), a period after a final range. Backticks inside a name (a
// commit subject's) stay: the library matches names as printed.
func cleanItems(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		s = s[1 : len(s)-1]
	}
	parts := strings.Split(s, ",")
	for i, p := range parts {
		t := strings.TrimSpace(p)
		if len(t) >= 2 && t[0] == '`' && t[len(t)-1] == '`' && !strings.Contains(t[1:len(t)-1], "`") {
			parts[i] = strings.Replace(p, t, t[1:len(t)-1], 1)
		}
	}
	s = strings.TrimSpace(strings.Join(parts, ","))
	if n := len(s); n >= 2 && s[n-1] == '.' && s[n-2] >= '0' && s[n-2] <= '9' {
		s = s[:n-1]
	}
	return s
}

// errNoAnswers refuses to judge transcripts without answers.
var errNoAnswers = errors.New("the transcripts hold no answers to judge (a sim reader's run?)")
