package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	swePath  = "../../testdata/tiny-swepruner/model.safetensors"
	lamrPath = "../../testdata/tiny-lamr/model.safetensors"
)

type want struct {
	dtype DType
	shape []int
}

// backboneTensors lists the tiny backbone from the reference README, section 2.
func backboneTensors() map[string]want {
	m := map[string]want{
		"model.backbone.embed_tokens.weight": {BF16, []int{151669, 16}},
		"model.backbone.norm.weight":         {BF16, []int{16}},
	}
	for i := 0; i < 4; i++ {
		p := fmt.Sprintf("model.backbone.layers.%d.", i)
		m[p+"self_attn.q_proj.weight"] = want{BF16, []int{32, 16}}
		m[p+"self_attn.k_proj.weight"] = want{BF16, []int{16, 16}}
		m[p+"self_attn.v_proj.weight"] = want{BF16, []int{16, 16}}
		m[p+"self_attn.o_proj.weight"] = want{BF16, []int{16, 32}}
		m[p+"self_attn.q_norm.weight"] = want{BF16, []int{8}}
		m[p+"self_attn.k_norm.weight"] = want{BF16, []int{8}}
		m[p+"mlp.gate_proj.weight"] = want{BF16, []int{48, 16}}
		m[p+"mlp.up_proj.weight"] = want{BF16, []int{48, 16}}
		m[p+"mlp.down_proj.weight"] = want{BF16, []int{16, 48}}
		m[p+"input_layernorm.weight"] = want{BF16, []int{16}}
		m[p+"post_attention_layernorm.weight"] = want{BF16, []int{16}}
	}
	for k, v := range map[string]want{
		"model.fusion_layers.0.in_proj_weight":              {F32, []int{144, 48}},
		"model.fusion_layers.0.in_proj_bias":                {F32, []int{144}},
		"model.fusion_layers.0.out_proj.weight":             {F32, []int{48, 48}},
		"model.fusion_layers.0.out_proj.bias":               {F32, []int{48}},
		"model.fusion_norms.0.weight":                       {F32, []int{48}},
		"model.fusion_norms.0.bias":                         {F32, []int{48}},
		"model.compression_head.feature_extractor.0.weight": {F32, []int{48}},
		"model.compression_head.feature_extractor.0.bias":   {F32, []int{48}},
		"model.compression_head.feature_extractor.1.weight": {F32, []int{16, 48}},
		"model.compression_head.feature_extractor.1.bias":   {F32, []int{16}},
	} {
		m[k] = v
	}
	return m
}

func sweTensors() map[string]want {
	m := backboneTensors()
	m["model.compression_head.feature_extractor.4.weight"] = want{F32, []int{2, 16}}
	m["model.compression_head.feature_extractor.4.bias"] = want{F32, []int{2}}
	m["model.compression_head.crf.transitions"] = want{F32, []int{2, 2}}
	m["model.compression_head.crf.start_transitions"] = want{F32, []int{2}}
	m["model.compression_head.crf.end_transitions"] = want{F32, []int{2}}
	return m
}

func lamrTensors() map[string]want {
	m := backboneTensors()
	m["model.compression_head.feature_extractor.4.weight"] = want{F32, []int{4, 16}}
	m["model.compression_head.feature_extractor.4.bias"] = want{F32, []int{4}}
	for _, p := range []string{"model.compression_head.crf_layers.0.", "model.compression_head.crf_layers.1.", "model.final_crf."} {
		m[p+"transitions"] = want{F32, []int{2, 2}}
		m[p+"start_transitions"] = want{F32, []int{2}}
		m[p+"end_transitions"] = want{F32, []int{2}}
	}
	m["model.gating_network.0.weight"] = want{F32, []int{48}}
	m["model.gating_network.0.bias"] = want{F32, []int{48}}
	m["model.gating_network.1.weight"] = want{F32, []int{16, 48}}
	m["model.gating_network.1.bias"] = want{F32, []int{16}}
	m["model.gating_network.4.weight"] = want{F32, []int{2, 16}}
	m["model.gating_network.4.bias"] = want{F32, []int{2}}
	return m
}

