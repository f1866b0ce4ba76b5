package safetensors

import (
	"bytes"
	"io"
	"testing"
)

func BenchmarkFloat32EmbeddingBF16(b *testing.B) {
	f, err := Open(swePath)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	const name = "model.backbone.embed_tokens.weight"
	info, _ := f.Info(name)
	b.SetBytes(int64(info.Size))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Float32(name); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFloat32F32(b *testing.B) {
	const n = 1 << 20
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(i)
	}
	var buf bytes.Buffer
	if err := Write(&buf, []Tensor{NewFloat32Tensor("x", []int{n}, vals)}, nil); err != nil {
		b.Fatal(err)
	}
	f, err := OpenBytes("bench", buf.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(4 * n)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Float32("x"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		f, err := Open(swePath)
		if err != nil {
			b.Fatal(err)
		}
		_ = f.Close()
	}
}

func BenchmarkWriteCheckpoint(b *testing.B) {
	f, err := Open(swePath)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var tensors []Tensor
	size := 0
	for _, name := range f.Names() {
		t, err := f.Tensor(name)
		if err != nil {
			b.Fatal(err)
		}
		size += len(t.Data)
		tensors = append(tensors, t)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(io.Discard, tensors, f.Metadata()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFloat32FiniteEmbeddingBF16(b *testing.B) {
	f, err := Open(swePath)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	const name = "model.backbone.embed_tokens.weight"
	info, _ := f.Info(name)
	b.SetBytes(int64(info.Size))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Float32Finite(name); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFloat32FiniteF32(b *testing.B) {
	const n = 1 << 20
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(i)
	}
	var buf bytes.Buffer
	if err := Write(&buf, []Tensor{NewFloat32Tensor("x", []int{n}, vals)}, nil); err != nil {
		b.Fatal(err)
	}
	f, err := OpenBytes("bench", buf.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(4 * n)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Float32Finite("x"); err != nil {
			b.Fatal(err)
		}
	}
}
