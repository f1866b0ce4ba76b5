package skimmer

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/golden"
	"github.com/prunekit/pruner/internal/safetensors"
)

// rewrite copies tiny-swepruner into a temp folder, letting edit change the
// tensor list and config before it is written.
func rewrite(t *testing.T, edit func(ts []safetensors.Tensor) []safetensors.Tensor, config func(string) string) string {
	t.Helper()
	src := filepath.Join(golden.Dir(), "tiny-swepruner")
	f, err := safetensors.Open(filepath.Join(src, "model.safetensors"))
	require.NoError(t, err)
	defer f.Close()
	var ts []safetensors.Tensor
	for _, name := range f.Names() {
		tensor, err := f.Tensor(name)
		require.NoError(t, err)
		tensor.Data = append([]byte(nil), tensor.Data...)
		ts = append(ts, tensor)
	}
	dir := t.TempDir()
	if edit != nil {
		ts = edit(ts)
	}
	require.NoError(t, safetensors.WriteFile(filepath.Join(dir, "model.safetensors"), ts, map[string]string{"format": "pt"}))
	cfg, err := os.ReadFile(filepath.Join(src, "config.json"))
	require.NoError(t, err)
	s := string(cfg)
	if config != nil {
		s = config(s)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(s), 0o644))
	return dir
}

func without(names ...string) func([]safetensors.Tensor) []safetensors.Tensor {
	return func(ts []safetensors.Tensor) []safetensors.Tensor {
		var out []safetensors.Tensor
		for _, t := range ts {
			drop := false
			for _, n := range names {
				drop = drop || t.Name == n
			}
			if !drop {
				out = append(out, t)
			}
		}
		return out
	}
}

