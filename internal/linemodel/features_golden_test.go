package linemodel

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/evalset"
	"github.com/prunekit/pruner/internal/syntax"
)

var updateFeatures = flag.Bool("update-features", false, "rewrite testdata/features_golden.json from the current feature code")

const featuresGoldenFile = "testdata/features_golden.json"

// devDir is the shared dev eval set, next to the repository.
var devDir = filepath.Join("..", "..", "..", "shared", "evalsets", "dev")

// featureInput is one text and query whose model input is pinned.
type featureInput struct {
	name, query, text string
	lang              syntax.Language
}

// goldenInputs returns the in-repository inputs (always there) and, when
// the shared dev set is next to the repository and the run is not -short,
// its cases (350 texts, a few seconds).
func goldenInputs(t *testing.T) (local, dev []featureInput) {
	for _, c := range pinCases {
		local = append(local, featureInput{"pin/" + c.name, c.query, c.text, c.lang})
	}
	long := strings.Repeat("x := retry(a, b) + ", 2700)
	local = append(local,
		featureInput{"big go", "retry bad range headers when parsing fails in parseRange12", bigGoSource(1700), syntax.Go},
		featureInput{"big go as text", "retry bad range headers", bigGoSource(300), syntax.Text},
		featureInput{"empty", "q", "", syntax.Go},
		featureInput{"empty query", "", goSrc, syntax.Go},
		featureInput{"one line", "fmt", "fmt.Println(1)", syntax.Go},
		featureInput{"blank lines", "x", "\n\n\n", syntax.Python},
		featureInput{"invalid utf8", "range", "func \xff\xfe(a) {\n\treturn \xc3\n}\n", syntax.Go},
		featureInput{"crlf", "atoi digits", strings.ReplaceAll(goSrc, "\n", "\r\n"), syntax.Go},
		featureInput{"50k line", "retry", "package x\n" + long + "\n}\n", syntax.Go},
		featureInput{"wrong language", "range", goSrc, syntax.Python},
		featureInput{"idents and stems", "Retries parseRange_header when atoiDigits.value fails; retrying parsers", goSrc, syntax.Go},
		featureInput{"many query pieces", manyPieces(), goSrc, syntax.Go},
	)
	if testing.Short() {
		t.Log("-short: pinning the in-repository inputs only")
		return local, nil
	}
	files, err := evalset.Load(devDir)
	if err != nil {
		t.Logf("no dev set (%v): pinning the in-repository inputs only", err)
		return local, nil
	}
	for _, f := range files {
		for _, c := range f.Cases {
			lang, err := syntax.ParseLanguage(c.Lang)
			if err != nil {
				lang = syntax.Detect(c.Text, c.Path)
			}
			dev = append(dev, featureInput{"dev/" + c.ID, c.Query, c.Text, lang})
		}
	}
	return local, dev
}

// manyPieces is a query of more than maxQueryPieces distinct pieces, some
// of them in goSrc (past the cut too).
func manyPieces() string {
	var b strings.Builder
	for i := 0; i < 70; i++ {
		b.WriteString("piece" + string(rune('a'+i/26)) + string(rune('a'+i%26)) + " ")
	}
	b.WriteString("parts header digits value strings")
	return "range parse " + b.String()
}

