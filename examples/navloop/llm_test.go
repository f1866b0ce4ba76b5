package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/internal/evalset"
)

// chatRequest is what the fake server reads of a request.
type chatRequest struct {
	Model    string    `json:"model"`
	Messages []message `json:"messages"`
}

// chatReply writes an OpenAI-style completion of content.
func chatReply(w http.ResponseWriter, content string) {
	_ = json.NewEncoder(w).Encode(map[string]any{
		"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content}}},
	})
}

// gradeFor is the fake judge's grade of an answer: a function of its text
// alone, so a grade mapped back to the wrong setting shows.
func gradeFor(answer string) string {
	h := fnv.New32a()
	h.Write([]byte(answer))
	return []string{gradeCorrect, gradePartial, gradeWrong}[h.Sum32()%3]
}

var (
	markerName  = regexp.MustCompile(`omitted \(\d+-\d+\): ([^,\n]+?)(?:,| and \d+ more| \.\.\.|\n)`)
	markerRange = regexp.MustCompile(`omitted \((\d+-\d+)\)`)
	answerLabel = regexp.MustCompile(`(?s)<answer label="([A-Z])">\n(.*?)\n</answer>`)
)

// fakeLLM is an OpenAI-compatible server: as the reader (model "reader")
// it unfolds the first name (name setting) or range (range setting) that a
// marker prints, then answers; elsewhere it answers at once, an answer
// that depends on everything it read. As the judge (model "judge") it
// grades each answer by gradeFor, in a code fence.
type fakeLLM struct {
	mu      sync.Mutex
	judged  []string // the judge prompts
	authErr bool     // a request without the bearer key came
}

func (f *fakeLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer k" {
		f.authErr = true
	}
	last := req.Messages[len(req.Messages)-1].Content
	if req.Model == "judge" {
		f.judged = append(f.judged, last)
		grades := map[string]any{}
		for _, m := range answerLabel.FindAllStringSubmatch(last, -1) {
			grades[m[1]] = map[string]string{"grade": gradeFor(m[2]), "why": m[2]}
		}
		data, _ := json.Marshal(grades)
		chatReply(w, "```json\n"+string(data)+"\n```")
		return
	}
	h := fnv.New64a()
	for _, m := range req.Messages {
		h.Write([]byte(m.Content))
	}
	answer := fmt.Sprintf("ANSWER: read %x", h.Sum64())
	if _, view, ok := strings.Cut(last, "<text>\n"); ok && len(req.Messages) == 1 {
		if strings.Contains(last, "UNFOLD: item, item") {
			if m := markerName.FindStringSubmatch(view); m != nil {
				answer = "I need more.\nUNFOLD: `" + m[1] + "`"
			}
		} else if strings.Contains(last, "UNFOLD: 120-159, 300-310") {
			if m := markerRange.FindStringSubmatch(view); m != nil {
				answer = "**UNFOLD:** " + m[1]
			}
		}
	}
	chatReply(w, answer)
}