func TestLoadDamagedCheckpoints(t *testing.T) {
	backend, err := simplego.New("ops_sequential") // as the library runs it: v0.26's parallel scheduler races
	require.NoError(t, err)
	reshape := func(name string, shape []int, values int) func([]safetensors.Tensor) []safetensors.Tensor {
		return func(ts []safetensors.Tensor) []safetensors.Tensor {
			for i := range ts {
				if ts[i].Name == name {
					ts[i] = safetensors.NewFloat32Tensor(name, shape, make([]float32, values))
				}
			}
			return ts
		}
	}
	tests := []struct {
		name    string
		dir     func(t *testing.T) string
		wantErr []string
	}{
		{"missing folder", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, []string{"config.json"}},
		{"missing tensor", func(t *testing.T) string {
			return rewrite(t, without("model.backbone.layers.2.mlp.up_proj.weight", "model.fusion_norms.0.bias"), nil)
		}, []string{`"layers.2.mlp.up_proj.weight" missing`}},
		{"missing head tensor", func(t *testing.T) string {
			return rewrite(t, without("model.fusion_norms.0.bias"), nil)
		}, []string{`"model.fusion_norms.0.bias" missing`}},
		{"wrong shape", func(t *testing.T) string {
			return rewrite(t, reshape("model.compression_head.feature_extractor.4.weight", []int{3, 16}, 48), nil)
		}, []string{`"model.compression_head.feature_extractor.4.weight" has shape [3 16], want [2 16]`}},
		{"wrong backbone shape", func(t *testing.T) string {
			return rewrite(t, reshape("model.backbone.layers.1.self_attn.k_norm.weight", []int{4}, 4), nil)
		}, []string{`layers.1.self_attn.k_norm.weight" has shape [4], want [8]`}},
		{"config contradicts shapes", func(t *testing.T) string {
			return rewrite(t, nil, func(s string) string { return strings.Replace(s, `"hidden_size": 16`, `"hidden_size": 32`, 1) })
		}, []string{"hidden_size=32 contradicts"}},
		{"wrong model type", func(t *testing.T) string {
			return rewrite(t, nil, func(s string) string { return strings.Replace(s, `"swepruner"`, `"bert"`, 1) })
		}, []string{`model_type "bert"`}},
		{"config not json", func(t *testing.T) string {
			return rewrite(t, nil, func(string) string { return "{not json" })
		}, []string{"config.json"}},
		{"truncated weights", func(t *testing.T) string {
			dir := rewrite(t, nil, nil)
			p := filepath.Join(dir, "model.safetensors")
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, data[:len(data)/2], 0o644))
			return dir
		}, []string{"model.safetensors"}},
		{"unknown dtype", func(t *testing.T) string {
			dir := rewrite(t, nil, nil)
			p := filepath.Join(dir, "model.safetensors")
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			s := strings.Replace(string(data), `"F32"`, `"Q4"`, 1)
			require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
			return dir
		}, []string{"Q4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Load(tc.dir(t), backend)
			require.Error(t, err)
			assert.Nil(t, m)
			assert.ErrorIs(t, err, ErrCheckpoint)
			for _, w := range tc.wantErr {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// The LaMR fork renames the K=1 CRF to crf_layers.0; both names must load.
func TestLoadLegacyCRFName(t *testing.T) {
	dir := rewrite(t, func(ts []safetensors.Tensor) []safetensors.Tensor {
		for i := range ts {
			ts[i].Name = strings.Replace(ts[i].Name, "compression_head.crf.", "compression_head.crf_layers.0.", 1)
		}
		return ts
	}, nil)
	backend, err := simplego.New("ops_sequential") // as the library runs it: v0.26's parallel scheduler races
	require.NoError(t, err)
	m, err := Load(dir, backend)
	require.NoError(t, err)
	ref := loadTiny(t, "tiny-swepruner")
	assert.Equal(t, ref.FinalCRF, m.FinalCRF)
	assert.Equal(t, "compression_head.crf_layers.0", m.Config().LegacyCRFPrefix)
}

// Padding to a bucket and batching with longer rows must not change a row's
// outputs: the backbone is causal and the fusion masks padded keys.
func TestPaddingInvariance(t *testing.T) {
	m := loadTiny(t, "tiny-lamr")
	g, err := golden.Load("golden_lamr.json")
	require.NoError(t, err)
	long := g.Cases[0].Chunks[0].InputIDs // 755 tokens
	short := g.Cases[1].Chunks[0].InputIDs
	tiny := short[:20]
	alone, err := m.Run(context.Background(), [][]int32{tiny})
	require.NoError(t, err)
	batched, err := m.Run(context.Background(), [][]int32{long, tiny, short})
	require.NoError(t, err)
	require.Equal(t, BucketLen(len(long)), BucketLen(755))
	a, b := alone[0], batched[1]
	require.Equal(t, a.N, b.N)
	for i := range a.Emissions {
		require.InDelta(t, a.Emissions[i], b.Emissions[i], 1e-5, "emission %d", i)
	}
	for i := range a.Gates {
		require.InDelta(t, a.Gates[i], b.Gates[i], 1e-6, "gate %d", i)
	}
	require.InDelta(t, a.LYes, b.LYes, 1e-5)
	require.InDelta(t, a.LNo, b.LNo, 1e-5)
}

func TestRunRejectsBadRows(t *testing.T) {
	m := loadTiny(t, "tiny-swepruner")
	_, err := m.Run(context.Background(), [][]int32{{}})
	require.ErrorContains(t, err, "empty")
	_, err = m.Run(context.Background(), [][]int32{{1, 2, 151669}})
	require.ErrorContains(t, err, "outside vocabulary")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = m.Run(ctx, [][]int32{{1, 2}})
	require.ErrorIs(t, err, context.Canceled)
}

func TestBuckets(t *testing.T) {
	for _, tc := range []struct{ n, want int }{{1, 16}, {16, 16}, {17, 32}, {33, 48}, {49, 64}, {755, 768}, {8192, 8192}, {8193, 12288}} {
		assert.Equal(t, tc.want, BucketLen(tc.n), "BucketLen(%d)", tc.n)
	}
	for _, tc := range []struct{ n, want int }{{1, 1}, {2, 2}, {3, 4}, {9, 16}} {
		assert.Equal(t, tc.want, BucketBatch(tc.n))
	}
}

// The damaged-checkpoint suite (issue 15): each case copies a tiny
// checkpoint into a temp folder and damages it. The contract is binary:
// LoadContext either refuses the copy with ErrCheckpoint (and a message
// naming what is wrong) or loads it and reproduces the untouched
// checkpoint's outputs bit for bit. Nothing in between — no NaN scores, no
// errors deferred to the first Run, no silently different model, no hang.

const (
	kindSWE  = "tiny-swepruner"
	kindLaMR = "tiny-lamr"
)

// DamageCase is one damaged checkpoint. Exported (from a test file) so that
// the external test in damage_pruner_test.go runs the same table through
// pruner.Load.
type DamageCase struct {
	Name string
	// Kinds are the checkpoints it applies to (nil: both).
	Kinds []string
	// Damage edits the copy in dir.
	Damage func(t *testing.T, dir string)
	// Want lists substrings of the refusal; nil means the damaged copy must
	// load and reproduce the untouched outputs.
	Want []string
}

// Applies reports whether c applies to checkpoint kind.
func (c DamageCase) Applies(kind string) bool {
	return len(c.Kinds) == 0 || c.Kinds[0] == kind || (len(c.Kinds) > 1 && c.Kinds[1] == kind)
}

// DamageKinds are the checkpoints the suite damages.
var DamageKinds = []string{kindSWE, kindLaMR}

// CopyCheckpoint copies the named tiny checkpoint byte for byte into a new
// temp folder.
func CopyCheckpoint(t *testing.T, kind string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"config.json", "model.safetensors"} {
		data, err := os.ReadFile(filepath.Join(golden.Dir(), kind, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o644))
	}
	return dir
}

// --- raw safetensors surgery -------------------------------------------------

type stEntry struct {
	DType       string  `json:"dtype"`
	Shape       []int64 `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

// stImage is a parsed safetensors file: the header (entries by name plus
// __metadata__) and the data section.
type stImage struct {
	entries  map[string]*stEntry
	metadata map[string]string
	data     []byte
}

func stPath(dir string) string { return filepath.Join(dir, "model.safetensors") }

func readImage(t *testing.T, dir string) *stImage {
	t.Helper()
	raw, err := os.ReadFile(stPath(dir))
	require.NoError(t, err)
	n := binary.LittleEndian.Uint64(raw)
	var hdr map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw[8:8+n], &hdr))
	img := &stImage{entries: map[string]*stEntry{}, data: raw[8+n:]}
	for k, v := range hdr {
		if k == "__metadata__" {
			require.NoError(t, json.Unmarshal(v, &img.metadata))
			continue
		}
		var e stEntry
		require.NoError(t, json.Unmarshal(v, &e))
		img.entries[k] = &e
	}
	return img
}

// bytes serialises the image with pad extra spaces of header padding.
func (img *stImage) bytes(t *testing.T, pad int) []byte {
	t.Helper()
	hdr := map[string]any{}
	for k, e := range img.entries {
		hdr[k] = e
	}
	if img.metadata != nil {
		hdr["__metadata__"] = img.metadata
	}
	h, err := json.Marshal(hdr)
	require.NoError(t, err)
	for (len(h)+pad)%8 != 0 {
		pad++
	}
	h = append(h, bytes.Repeat([]byte(" "), pad)...)
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(out, h...)
	return append(out, img.data...)
}

func (img *stImage) write(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.WriteFile(stPath(dir), img.bytes(t, 0), 0o644))
}

func editImage(edit func(t *testing.T, img *stImage)) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		img := readImage(t, dir)
		edit(t, img)
		img.write(t, dir)
	}
}

func editEntry(name string, edit func(e *stEntry, img *stImage)) func(t *testing.T, dir string) {
	return editImage(func(t *testing.T, img *stImage) {
		e, ok := img.entries[name]
		require.True(t, ok, name)
		edit(e, img)
	})
}

// setValue overwrites element i of a float tensor in place.
func setValue(name string, i int, v float32) func(t *testing.T, dir string) {
	return editImage(func(t *testing.T, img *stImage) {
		e, ok := img.entries[name]
		require.True(t, ok, name)
		n := 1
		for _, d := range e.Shape {
			n *= int(d)
		}
		if i < 0 {
			i += n
		}
		b := img.data[e.DataOffsets[0]:e.DataOffsets[1]]
		switch e.DType {
		case "BF16":
			binary.LittleEndian.PutUint16(b[2*i:], safetensors.F32ToBF16(v))
		case "F32":
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		default:
			t.Fatalf("setValue: dtype %s", e.DType)
		}
	})
}

// rawEdit rewrites the file's bytes.
func rawEdit(edit func(t *testing.T, b []byte) []byte) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		b, err := os.ReadFile(stPath(dir))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(stPath(dir), edit(t, b), 0o644))
	}
}

func headerLen(b []byte) int { return int(binary.LittleEndian.Uint64(b)) }

// truncateAt keeps the first n bytes; a negative n counts from the end,
// and the pseudo-offsets hdrMid, hdrEnd resolve against the header.
func truncateAt(where string) func(t *testing.T, dir string) {
	return rawEdit(func(t *testing.T, b []byte) []byte {
		h := headerLen(b)
		n := map[string]int{
			"0": 0, "1": 1, "7": 7, "8": 8, "9": 9,
			"header middle": 8 + h/2, "header end": 8 + h, "header end+1": 8 + h + 1,
			"data middle": 8 + h + (len(b)-8-h)/2, "last byte": len(b) - 1,
		}[where]
		return b[:n]
	})
}

// rewriteTensors reloads the copy's tensors, lets edit change them, and
// writes the file back with safetensors.WriteFile (a well-formed file).
func rewriteTensors(edit func(t *testing.T, ts []safetensors.Tensor) []safetensors.Tensor) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		f, err := safetensors.Open(stPath(dir))
		require.NoError(t, err)
		var ts []safetensors.Tensor
		for _, name := range f.Names() {
			tensor, err := f.Tensor(name)
			require.NoError(t, err)
			tensor.Data = append([]byte(nil), tensor.Data...)
			ts = append(ts, tensor)
		}
		md := f.Metadata()
		require.NoError(t, f.Close())
		ts = edit(t, ts)
		require.NoError(t, safetensors.WriteFile(stPath(dir), ts, md))
	}
}

// toF32 upcasts the named BF16 tensors (all BF16 tensors when names is
// empty) to F32 — exact, as the LaMR fork's F32 exports are.
func toF32(names ...string) func(t *testing.T, dir string) {
	return rewriteTensors(func(t *testing.T, ts []safetensors.Tensor) []safetensors.Tensor {
		for i, tensor := range ts {
			if tensor.DType != safetensors.BF16 || (len(names) > 0 && !contains(names, tensor.Name)) {
				continue
			}
			vals := make([]float32, len(tensor.Data)/2)
			for j := range vals {
				vals[j] = safetensors.BF16ToF32(binary.LittleEndian.Uint16(tensor.Data[2*j:]))
			}
			ts[i] = safetensors.NewFloat32Tensor(tensor.Name, tensor.Shape, vals)
		}
		return ts
	})
}

func contains(names []string, s string) bool {
	for _, n := range names {
		if n == s {
			return true
		}
	}
	return false
}

// --- config surgery ------------------------------------------------------------

func editConfig(edit func(m map[string]any)) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		p := filepath.Join(dir, "config.json")
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(data, &m))
		edit(m)
		out, err := json.MarshalIndent(m, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, out, 0o644))
	}
}

func setConfig(key string, v any) func(t *testing.T, dir string) {
	return editConfig(func(m map[string]any) {
		if v == nil {
			delete(m, key)
		} else {
			m[key] = v
		}
	})
}

func setBackbone(key string, v any) func(t *testing.T, dir string) {
	return editConfig(func(m map[string]any) {
		bb := m["backbone_config"].(map[string]any)
		if v == nil {
			delete(bb, key)
		} else {
			bb[key] = v
		}
	})
}

func both(fs ...func(t *testing.T, dir string)) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		for _, f := range fs {
			f(t, dir)
		}
	}
}

// --- the table -------------------------------------------------------------------

const (
	embed   = "model.backbone.embed_tokens.weight"
	kProj0  = "model.backbone.layers.0.self_attn.k_proj.weight"
	vProj0  = "model.backbone.layers.0.self_attn.v_proj.weight"
	down3   = "model.backbone.layers.3.mlp.down_proj.weight"
	normW   = "model.backbone.norm.weight"
	inProj  = "model.fusion_layers.0.in_proj_weight"
	fe1     = "model.compression_head.feature_extractor.1.weight"
	sweCRF  = "model.compression_head.crf.transitions"
	lamrCRF = "model.final_crf.start_transitions"
	gate4   = "model.gating_network.4.bias"
)

// DamageCases returns the suite's table.
func DamageCases() []DamageCase {
	swe, lamr := []string{kindSWE}, []string{kindLaMR}
	cases := []DamageCase{}
	add := func(c DamageCase) { cases = append(cases, c) }

	// Truncations: any cut lands in the header or the data and is refused.
	for _, where := range []string{"0", "1", "7", "8", "9", "header middle", "header end", "header end+1", "data middle", "last byte"} {
		add(DamageCase{Name: "truncated at " + where, Damage: truncateAt(where), Want: []string{"model.safetensors"}})
	}

	// Header corruption.
	add(DamageCase{Name: "header bad JSON", Damage: rawEdit(func(t *testing.T, b []byte) []byte {
		b[8+1] = '#'
		return b
	}), Want: []string{"not JSON"}})
	add(DamageCase{Name: "header not UTF-8", Damage: rawEdit(func(t *testing.T, b []byte) []byte {
		i := bytes.Index(b, []byte(`"model.`))
		b[i+1] = 0xff
		return b
	}), Want: []string{"UTF-8"}})
	add(DamageCase{Name: "header length past EOF", Damage: rawEdit(func(t *testing.T, b []byte) []byte {
		binary.LittleEndian.PutUint64(b, uint64(len(b)))
		return b
	}), Want: []string{"header length"}})
	add(DamageCase{Name: "header length 2^62", Damage: rawEdit(func(t *testing.T, b []byte) []byte {
		binary.LittleEndian.PutUint64(b, 1<<62)
		return b
	}), Want: []string{"header length"}})
	add(DamageCase{Name: "header length one short", Damage: rawEdit(func(t *testing.T, b []byte) []byte {
		// Cut the padding and the closing brace off the header.
		h := headerLen(b)
		end := bytes.LastIndexByte(b[8:8+h], '}')
		binary.LittleEndian.PutUint64(b, uint64(end))
		return b
	}), Want: []string{"header"}})
	add(DamageCase{Name: "header length 1", Damage: rawEdit(func(t *testing.T, b []byte) []byte {
		binary.LittleEndian.PutUint64(b, 1)
		return b
	}), Want: []string{"header length 1"}})
	add(DamageCase{Name: "offsets past the data", Damage: editEntry(embed, func(e *stEntry, img *stImage) {
		size := e.DataOffsets[1] - e.DataOffsets[0]
		e.DataOffsets = []int64{int64(len(img.data)) - size + 2, int64(len(img.data)) + 2}
	}), Want: []string{embed, "extend past"}})
	add(DamageCase{Name: "offsets negative", Damage: editEntry(normW, func(e *stEntry, _ *stImage) {
		e.DataOffsets = []int64{-32, 0}
	}), Want: []string{normW, "not an ordered byte range"}})
	add(DamageCase{Name: "offsets reversed", Damage: editEntry(normW, func(e *stEntry, _ *stImage) {
		e.DataOffsets[0], e.DataOffsets[1] = e.DataOffsets[1], e.DataOffsets[0]
	}), Want: []string{normW, "not an ordered byte range"}})
	add(DamageCase{Name: "offsets shifted by one", Damage: editEntry(normW, func(e *stEntry, _ *stImage) {
		e.DataOffsets[0]++
	}), Want: []string{normW, "needs 32"}})
	add(DamageCase{Name: "offsets overlapping", Damage: editImage(func(t *testing.T, img *stImage) {
		// v_proj reads k_proj's bytes (same dtype and size).
		img.entries[vProj0].DataOffsets = append([]int64(nil), img.entries[kProj0].DataOffsets...)
	}), Want: []string{"overlaps"}})
	add(DamageCase{Name: "offsets overlapping by one element", Damage: editImage(func(t *testing.T, img *stImage) {
		k, v := img.entries[kProj0], img.entries[vProj0]
		// Move v to start one element before k ends (k and v are
		// neighbours only by size, so place v over k's tail).
		v.DataOffsets = []int64{k.DataOffsets[1] - 2, k.DataOffsets[1] - 2 + (v.DataOffsets[1] - v.DataOffsets[0])}
	}), Want: []string{"overlaps"}})
	add(DamageCase{Name: "missing data_offsets", Damage: editEntry(normW, func(e *stEntry, _ *stImage) {
		e.DataOffsets = nil
	}), Want: []string{normW, "data_offsets"}})
	add(DamageCase{Name: "shape changed, same size", Damage: editEntry(kProj0, func(e *stEntry, _ *stImage) {
		e.Shape = []int64{8, 32}
	}), Want: []string{"contradicts the tensor shapes"}})
	add(DamageCase{Name: "shape negative", Damage: editEntry(normW, func(e *stEntry, _ *stImage) {
		e.Shape = []int64{-16}
	}), Want: []string{normW, "negative dimension"}})
	add(DamageCase{Name: "duplicate tensor key", Damage: rawEdit(func(t *testing.T, b []byte) []byte {
		// Rename v_proj's key to k_proj's (same length, so nothing moves).
		h := headerLen(b)
		hdr := bytes.Replace(b[8:8+h], []byte(`"`+vProj0+`"`), []byte(`"`+kProj0+`"`), 1)
		require.Len(t, hdr, h)
		copy(b[8:], hdr)
		return b
	}), Want: []string{"duplicate header key", kProj0}})

	// Header edits that keep the data meaning: must load and reproduce.
	add(DamageCase{Name: "header rewritten with wide padding", Damage: func(t *testing.T, dir string) {
		img := readImage(t, dir)
		require.NoError(t, os.WriteFile(stPath(dir), img.bytes(t, 4000), 0o644))
	}})
	add(DamageCase{Name: "no __metadata__", Damage: editImage(func(t *testing.T, img *stImage) { img.metadata = nil })})
	add(DamageCase{Name: "gap before the data", Damage: editImage(func(t *testing.T, img *stImage) {
		for _, e := range img.entries {
			e.DataOffsets[0] += 64
			e.DataOffsets[1] += 64
		}
		img.data = append(bytes.Repeat([]byte{0xff}, 64), img.data...) // NaN-looking filler nobody reads
	})})
	add(DamageCase{Name: "unknown extra tensor", Damage: rewriteTensors(func(t *testing.T, ts []safetensors.Tensor) []safetensors.Tensor {
		return append(ts, safetensors.NewFloat32Tensor("model.embedding_layer.extra", []int{2}, []float32{float32(math.NaN()), 1}))
	})})

	// Non-finite weights, BF16 and F32, first, middle and last elements.
	for _, c := range []struct {
		name, tensor string
		i            int
		v            float32
		kinds        []string
	}{
		{"NaN embedding", embed, 12, float32(math.NaN()), nil},
		{"+Inf embedding, last element", embed, -1, float32(math.Inf(1)), nil},
		{"-Inf final norm", normW, 0, float32(math.Inf(-1)), nil},
		{"NaN down_proj tail", down3, -3, float32(math.NaN()), nil},
		{"NaN fusion in_proj (F32)", inProj, 1000, float32(math.NaN()), nil},
		{"Inf head (F32)", fe1, 5, float32(math.Inf(1)), nil},
		{"NaN CRF transitions", sweCRF, 3, float32(math.NaN()), swe},
		{"Inf final CRF", lamrCRF, 1, float32(math.Inf(-1)), lamr},
		{"NaN gating bias", gate4, 0, float32(math.NaN()), lamr},
	} {
		add(DamageCase{Name: c.name, Kinds: c.kinds, Damage: setValue(c.tensor, c.i, c.v),
			Want: []string{c.tensor, "NaN or infinite"}})
	}
	add(DamageCase{Name: "NaN in an F32 backbone", Damage: both(toF32(), setValue(embed, 7, float32(math.NaN()))),
		Want: []string{embed, "NaN at index 7"}})
	// Huge but finite values are weights like any other.
	add(DamageCase{Name: "F32 backbone (exact upcast)", Damage: toF32()})

	// Dtypes.
	add(DamageCase{Name: "BF16 relabelled F16", Damage: editEntry(kProj0, func(e *stEntry, _ *stImage) { e.DType = "F16" }),
		Want: []string{kProj0, "dtype F16", `torch_dtype is "bfloat16"`}})
	add(DamageCase{Name: "BF16 relabelled I16", Damage: editEntry(kProj0, func(e *stEntry, _ *stImage) { e.DType = "I16" }),
		Want: []string{kProj0, "dtype I16"}})
	add(DamageCase{Name: "F32 relabelled I32", Damage: editEntry(inProj, func(e *stEntry, _ *stImage) { e.DType = "I32" }),
		Want: []string{inProj, "dtype I32"}})
	add(DamageCase{Name: "F32 relabelled U8", Damage: editEntry(inProj, func(e *stEntry, _ *stImage) { e.DType = "U8" }),
		Want: []string{inProj, "hold"}})
	add(DamageCase{Name: "unknown dtype", Damage: editEntry(inProj, func(e *stEntry, _ *stImage) { e.DType = "Q4" }),
		Want: []string{"Q4"}})
	add(DamageCase{Name: "head tensor stored as F64", Damage: rewriteTensors(func(t *testing.T, ts []safetensors.Tensor) []safetensors.Tensor {
		for i, tensor := range ts {
			if tensor.Name == fe1 {
				data := make([]byte, 2*len(tensor.Data))
				for j := 0; j < len(tensor.Data)/4; j++ {
					v := math.Float32frombits(binary.LittleEndian.Uint32(tensor.Data[4*j:]))
					binary.LittleEndian.PutUint64(data[8*j:], math.Float64bits(float64(v)))
				}
				ts[i] = safetensors.Tensor{Name: fe1, DType: safetensors.F64, Shape: tensor.Shape, Data: data}
			}
		}
		return ts
	}), Want: []string{fe1, "F64"}})
	add(DamageCase{Name: "torch_dtype float16 over BF16 weights", Damage: both(setConfig("torch_dtype", "float16"), setBackbone("torch_dtype", nil)),
		Want: []string{"dtype BF16", `torch_dtype is "float16"`}})
	add(DamageCase{Name: "backbone torch_dtype float32 over BF16 weights", Damage: setBackbone("torch_dtype", "float32"),
		Want: []string{"dtype BF16", `backbone_config.torch_dtype is "float32"`}})
	add(DamageCase{Name: "torch_dtype int8", Damage: setConfig("torch_dtype", "int8"),
		Want: []string{`torch_dtype "int8" is not a supported float dtype`}})
	add(DamageCase{Name: "torch_dtype absent", Damage: both(setConfig("torch_dtype", nil), setBackbone("torch_dtype", nil))})

	// Inconsistent config: each field.
	for _, c := range []struct {
		key  string
		v    any
		want string
	}{
		{"early_layer_ratio", 2.0, "early_layer_ratio must be in (0, 1], got 2"},
		{"early_layer_ratio", 0.0, "early_layer_ratio must be in (0, 1], got 0"},
		{"early_layer_ratio", -0.25, "early_layer_ratio must be in (0, 1], got -0.25"},
		{"early_layer_ratio", 0.75, "early_layer_ratio 0.75 is above middle_layer_ratio 0.5"},
		{"middle_layer_ratio", 1.5, "middle_layer_ratio must be in (0, 1], got 1.5"},
		{"num_heads", 0, "num_heads must be positive, got 0"},
		{"num_heads", -8, "num_heads must be positive, got -8"},
		{"num_heads", 5, "num_heads 5 does not divide the fused width 48"},
		{"num_heads", 96, "num_heads 96 does not divide the fused width 48"},
		{"num_heads", 2.5, "num_heads"},
		{"num_fusion_layers", 0, "num_fusion_layers must be positive, got 0"},
		{"num_fusion_layers", 2, `"model.fusion_layers.1.in_proj_weight" missing`},
		{"bottleneck", 32, "config bottleneck 32 contradicts tensor shapes (16)"},
		{"num_objectives", -1, "num_objectives must be positive, got -1"},
		{"model_type", "qwen3", `model_type "qwen3"`},
		{"compression_head_type", "linear", `compression_head_type "linear"`},
		{"use_multi_layer_fusion", false, "use_multi_layer_fusion=false"},
	} {
		add(DamageCase{Name: fmt.Sprintf("config %s=%v", c.key, c.v), Damage: setConfig(c.key, c.v), Want: []string{c.want}})
	}
	add(DamageCase{Name: "config num_objectives=2 on one rubric", Kinds: swe, Damage: setConfig("num_objectives", 2),
		Want: []string{"feature_extractor.4.weight\" has shape [2 16], want [4 16]"}})
	add(DamageCase{Name: "config num_objectives=1 on two rubrics", Kinds: lamr, Damage: setConfig("num_objectives", 1),
		Want: []string{"feature_extractor.4.weight\" has shape [4 16], want [2 16]"}})
	// Counts that would size the expected tensors far beyond the file are
	// refused before anything is built for them (1e8 fusion layers took
	// minutes and gigabytes).
	add(DamageCase{Name: "config num_fusion_layers=1e8", Damage: setConfig("num_fusion_layers", 100_000_000),
		Want: []string{"num_fusion_layers 100000000 needs 600000000 tensors"}})
	add(DamageCase{Name: "config num_objectives=1e8", Damage: setConfig("num_objectives", 100_000_000),
		Want: []string{"num_objectives 100000000 is above 64"}})
	add(DamageCase{Name: "config gating_type=tanh", Kinds: lamr, Damage: setConfig("gating_type", "tanh"),
		Want: []string{`gating_type "tanh"`}})
	for _, c := range []struct {
		key  string
		v    any
		want string
	}{
		{"num_attention_heads", 3, "num_attention_heads=3 contradicts the tensor shapes (4)"},
		{"num_attention_heads", 8, "num_attention_heads=8 contradicts the tensor shapes (4)"},
		{"num_key_value_heads", 4, "num_key_value_heads=4 contradicts the tensor shapes (2)"},
		{"num_key_value_heads", 3, "num_key_value_heads=3 contradicts the tensor shapes (2)"},
		{"head_dim", 4, "head_dim=4 contradicts the tensor shapes (8)"},
		{"hidden_size", 32, "hidden_size=32 contradicts the tensor shapes (16)"},
		{"intermediate_size", 64, "intermediate_size=64 contradicts"},
		{"num_hidden_layers", 3, "num_hidden_layers=3 contradicts the tensor shapes (4)"},
		{"num_hidden_layers", 5, "num_hidden_layers=5 contradicts the tensor shapes (4)"},
		{"vocab_size", 1000, "vocab_size=1000 contradicts"},
		{"rms_norm_eps", -1, "rms_norm_eps must be in (0, 1), got -1"},
		{"rms_norm_eps", 1e300, "rms_norm_eps must be in (0, 1), got 1e+300"},
		{"rope_theta", 0.5, "rope_theta must be in (1, 3.4028234663852886e+38], got 0.5"},
		{"rope_theta", 1e300, "got 1e+300"},
		{"tie_word_embeddings", false, "tie_word_embeddings=false"},
		{"hidden_act", "gelu", `backbone_config.hidden_act "gelu"`},
		{"attention_bias", true, "backbone_config.attention_bias=true"},
		{"use_sliding_window", true, "backbone_config.use_sliding_window=true"},
		{"rope_scaling", map[string]any{"rope_type": "yarn", "factor": 4}, "backbone_config.rope_scaling"},
		{"layer_types", []string{"full_attention", "sliding_attention", "full_attention", "full_attention"}, `layer_types[1] "sliding_attention"`},
		{"model_type", "llama", `backbone_config.model_type "llama"`},
	} {
		add(DamageCase{Name: fmt.Sprintf("backbone_config %s=%v", c.key, c.v), Damage: setBackbone(c.key, c.v), Want: []string{c.want}})
	}
	// Config edits that keep the model: must load and reproduce.
	add(DamageCase{Name: "config without backbone_config", Damage: setConfig("backbone_config", nil)})
	add(DamageCase{Name: "config with defaults spelled out or left out", Damage: both(
		setConfig("num_heads", nil), setConfig("early_layer_ratio", nil), setConfig("num_fusion_layers", nil),
		setConfig("unknown_field", map[string]any{"x": 1}), setBackbone("rope_theta", 1e6), setBackbone("rope_scaling", nil))})
	// Tensor sets the config does not describe.
	add(DamageCase{Name: "decoder layer numbering gap", Damage: both(setBackbone("num_hidden_layers", nil),
		rewriteTensors(func(t *testing.T, ts []safetensors.Tensor) []safetensors.Tensor {
			var out []safetensors.Tensor
			for _, tensor := range ts {
				if tensor.Name != "model.backbone.layers.3.input_layernorm.weight" {
					out = append(out, tensor)
				}
			}
			return out
		})), Want: []string{`"model.backbone.layers.3.`, "belongs to layer 3 but the checkpoint has 3 decoder layers"}})
	add(DamageCase{Name: "fusion layer beyond num_fusion_layers", Damage: rewriteTensors(func(t *testing.T, ts []safetensors.Tensor) []safetensors.Tensor {
		return append(ts, safetensors.NewFloat32Tensor("model.fusion_norms.1.weight", []int{48}, make([]float32, 48)))
	}), Want: []string{`"model.fusion_norms.1.weight" belongs to layer 1 but the checkpoint has 1 num_fusion_layers`}})
	add(DamageCase{Name: "config.json not an object", Damage: func(t *testing.T, dir string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte("[1]"), 0o644))
	}, Want: []string{"config.json"}})
	add(DamageCase{Name: "config.json empty", Damage: func(t *testing.T, dir string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), nil, 0o644))
	}, Want: []string{"config.json"}})

	// Files that are not regular files.
	fifo := func(file string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			p := filepath.Join(dir, file)
			require.NoError(t, os.Remove(p))
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}
	}
	add(DamageCase{Name: "model.safetensors is a FIFO", Damage: fifo("model.safetensors"), Want: []string{"named pipe", "not a regular file"}})
	add(DamageCase{Name: "config.json is a FIFO", Damage: fifo("config.json"), Want: []string{"named pipe", "not a regular file"}})
	add(DamageCase{Name: "model.safetensors is a directory", Damage: func(t *testing.T, dir string) {
		require.NoError(t, os.Remove(stPath(dir)))
		require.NoError(t, os.Mkdir(stPath(dir), 0o755))
	}, Want: []string{"directory"}})
	add(DamageCase{Name: "model.safetensors is a dangling link", Damage: func(t *testing.T, dir string) {
		require.NoError(t, os.Remove(stPath(dir)))
		require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere"), stPath(dir)))
	}, Want: []string{"model.safetensors"}})
	add(DamageCase{Name: "files are links to regular files", Damage: func(t *testing.T, dir string) {
		blobs := t.TempDir()
		for _, f := range []string{"config.json", "model.safetensors"} {
			require.NoError(t, os.Rename(filepath.Join(dir, f), filepath.Join(blobs, f)))
			require.NoError(t, os.Symlink(filepath.Join(blobs, f), filepath.Join(dir, f)))
		}
	}})
	return cases
}

