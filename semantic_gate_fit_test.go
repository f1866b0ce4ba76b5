package pruner

import (
	"context"
	"encoding/json"
	"fmt"
	"go/format"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/logreg"
	"github.com/stretchr/testify/require"
)

// semanticGateSet is one kind of case the semantic gate is fitted and
// chosen on: every trainStep-th case of the train split, every valStep-th
// of the val split, each matched and with the query of another case
// (evalset.ShuffleQueries).
type semanticGateSet struct {
	name               string
	dir                string
	trainStep, valStep int
}

var semanticGateSets = []semanticGateSet{
	{"commits", filepath.Join("..", "shared", "traindata"), 20, 2},
	{"tool", filepath.Join("examples", "train", "tooldata"), 8, 4},
	{"questions", filepath.Join("examples", "train", "questiondata"), 1, 1},
	{"agents", filepath.Join("examples", "train", "agentdata"), 3, 1},
}

// semanticGateMaxMatched is the share of matched val pairs the threshold
// may gate, as for the line model's gate.
const semanticGateMaxMatched = 0.03

type semanticGateSample struct {
	F     [3]float64
	Gate  float64
	Label float64
}

// readSemanticGateSplit reads every step-th case of split from dir.
func readSemanticGateSplit(t *testing.T, dir, split string, step int) []evalset.File {
	t.Helper()
	files, err := evalset.ReadSplit(dir, split, step)
	require.NoError(t, err)
	return files
}

// semanticGateSamples prunes every case matched and shuffled with p and
// records the gate's inputs.
func semanticGateSamples(t *testing.T, p *Pruner, files []evalset.File) []semanticGateSample {
	t.Helper()
	ctx := context.Background()
	st, ok := p.sc.(semanticStage)
	require.True(t, ok, "not a semantic scorer")
	var out []semanticGateSample
	for label, fs := range [][]evalset.File{evalset.ShuffleQueries(files), files} {
		for _, f := range fs {
			for _, c := range f.Cases {
				var got *semanticGateSample
				st.observe = func(gate float64, judged bool, sims []float64) {
					if judged && len(sims) > 0 {
						got = &semanticGateSample{F: semanticGateFeatures(gate, sims), Gate: gate, Label: float64(label)}
					}
				}
				q := *p
				q.sc = st
				_, err := q.Prune(ctx, c.Query, c.Text)
				require.NoError(t, err, c.ID)
				if got != nil {
					out = append(out, *got)
				}
			}
		}
	}
	return out
}

// semanticGateAUC is the probability that a matched pair's score exceeds
// a shuffled one's (ties count half).
func semanticGateAUC(s []semanticGateSample, score func(semanticGateSample) float64) float64 {
	var pos, neg []float64
	for _, x := range s {
		if x.Label == 1 {
			pos = append(pos, score(x))
		} else {
			neg = append(neg, score(x))
		}
	}
	return logreg.AUC(pos, neg)
}

// semanticGateShares returns the shares of shuffled and of matched pairs
// whose probability is below th.
func semanticGateShares(s []semanticGateSample, prob func(semanticGateSample) float64, th float64) (shuffled, matched float64) {
	var ns, nm float64
	for _, x := range s {
		below := prob(x) < th
		if x.Label == 0 {
			ns++
			if below {
				shuffled++
			}
		} else {
			nm++
			if below {
				matched++
			}
		}
	}
	return shuffled / ns, matched / nm
}