// inputHash is a SHA-256 of everything NewInput computes but the parse
// tree: the line count, the raw feature matrix (float bits, so equality is
// exact), the definition ids and the hashed query and line pieces.
func inputHash(in Input) string {
	h := sha256.New()
	var b [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	put(uint64(in.N))
	put(uint64(len(in.X)))
	for _, x := range in.X {
		put(uint64(math.Float32bits(x)))
	}
	put(uint64(len(in.Def)))
	for _, d := range in.Def {
		put(uint64(uint32(d)))
	}
	put(uint64(len(in.QIDs)))
	for _, q := range in.QIDs {
		put(uint64(q))
	}
	put(uint64(len(in.TIDs)))
	for _, q := range in.TIDs {
		put(uint64(q))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestFeaturesGolden pins the model input (features, definitions, hashed
// pieces) of fixed texts bit for bit: in-repository inputs always, the
// shared dev set's cases when it is there. The golden file was written by
// the feature code before features() was split into steps; regenerate it
// (go test ./internal/linemodel -run TestFeaturesGolden -update-features)
// only when the features change on purpose, which also means retraining.
func TestFeaturesGolden(t *testing.T) {
	local, dev := goldenInputs(t)
	ctx := context.Background()
	got := map[string]string{}
	for _, c := range append(local, dev...) {
		in := NewInput(ctx, c.query, c.text, c.lang)
		require.Equal(t, len(evalset.Lines(c.text)), in.N, c.name)
		// Features is the same computation without the rest of the input.
		X, n := Features(ctx, c.query, c.text, c.lang)
		require.Equal(t, in.N, n, c.name)
		require.Equal(t, len(in.X), len(X), c.name)
		for i := range X {
			if math.Float32bits(X[i]) != math.Float32bits(in.X[i]) {
				t.Fatalf("%s: Features and NewInput differ at %d", c.name, i)
			}
		}
		got[c.name] = inputHash(in)
	}
	if *updateFeatures {
		if len(dev) == 0 {
			t.Fatal("-update-features needs the dev set at " + devDir)
		}
		b, err := json.MarshalIndent(got, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(featuresGoldenFile, append(b, '\n'), 0o644))
		return
	}
	b, err := os.ReadFile(featuresGoldenFile)
	require.NoError(t, err)
	var want map[string]string
	require.NoError(t, json.Unmarshal(b, &want))
	checked := 0
	for name, h := range want {
		g, ok := got[name]
		if !ok {
			require.True(t, strings.HasPrefix(name, "dev/") && len(dev) == 0, "golden input %s is not computed", name)
			continue
		}
		assert.Equal(t, h, g, "%s: features differ from the golden file", name)
		checked++
	}
	assert.Equal(t, len(got), checked, "inputs missing from the golden file")
	t.Logf("%d inputs (%d from the dev set) bit-identical to %s", checked, len(dev), featuresGoldenFile)
}

// TestInputRowsMatchesInput: an input of NewInputRows computes the same
// rows as NewInput's matrix, bit for bit, the forward pass gives the same
// outputs on it, and its pooled columns (gathered while the forward pass
// computes the rows) are the matrix's.
func TestInputRowsMatchesInput(t *testing.T) {
	local, dev := goldenInputs(t)
	ctx := context.Background()
	m, err := Embedded()
	require.NoError(t, err)
	if len(dev) > 60 {
		dev = dev[:60]
	}
	buf := make([]float32, NumFeatures)
	for _, c := range append(local, dev...) {
		in := NewInput(ctx, c.query, c.text, c.lang)
		lazy := NewInputRows(ctx, c.query, c.text, c.lang)
		require.Equal(t, in.N, lazy.N, c.name)
		require.Nil(t, lazy.X, "no matrix")
		require.Equal(t, in.Def, lazy.Def, c.name)
		require.Equal(t, in.TIDs, lazy.TIDs, c.name)
		for i := 0; i < in.N; i++ {
			got := lazy.Row(i, buf)
			want := in.Row(i, nil)
			for j := range want {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("%s: row %d column %s: %v vs %v", c.name, i, FeatureNames[j], got[j], want[j])
				}
			}
		}
		lazy = NewInputRows(ctx, c.query, c.text, c.lang)
		a, b := m.Forward(in), m.Forward(lazy)
		require.Equal(t, a, b, "%s: forward outputs", c.name)
		for j := range NumFeatures {
			mx, mean := in.Pooled(j)
			lmx, lmean := lazy.Pooled(j)
			require.Equal(t, mx, lmx, "%s %s max", c.name, FeatureNames[j])
			require.InDelta(t, mean, lmean, 1e-12*math.Max(1, math.Abs(mean)), "%s %s mean", c.name, FeatureNames[j])
		}
	}
}
