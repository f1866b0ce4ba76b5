package pruner

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/prunekit/pruner/internal/bert"
	"github.com/prunekit/pruner/internal/linemodel"
	"github.com/prunekit/pruner/internal/regfile"
	"github.com/prunekit/pruner/internal/syntax"
)

// ScorerSemantic names the semantic scorer: a pretrained BERT-family
// sentence encoder (all-MiniLM-L6-v2 and other sentence-transformers
// models; Load a folder or "hf:sentence-transformers/all-MiniLM-L6-v2")
// reranks the embedded line model's best lines by what their windows mean
// next to the question. Results say Scorer = "semantic".
const ScorerSemantic = "semantic"

// Semantic reranking: the line model's semanticCandidates best lines are
// read by the encoder, each with semanticContext lines on either side (at
// most semanticWordpieces wordpieces), and reordered by the rank average
// (1−semanticWeight)·line rank + semanticWeight·encoder rank. The score
// values the line model gave those lines are dealt out again in the new
// order, so thresholds and budgets keep their meaning (the same number of
// lines passes a threshold) and only which lines pass changes.
const (
	semanticCandidates = 32
	semanticContext    = 1
	semanticWordpieces = 64
	semanticWeight     = 0.2
)

// semanticRelevanceFull is the semantic gate's relevanceFull: below it a
// text keeps relevance / 0.5 of the mass its threshold promises. Chosen on
// the val split from 0.3 (the line model's) and 0.5: the larger keeps the
// matched recall within 0.01 of the line model's default on every val set
// (questions 0.928 against 0.934, tool output 0.883 against 0.884, commits
// 0.828 against 0.829) and about half of its lines for an off-topic
// question (13.9%, 4.4% and 15.8% against 27.7%, 11.3% and 30.8%).
const semanticRelevanceFull = 0.5

// isSentenceEncoder reports whether dir holds a sentence-transformers model
// with a BERT body: a config.json whose model_type is "bert" beside a
// modules.json.
func isSentenceEncoder(dir string) bool {
	b, err := regfile.ReadFile(filepath.Join(dir, "config.json"), 16<<20)
	if err != nil {
		return false
	}
	var c struct {
		ModelType string `json:"model_type"`
	}
	if json.Unmarshal(b, &c) != nil || c.ModelType != "bert" {
		return false
	}
	_, err = regfile.ReadFile(filepath.Join(dir, "modules.json"), 1<<20)
	return err == nil
}

// semanticStage is the line model reranked by a sentence encoder.
type semanticStage struct {
	line *linemodel.Model
	enc  *bert.Model
	// observe, when set, sees the line model's relevance gate and the
	// candidates' similarities before they are combined (the semantic
	// gate's fit, TestFitSemanticGate).
	observe func(gate float64, judged bool, sims []float64)
}

func (s semanticStage) score(ctx context.Context, p *Pruner, query, text string, lang syntax.Language) (*tokenScores, error) {
	ts, err := lineStage{s.line}.score(ctx, p, query, text, lang)
	if err != nil || ts.LineScores == nil || len(ts.Lines) != len(ts.LineScores) {
		return ts, err
	}
	sims, err := s.rerank(ctx, query, text, ts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("pruner: semantic scorer: %w", err)
	}
	if s.observe != nil {
		s.observe(ts.Relevance, ts.Judged, sims)
	}
	if ts.Judged && len(sims) > 0 {
		ts.Relevance, ts.RelevanceMin = semanticRelevance(ts.Relevance, sims), semanticGateThreshold
		ts.RelevanceFull = semanticRelevanceFull
	}
	return ts, nil
}

// semanticGateFeatures describes a (query, text) pair for the semantic
// relevance gate: the line model's gate probability as a logit, and the
// encoder's best and best-three mean similarity of the question with the
// candidates' windows.
func semanticGateFeatures(gate float64, sims []float64) [3]float64 {
	g := min(max(gate, 1e-6), 1-1e-6)
	s := slices.Clone(sims)
	slices.SortFunc(s, func(a, b float64) int { return cmp.Compare(b, a) })
	var top3 float64
	n := min(3, len(s))
	for _, v := range s[:n] {
		top3 += v / float64(n)
	}
	var best float64
	if len(s) > 0 {
		best = s[0]
	}
	return [3]float64{math.Log(g / (1 - g)), best, top3}
}