func TestOpenCheckpoints(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		count   int
		tensors map[string]want
		absent  []string
	}{
		{"swepruner", swePath, 61, sweTensors(), []string{"model.final_crf.transitions", "model.gating_network.0.weight"}},
		{"lamr", lamrPath, 73, lamrTensors(), []string{"model.compression_head.crf.transitions"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Open(tt.path)
			require.NoError(t, err)
			defer f.Close()
			require.Len(t, tt.tensors, tt.count, "expectation table")
			names := f.Names()
			assert.Len(t, names, tt.count)
			assert.Equal(t, tt.count, f.Len())
			assert.IsIncreasing(t, names)
			assert.Equal(t, map[string]string{"format": "pt"}, f.Metadata())
			for name, w := range tt.tensors {
				info, ok := f.Info(name)
				require.True(t, ok, name)
				assert.Equal(t, name, info.Name)
				assert.Equal(t, w.dtype, info.DType, name)
				assert.Equal(t, w.shape, info.Shape, name)
				assert.Equal(t, info.NumElements()*w.dtype.Size(), info.Size, name)
				assert.NoError(t, f.Expect(name, w.shape...))
			}
			for _, name := range tt.absent {
				_, ok := f.Info(name)
				assert.False(t, ok, name)
				assert.ErrorIs(t, f.Expect(name, 2, 2), ErrMissingTensor)
			}
		})
	}
}

func TestCheckpointsShareBackbone(t *testing.T) {
	swe, err := Open(swePath)
	require.NoError(t, err)
	defer swe.Close()
	lamr, err := Open(lamrPath)
	require.NoError(t, err)
	defer lamr.Close()
	for name := range backboneTensors() {
		if !strings.HasPrefix(name, "model.backbone.") {
			continue
		}
		a, err := swe.Raw(name)
		require.NoError(t, err)
		b, err := lamr.Raw(name)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(a, b), "backbone tensor %s differs", name)
	}
}

func TestFloat32Conversions(t *testing.T) {
	f, err := Open(swePath)
	require.NoError(t, err)
	defer f.Close()
	for _, name := range f.Names() {
		info, _ := f.Info(name)
		raw, err := f.Raw(name)
		require.NoError(t, err)
		require.Len(t, raw, info.Size)
		vals, err := f.Float32(name)
		require.NoError(t, err, name)
		require.Len(t, vals, info.NumElements())
		bf, err := f.BFloat16(name)
		require.NoError(t, err, name)
		require.Len(t, bf, info.NumElements())
		// Plain comparisons in the loop: the embedding has 2.4M elements.
		for i, v := range vals {
			var bits uint32
			var wantBF uint16
			switch info.DType {
			case BF16:
				wantBF = binary.LittleEndian.Uint16(raw[2*i:])
				bits = uint32(wantBF) << 16
			case F32:
				bits = binary.LittleEndian.Uint32(raw[4*i:])
				wantBF = F32ToBF16(v)
			default:
				t.Fatalf("unexpected dtype %s", info.DType)
			}
			if bits != math.Float32bits(v) || wantBF != bf[i] || math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("%s[%d]: float32 %v (bits %#08x, want %#08x), bf16 %#04x want %#04x", name, i, v, math.Float32bits(v), bits, bf[i], wantBF)
			}
		}
	}
	// Each call allocates: mutating one result must not affect the next.
	a, err := f.Float32("model.backbone.norm.weight")
	require.NoError(t, err)
	a[0] = 12345
	b, err := f.Float32("model.backbone.norm.weight")
	require.NoError(t, err)
	assert.NotEqual(t, float32(12345), b[0])
}

// rawFile assembles a safetensors image from a literal header, bypassing
// Write so that malformed headers can be built.
func rawFile(header string, data []byte) []byte {
	out := make([]byte, 8, 8+len(header)+len(data))
	binary.LittleEndian.PutUint64(out, uint64(len(header)))
	out = append(out, header...)
	return append(out, data...)
}

func writeTemp(t *testing.T, name string, content []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, content, 0o644))
	return path
}