// TestFitSemanticGate refits the semantic relevance gate for the encoder
// in PRUNER_MINILM_DIR (all-MiniLM-L6-v2): an L2-regularized logistic
// regression by Newton's method on the train splits of the commit cases
// (../shared/traindata), tool output and labelled questions
// (examples/train), its threshold on their val splits, and rewrites
// semantic_gate.go. Run with PRUNER_FIT_SEMANTIC_GATE=1; deterministic,
// about half an hour on 2 cores.
func TestFitSemanticGate(t *testing.T) {
	if os.Getenv("PRUNER_FIT_SEMANTIC_GATE") == "" {
		t.Skip("set PRUNER_FIT_SEMANTIC_GATE=1 and PRUNER_MINILM_DIR to refit the semantic gate")
	}
	dir := os.Getenv("PRUNER_MINILM_DIR")
	require.NotEmpty(t, dir, "PRUNER_MINILM_DIR names the encoder")
	p, err := Load(context.Background(), dir)
	require.NoError(t, err)
	// PRUNER_FIT_SEMANTIC_GATE_CACHE names a file that keeps the samples
	// (pruning them all takes most of the time), so that a change to the
	// fit or the threshold's rule reruns in seconds.
	var cached struct {
		Train, Val []semanticGateSample
		ValEnd     []int
	}
	cache := os.Getenv("PRUNER_FIT_SEMANTIC_GATE_CACHE")
	if b, err := os.ReadFile(cache); cache != "" && err == nil {
		require.NoError(t, json.Unmarshal(b, &cached))
	} else {
		cached.ValEnd = make([]int, len(semanticGateSets))
		for k, set := range semanticGateSets {
			cached.Train = append(cached.Train, semanticGateSamples(t, p, readSemanticGateSplit(t, set.dir, "train", set.trainStep))...)
			cached.Val = append(cached.Val, semanticGateSamples(t, p, readSemanticGateSplit(t, set.dir, "val", set.valStep))...)
			cached.ValEnd[k] = len(cached.Val)
			t.Logf("%s: %d train, %d val samples so far", set.name, len(cached.Train), len(cached.Val))
		}
		if cache != "" {
			b, err := json.Marshal(cached)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(cache, b, 0o644))
		}
	}
	train, val, valEnd := cached.Train, cached.Val, cached.ValEnd
	require.Len(t, valEnd, len(semanticGateSets))
	xs, ys := make([][]float64, len(train)), make([]float64, len(train))
	for i, s := range train {
		xs[i], ys[i] = s.F[:], s.Label
	}
	m := logreg.Fit(xs, ys, 1e-2, 25)
	prob := func(s semanticGateSample) float64 { return m.Prob(s.F[:]) }
	// The threshold: the largest that gates at most
	// semanticGateMaxMatched of every set's matched pairs (pooled, the
	// questions' near-zero share would let commits and tool output lose
	// twice as many).
	valSet := func(k int) []semanticGateSample {
		lo := 0
		if k > 0 {
			lo = valEnd[k-1]
		}
		return val[lo:valEnd[k]]
	}
	th := 0.0
thresholds:
	for c := 0.01; c < 1; c += 0.01 {
		for k := range semanticGateSets {
			if _, m := semanticGateShares(valSet(k), prob, c); m > semanticGateMaxMatched {
				break thresholds
			}
		}
		th = math.Round(c*100) / 100
	}
	gateProb := func(s semanticGateSample) float64 { return s.Gate }
	sh, mg := semanticGateShares(val, prob, th)
	t.Logf("val: threshold %.2f gates %.3f of shuffled and %.3f of matched pairs (%d train, %d val samples)", th, sh, mg, len(train), len(val))
	var logs []string
	for k, set := range semanticGateSets {
		v := valSet(k)
		ssh, smg := semanticGateShares(v, prob, th)
		lsh, lmg := semanticGateShares(v, gateProb, 0.11)
		line := fmt.Sprintf("val %s: gates %.3f of shuffled and %.3f of matched pairs, AUC %.3f (the line model's gate: %.3f, %.3f, AUC %.3f)",
			set.name, ssh, smg, semanticGateAUC(v, prob), lsh, lmg, semanticGateAUC(v, gateProb))
		t.Log(line)
		logs = append(logs, "// "+line)
	}
	src := fmt.Sprintf(`// Code generated by TestFitSemanticGate (PRUNER_FIT_SEMANTIC_GATE=1); DO NOT EDIT.

package pruner

// The semantic relevance gate: a logistic regression over
// semanticGateFeatures, fitted for all-MiniLM-L6-v2 on %d train samples
// (matched and shuffled pairs); semanticGateThreshold gates %.3f of the
// val split's shuffled pairs and %.3f of its matched ones.
%s
var (
	semanticGateMean    = [3]float64{%v, %v, %v}
	semanticGateScale   = [3]float64{%v, %v, %v}
	semanticGateWeights = [3]float64{%v, %v, %v}
)

const (
	semanticGateBias      = %v
	semanticGateThreshold = %v
)
`, len(train), sh, mg, strings.Join(logs, "\n"), m.Mean[0], m.Mean[1], m.Mean[2], m.Scale[0], m.Scale[1], m.Scale[2], m.Weights[0], m.Weights[1], m.Weights[2], m.Bias, th)
	out, err := format.Source([]byte(src))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile("semantic_gate.go", out, 0o644))
}