// semanticRelevance is the semantic gate's probability that the text
// answers the query: a logistic regression over semanticGateFeatures,
// fitted for all-MiniLM-L6-v2 (semantic_gate.go). An encoder that reads
// what a text is about tells an off-topic question from a matched one
// better than the line model's words do (AUC on the dev questions 0.947 →
// 0.981, on the commit dev set 0.914 → 0.944; docs/linemodel.md).
func semanticRelevance(gate float64, sims []float64) float64 {
	f := semanticGateFeatures(gate, sims)
	z := semanticGateBias
	for j, v := range f {
		z += semanticGateWeights[j] * (v - semanticGateMean[j]) / semanticGateScale[j]
	}
	return 1 / (1 + math.Exp(-z))
}

// rerank reorders ts's best lines by the encoder (see semanticWeight) and
// returns the candidates' similarities with the query (nil when there are
// fewer than two candidates).
func (s semanticStage) rerank(ctx context.Context, query, text string, ts *tokenScores) ([]float64, error) {
	lines, scores := ts.Lines, ts.LineScores
	var cand []int
	for i, l := range lines {
		if (ts.Covered == nil || ts.Covered[i]) && scores[i] > 0 && strings.TrimSpace(text[l.Start:l.End]) != "" {
			cand = append(cand, i)
		}
	}
	if len(cand) < 2 {
		return nil, nil
	}
	slices.SortStableFunc(cand, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	cand = cand[:min(len(cand), semanticCandidates)]
	texts := make([]string, 0, len(cand)+1)
	texts = append(texts, query)
	for _, i := range cand {
		lo, hi := max(0, i-semanticContext), min(len(lines)-1, i+semanticContext)
		texts = append(texts, cutWords(text[lines[lo].Start:lines[hi].End], 4*semanticWordpieces))
	}
	vecs, err := s.enc.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	sim := make([]float64, len(cand))
	for k := range cand {
		var d float64
		for j, v := range vecs[0] {
			d += float64(v) * float64(vecs[k+1][j])
		}
		if math.IsNaN(d) {
			return nil, fmt.Errorf("%w: non-finite similarity", ErrBadCheckpoint)
		}
		sim[k] = d
	}
	// Ranks: the line model's is the candidates' order; the encoder's by
	// similarity, ties to the line model's order.
	encRank := make([]float64, len(cand))
	order := make([]int, len(cand))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sim[b], sim[a]) })
	for r, k := range order {
		encRank[k] = float64(r)
	}
	fused := make([]int, len(cand))
	for k := range fused {
		fused[k] = k
	}
	slices.SortStableFunc(fused, func(a, b int) int {
		fa := (1-semanticWeight)*float64(a) + semanticWeight*encRank[a]
		fb := (1-semanticWeight)*float64(b) + semanticWeight*encRank[b]
		return cmp.Compare(fa, fb)
	})
	// Deal the candidates' scores (and masses) out again in the fused
	// order.
	vals := make([]float64, len(cand))
	var mass []float64
	for k, i := range cand {
		vals[k] = scores[i]
	}
	if ts.Mass != nil {
		mass = make([]float64, len(cand))
		for k, i := range cand {
			mass[k] = ts.Mass[i]
		}
	}
	for r, k := range fused {
		scores[cand[k]] = vals[r]
		if mass != nil {
			ts.Mass[cand[k]] = mass[r]
		}
	}
	return sim, nil
}

// cutWords cuts s to at most n bytes at a blank, so that a window of long
// lines costs the encoder no more than its first words (the encoder cuts
// at its own length too; this bounds the tokenizer's work).
func cutWords(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if k := strings.LastIndexAny(s[:n], " \t\n"); k > n/2 {
		return s[:k]
	}
	return strings.ToValidUTF8(s[:n], "")
}

func (semanticStage) defaultThreshold() (float64, bool) { return linemodel.DefaultThreshold, true }

func (semanticStage) hasCRF() bool { return false }

func (semanticStage) slow() bool { return true }

// loadSemantic loads the sentence encoder in dir beside the embedded line
// model.
func loadSemantic(ctx context.Context, dir string) (scorer, error) {
	enc, err := bert.Load(ctx, dir, bert.WithMaxLength(semanticWordpieces))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadCheckpoint, err)
	}
	m, err := linemodel.Embedded()
	if err != nil {
		return nil, fmt.Errorf("%w: embedded line model: %w", ErrBadCheckpoint, err)
	}
	return semanticStage{line: m, enc: enc}, nil
}