func TestFloat32F16AndUnsupported(t *testing.T) {
	halves := make([]byte, 2*65536)
	for h := 0; h < 65536; h++ {
		binary.LittleEndian.PutUint16(halves[2*h:], uint16(h))
	}
	ints := []byte{1, 0, 0, 0, 2, 0, 0, 0}
	img := rawFile(fmt.Sprintf(`{"h":{"dtype":"F16","shape":[256,256],"data_offsets":[0,%d]},"i":{"dtype":"I32","shape":[2],"data_offsets":[%d,%d]}}`,
		len(halves), len(halves), len(halves)+8), append(halves, ints...))
	f, err := Open(writeTemp(t, "mixed.safetensors", img))
	require.NoError(t, err)
	defer f.Close()

	vals, err := f.Float32("h")
	require.NoError(t, err)
	require.Len(t, vals, 65536)
	bf, err := f.BFloat16("h")
	require.NoError(t, err)
	for h, v := range vals {
		want := refHalf(uint16(h))
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(float64(v)))
			require.True(t, math.IsNaN(float64(BF16ToF32(bf[h]))))
			continue
		}
		require.Equal(t, want, float64(v), "h=%#04x", h)
		require.Equal(t, F32ToBF16(v), bf[h])
	}

	_, err = f.Float32("i")
	require.ErrorIs(t, err, ErrUnsupportedDType)
	assert.Contains(t, err.Error(), `tensor "i": cannot convert I32 to float32`)
	_, err = f.BFloat16("i")
	require.ErrorIs(t, err, ErrUnsupportedDType)
	raw, err := f.Raw("i")
	require.NoError(t, err)
	assert.Equal(t, ints, raw)

	_, err = f.Float32("nope")
	require.ErrorIs(t, err, ErrMissingTensor)
	_, err = f.Raw("nope")
	require.ErrorIs(t, err, ErrMissingTensor)
}

func TestExpectErrors(t *testing.T) {
	f, err := Open(swePath)
	require.NoError(t, err)
	defer f.Close()
	tests := []struct {
		name    string
		tensor  string
		shape   []int
		target  error
		message string
	}{
		{"ok", "model.backbone.norm.weight", []int{16}, nil, ""},
		{"wrong shape", "model.backbone.norm.weight", []int{32}, ErrShapeMismatch,
			`safetensors: ` + swePath + `: tensor "model.backbone.norm.weight": shape [16] want [32]: shape mismatch`},
		{"wrong rank", "model.backbone.embed_tokens.weight", []int{151669 * 16}, ErrShapeMismatch,
			`safetensors: ` + swePath + `: tensor "model.backbone.embed_tokens.weight": shape [151669,16] want [2426704]: shape mismatch`},
		{"scalar wanted", "model.compression_head.crf.transitions", nil, ErrShapeMismatch,
			`tensor "model.compression_head.crf.transitions": shape [2,2] want []: shape mismatch`},
		{"missing", "model.final_crf.transitions", []int{2, 2}, ErrMissingTensor,
			`safetensors: ` + swePath + `: tensor "model.final_crf.transitions": missing tensor`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := f.Expect(tt.tensor, tt.shape...)
			if tt.target == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.target)
			assert.Contains(t, err.Error(), tt.message)
		})
	}
}

func TestClose(t *testing.T) {
	f, err := Open(swePath)
	require.NoError(t, err)
	const name = "model.backbone.norm.weight"
	_, err = f.Float32(name)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, f.Close(), "Close is idempotent")

	_, err = f.Float32(name)
	assert.ErrorIs(t, err, ErrClosed)
	_, err = f.BFloat16(name)
	assert.ErrorIs(t, err, ErrClosed)
	_, err = f.Raw(name)
	assert.ErrorIs(t, err, ErrClosed)
	_, err = f.Tensor(name)
	assert.ErrorIs(t, err, ErrClosed)
	assert.Contains(t, err.Error(), `tensor "model.backbone.norm.weight": file closed`)
	// The parsed header stays usable.
	assert.Len(t, f.Names(), 61)
	assert.NoError(t, f.Expect(name, 16))
	assert.Equal(t, "pt", f.Metadata()["format"])
}

func TestConcurrentReadAndClose(t *testing.T) {
	f, err := Open(swePath)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				v, err := f.Float32("model.fusion_layers.0.in_proj_weight")
				if err != nil {
					assert.ErrorIs(t, err, ErrClosed)
					return
				}
				assert.Len(t, v, 144*48)
			}
		}()
	}
	require.NoError(t, f.Close())
	wg.Wait()
}

func TestOpenBytesMatchesOpen(t *testing.T) {
	img, err := os.ReadFile(lamrPath)
	require.NoError(t, err)
	mem, err := OpenBytes("lamr", img)
	require.NoError(t, err)
	disk, err := Open(lamrPath)
	require.NoError(t, err)
	defer disk.Close()
	require.Equal(t, disk.Names(), mem.Names())
	for _, name := range disk.Names() {
		a, err := disk.Raw(name)
		require.NoError(t, err)
		b, err := mem.Raw(name)
		require.NoError(t, err)
		require.Equal(t, a, b, name)
	}
	require.NoError(t, mem.Close())
	_, err = mem.Raw("model.final_crf.transitions")
	assert.ErrorIs(t, err, ErrClosed)
}

