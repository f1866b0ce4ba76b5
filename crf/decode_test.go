package crf

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readF32Tensors reads the named F32 tensors of a safetensors file (8-byte
// little-endian header length, JSON header, raw little-endian data).
func readF32Tensors(t *testing.T, path string, names ...string) map[string][]float32 {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	n := binary.LittleEndian.Uint64(raw[:8])
	var header map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw[8:8+n], &header))
	data := raw[8+n:]
	out := make(map[string][]float32, len(names))
	for _, name := range names {
		var info struct {
			DType   string `json:"dtype"`
			Offsets [2]int `json:"data_offsets"`
		}
		require.Contains(t, header, name)
		require.NoError(t, json.Unmarshal(header[name], &info))
		require.Equal(t, "F32", info.DType, name)
		b := data[info.Offsets[0]:info.Offsets[1]]
		v := make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		out[name] = v
	}
	return out
}

// TestLaMRGoldenDecoding feeds the golden fused emissions of the tiny LaMR
// checkpoint into the decoder with its final CRF: the fork's as-coded
// Viterbi path must be reproduced exactly, in float32 and float64.
func TestLaMRGoldenDecoding(t *testing.T) {
	const prefix = "model.final_crf."
	w := readF32Tensors(t, "../testdata/tiny-lamr/model.safetensors",
		prefix+"transitions", prefix+"start_transitions", prefix+"end_transitions")
	p, err := NewParams(w[prefix+"transitions"], w[prefix+"start_transitions"], w[prefix+"end_transitions"], 2)
	require.NoError(t, err)

	raw, err := os.ReadFile("../testdata/golden_lamr.json")
	require.NoError(t, err)
	type chunk struct {
		Cover        string      `json:"per_position_arrays_cover"`
		DocStart     int         `json:"doc_start"`
		DocEnd       int         `json:"doc_end"`
		Fused        [][]float32 `json:"fused_emissions"`
		Path         []int       `json:"viterbi_path"`
		Score        float64     `json:"viterbi_score"`
		Margin       float64     `json:"viterbi_min_decision_margin"`
		TrainingPath []int       `json:"viterbi_path_training_convention"`
		F64          struct {
			Fused [][]float64 `json:"fused_emissions"`
			Path  []int       `json:"viterbi_path"`
			Score float64     `json:"viterbi_score"`
		} `json:"f64"`
	}
	var g struct {
		Cases []struct {
			Name   string  `json:"name"`
			Chunks []chunk `json:"chunks"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &g))
	require.NotEmpty(t, g.Cases)
	chunks := 0
	for _, c := range g.Cases {
		for ci, ch := range c.Chunks {
			chunks++
			fused, fused64 := ch.Fused, ch.F64.Fused
			if ch.Cover == "all positions" {
				fused, fused64 = fused[ch.DocStart:ch.DocEnd], fused64[ch.DocStart:ch.DocEnd]
			}
			require.Len(t, fused, ch.DocEnd-ch.DocStart)
			em32, err := EmissionsFromRows(fused)
			require.NoError(t, err)
			path, score, err := Viterbi(p, em32, nil)
			require.NoError(t, err)
			assert.Equal(t, ch.Path, path, "%s chunk %d path", c.Name, ci)
			assert.InDelta(t, ch.Score, score, 1e-3, "%s chunk %d score", c.Name, ci)
			margin, err := DecisionMargin(p, em32, nil, AsCoded)
			require.NoError(t, err)
			assert.InDelta(t, ch.Margin, margin, 1e-4, "%s chunk %d margin", c.Name, ci)
			tpath, _, err := ViterbiMAP(p, em32, nil)
			require.NoError(t, err)
			assert.Equal(t, ch.TrainingPath, tpath, "%s chunk %d training path", c.Name, ci)

			em64, err := EmissionsFromRows(fused64)
			require.NoError(t, err)
			path64, score64, err := Viterbi(p, em64, nil)
			require.NoError(t, err)
			assert.Equal(t, ch.F64.Path, path64, "%s chunk %d f64 path", c.Name, ci)
			assert.InDelta(t, ch.F64.Score, score64, 1e-6, "%s chunk %d f64 score", c.Name, ci)
		}
	}
	assert.GreaterOrEqual(t, chunks, 3)
}

// Benchmarks report ns/op for a whole sequence and ns/pos per position.
// Benchmarks report ns/op for a whole sequence; divide by the size for
// ns/position (also reported as the ns/pos metric).
func BenchmarkViterbi(b *testing.B) {
	for _, numTags := range []int{2, 3} {
		for _, n := range []int{8 << 10, 100_000} {
			r := rand.New(rand.NewPCG(1, uint64(n)))
			p := randomParams(r, numTags, 1)
			em := randomEmissions(r, n, numTags, 3)
			b.Run(fmt.Sprintf("T=%d/n=%d/fresh", numTags, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_, _, _ = Viterbi(p, em, nil)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/pos")
			})
			b.Run(fmt.Sprintf("T=%d/n=%d/workspace", numTags, n), func(b *testing.B) {
				var w Workspace
				dst := make([]int, n)
				b.ReportAllocs()
				for b.Loop() {
					_, _, _ = DecodeInto(&w, dst, p, em, nil, AsCoded)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/pos")
			})
		}
	}
}
