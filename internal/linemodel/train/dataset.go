package train

import (
	"context"
	"encoding/gob"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/lexical"
	"github.com/prunekit/pruner/internal/linemodel"
	"github.com/prunekit/pruner/internal/syntax"
	"github.com/prunekit/pruner/rubric"
)

// Example is one case turned into per-line features and targets.
type Example struct {
	ID   string
	Repo string
	Lang string
	N    int
	// X is the row-major N×linemodel.NumFeatures feature matrix (raw, not
	// standardised).
	X []float32
	// Gold holds the 1-based gold line numbers.
	Gold []int
	// Dep is the rubric dependency score of each line (decay^hops from the
	// gold lines, 1 on gold lines, 0 when not reached).
	Dep []float32
	// Def is the innermost enclosing definition of each line (an id shared
	// by the lines of one definition, -1 outside any), for the model's
	// definition pooling.
	Def []int32
	// Lab holds the CRF labels of each line as bits: LabGold, LabSem (gold
	// plus the smallest enclosing statement or block) and LabDep (the
	// rubric's dependency label).
	Lab []uint8
	// QIDs are the query's hashed pieces (see linemodel.QueryIDs) and TIDs
	// the lines' (n×linemodel.MaxLineIDs, see linemodel.LineIDs).
	QIDs, TIDs []uint16
	// Text is kept for cases that are scored (val, dev), else "".
	Text string
}

// Input returns the model input of ex.
func (ex *Example) Input() linemodel.Input {
	return linemodel.Input{X: ex.X, N: ex.N, Def: ex.Def, QIDs: ex.QIDs, TIDs: ex.TIDs}
}

// Label bits of Example.Lab.
const (
	LabGold uint8 = 1 << iota
	LabSem
	LabDep
)

// maxSemSpan bounds the statement or block that widens a gold line into the
// semantic label: a whole short statement is what a reader needs, a long
// block is mostly unrelated lines.
const maxSemSpan = 8

// CaseLanguage maps a case's lang field to a parser language, falling back
// to detection from the path and text.
func CaseLanguage(c Case) syntax.Language {
	if l, err := syntax.ParseLanguage(c.Lang); err == nil {
		return l
	}
	return syntax.Detect(c.Text, c.Path)
}

// NewExample computes the features and rubric targets of c.
func NewExample(ctx context.Context, c Case, keepText bool) (Example, error) {
	lang := CaseLanguage(c)
	a := linemodel.Analyse(ctx, c.Query, c.Text, lang)
	n := a.N
	ex := Example{ID: c.ID, Repo: c.Repo, Lang: lang.String(), N: n, X: a.X, Gold: c.GoldLines, Dep: make([]float32, n),
		Def: a.Def, Lab: make([]uint8, n), QIDs: a.QIDs, TIDs: a.TIDs}
	if keepText {
		ex.Text = c.Text
	}
	keep := make([]bool, n)
	for _, g := range c.GoldLines {
		if g >= 1 && g <= n {
			keep[g-1] = true
		}
	}
	labels, err := rubric.Build(ctx, c.Text, lang, keep)
	if err == nil {
		for i, d := range labels.Dependency {
			if i < n {
				ex.Dep[i] = float32(d)
				if labels.DependencyLabel[i] {
					ex.Lab[i] |= LabDep
				}
			}
		}
	}
	for i, k := range keep {
		if k {
			ex.Dep[i] = 1
			ex.Lab[i] |= LabGold | LabSem
			if lo, hi, ok := a.Enclosing(i, maxSemSpan); ok {
				for r := lo; r <= hi && r < n; r++ {
					ex.Lab[r] |= LabSem
				}
			}
		}
	}
	return ex, nil
}