// TestLLMLoop runs the fixture through the fake reader and judge: the
// unfolds, the replies, the full-text reference, the judge's blind labels
// mapped back, the transcript, and -rejudge of it.
func TestLLMLoop(t *testing.T) {
	fake := &fakeLLM{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	t.Setenv(envReaderKey, "k")
	t.Setenv(envJudgeKey, "")
	ctx := context.Background()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"-reader", srv.URL, "-reader-model", "reader", "-judge", srv.URL + "/v1", "-judge-model", "judge",
		"-out", dir, fixture}, nil, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	assert.False(t, fake.authErr, "every request carries the key")
	recs, err := readTranscripts(filepath.Join(dir, "transcripts.jsonl"))
	require.NoError(t, err)
	files, err := evalset.Load(fixture)
	require.NoError(t, err)
	require.Len(t, recs, len(files[0].Cases))

	orders := map[string]bool{}
	for i, rec := range recs {
		c := files[0].Cases[i]
		require.NotNil(t, rec.Full)
		assert.Contains(t, rec.Full.Messages[0].Content, c.Text, "the full-text reader reads the whole text")
		assert.Equal(t, rec.InputTokens, rec.Full.ViewTokens)
		assert.Equal(t, 1.0, rec.Full.Recall)
		for _, ex := range rec.Settings {
			assert.False(t, ex.Malformed, "%s %s", rec.ID, ex.Setting)
			assert.Empty(t, ex.Error)
			assert.True(t, strings.HasPrefix(ex.Answer, "read "), ex.Answer)
			if ex.Setting == "name" || ex.Setting == "range" {
				// Every fixture view folds something the fake can name.
				require.True(t, ex.Unfolded, "%s %s", rec.ID, ex.Setting)
				require.Len(t, ex.Messages, 4)
				assert.NotContains(t, ex.Unfold, "`")
			}
		}
		name := rec.Settings[3]
		require.Equal(t, "name", name.Setting)
		assert.Contains(t, name.Messages[2].Content, "<lines>\n", "the name setting replies with the delta")
		assert.Regexp(t, `(?m)^ +\d+\t`, name.Messages[2].Content, "numbered")
		assert.Contains(t, rec.Settings[2].Messages[2].Content, "<text>\n", "the range setting replies with the whole view")

		// The judge saw the answers under labels and the grades come back
		// to the settings that wrote them.
		require.NotNil(t, rec.Judge)
		seen := map[string]bool{}
		order := ""
		for _, label := range []string{"A", "B", "C", "D"} {
			s, ok := rec.Judge.Labels[label]
			require.True(t, ok, label)
			seen[s] = true
			order += s + " "
		}
		orders[order] = true
		assert.Len(t, seen, len(settings))
		for _, ex := range rec.Settings {
			assert.Equal(t, gradeFor(ex.Answer), rec.Judge.Grades[ex.Setting], "%s %s", rec.ID, ex.Setting)
		}
		// The fake judge's "why" echoes the answer it read under each label.
		var raw map[string]struct{ Why string }
		require.NoError(t, json.Unmarshal([]byte(strings.Trim(rec.Judge.Raw, "`json\n")), &raw))
		require.Len(t, raw, len(settings))
		for label, r := range raw {
			i := slices.IndexFunc(rec.Settings, func(e exchange) bool { return e.Setting == rec.Judge.Labels[label] })
			require.GreaterOrEqual(t, i, 0, label)
			assert.Equal(t, rec.Settings[i].Answer, r.Why, "%s label %s", rec.ID, label)
		}
	}
	assert.Greater(t, len(orders), 1, "the shuffle differs from case to case")
	require.Len(t, fake.judged, len(recs))
	for _, p := range fake.judged {
		assert.Regexp(t, `(?m)^ +\d+\t`, p, "gold lines numbered")
		assert.Contains(t, p, "<reference>\nread ")
		assert.NotContains(t, p, "tight", "no setting's name reaches the judge")
	}
	assert.Contains(t, stdout.String(), "correct")

	// -rejudge reads the transcripts back and grades them the same.
	out2 := t.TempDir()
	stdout.Reset()
	code = run(ctx, []string{"-rejudge", filepath.Join(dir, "transcripts.jsonl"), "-judge", srv.URL, "-judge-model", "judge", "-out", out2}, nil, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	again, err := readTranscripts(filepath.Join(out2, "transcripts.jsonl"))
	require.NoError(t, err)
	for i := range recs {
		assert.Equal(t, recs[i].Judge.Grades, again[i].Judge.Grades)
		assert.Equal(t, recs[i].Judge.Labels, again[i].Judge.Labels)
	}

	// The sim reader's transcripts have no answers to judge.
	simDir := t.TempDir()
	require.Equal(t, exitOK, run(ctx, []string{"-out", simDir, fixture}, nil, &stdout, &stderr))
	stderr.Reset()
	code = run(ctx, []string{"-rejudge", filepath.Join(simDir, "transcripts.jsonl"), "-judge", srv.URL, "-judge-model", "judge"}, nil, &stdout, &stderr)
	assert.Equal(t, exitRuntime, code)
	assert.Contains(t, stderr.String(), "no answers to judge")
}

// scripted is a reader that replies with its replies in turn, or fails.
type scripted struct {
	replies []string
	err     error
	n       int
}

func (s *scripted) reply(context.Context, *turn) (string, error) {
	if s.err != nil {
		return "", s.err
	}
	if s.n >= len(s.replies) {
		return "", fmt.Errorf("scripted: no reply %d", s.n+1)
	}
	s.n++
	return s.replies[s.n-1], nil
}

// TestBadReplies: replies that break the protocol, and unfolds the library
// refuses, get a note or the library's error text as the reply (its tokens
// counted), and the reader is asked for its answer.
func TestBadReplies(t *testing.T) {
	ctx := context.Background()
	h, err := newHarness(ctx, &flags{first: firstView{kind: "lines", value: 0.1}, reader: "sim"})
	require.NoError(t, err)
	files, err := evalset.Load(fixture)
	require.NoError(t, err)
	c := files[0].Cases[0] // retry.go: 94 lines; lines 1-2 are in the tight view
	q, err := h.tight.With(pruner.WithFileName(c.Path))
	require.NoError(t, err)
	first, err := q.Prune(ctx, c.Query, c.Text)
	require.NoError(t, err)
	require.True(t, first.Lines[0].Kept && first.Lines[1].Kept)
	tightRecall := c.Score(first.KeptLines()).Recall
	byName := map[string]setting{}
	for _, s := range settings {
		byName[s.name] = s
	}

	tests := []struct {
		name, setting string
		replies       []string
		wantErr       string // in exchange.Error ("" none)
		wantReply     string // the reply sent, when not the error
		unfolded      bool
		malformed     bool
		answer        string
	}{
		{"neither", "name", []string{"I think it waits.", "ANSWER: ok"}, noteMalformed, "", false, true, "ok"},
		{"unknown name", "name", []string{"UNFOLD: noSuchThing", "ANSWER: x"}, "unknown name", "", false, false, "x"},
		{"range outside", "range", []string{"UNFOLD: 500-600", "ANSWER: x"}, "outside", "", false, false, "x"},
		{"name where ranges only", "range", []string{"UNFOLD: backoff", "ANSWER: x"}, "want FIRST-LAST", "", false, false, "x"},
		{"unfold not offered", "tight", []string{"UNFOLD: backoff", "ANSWER: x"}, noteNoUnfold, "", false, false, "x"},
		{"empty unfold", "name", []string{"UNFOLD:", "ANSWER: x"}, "empty item", "", false, false, "x"},
		{"lines already shown", "name", []string{"UNFOLD: 1-2.", "ANSWER: x"}, "", noteNothing, true, false, "x"},
		{"no answer after unfold", "name", []string{"UNFOLD: backoff", "still thinking"}, "", "", true, true, "still thinking"},
		{"second unfold", "range", []string{"unfold: 43-48", "UNFOLD: 50-60"}, "", "", true, true, "UNFOLD: 50-60"},
		{"answer at once", "name", []string{"ANSWER:\nmultiple\nlines"}, "", "", false, false, "multiple\nlines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.reader = &scripted{replies: tt.replies}
			ex, err := h.converse(ctx, c, byName[tt.setting], first)
			require.NoError(t, err)
			assert.Equal(t, tt.answer, ex.Answer)
			assert.Equal(t, tt.malformed, ex.Malformed)
			assert.Equal(t, tt.unfolded, ex.Unfolded)
			assert.Equal(t, tok(t, h, first.Text), ex.ViewTokens)
			assert.Len(t, ex.Messages, 2*len(tt.replies))
			if tt.wantErr != "" {
				assert.Contains(t, ex.Error, tt.wantErr)
				assert.Equal(t, tok(t, h, ex.Error), ex.ReplyTokens)
				assert.Contains(t, ex.Messages[2].Content, ex.Error)
				assert.InDelta(t, tightRecall, ex.Recall, 1e-12, "nothing more was read")
			} else {
				assert.Empty(t, ex.Error)
			}
			if tt.wantReply != "" {
				assert.Equal(t, tok(t, h, tt.wantReply), ex.ReplyTokens)
				assert.Contains(t, ex.Messages[2].Content, tt.wantReply)
			}
			if len(tt.replies) == 2 {
				assert.Contains(t, ex.Messages[2].Content, "ANSWER: your answer", "asked for the answer")
			}
		})
	}

	// A reader that fails fails the case, without a panic.
	h.reader = &scripted{err: fmt.Errorf("connection refused")}
	_, err = h.converse(ctx, c, byName["name"], first)
	assert.ErrorContains(t, err, "connection refused")
}

