package train

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/prunekit/pruner/internal/linemodel"
)

// WordVecOptions configure TrainWordVectors.
type WordVecOptions struct {
	Dim, Window, Negatives, Epochs int
	MinCount, MaxVocab             int
	LR, Subsample                  float64
	Seed                           uint64
}

// DefaultWordVecOptions are the options of the shipped word vectors.
var DefaultWordVecOptions = WordVecOptions{
	Dim: 48, Window: 5, Negatives: 5, Epochs: 2,
	MinCount: 5, MaxVocab: 30000, LR: 0.025, Subsample: 1e-4, Seed: 1,
}

// TrainWordVectors learns word vectors of the word stream of texts (the
// stemmed identifier pieces and words of each text in order, lines
// running on, as linemodel.WordStream gives them) with skip-gram and
// negative sampling (word2vec), one thread so that a seed fixes the
// result: code-aware vectors in which words that share contexts — a
// comment's words and the code under it, an identifier's pieces — lie
// close, so that a question's words meet the code that does what they
// say without naming it.
func TrainWordVectors(ctx context.Context, texts []string, o WordVecOptions) (*linemodel.WordVectors, error) {
	// Vocabulary: the most frequent words seen at least MinCount times,
	// by descending count then by word (deterministic).
	counts := map[string]int{}
	var total int
	for _, t := range texts {
		for _, w := range linemodel.WordStream(t) {
			counts[w]++
			total++
		}
	}
	words := make([]string, 0, len(counts))
	for w, c := range counts {
		if c >= o.MinCount {
			words = append(words, w)
		}
	}
	slices.SortFunc(words, func(a, b string) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	if len(words) > o.MaxVocab {
		words = words[:o.MaxVocab]
	}
	id := make(map[string]int32, len(words))
	for i, w := range words {
		id[w] = int32(i)
	}
	V, D := len(words), o.Dim
	// The corpus as ids (out-of-vocabulary words dropped).
	var corpus [][]int32
	for _, t := range texts {
		var s []int32
		for _, w := range linemodel.WordStream(t) {
			if i, ok := id[w]; ok {
				s = append(s, i)
			}
		}
		if len(s) > 1 {
			corpus = append(corpus, s)
		}
	}
	// Negative sampling table: unigram^0.75.
	const tableSize = 1 << 22
	table := make([]int32, tableSize)
	pow := 0.0
	for _, w := range words {
		pow += math.Pow(float64(counts[w]), 0.75)
	}
	acc, wi := 0.0, 0
	for i := range table {
		if float64(i)/tableSize > acc/pow && wi < V {
			acc += math.Pow(float64(counts[words[wi]]), 0.75)
			wi++
		}
		table[i] = int32(max(wi-1, 0))
	}
	keepProb := make([]float64, V)
	for i, w := range words {
		f := float64(counts[w]) / float64(total)
		keepProb[i] = min(1, (math.Sqrt(f/o.Subsample)+1)*o.Subsample/f)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 13))
	in := make([]float32, V*D)
	out := make([]float32, V*D)
	for i := range in {
		in[i] = float32((rng.Float64() - 0.5) / float64(D))
	}
	var words64 int
	for _, s := range corpus {
		words64 += len(s)
	}
	totalSteps := float64(o.Epochs * words64)
	done := 0.0
	grad := make([]float32, D)
	sent := make([]int32, 0, 1024)
	for ep := 0; ep < o.Epochs; ep++ {
		for si, s := range corpus {
			if si%256 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			sent = sent[:0]
			for _, w := range s {
				if rng.Float64() < keepProb[w] {
					sent = append(sent, w)
				}
			}
			lr := float32(o.LR * max(1e-4, 1-done/totalSteps))
			done += float64(len(s))
			for p, w := range sent {
				b := rng.IntN(o.Window)
				for q := p - o.Window + b; q <= p+o.Window-b; q++ {
					if q < 0 || q >= len(sent) || q == p {
						continue
					}
					c := sent[q]
					vi := in[int(c)*D : int(c+1)*D]
					clear(grad)
					for k := 0; k <= o.Negatives; k++ {
						target, label := w, float32(1)
						if k > 0 {
							target = table[rng.IntN(tableSize)]
							if target == w {
								continue
							}
							label = 0
						}
						vo := out[int(target)*D : int(target+1)*D]
						var dot float32
						for j := range vi {
							dot += vi[j] * vo[j]
						}
						g := (label - sigmoid32(dot)) * lr
						for j := range vi {
							grad[j] += g * vo[j]
							vo[j] += g * vi[j]
						}
					}
					for j := range vi {
						vi[j] += grad[j]
					}
				}
			}
		}
	}
	idf := make([]float32, V)
	for i, w := range words {
		idf[i] = float32(math.Log(float64(total) / float64(counts[w])))
	}
	return linemodel.NewWordVectors(words, in, idf, D)
}

func sigmoid32(x float32) float32 {
	switch {
	case x > 8:
		return 1
	case x < -8:
		return 0
	}
	return float32(1 / (1 + math.Exp(-float64(x))))
}