// damageRows are the token rows whose outputs a loadable copy must reproduce.
func damageRows(t *testing.T) [][]int32 {
	t.Helper()
	g, err := golden.Load("golden_swepruner.json")
	require.NoError(t, err)
	return [][]int32{g.Cases[1].Chunks[0].InputIDs[:60], g.Cases[0].Chunks[0].InputIDs[:33]}
}

var refOutputs = struct {
	sync.Mutex
	m map[string][]Output
}{m: map[string][]Output{}}

// ReferenceOutputs runs the untouched checkpoint kind on damageRows.
func referenceOutputs(t *testing.T, kind string) []Output {
	t.Helper()
	refOutputs.Lock()
	defer refOutputs.Unlock()
	if o, ok := refOutputs.m[kind]; ok {
		return o
	}
	m := loadTiny(t, kind)
	outs, err := m.Run(context.Background(), damageRows(t))
	require.NoError(t, err)
	refOutputs.m[kind] = outs
	return outs
}

// loadWithin runs LoadContext with a deadline and fails (instead of hanging
// the test binary) when it does not return in time.
func loadWithin(t *testing.T, ctx context.Context, dir string, limit time.Duration) (*Model, error) {
	t.Helper()
	backend, err := simplego.New("ops_sequential") // as the library runs it: v0.26's parallel scheduler races
	require.NoError(t, err)
	type result struct {
		m   *Model
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := LoadContext(ctx, dir, backend)
		done <- result{m, err}
	}()
	select {
	case r := <-done:
		return r.m, r.err
	case <-time.After(limit):
		// Unblock a reader stuck on a FIFO so the goroutine can end.
		for _, f := range []string{"config.json", "model.safetensors"} {
			if w, err := os.OpenFile(filepath.Join(dir, f), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
		t.Fatalf("Load did not return within %v", limit)
		return nil, nil
	}
}

// TestDamagedCheckpointSuite runs every DamageCase on both tiny checkpoints.
func TestDamagedCheckpointSuite(t *testing.T) {
	rows := damageRows(t)
	for _, kind := range DamageKinds {
		for _, c := range DamageCases() {
			if !c.Applies(kind) {
				continue
			}
			t.Run(kind+"/"+c.Name, func(t *testing.T) {
				dir := CopyCheckpoint(t, kind)
				c.Damage(t, dir)
				m, err := loadWithin(t, context.Background(), dir, 20*time.Second)
				if c.Want != nil {
					require.Error(t, err, "damaged checkpoint loaded")
					assert.Nil(t, m)
					assert.ErrorIs(t, err, ErrCheckpoint)
					for _, w := range c.Want {
						assert.Contains(t, err.Error(), w)
					}
					t.Log(err)
					return
				}
				require.NoError(t, err)
				got, err := m.Run(context.Background(), rows)
				require.NoError(t, err)
				want := referenceOutputs(t, kind)
				require.Len(t, got, len(want))
				for i := range want {
					assert.Equal(t, bitsOf(want[i].Emissions), bitsOf(got[i].Emissions), "row %d emissions", i)
					assert.Equal(t, bitsOf(want[i].Gates), bitsOf(got[i].Gates), "row %d gates", i)
					assert.Equal(t, math.Float32bits(want[i].LYes), math.Float32bits(got[i].LYes), "row %d l_yes", i)
					assert.Equal(t, math.Float32bits(want[i].LNo), math.Float32bits(got[i].LNo), "row %d l_no", i)
				}
				ref := loadTiny(t, kind)
				assert.Equal(t, ref.FinalCRF, m.FinalCRF)
				assert.Equal(t, ref.RubricCRFs, m.RubricCRFs)
				refCfg, gotCfg := ref.Config(), m.Config()
				refCfg.Backbone.TieWordEmbeddings, gotCfg.Backbone.TieWordEmbeddings = nil, nil // absent = tied
				assert.Equal(t, refCfg, gotCfg)
			})
		}
	}
}

func bitsOf(x []float32) []uint32 {
	if x == nil {
		return nil
	}
	out := make([]uint32, len(x))
	for i, v := range x {
		out[i] = math.Float32bits(v)
	}
	return out
}

// TestLoadHonoursContext: a cancelled context stops the load with the
// context's error, which is not a checkpoint error.
func TestLoadHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m, err := loadWithin(t, ctx, filepath.Join(golden.Dir(), kindSWE), 20*time.Second)
	require.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, ErrCheckpoint)
	assert.Nil(t, m)
}

// TestFusionHeadsAsDeclared documents the one config value the weights cannot
// contradict: torch's MultiheadAttention stores the same packed in_proj for
// every head count, so num_heads=3 (which divides the fused width 48) is a
// different but well-formed model — the one PyTorch would build from that
// config — and loads as declared, visible in Config().FusionHeads.
func TestFusionHeadsAsDeclared(t *testing.T) {
	dir := CopyCheckpoint(t, kindSWE)
	setConfig("num_heads", 3)(t, dir)
	m, err := loadWithin(t, context.Background(), dir, 20*time.Second)
	require.NoError(t, err)
	assert.Equal(t, 3, m.Config().FusionHeads)
	assert.Equal(t, 8, loadTiny(t, kindSWE).Config().FusionHeads)
}

// The table's names are unique (subtests would silently merge otherwise).
func TestDamageCaseNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	var names []string
	for _, c := range DamageCases() {
		require.False(t, seen[c.Name], c.Name)
		seen[c.Name] = true
		names = append(names, c.Name)
	}
	sort.Strings(names)
	require.NotEmpty(t, names)
	require.True(t, strings.Contains(strings.Join(names, "\n"), "FIFO"))
}