func tok(t *testing.T, h *harness, s string) int {
	t.Helper()
	return h.tok.Count(s)
}

func TestParseReply(t *testing.T) {
	tests := []struct {
		in   string
		kind int
		rest string
	}{
		{"ANSWER: it waits", replyAnswer, "it waits"},
		{"Thinking...\n**ANSWER:** it waits\nfor 30s", replyAnswer, "it waits\nfor 30s"},
		{"answer: lower case", replyAnswer, "lower case"},
		{"UNFOLD: 120-159, 300-310", replyUnfold, "120-159, 300-310"},
		{"UNFOLD: `func (c *Client) do`, `retry`", replyUnfold, "func (c *Client) do, retry"},
		{"UNFOLD: \"readEvents\"", replyUnfold, "readEvents"},
		{"UNFOLD: 120-159.", replyUnfold, "120-159"},
		{"UNFOLD: Adds `$B` as an optional newline, maybe.", replyUnfold, "Adds `$B` as an optional newline, maybe."},
		{"## UNFOLD: x\nANSWER: y", replyUnfold, "x"},
		{"I cannot tell.", replyNone, "I cannot tell."},
		{"", replyNone, ""},
		{"ANSWERS: no", replyNone, "ANSWERS: no"},
	}
	for _, tt := range tests {
		kind, rest := parseReply(tt.in)
		assert.Equal(t, tt.kind, kind, tt.in)
		assert.Equal(t, tt.rest, rest, tt.in)
	}
}

