package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRoundTripCheckpoints rewrites every tensor of the reference checkpoints
// and expects the very same bytes: the writer's layout (metadata first,
// name order, space padding to 8) is the reference writer's.
func TestRoundTripCheckpoints(t *testing.T) {
	for _, path := range []string{swePath, lamrPath} {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			f, err := Open(path)
			require.NoError(t, err)
			defer f.Close()
			var tensors []Tensor
			// Reverse order checks that Write sorts.
			names := f.Names()
			for i := len(names) - 1; i >= 0; i-- {
				tt, err := f.Tensor(names[i])
				require.NoError(t, err)
				tensors = append(tensors, tt)
			}
			out := filepath.Join(t.TempDir(), "model.safetensors")
			require.NoError(t, WriteFile(out, tensors, f.Metadata()))

			g, err := Open(out)
			require.NoError(t, err)
			defer g.Close()
			require.Equal(t, names, g.Names())
			assert.Equal(t, f.Metadata(), g.Metadata())
			for _, name := range names {
				a, _ := f.Info(name)
				b, _ := g.Info(name)
				require.Equal(t, a, b)
				ra, err := f.Raw(name)
				require.NoError(t, err)
				rb, err := g.Raw(name)
				require.NoError(t, err)
				require.True(t, bytes.Equal(ra, rb), name)
			}

			orig, err := os.ReadFile(path)
			require.NoError(t, err)
			written, err := os.ReadFile(out)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(orig, written), "rewritten file differs from the reference bytes")
			st, err := os.Stat(out)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
		})
	}
}

func TestWriteHeaderLayout(t *testing.T) {
	tensors := []Tensor{
		NewFloat32Tensor("b", []int{2}, []float32{1, -2}),
		{Name: "a\"<é>\n", DType: U8, Shape: []int{}, Data: []byte{7}},
		NewBFloat16Tensor("C", []int{1, 1}, []float32{1}),
	}
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, tensors, map[string]string{"z": "1", "format": "pt"}))
	out := buf.Bytes()
	n := binary.LittleEndian.Uint64(out)
	header := `{"__metadata__":{"format":"pt","z":"1"},` +
		`"C":{"dtype":"BF16","shape":[1,1],"data_offsets":[0,2]},` +
		`"a\"<é>\n":{"dtype":"U8","shape":[],"data_offsets":[2,3]},` +
		`"b":{"dtype":"F32","shape":[2],"data_offsets":[3,11]}}`
	for len(header)%8 != 0 {
		header += " "
	}
	assert.Equal(t, header, string(out[8:8+n]))
	assert.Equal(t, []byte{0x80, 0x3f, 7, 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}, out[8+n:])

	// Without metadata the key is omitted.
	buf.Reset()
	require.NoError(t, Write(&buf, tensors[:1], nil))
	n = binary.LittleEndian.Uint64(buf.Bytes())
	assert.Equal(t, `{"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}  `, string(buf.Bytes()[8:8+n]))

	// No tensors at all is still a valid file.
	buf.Reset()
	require.NoError(t, Write(&buf, nil, nil))
	f, err := OpenBytes("empty", buf.Bytes())
	require.NoError(t, err)
	assert.Empty(t, f.Names())
}

func TestWriteReadAllDTypes(t *testing.T) {
	var tensors []Tensor
	for _, d := range []DType{BOOL, U8, I8, F8E5M2, F8E4M3, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64} {
		data := make([]byte, 3*d.Size())
		for i := range data {
			data[i] = byte(i*7 + d.Size())
		}
		tensors = append(tensors, Tensor{Name: "t." + string(d), DType: d, Shape: []int{3}, Data: data})
	}
	tensors = append(tensors, Tensor{Name: "empty", DType: F32, Shape: []int{0, 5}, Data: nil})
	md := map[string]string{"format": "pt", "note": "tab\there \"quoted\" \\ \x01 ünïcode"}
	path := filepath.Join(t.TempDir(), "all.safetensors")
	require.NoError(t, WriteFile(path, tensors, md))
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, md, f.Metadata())
	require.Equal(t, len(tensors), f.Len())
	for _, want := range tensors {
		got, err := f.Tensor(want.Name)
		require.NoError(t, err)
		assert.Equal(t, want.DType, got.DType)
		assert.Equal(t, want.Shape, got.Shape)
		assert.Equal(t, len(want.Data), len(got.Data))
		assert.True(t, bytes.Equal(want.Data, got.Data), want.Name)
	}
}