// BuildExamples converts cases with workers goroutines, reporting progress
// to progress (may be nil) every few seconds.
func BuildExamples(ctx context.Context, cases []Case, keepText bool, workers int, progress func(done, total int)) ([]Example, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := make([]Example, len(cases))
	var next, done atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	stop := make(chan struct{})
	if progress != nil {
		go func() {
			t := time.NewTicker(5 * time.Second)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					progress(int(done.Load()), len(cases))
				}
			}
		}()
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(cases) || ctx.Err() != nil {
					return
				}
				ex, err := NewExample(ctx, cases[i], keepText)
				if err != nil {
					errs[w] = fmt.Errorf("%s: %w", cases[i].ID, err)
					return
				}
				out[i] = ex
				done.Add(1)
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	for _, e := range errs {
		if e != nil {
			return nil, e
		}
	}
	return out, ctx.Err()
}

// SaveExamples writes examples to path (gob), with the feature names so a
// stale cache is detected.
func SaveExamples(path string, exs []Example) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := gob.NewEncoder(f)
	if err := enc.Encode(cacheKey()); err != nil {
		f.Close()
		return err
	}
	if err := enc.Encode(exs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// cacheVersion changes whenever Example's fields or labels change meaning,
// so an old cache is rebuilt rather than read with missing labels.
const cacheVersion = "cache-v3"

func cacheKey() []string { return append([]string{cacheVersion}, linemodel.FeatureNames...) }

// LoadExamples reads examples written by SaveExamples; it fails when the
// feature set changed since.
func LoadExamples(path string) ([]Example, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := gob.NewDecoder(f)
	var names []string
	if err := dec.Decode(&names); err != nil {
		return nil, err
	}
	if fmt.Sprint(names) != fmt.Sprint(cacheKey()) {
		return nil, fmt.Errorf("linemodel: %s: stale feature cache", path)
	}
	var exs []Example
	err = dec.Decode(&exs)
	return exs, err
}

// Targets returns the training target of each line: 1 on gold lines,
// lambda·Dep elsewhere.
func (ex *Example) Targets(lambda float32) []float32 {
	t := make([]float32, ex.N)
	for i, d := range ex.Dep {
		t[i] = lambda * d
	}
	for _, g := range ex.Gold {
		if g >= 1 && g <= ex.N {
			t[g-1] = 1
		}
	}
	return t
}

// TopK returns the 1-based line numbers of the k best scores (ties to the
// earlier line), as the eval baselines keep lines.
func TopK(scores []float32, k int) []int {
	f := make([]float64, len(scores))
	for i, s := range scores {
		f[i] = float64(s)
	}
	idx := lexical.TopK(f, k)
	out := make([]int, len(idx))
	for i, j := range idx {
		out[i] = j + 1
	}
	return out
}

// Evaluate scores examples (which need Text) with score and returns the
// eval sets' metrics of keeping the top r·n lines.
func Evaluate(exs []Example, r float64, score func(ex *Example) []float32) evalset.Summary {
	obs := make([]evalset.Observation, 0, len(exs))
	for i := range exs {
		ex := &exs[i]
		s := score(ex)
		k := evalset.Budget(r, ex.N)
		kept := TopK(s, k)
		obs = append(obs, evalset.Observation{Metrics: evalset.Score(evalset.Lines(ex.Text), ex.Gold, kept)})
	}
	return evalset.Summarize(obs)
}

// SetStandardisation sets m's feature means and deviations to those of
// the lines of exs (a deviation is at least 1e-3), so the trunk sees
// features of unit scale.
func SetStandardisation(m *linemodel.Model, exs []Example) {
	F := len(m.Mean)
	sum := make([]float64, F)
	sq := make([]float64, F)
	cnt := 0.0
	for _, ex := range exs {
		for i := 0; i < ex.N; i++ {
			row := ex.X[i*F : (i+1)*F]
			for j, v := range row {
				sum[j] += float64(v)
				sq[j] += float64(v) * float64(v)
			}
		}
		cnt += float64(ex.N)
	}
	if cnt == 0 {
		return
	}
	for j := range sum {
		mu := sum[j] / cnt
		v := sq[j]/cnt - mu*mu
		m.Mean[j] = float32(mu)
		// A column the training data never varies (is_text on code-only
		// data) keeps std 1: dividing by a floor such as 1e-3 would turn
		// its first unseen value into a thousand-sigma input.
		m.Std[j] = 1
		if v > 1e-6 {
			m.Std[j] = float32(math.Sqrt(v))
		}
	}
}
