package astrepair

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/prunekit/pruner/internal/syntax"
)

// largestFixture returns, per language, the largest file under
// testdata/clean, plus net/http/server.go from GOROOT when present as a
// large real Go file.
func largestFixtures(b *testing.B) map[syntax.Language]string {
	files := cleanFixtures(b)
	if goroot := runtime.GOROOT(); goroot != "" {
		files = append(files, filepath.Join(goroot, "src", "net", "http", "server.go"))
	}
	best := map[syntax.Language]string{}
	size := map[syntax.Language]int64{}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			continue
		}
		lang := syntax.Detect("", f)
		if st.Size() > size[lang] {
			best[lang], size[lang] = f, st.Size()
		}
	}
	return best
}

// BenchmarkRepair measures the full repair pass — parse, analysis, repair
// and render — on the largest real file per language, in MB/s of input.
func BenchmarkRepair(b *testing.B) {
	ctx := context.Background()
	for _, lang := range syntax.Languages() {
		file, ok := largestFixtures(b)[lang]
		if !ok {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		text := string(data)
		n := len(syntax.SplitLines(text))
		keep := randomMask(rand.New(rand.NewSource(1)), n, 0.1, true)
		b.Run(string(lang)+"/"+filepath.Base(file), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				a, err := Analyze(ctx, text, lang)
				if err != nil {
					b.Fatal(err)
				}
				res, err := a.Repair(ctx, keep)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = a.Render(ctx, res.Keep)
			}
		})
	}
}

// BenchmarkRepairAnalysed measures repair and render alone on an analysed
// text, the cost per extra mask (budget search, rubric labelling).
func BenchmarkRepairAnalysed(b *testing.B) {
	ctx := context.Background()
	for _, lang := range []syntax.Language{syntax.Python, syntax.Go} {
		file := largestFixtures(b)[lang]
		data, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		text := string(data)
		a, err := Analyze(ctx, text, lang)
		if err != nil {
			b.Fatal(err)
		}
		keep := randomMask(rand.New(rand.NewSource(1)), a.Lines(), 0.1, true)
		b.Run(string(lang)+"/"+filepath.Base(file), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				res, err := a.Repair(ctx, keep)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = a.Render(ctx, res.Keep)
			}
		})
	}
}
