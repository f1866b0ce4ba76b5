package train

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/linemodel"
)

// writeSyntheticPairs writes pair files in which comments and code never
// share a word: concept c is said "talk<c>" in comments and written
// "code<c>" in code, so a bag-of-words cosine ranks at chance and only a
// learned mapping ranks the documented unit first.
func writeSyntheticPairs(t *testing.T, path string, files int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	enc := json.NewEncoder(zw)
	word := func(prefix string, i int) string {
		return fmt.Sprintf("%s%s", prefix, string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	for fi := range files {
		pf := PairFile{Src: "synthetic", Path: fmt.Sprintf("f%d.go", fi), Lang: "go", Split: "train"}
		if fi%5 == 0 {
			pf.Split = "val"
		}
		for u := range 8 {
			c := rng.IntN(40)
			code := fmt.Sprintf("func %s() { %s(%s) }", word("code", c), word("noise", rng.IntN(30)), word("noise", rng.IntN(30)))
			pf.Units = append(pf.Units, PairUnit{Kind: "def", Start: u*3 + 1, End: u*3 + 3, Code: code})
			if u%2 == 0 {
				pf.Pairs = append(pf.Pairs, PairItem{NL: "it does " + word("talk", c) + " for the " + word("filler", rng.IntN(30)), Unit: u, Kind: "doc"})
			}
		}
		require.NoError(t, enc.Encode(pf))
	}
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
}

func TestTrainPairEncoderLearnsMapping(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pairs.jsonl.gz")
	writeSyntheticPairs(t, path, 400)
	o := DefaultEncoderOptions
	o.Dim, o.Epochs, o.MinCount = 16, 4, 1
	d, err := LoadPairData(context.Background(), []string{path}, o, 0)
	require.NoError(t, err)
	require.Positive(t, d.ValPairs)
	require.Positive(t, d.TrainPairs)

	base := evalTFIDF(d)
	enc, err := TrainPairEncoder(context.Background(), d, o, t.Logf)
	require.NoError(t, err)
	// The shipped form (int8 tables) ranks as the float one did.
	got := evalWithEncoder(t, enc, d)
	t.Logf("tf-idf %v; trained %v", base, got)
	assert.Less(t, base.R1, 0.4, "comments and code share no word: tf-idf should rank near chance")
	assert.Greater(t, got.R1, 0.9, "the encoder should learn talkX -> codeX")

	// Round trip through the file format.
	var b bytes.Buffer
	_, err = enc.WriteTo(&b)
	require.NoError(t, err)
	back, err := linemodel.ReadPairEncoder(b.Bytes())
	require.NoError(t, err)
	assert.Equal(t, enc.Words, back.Words)
	assert.Equal(t, enc.Q, back.Q)
	assert.Equal(t, enc.CScale, back.CScale)
	for _, cut := range []int{0, 3, 10, b.Len() / 2, b.Len() - 1} {
		_, err := linemodel.ReadPairEncoder(b.Bytes()[:cut])
		assert.Error(t, err, "truncated at %d", cut)
	}
}

// evalWithEncoder ranks d's val pairs with the quantized encoder.
func evalWithEncoder(t *testing.T, enc *linemodel.PairEncoder, d *PairData) EncoderEval {
	t.Helper()
	words := func(ids []int32) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = d.Words[id]
		}
		return out
	}
	return evalRank(d.val, func(f *encFile, cands []int32) func(p encPair) []float32 {
		vecs := make([][]float32, len(cands))
		for j, u := range cands {
			vecs[j] = enc.EncodeCode(words(f.units[u]))
		}
		return func(p encPair) []float32 {
			q := enc.EncodeQuery(words(p.q))
			out := make([]float32, len(cands))
			for j, v := range vecs {
				if q != nil && v != nil {
					out[j] = dot(q, v)
				}
			}
			return out
		}
	})
}

func TestLoadPairDataCapsAndSplits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pairs.jsonl.gz")
	writeSyntheticPairs(t, path, 100)
	o := DefaultEncoderOptions
	o.MinCount = 1
	all, err := LoadPairData(context.Background(), []string{path}, o, 0)
	require.NoError(t, err)
	o.MaxPairs = 40
	some, err := LoadPairData(context.Background(), []string{path}, o, 0)
	require.NoError(t, err)
	assert.Len(t, some.val, len(all.val), "the cap is on train pairs")
	assert.GreaterOrEqual(t, some.TrainPairs, 40)
	assert.Less(t, some.TrainPairs, 40+4, "whole files: at most one file's pairs over the cap")
	assert.Less(t, some.TrainPairs, all.TrainPairs)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = LoadPairData(ctx, []string{path}, o, 0)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = LoadPairData(context.Background(), []string{filepath.Join(t.TempDir(), "missing.gz")}, o, 0)
	assert.Error(t, err)
}
