package safetensors

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func isFinite(v float32) bool {
	return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
}

// openImage writes tensors to memory and opens the image.
func openImage(t *testing.T, ts ...Tensor) *File {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, ts, nil))
	f, err := OpenBytes("mem", buf.Bytes())
	require.NoError(t, err)
	return f
}

// TestFloat32FiniteExhaustive feeds every 16-bit pattern as BF16 and as F16
// (one pattern per tensor, at every lane of the 4-wide BF16 loop and in its
// tail) and every float32 exponent/sign class as F32: Float32Finite must
// agree with math.IsNaN/IsInf and, for finite tensors, with Float32 (and
// BFloat16Finite with BFloat16's bits).
func TestFloat32FiniteExhaustive(t *testing.T) {
	for _, dt := range []DType{BF16, F16} {
		t.Run(string(dt), func(t *testing.T) {
			// All patterns in one tensor, checked per element through
			// 7-element tensors (lanes 0..3 of one word plus a 3-element
			// tail), each holding one pattern among finite fillers.
			data := make([]byte, 0, 7*2*65536)
			var ts []Tensor
			for h := 0; h < 65536; h++ {
				pos := h % 7
				raw := make([]byte, 14)
				for i := 0; i < 7; i++ {
					binary.LittleEndian.PutUint16(raw[2*i:], 0x3f80) // 1.0 in BF16, 1.875 in F16
				}
				binary.LittleEndian.PutUint16(raw[2*pos:], uint16(h))
				data = append(data, raw...)
				ts = append(ts, Tensor{Name: "t" + itoa(h), DType: dt, Shape: []int{7}, Data: raw})
			}
			f := openImage(t, ts...)
			for h := 0; h < 65536; h++ {
				name := "t" + itoa(h)
				var v float32
				if dt == BF16 {
					v = BF16ToF32(uint16(h))
				} else {
					v = F16ToF32(uint16(h))
				}
				if dt == BF16 {
					half, err := f.BFloat16Finite(name)
					if isFinite(v) {
						require.NoError(t, err, "BFloat16Finite pattern %#04x", h)
						require.Equal(t, uint16(h), half[h%7])
					} else {
						require.ErrorIs(t, err, ErrNonFinite, "BFloat16Finite pattern %#04x", h)
						require.Nil(t, half)
						require.Contains(t, err.Error(), "index "+itoa(h%7))
					}
				}
				got, err := f.Float32Finite(name)
				if isFinite(v) {
					require.NoError(t, err, "pattern %#04x", h)
					want, err := f.Float32(name)
					require.NoError(t, err)
					require.Equal(t, math.Float32bits(want[h%7]), math.Float32bits(got[h%7]))
				} else {
					require.ErrorIs(t, err, ErrNonFinite, "pattern %#04x", h)
					require.Nil(t, got)
					require.Contains(t, err.Error(), "index "+itoa(h%7))
				}
			}
		})
	}
	t.Run("F32", func(t *testing.T) {
		var vals []float32
		for _, bits := range []uint32{0, 0x80000000, 0x00000001, 0x7f7fffff, 0xff7fffff, 0x3f800000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffffffff} {
			vals = append(vals, math.Float32frombits(bits))
		}
		// Every position of a 5-element tensor: both lanes of the 2-wide
		// loop and the tail.
		for i, v := range vals {
			for pos := 0; pos < 5; pos++ {
				x := []float32{1, 2, 3, 4, 5}
				x[pos] = v
				f := openImage(t, NewFloat32Tensor("x", []int{5}, x))
				got, err := f.Float32Finite("x")
				if isFinite(v) {
					require.NoError(t, err, "value %d", i)
					require.Equal(t, math.Float32bits(v), math.Float32bits(got[pos]))
				} else {
					require.ErrorIs(t, err, ErrNonFinite, "value %d (%v) at %d", i, v, pos)
					require.Contains(t, err.Error(), `tensor "x" has `)
					require.Contains(t, err.Error(), "at index "+itoa(pos)+" (1 of 5 values")
				}
			}
		}
	})
	t.Run("unsupported dtype", func(t *testing.T) {
		f := openImage(t, Tensor{Name: "i", DType: I32, Shape: []int{1}, Data: make([]byte, 4)})
		_, err := f.Float32Finite("i")
		require.ErrorIs(t, err, ErrUnsupportedDType)
	})
	t.Run("missing", func(t *testing.T) {
		f := openImage(t, NewFloat32Tensor("x", []int{1}, []float32{1}))
		_, err := f.Float32Finite("y")
		require.ErrorIs(t, err, ErrMissingTensor)
	})
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}

// The tiny checkpoints are finite: Float32Finite returns exactly Float32's
// values for every tensor.
func TestFloat32FiniteCheckpoints(t *testing.T) {
	for _, p := range []string{swePath, lamrPath} {
		f, err := Open(p)
		require.NoError(t, err)
		for _, name := range f.Names() {
			want, err := f.Float32(name)
			require.NoError(t, err)
			got, err := f.Float32Finite(name)
			require.NoError(t, err, name)
			require.Equal(t, want, got, name)
		}
		require.NoError(t, f.Close())
	}
}

// TestOpenRefusesNonRegular: a FIFO named like a checkpoint used to block
// Open forever (os.Open waits for a writer); it and other non-regular files
// now fail at once with ErrNotRegular, while a symbolic link to a regular
// file (the Hugging Face cache layout) still opens.
func TestOpenRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "model.safetensors")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Open(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrNotRegular)
		assert.Contains(t, err.Error(), "named pipe")
	case <-ctx.Done():
		// Unblock the reader so the goroutine ends, then fail.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("Open blocked on a FIFO")
	}

	_, err := Open(dir)
	require.ErrorIs(t, err, ErrNotRegular)
	assert.Contains(t, err.Error(), "directory")

	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err := Open("/dev/zero")
		require.ErrorIs(t, err, ErrNotRegular)
	}

	link := filepath.Join(dir, "link.safetensors")
	abs, err := filepath.Abs(swePath)
	require.NoError(t, err)
	require.NoError(t, os.Symlink(abs, link))
	f, err := Open(link)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}