func TestOpenMissingFile(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "absent.safetensors"))
	require.Error(t, err)
	assert.True(t, errors.Is(err, os.ErrNotExist))
}

func TestOpenEdgeTensors(t *testing.T) {
	// A scalar, an empty tensor placed anywhere, a zero dimension next to a
	// huge one, metadata, and a gap before the last tensor: all valid.
	header := `{"__metadata__":{"k":"v \" \u00e9"},"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]},` +
		`"e":{"dtype":"BF16","shape":[0],"data_offsets":[4,4]},` +
		`"z":{"dtype":"F16","shape":[4611686018427387904,0],"data_offsets":[2,2]},` +
		`"g":{"dtype":"U8","shape":[2],"data_offsets":[6,8]}}   `
	data := []byte{0, 0, 0xc0, 0x3f, 9, 9, 7, 8}
	f, err := OpenBytes("edge", rawFile(header, data))
	require.NoError(t, err)
	assert.Equal(t, []string{"e", "g", "s", "z"}, f.Names())
	assert.Equal(t, map[string]string{"k": "v \" é"}, f.Metadata())
	s, err := f.Float32("s")
	require.NoError(t, err)
	assert.Equal(t, []float32{1.5}, s)
	require.NoError(t, f.Expect("s"))
	e, err := f.Float32("e")
	require.NoError(t, err)
	assert.Empty(t, e)
	z, err := f.BFloat16("z")
	require.NoError(t, err)
	assert.Empty(t, z)
	g, err := f.Raw("g")
	require.NoError(t, err)
	assert.Equal(t, []byte{7, 8}, g)
	assert.Equal(t, 2, cap(g), "Raw must not expose bytes past the tensor")
}