func TestParseGrades(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]string
	}{
		{`{"A": "correct", "B": "Partial", "C": "incorrect", "D": "maybe"}`,
			map[string]string{"A": gradeCorrect, "B": gradePartial, "C": gradeWrong, "D": gradeNone}},
		{"Here:\n```json\n{\"A\": {\"grade\": \"wrong\", \"why\": \"{no}\"}}\n```", map[string]string{"A": gradeWrong}},
		{"no json at all", map[string]string{}},
		{"{broken", map[string]string{}},
		{`{"A": 3}`, map[string]string{}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, parseGrades(tt.in), tt.in)
	}
}

func TestShuffleOrder(t *testing.T) {
	a := shuffleOrder("case#1", 1, 4)
	assert.Equal(t, a, shuffleOrder("case#1", 1, 4), "seeded")
	assert.ElementsMatch(t, []int{0, 1, 2, 3}, a)
	differs := false
	for i := range 20 {
		if fmt.Sprint(shuffleOrder(fmt.Sprintf("case#%d", i), 1, 4)) != fmt.Sprint(a) {
			differs = true
		}
	}
	assert.True(t, differs, "per-case orders")
}

func TestChatClient(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	status := []int{http.StatusServiceUnavailable, http.StatusOK}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		s := status[min(calls, len(status)-1)]
		calls++
		if s != http.StatusOK {
			http.Error(w, "busy", s)
			return
		}
		chatReply(w, "<think>ANSWER: draft</think>\nANSWER: final")
	}))
	defer srv.Close()
	f := &flags{maxTokens: 10, timeout: 5 * time.Second}
	c := newChatClient(srv.URL+"/v1/chat/completions", "m", "", f)
	c.backoff = time.Millisecond
	got, err := c.complete(context.Background(), []message{{Role: "user", Content: "q"}})
	require.NoError(t, err)
	assert.Equal(t, "ANSWER: final", got, "a reasoning block is dropped")
	assert.Equal(t, 2, calls, "a 503 is retried")

	status, calls = []int{http.StatusBadRequest}, 0
	_, err = c.complete(context.Background(), nil)
	assert.ErrorIs(t, err, errHTTP)
	assert.Equal(t, 1, calls, "a 400 is not retried")

	for base, want := range map[string]string{
		"http://h:1":                      "http://h:1/v1/chat/completions",
		"http://h:1/v1/":                  "http://h:1/v1/chat/completions",
		"http://h:1/api/chat/completions": "http://h:1/api/chat/completions",
	} {
		assert.Equal(t, want, newChatClient(base, "m", "", f).url)
	}
}
