package skimmer

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"

	"github.com/prunekit/pruner/backbone"
	"github.com/prunekit/pruner/internal/fastcpu"
)

// writeRandomCheckpoint writes a random SWE-Pruner-layout checkpoint (see
// WriteRandom) to a temporary directory.
func writeRandomCheckpoint(tb testing.TB, bb backbone.Config, numRubrics int) string {
	tb.Helper()
	dir := tb.TempDir()
	if err := WriteRandom(dir, bb, numRubrics, 1); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func BenchmarkForward(b *testing.B) {
	configs := []struct {
		name string
		cfg  backbone.Config
	}{
		{"tiny", backbone.Config{HiddenSize: 16, NumLayers: 4, NumHeads: 4, NumKVHeads: 2, HeadDim: 8, IntermediateSize: 48, VocabSize: 151669}},
		{"h256x4", backbone.Config{HiddenSize: 256, NumLayers: 4, NumHeads: 4, NumKVHeads: 2, HeadDim: 64, IntermediateSize: 768, VocabSize: 151669}},
	}
	simple, err := simplego.New("ops_sequential")
	if err != nil {
		b.Fatal(err)
	}
	fast, err := fastcpu.New("")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range configs {
		c.cfg.RopeTheta, c.cfg.RMSNormEps = backbone.DefaultRopeTheta, backbone.DefaultRMSNormEps
		dir := writeRandomCheckpoint(b, c.cfg, 1)
		for _, be := range []struct {
			name    string
			backend backends.Backend
		}{{"simplego", simple}, {"fastgo", fast}} {
			m, err := Load(dir, be.backend)
			if err != nil {
				b.Fatal(err)
			}
			for _, n := range []int{512, 2048} {
				ids := make([]int32, n)
				for i := range ids {
					ids[i] = int32(i % 50000)
				}
				b.Run(fmt.Sprintf("%s/%s/tokens=%d", be.name, c.name, n), func(b *testing.B) {
					if _, err := m.Run(context.Background(), [][]int32{ids}); err != nil { // compile outside the timing
						b.Fatal(err)
					}
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						if _, err := m.Run(context.Background(), [][]int32{ids}); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}