func TestOpenDamaged(t *testing.T) {
	orig, err := os.ReadFile(swePath)
	require.NoError(t, err)
	withLen := func(n uint64) []byte {
		b := bytes.Clone(orig)
		binary.LittleEndian.PutUint64(b, n)
		return b
	}
	one := func(entry string, dataLen int) []byte {
		return rawFile(`{`+entry+`}`, make([]byte, dataLen))
	}
	tests := []struct {
		name    string
		content []byte
		target  error
		message string // must appear in the error, after the file name
	}{
		{"empty", nil, ErrCorrupt, "file is empty"},
		{"shorter than 8 bytes", []byte{1, 0, 0}, ErrCorrupt, "file of 3 bytes is shorter than the 8-byte header length"},
		{"header length beyond file", withLen(uint64(len(orig))), ErrCorrupt, "header length 4933112 exceeds the 4933104 bytes after the length prefix"},
		{"header length huge", withLen(math.MaxUint64), ErrCorrupt, "exceeds the"},
		{"header length zero", withLen(0), ErrCorrupt, "header length 0 too short"},
		{"header not JSON", rawFile("this is not json", nil), ErrCorrupt, "header does not start with a JSON object"},
		{"header broken JSON", rawFile(`{"a":{"dtype":"F32",`, nil), ErrCorrupt, "header entry is not valid"},
		{"header unterminated", rawFile(`{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}`, make([]byte, 4)), ErrCorrupt, "header is not JSON"},
		{"header array", rawFile(`[1,2,3]`, nil), ErrCorrupt, "does not start with a JSON object"},
		{"header trailing data", rawFile(`{} {}`, nil), ErrCorrupt, "trailing data after the JSON object"},
		{"header invalid UTF-8", rawFile("{\"\xff\":1}", nil), ErrCorrupt, "not valid UTF-8"},
		{"entry not an object", one(`"a":5`, 0), ErrCorrupt, `tensor "a": header entry is not valid`},
		{"unknown dtype", one(`"a":{"dtype":"F99","shape":[1],"data_offsets":[0,4]}`, 4), ErrUnsupportedDType, `tensor "a": dtype "F99": unsupported dtype`},
		{"missing dtype", one(`"a":{"shape":[1],"data_offsets":[0,4]}`, 4), ErrCorrupt, `tensor "a": missing dtype`},
		{"missing shape", one(`"a":{"dtype":"F32","data_offsets":[0,4]}`, 4), ErrCorrupt, `tensor "a": missing shape`},
		{"missing offsets", one(`"a":{"dtype":"F32","shape":[1]}`, 4), ErrCorrupt, `tensor "a": missing data_offsets`},
		{"negative shape", one(`"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}`, 4), ErrCorrupt, `tensor "a": negative dimension in shape [-1]`},
		{"fractional shape", one(`"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}`, 4), ErrCorrupt, `tensor "a": header entry is not valid`},
		{"overflowing shape", one(`"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}`, 4), ErrCorrupt, `tensor "a": shape [4294967296,4294967296] needs more bytes`},
		{"offsets past end", one(`"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}`, 8), ErrCorrupt, `tensor "a": data_offsets [4,12] extend past the 8-byte data section`},
		{"offsets reversed", one(`"a":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}`, 8), ErrCorrupt, `tensor "a": data_offsets [4,0] are not an ordered byte range`},
		{"offsets negative", one(`"a":{"dtype":"F32","shape":[0],"data_offsets":[-4,0]}`, 8), ErrCorrupt, `tensor "a": data_offsets [-4,0]`},
		{"offsets three", one(`"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}`, 8), ErrCorrupt, `tensor "a": data_offsets [0 4 8] must have 2 elements`},
		{"wrong size for shape", one(`"a":{"dtype":"BF16","shape":[3],"data_offsets":[0,8]}`, 8), ErrCorrupt, `tensor "a": data_offsets [0,8] hold 8 bytes but BF16 [3] needs 6`},
		{"overlap", one(`"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}`, 8), ErrCorrupt, `tensor "b": data overlaps tensor "a"`},
		{"duplicate tensor", one(`"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}`, 8), ErrCorrupt, `duplicate header key "a"`},
		{"duplicate metadata", one(`"__metadata__":{},"__metadata__":{}`, 0), ErrCorrupt, `duplicate header key "__metadata__"`},
		{"metadata not strings", one(`"__metadata__":{"n":1}`, 0), ErrCorrupt, "__metadata__ is not a string-to-string object"},
		{"truncated data section", orig[:len(orig)/2], ErrCorrupt, `extend past the 2459692-byte data section (truncated file?)`},
		{"truncated inside header", orig[:100], ErrCorrupt, "header length 6856 exceeds the 92 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeTemp(t, "model.safetensors", tt.content)
			f, err := Open(path)
			require.Error(t, err)
			require.Nil(t, f)
			assert.ErrorIs(t, err, tt.target)
			assert.Contains(t, err.Error(), "safetensors: "+path+": ")
			assert.Contains(t, err.Error(), tt.message)
			// The in-memory path must reach the same verdict.
			_, err2 := OpenBytes(path, tt.content)
			require.Error(t, err2)
			assert.Equal(t, err.Error(), err2.Error())
		})
	}
}

// TestReadFileFallback covers the path taken where mmap is unavailable.
func TestReadFileFallback(t *testing.T) {
	fh, err := os.Open(lamrPath)
	require.NoError(t, err)
	defer fh.Close()
	st, err := fh.Stat()
	require.NoError(t, err)
	data, release, err := readFile(fh, int(st.Size()))
	require.NoError(t, err)
	assert.Nil(t, release)
	want, err := os.ReadFile(lamrPath)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, data))

	_, _, err = readFile(fh, int(st.Size())+1)
	require.Error(t, err, "a file shorter than its stat size must not be read silently")
}

// TestCopiesDropMappedPages: the copying readers drop the mapped pages of
// what they read (advice to the kernel); reading again, or through Raw,
// still sees the file's bytes.
func TestCopiesDropMappedPages(t *testing.T) {
	vals := make([]float32, 5000) // several pages
	for i := range vals {
		vals[i] = float32(i) * 0.5
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	require.NoError(t, WriteFile(path, []Tensor{NewFloat32Tensor("a", []int{len(vals)}, vals),
		NewBFloat16Tensor("b", []int{len(vals)}, vals)}, nil))
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	for range 2 {
		got, err := f.Float32("a")
		require.NoError(t, err)
		require.Equal(t, vals, got)
		half, err := f.BFloat16Finite("b")
		require.NoError(t, err)
		require.Equal(t, F32ToBF16(vals[4999]), half[4999])
	}
	raw, err := f.Raw("a")
	require.NoError(t, err)
	require.Len(t, raw, 4*len(vals))
	require.Equal(t, vals[4321], math.Float32frombits(binary.LittleEndian.Uint32(raw[4*4321:])))
}
