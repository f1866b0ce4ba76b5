package safetensors

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func fuzzSeeds(f *testing.F) {
	var buf bytes.Buffer
	if err := Write(&buf, []Tensor{
		NewFloat32Tensor("w", []int{2, 2}, []float32{1, 2, 3, 4}),
		NewBFloat16Tensor("b", []int{3}, []float32{-1, 0.5, 7}),
		{Name: "h", DType: F16, Shape: []int{2}, Data: []byte{0x00, 0x3c, 0x01, 0x80}},
		{Name: "s", DType: I64, Shape: []int{}, Data: make([]byte, 8)},
		{Name: "e", DType: U8, Shape: []int{0}},
	}, map[string]string{"format": "pt"}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{})
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, '{', '}'})
	f.Add(rawFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)))
	f.Add(rawFile(`{"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"b":{"dtype":"F16","shape":[1],"data_offsets":[2,4]}}`, make([]byte, 4)))
	f.Add(rawFile(`{"z":{"dtype":"F16","shape":[9223372036854775807,0],"data_offsets":[0,0]}}`, nil))
}

// FuzzOpen feeds arbitrary bytes through Open: it must either fail cleanly or
// return a File whose every tensor can be read without panicking and whose
// reported sizes match the data it hands out.
func FuzzOpen(f *testing.F) {
	fuzzSeeds(f)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.safetensors")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		file, err := Open(path)
		mem, memErr := OpenBytes(path, data)
		if (err == nil) != (memErr == nil) {
			t.Fatalf("Open and OpenBytes disagree: %v vs %v", err, memErr)
		}
		if err != nil {
			if err.Error() != memErr.Error() {
				t.Fatalf("Open and OpenBytes disagree: %v vs %v", err, memErr)
			}
			return
		}
		defer file.Close()
		names := file.Names()
		if len(names) != mem.Len() {
			t.Fatalf("Open saw %d tensors, OpenBytes %d", len(names), mem.Len())
		}
		for i, name := range names {
			if i > 0 && names[i-1] >= name {
				t.Fatalf("names not sorted: %q >= %q", names[i-1], name)
			}
			info, ok := file.Info(name)
			if !ok {
				t.Fatalf("Info(%q) missing", name)
			}
			raw, err := file.Raw(name)
			if err != nil || len(raw) != info.Size || info.Size != info.NumElements()*info.DType.Size() {
				t.Fatalf("Raw(%q): %d bytes, err %v, info %+v", name, len(raw), err, info)
			}
			if err := file.Expect(name, info.Shape...); err != nil {
				t.Fatalf("Expect(%q) on its own shape: %v", name, err)
			}
			vals, err := file.Float32(name)
			switch info.DType {
			case F32, F16, BF16:
				if err != nil || len(vals) != info.NumElements() {
					t.Fatalf("Float32(%q): %d values, err %v", name, len(vals), err)
				}
			default:
				if err == nil {
					t.Fatalf("Float32(%q) of %s succeeded", name, info.DType)
				}
			}
			if _, err := file.BFloat16(name); (err == nil) != (vals != nil) {
				t.Fatalf("BFloat16(%q) disagrees with Float32: %v", name, err)
			}
		}
		if err := file.Close(); err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			if _, err := file.Float32(name); err == nil {
				t.Fatalf("Float32(%q) after Close succeeded", name)
			}
		}
	})
}