func TestFloatConstructors(t *testing.T) {
	vals := []float32{0, -0.0, 1, -1.5, 3.14159265, 1e-40, float32(math.Inf(1)), float32(math.NaN()), 65504, 1 + 1.0/256, 1 + 3.0/256}
	path := filepath.Join(t.TempDir(), "f.safetensors")
	require.NoError(t, WriteFile(path, []Tensor{
		NewFloat32Tensor("f32", []int{len(vals)}, vals),
		NewBFloat16Tensor("bf16", []int{1, len(vals)}, vals),
	}, nil))
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	got32, err := f.Float32("f32")
	require.NoError(t, err)
	gotBF, err := f.Float32("bf16")
	require.NoError(t, err)
	bits, err := f.BFloat16("bf16")
	require.NoError(t, err)
	for i, v := range vals {
		assert.Equal(t, math.Float32bits(v), math.Float32bits(got32[i]), "f32[%d]", i)
		assert.Equal(t, F32ToBF16(v), bits[i], "bf16[%d]", i)
		assert.Equal(t, math.Float32bits(BF16ToF32(F32ToBF16(v))), math.Float32bits(gotBF[i]), "bf16[%d]", i)
	}
	// Ties round to even: 1+1/256 sits halfway between 1 and 1+1/128.
	assert.Equal(t, float32(1), gotBF[9])
	assert.Equal(t, float32(1+4.0/256), gotBF[10])
	assert.True(t, math.IsNaN(float64(gotBF[7])))
}

func TestWriteRejects(t *testing.T) {
	good := NewFloat32Tensor("ok", []int{1}, []float32{1})
	tests := []struct {
		name     string
		tensors  []Tensor
		metadata map[string]string
		target   error
		message  string
	}{
		{"empty name", []Tensor{{Name: "", DType: U8, Shape: []int{0}}}, nil, ErrInvalidTensor, `tensor "": empty name`},
		{"reserved name", []Tensor{{Name: "__metadata__", DType: U8, Shape: []int{0}}}, nil, ErrInvalidTensor, "reserved"},
		{"invalid UTF-8 name", []Tensor{{Name: "a\xffb", DType: U8, Shape: []int{0}}}, nil, ErrInvalidTensor, "not valid UTF-8"},
		{"duplicate", []Tensor{good, good}, nil, ErrInvalidTensor, `tensor "ok": duplicate name`},
		{"unknown dtype", []Tensor{{Name: "x", DType: "F4", Shape: []int{2}, Data: []byte{0}}}, nil, ErrUnsupportedDType, `tensor "x": dtype "F4"`},
		{"short data", []Tensor{NewFloat32Tensor("x", []int{2, 2}, []float32{1, 2, 3})}, nil, ErrShapeMismatch, `tensor "x": 12 data bytes but F32 [2,2] needs 4 elements`},
		{"long data", []Tensor{NewBFloat16Tensor("x", []int{1}, []float32{1, 2})}, nil, ErrShapeMismatch, `tensor "x": 4 data bytes but BF16 [1]`},
		{"negative dim", []Tensor{{Name: "x", DType: U8, Shape: []int{-1}}}, nil, ErrShapeMismatch, "negative dimension"},
		{"overflowing shape", []Tensor{{Name: "x", DType: F32, Shape: []int{math.MaxInt / 2, 4}, Data: []byte{0}}}, nil, ErrShapeMismatch, `tensor "x"`},
		{"bad metadata", []Tensor{good}, map[string]string{"k": "\xff"}, ErrInvalidTensor, `metadata "k"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := Write(&buf, tt.tensors, tt.metadata)
			require.ErrorIs(t, err, tt.target)
			assert.Contains(t, err.Error(), tt.message)
			assert.Zero(t, buf.Len(), "nothing may be written on invalid input")

			dir := t.TempDir()
			path := filepath.Join(dir, "out.safetensors")
			err = WriteFile(path, tt.tensors, tt.metadata)
			require.ErrorIs(t, err, tt.target)
			assert.Contains(t, err.Error(), path)
			entries, rerr := os.ReadDir(dir)
			require.NoError(t, rerr)
			assert.Empty(t, entries, "no file or temporary left behind")
		})
	}
}

type failWriter struct{ after int }

var errDiskFull = errors.New("disk full")

func (w *failWriter) Write(p []byte) (int, error) {
	if w.after <= 0 {
		return 0, errDiskFull
	}
	w.after--
	return len(p), nil
}

func TestWritePropagatesWriterErrors(t *testing.T) {
	tensors := []Tensor{NewFloat32Tensor("a", []int{1}, []float32{1})}
	err := Write(&failWriter{after: 0}, tensors, nil)
	require.ErrorIs(t, err, errDiskFull)
	assert.Contains(t, err.Error(), "write header")
	err = Write(&failWriter{after: 1}, tensors, nil)
	require.ErrorIs(t, err, errDiskFull)
	assert.Contains(t, err.Error(), `tensor "a"`)

	err = WriteFile(filepath.Join(t.TempDir(), "no", "such", "dir.safetensors"), tensors, nil)
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestWriteFileReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.safetensors")
	require.NoError(t, WriteFile(path, []Tensor{NewFloat32Tensor("a", []int{1}, []float32{1})}, nil))
	require.NoError(t, WriteFile(path, []Tensor{NewFloat32Tensor("b", []int{1}, []float32{2})}, nil))
	f, err := Open(path)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, []string{"b"}, f.Names())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1)
}
