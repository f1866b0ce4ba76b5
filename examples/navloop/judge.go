package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/prunekit/pruner/internal/parallel"
)

// Grades a judge gives; gradeNone is a label its reply left out or graded
// with something else.
const (
	gradeCorrect = "correct"
	gradePartial = "partial"
	gradeWrong   = "wrong"
	gradeNone    = "unjudged"
)

// grades in table order.
var grades = []string{gradeCorrect, gradePartial, gradeWrong, gradeNone}

// judge grades the settings' answers of a case against the gold lines and
// the full-text answer, blind to which setting wrote which.
type judge struct {
	c    *chatClient
	tmpl *template.Template
	seed uint64
}

// judgment is one case's grades.
type judgment struct {
	// Labels maps each anonymous label to the setting whose answer it
	// stood for.
	Labels map[string]string `json:"labels"`
	// Raw is the judge's reply.
	Raw string `json:"raw"`
	// Grades maps each setting to its grade.
	Grades map[string]string `json:"grades"`
}

// judgeData fills the judge's template.
type judgeData struct {
	Question   string
	Gold       string // the gold lines, numbered
	Reference  string // the full-text reader's answer
	Candidates []candidate
}

// candidate is one anonymous answer.
type candidate struct{ Label, Answer string }

func newJudge(f *flags) (*judge, error) {
	tmpl, err := loadJudgePrompt(f.judgePrompt)
	if err != nil {
		return nil, err
	}
	key := os.Getenv(envJudgeKey)
	if key == "" {
		key = os.Getenv(envReaderKey)
	}
	return &judge{c: newChatClient(f.judge, f.judgeModel, key, f), tmpl: tmpl, seed: f.seed}, nil
}

// grade asks the judge about rec's answers, shuffled by shuffleOrder
// under the labels A, B, C, …, and maps its grades back to the settings.
func (j *judge) grade(ctx context.Context, rec *caseRecord) (*judgment, error) {
	if rec.Full == nil || len(rec.Settings) == 0 {
		return nil, fmt.Errorf("%s: %w", rec.ID, errNoAnswers)
	}
	var gold strings.Builder
	for _, g := range rec.Gold {
		fmt.Fprintf(&gold, "%6d\t%s\n", g.N, g.Text)
	}
	out := &judgment{Labels: map[string]string{}, Grades: map[string]string{}}
	data := judgeData{Question: rec.Query, Gold: gold.String(), Reference: rec.Full.Answer}
	for k, i := range shuffleOrder(rec.ID, j.seed, len(rec.Settings)) {
		label := string(rune('A' + k))
		out.Labels[label] = rec.Settings[i].Setting
		data.Candidates = append(data.Candidates, candidate{Label: label, Answer: rec.Settings[i].Answer})
	}
	var prompt strings.Builder
	if err := j.tmpl.Execute(&prompt, data); err != nil {
		return nil, fmt.Errorf("judge prompt: %w", err)
	}
	raw, err := j.c.complete(ctx, []message{{Role: "user", Content: prompt.String()}})
	if err != nil {
		return nil, fmt.Errorf("%s: judge: %w", rec.ID, err)
	}
	out.Raw = raw
	byLabel := parseGrades(raw)
	for label, s := range out.Labels {
		g, ok := byLabel[label]
		if !ok {
			g = gradeNone
		}
		out.Grades[s] = g
	}
	return out, nil
}

// shuffleOrder is the order in which the judge sees n answers of case id:
// a permutation seeded by the case id and seed, so it differs from case to
// case and repeats from run to run.
func shuffleOrder(id string, seed uint64, n int) []int {
	h := fnv.New64a()
	h.Write([]byte(id))
	return rand.New(rand.NewPCG(seed, h.Sum64())).Perm(n)
}

// parseGrades reads the judge's JSON object, from its first "{" to its last
// "}" (a code fence or a sentence around it is ignored): each label maps to
// a grade, or to an object with a "grade". A grade other than correct,
// partial or wrong (incorrect counts as wrong) is gradeNone; a reply
// without such an object grades nothing.
func parseGrades(reply string) map[string]string {
	out := map[string]string{}
	i, k := strings.Index(reply, "{"), strings.LastIndex(reply, "}")
	if i < 0 || k < i {
		return out
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(reply[i:k+1]), &obj) != nil {
		return out
	}
	for label, v := range obj {
		var g string
		if json.Unmarshal(v, &g) != nil {
			var o struct {
				Grade string `json:"grade"`
			}
			if json.Unmarshal(v, &o) != nil {
				continue
			}
			g = o.Grade
		}
		switch g = strings.ToLower(strings.TrimSpace(g)); g {
		case gradeCorrect, gradePartial, gradeWrong:
		case "incorrect":
			g = gradeWrong
		default:
			g = gradeNone
		}
		out[strings.TrimSpace(label)] = g
	}
	return out
}

// rejudge judges the transcripts of f.rejudge again.
func rejudge(ctx context.Context, f *flags) ([]caseRecord, error) {
	recs, err := readTranscripts(f.rejudge)
	if err != nil {
		return nil, err
	}
	j, err := newJudge(f)
	if err != nil {
		return nil, err
	}
	err = parallel.ForEach(ctx, len(recs), f.workers, func(i int) error {
		g, err := j.grade(ctx, &recs[i])
		recs[i].Judge = g
		return err
	})
	return recs, err
}

// readTranscripts reads the records -out wrote.
func readTranscripts(path string) ([]caseRecord, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("transcripts: %w", err)
	}
	defer fh.Close()
	var recs []caseRecord
	dec := json.NewDecoder(bufio.NewReader(fh))
	for dec.More() {
		var r caseRecord
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("transcripts: %s: record %d: %w", path, len(recs)+1, err)
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// writeTranscripts writes recs as JSONL to path, making its folder.
func writeTranscripts(path string, recs []caseRecord) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("transcripts: %w", err)
	}
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("transcripts: %w", err)
	}
	w := bufio.NewWriter(fh)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			fh.Close()
			return fmt.Errorf("transcripts: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		fh.Close()
		return fmt.Errorf("transcripts: %w", err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("transcripts: %w", err)
	}
	return nil
}
