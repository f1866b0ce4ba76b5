package safetensors

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Tensor is one tensor to be written: Data holds the little-endian element
// bytes, len(Data) must equal the element count times DType.Size().
type Tensor struct {
	// Name is the tensor's header key.
	Name string
	// DType is the element type.
	DType DType
	// Shape is the tensor's shape; an empty shape is a scalar.
	Shape []int
	// Data holds the raw little-endian bytes.
	Data []byte
}

// NewFloat32Tensor encodes values as an F32 tensor. Shape is copied; whether
// it matches len(values) is checked by Write.
func NewFloat32Tensor(name string, shape []int, values []float32) Tensor {
	data := make([]byte, 4*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
	}
	return Tensor{Name: name, DType: F32, Shape: slices.Clone(shape), Data: data}
}

// NewBFloat16Tensor rounds values to bfloat16 (nearest, ties to even, NaN
// preserved; see F32ToBF16) and encodes them as a BF16 tensor. Shape is
// copied; whether it matches len(values) is checked by Write.
func NewBFloat16Tensor(name string, shape []int, values []float32) Tensor {
	data := make([]byte, 2*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint16(data[2*i:], F32ToBF16(v))
	}
	return Tensor{Name: name, DType: BF16, Shape: slices.Clone(shape), Data: data}
}

// Write writes tensors and metadata to w in the reference layout: the
// 8-byte header length, a compact JSON header ("__metadata__" first when
// metadata is non-empty, then tensors and metadata keys in sorted order)
// padded with spaces to a multiple of 8 bytes, then the tensor data
// contiguously in name order. Invalid input is rejected before anything is
// written: errors wrap ErrInvalidTensor (bad or duplicate names),
// ErrUnsupportedDType or ErrShapeMismatch (data length vs shape).
func Write(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	sorted, err := validateTensors(tensors, metadata)
	if err != nil {
		return err
	}
	header := buildHeader(sorted, metadata)
	prefix := make([]byte, 8, 8+len(header))
	binary.LittleEndian.PutUint64(prefix, uint64(len(header)))
	if _, err := w.Write(append(prefix, header...)); err != nil {
		return fmt.Errorf("safetensors: write header: %w", err)
	}
	for _, t := range sorted {
		if _, err := w.Write(t.Data); err != nil {
			return fmt.Errorf("safetensors: tensor %q: write data: %w", t.Name, err)
		}
	}
	return nil
}

// WriteFile writes the tensors to path atomically: the file is written and
// synced under a temporary name in the same directory and then renamed, so a
// crash never leaves a half-written checkpoint under path. The file is
// created with mode 0644.
func WriteFile(path string, tensors []Tensor, metadata map[string]string) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("safetensors: %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err := Write(bw, tensors, metadata); err != nil {
		return fmt.Errorf("%w (writing %s)", err, path)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("safetensors: %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("safetensors: %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("safetensors: %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("safetensors: %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("safetensors: %s: %w", path, err)
	}
	return nil
}

func validateTensors(tensors []Tensor, metadata map[string]string) ([]Tensor, error) {
	for k, v := range metadata {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, fmt.Errorf("safetensors: metadata %q: not valid UTF-8: %w", k, ErrInvalidTensor)
		}
	}
	sorted := slices.Clone(tensors)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for i, t := range sorted {
		invalid := func(why string) error {
			return fmt.Errorf("safetensors: tensor %q: %s: %w", t.Name, why, ErrInvalidTensor)
		}
		switch {
		case t.Name == "":
			return nil, invalid("empty name")
		case t.Name == metadataKey:
			return nil, invalid("name is reserved for metadata")
		case !utf8.ValidString(t.Name):
			return nil, invalid("name is not valid UTF-8")
		case i > 0 && sorted[i-1].Name == t.Name:
			return nil, invalid("duplicate name")
		case !t.DType.Valid():
			return nil, fmt.Errorf("safetensors: tensor %q: dtype %q: %w", t.Name, string(t.DType), ErrUnsupportedDType)
		}
		numel := 1
		for _, d := range t.Shape {
			if d < 0 {
				return nil, fmt.Errorf("safetensors: tensor %q: negative dimension in shape %s: %w", t.Name, formatShape(t.Shape), ErrShapeMismatch)
			}
			if d != 0 && numel > math.MaxInt/d {
				// The count cannot match any real buffer; report it via the
				// length check below with a saturated count.
				numel = math.MaxInt
				continue
			}
			numel *= d
		}
		if numel > len(t.Data)/t.DType.Size() || numel*t.DType.Size() != len(t.Data) {
			return nil, fmt.Errorf("safetensors: tensor %q: %d data bytes but %s %s needs %d elements: %w",
				t.Name, len(t.Data), t.DType, formatShape(t.Shape), numel, ErrShapeMismatch)
		}
	}
	return sorted, nil
}

// buildHeader renders the JSON by hand because encoding/json would escape <,
// > and & and would sort "__metadata__" after upper-case tensor names, while
// the reference writer always puts it first.
func buildHeader(sorted []Tensor, metadata map[string]string) []byte {
	var b strings.Builder
	b.WriteByte('{')
	first := true
	sep := func() {
		if !first {
			b.WriteByte(',')
		}
		first = false
	}
	if len(metadata) > 0 {
		sep()
		writeJSONString(&b, metadataKey)
		b.WriteString(":{")
		keys := make([]string, 0, len(metadata))
		for k := range metadata {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(&b, k)
			b.WriteByte(':')
			writeJSONString(&b, metadata[k])
		}
		b.WriteByte('}')
	}
	offset := 0
	for _, t := range sorted {
		sep()
		writeJSONString(&b, t.Name)
		b.WriteString(`:{"dtype":`)
		writeJSONString(&b, string(t.DType))
		b.WriteString(`,"shape":`)
		b.WriteString(formatShape(t.Shape))
		b.WriteString(`,"data_offsets":[`)
		b.WriteString(strconv.Itoa(offset))
		b.WriteByte(',')
		offset += len(t.Data)
		b.WriteString(strconv.Itoa(offset))
		b.WriteString("]}")
	}
	b.WriteByte('}')
	for b.Len()%8 != 0 {
		b.WriteByte(' ')
	}
	return []byte(b.String())
}

// writeJSONString quotes s the way serde_json does: only the quote, the
// backslash and control characters are escaped; other UTF-8 passes through.
func writeJSONString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}
