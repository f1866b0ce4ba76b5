package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/prunekit/pruner/internal/regfile"
)

// maxHeaderSize bounds the JSON header like the reference Rust reader does, so
// that a garbage length prefix cannot make us parse hundreds of megabytes.
const maxHeaderSize = 100_000_000

// metadataKey is the reserved header key holding string-to-string metadata.
const metadataKey = "__metadata__"

// TensorInfo describes one tensor of a File.
type TensorInfo struct {
	// Name is the tensor's key in the header.
	Name string
	// DType is the element type.
	DType DType
	// Shape is the tensor's shape; an empty shape is a scalar.
	Shape []int
	// Size is the tensor's data length in bytes.
	Size int
}

// NumElements returns the product of the shape (1 for a scalar).
func (t TensorInfo) NumElements() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// entry is a validated tensor: begin and end are absolute offsets into the
// file bytes, so accessors never redo bounds arithmetic.
type entry struct {
	info       TensorInfo
	begin, end int
}

// File is an open safetensors file. Its methods are safe for concurrent use;
// Close waits for conversions in progress.
type File struct {
	path     string
	names    []string
	tensors  map[string]entry
	metadata map[string]string

	mu     sync.RWMutex
	data   []byte
	unmap  func([]byte) error
	closed bool
}

// Open maps the safetensors file at path read-only (or reads it into memory
// where mapping is unavailable) and validates its header. The file must not
// be truncated or rewritten in place while it is open: the mapping would then
// fault on access.
//
// path must name a regular file (or a symbolic link to one): anything else
// fails with ErrNotRegular without blocking, see OpenRegular.
func Open(path string) (*File, error) {
	fh, st, err := OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	defer fh.Close()
	size := st.Size()
	if err := checkLength(path, size); err != nil {
		return nil, err
	}
	if size > math.MaxInt {
		return nil, fmt.Errorf("safetensors: %s: file of %d bytes too large to map: %w", path, size, ErrCorrupt)
	}
	data, unmap, err := mapFile(fh, int(size))
	if err != nil {
		return nil, fmt.Errorf("safetensors: %s: %w", path, err)
	}
	f, err := parse(path, data)
	if err != nil {
		if unmap != nil {
			_ = unmap(data)
		}
		return nil, err
	}
	f.unmap = unmap
	return f, nil
}

// OpenRegular opens path for reading only if it is a regular file (see
// regfile.Open): a FIFO, a device or a socket named like a checkpoint file
// fails at once with ErrNotRegular instead of blocking. The returned
// FileInfo describes the opened file.
func OpenRegular(path string) (*os.File, os.FileInfo, error) {
	return regfile.Open(path)
}

// OpenBytes parses a safetensors image already in memory, for example one
// embedded with go:embed. The File aliases data, which must not be modified
// while the File is in use; name is only used in error messages.
func OpenBytes(name string, data []byte) (*File, error) {
	if err := checkLength(name, int64(len(data))); err != nil {
		return nil, err
	}
	return parse(name, data)
}

func checkLength(path string, size int64) error {
	switch {
	case size == 0:
		return fmt.Errorf("safetensors: %s: file is empty: %w", path, ErrCorrupt)
	case size < 8:
		return fmt.Errorf("safetensors: %s: file of %d bytes is shorter than the 8-byte header length: %w", path, size, ErrCorrupt)
	}
	return nil
}

// headerEntry mirrors one tensor in the JSON header. Pointers tell a missing
// field from a zero one; int64 lets negative values be reported rather than
// silently wrapped.
type headerEntry struct {
	DType       *string  `json:"dtype"`
	Shape       *[]int64 `json:"shape"`
	DataOffsets *[]int64 `json:"data_offsets"`
}

func parse(path string, data []byte) (*File, error) {
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("safetensors: %s: %s: %w", path, fmt.Sprintf(format, args...), ErrCorrupt)
	}
	n := binary.LittleEndian.Uint64(data[:8])
	avail := uint64(len(data) - 8)
	switch {
	case n > avail:
		return nil, corrupt("header length %d exceeds the %d bytes after the length prefix", n, avail)
	case n > maxHeaderSize:
		return nil, corrupt("header length %d exceeds the limit of %d", n, maxHeaderSize)
	case n < 2:
		return nil, corrupt("header length %d too short for a JSON object", n)
	}
	header := data[8 : 8+n]
	dataStart := 8 + int(n)
	dataLen := len(data) - dataStart
	if !utf8.Valid(header) {
		return nil, corrupt("header is not valid UTF-8")
	}
	if header[0] != '{' {
		return nil, corrupt("header does not start with a JSON object")
	}

	f := &File{path: path, data: data, tensors: map[string]entry{}, metadata: map[string]string{}}
	dec := json.NewDecoder(bytes.NewReader(header))
	seenMetadata := false
	if _, err := dec.Token(); err != nil {
		return nil, corrupt("header is not JSON: %v", err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, corrupt("header is not JSON: %v", err)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, corrupt("header is not JSON: unexpected %v", tok)
		}
		if _, dup := f.tensors[name]; dup || (name == metadataKey && seenMetadata) {
			return nil, corrupt("duplicate header key %q", name)
		}
		if name == metadataKey {
			seenMetadata = true
			var md map[string]string
			if err := dec.Decode(&md); err != nil {
				return nil, corrupt("__metadata__ is not a string-to-string object: %v", err)
			}
			for k, v := range md {
				f.metadata[k] = v
			}
			continue
		}
		var he headerEntry
		if err := dec.Decode(&he); err != nil {
			return nil, corrupt("tensor %q: header entry is not valid: %v", name, err)
		}
		e, err := validateEntry(path, name, he, dataStart, dataLen)
		if err != nil {
			return nil, err
		}
		f.tensors[name] = e
	}
	if _, err := dec.Token(); err != nil {
		return nil, corrupt("header is not JSON: %v", err)
	}
	// Only the space padding may follow the object.
	if _, err := dec.Token(); err != io.EOF {
		return nil, corrupt("header has trailing data after the JSON object")
	}

	f.names = make([]string, 0, len(f.tensors))
	for name := range f.tensors {
		f.names = append(f.names, name)
	}
	sort.Strings(f.names)
	if err := checkOverlaps(path, f); err != nil {
		return nil, err
	}
	return f, nil
}

func validateEntry(path, name string, he headerEntry, dataStart, dataLen int) (entry, error) {
	corrupt := func(format string, args ...any) error {
		return fmt.Errorf("safetensors: %s: tensor %q: %s: %w", path, name, fmt.Sprintf(format, args...), ErrCorrupt)
	}
	switch {
	case he.DType == nil:
		return entry{}, corrupt("missing dtype")
	case he.Shape == nil:
		return entry{}, corrupt("missing shape")
	case he.DataOffsets == nil:
		return entry{}, corrupt("missing data_offsets")
	}
	dt := DType(*he.DType)
	if !dt.Valid() {
		return entry{}, fmt.Errorf("safetensors: %s: tensor %q: dtype %q: %w", path, name, *he.DType, ErrUnsupportedDType)
	}
	// The element count is bounded by the data section (one byte per element
	// at least), which keeps the int arithmetic below overflow-free.
	shape := make([]int, len(*he.Shape))
	numel, overflow, zero := uint64(1), false, false
	for i, d := range *he.Shape {
		if d < 0 {
			return entry{}, corrupt("negative dimension in shape %v", *he.Shape)
		}
		if uint64(d) > math.MaxInt {
			return entry{}, corrupt("shape %v too large", *he.Shape)
		}
		shape[i] = int(d)
		hi, lo := bits.Mul64(numel, uint64(d))
		overflow = overflow || hi != 0
		zero = zero || d == 0
		numel = lo
	}
	if zero {
		numel, overflow = 0, false
	}
	if overflow || numel > uint64(dataLen) {
		return entry{}, corrupt("shape %s needs more bytes than the %d-byte data section", formatShape(shape), dataLen)
	}
	size := int(numel) * dt.Size()
	offs := *he.DataOffsets
	if len(offs) != 2 {
		return entry{}, corrupt("data_offsets %v must have 2 elements", offs)
	}
	begin, end := offs[0], offs[1]
	switch {
	case begin < 0 || end < begin:
		return entry{}, corrupt("data_offsets [%d,%d] are not an ordered byte range", begin, end)
	case end > int64(dataLen):
		return entry{}, corrupt("data_offsets [%d,%d] extend past the %d-byte data section (truncated file?)", begin, end, dataLen)
	case end-begin != int64(size):
		return entry{}, corrupt("data_offsets [%d,%d] hold %d bytes but %s %s needs %d", begin, end, end-begin, dt, formatShape(shape), size)
	}
	return entry{
		info:  TensorInfo{Name: name, DType: dt, Shape: shape, Size: size},
		begin: dataStart + int(begin),
		end:   dataStart + int(end),
	}, nil
}

// checkOverlaps rejects files in which two non-empty tensors share bytes: a
// writer never produces them and aliasing would make in-place edits of one
// tensor silently change another. Gaps are tolerated.
func checkOverlaps(path string, f *File) error {
	byBegin := make([]entry, 0, len(f.tensors))
	for _, name := range f.names {
		if e := f.tensors[name]; e.end > e.begin {
			byBegin = append(byBegin, e)
		}
	}
	sort.SliceStable(byBegin, func(i, j int) bool { return byBegin[i].begin < byBegin[j].begin })
	for i := 1; i < len(byBegin); i++ {
		prev, cur := byBegin[i-1], byBegin[i]
		if cur.begin < prev.end {
			return fmt.Errorf("safetensors: %s: tensor %q: data overlaps tensor %q: %w", path, cur.info.Name, prev.info.Name, ErrCorrupt)
		}
	}
	return nil
}

func formatShape(shape []int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range shape {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(d))
	}
	b.WriteByte(']')
	return b.String()
}

// Path returns the path (or name) the File was opened with.
func (f *File) Path() string { return f.path }

// Close releases the mapping. It is idempotent. Names, Len, Info, Metadata
// and Expect keep working afterwards (the header stays parsed); accessors of
// tensor data return ErrClosed, and slices previously returned by Raw must no
// longer be used.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	data, unmap := f.data, f.unmap
	f.data, f.unmap = nil, nil
	if unmap != nil {
		if err := unmap(data); err != nil {
			return fmt.Errorf("safetensors: %s: unmap: %w", f.path, err)
		}
	}
	return nil
}

// Names returns the tensor names in sorted order. The slice is a copy.
func (f *File) Names() []string { return slices.Clone(f.names) }

// Len returns the number of tensors.
func (f *File) Len() int { return len(f.names) }

// Info describes the named tensor; ok is false when there is no such tensor.
// The returned Shape is a copy.
func (f *File) Info(name string) (info TensorInfo, ok bool) {
	e, ok := f.tensors[name]
	if !ok {
		return TensorInfo{}, false
	}
	info = e.info
	info.Shape = slices.Clone(info.Shape)
	return info, true
}

// Metadata returns a copy of the header's __metadata__ map (empty, not nil,
// when the file has none).
func (f *File) Metadata() map[string]string {
	md := make(map[string]string, len(f.metadata))
	for k, v := range f.metadata {
		md[k] = v
	}
	return md
}

// Expect checks that the named tensor exists and has exactly the given shape.
// The error wraps ErrMissingTensor or ErrShapeMismatch.
func (f *File) Expect(name string, shape ...int) error {
	e, ok := f.tensors[name]
	if !ok {
		return f.missing(name)
	}
	if !slices.Equal(e.info.Shape, shape) {
		return fmt.Errorf("safetensors: %s: tensor %q: shape %s want %s: %w", f.path, name, formatShape(e.info.Shape), formatShape(shape), ErrShapeMismatch)
	}
	return nil
}

func (f *File) missing(name string) error {
	return fmt.Errorf("safetensors: %s: tensor %q: %w", f.path, name, ErrMissingTensor)
}

// withData runs fn on the named tensor's bytes while holding the read lock, so
// that a concurrent Close cannot unmap them mid-copy.
func (f *File) withData(name string, fn func(e entry, b []byte) error) error {
	e, ok := f.tensors[name]
	if !ok {
		return f.missing(name)
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return fmt.Errorf("safetensors: %s: tensor %q: %w", f.path, name, ErrClosed)
	}
	return fn(e, f.data[e.begin:e.end:e.end])
}

// withCopy is withData for fn that copies the bytes out: afterwards the
// mapped pages are dropped from memory (see dropPages).
func (f *File) withCopy(name string, fn func(e entry, b []byte) error) error {
	return f.withData(name, func(e entry, b []byte) error {
		err := fn(e, b)
		if f.unmap != nil {
			dropPages(f.data, e.begin, e.end)
		}
		return err
	})
}

// Raw returns the named tensor's little-endian bytes without copying. The
// slice aliases the read-only mapping: it must not be modified (writing to it
// faults) and is valid only until Close.
func (f *File) Raw(name string) ([]byte, error) {
	var out []byte
	err := f.withData(name, func(_ entry, b []byte) error {
		out = b
		return nil
	})
	return out, err
}

// Tensor returns the named tensor in the form Write accepts, with Data
// aliasing the mapping (valid until Close), which makes rewriting a
// checkpoint copy-free.
func (f *File) Tensor(name string) (Tensor, error) {
	var t Tensor
	err := f.withData(name, func(e entry, b []byte) error {
		t = Tensor{Name: name, DType: e.info.DType, Shape: slices.Clone(e.info.Shape), Data: b}
		return nil
	})
	return t, err
}

// Float32 returns the named tensor converted to a freshly allocated float32
// slice in row-major order. F32 is copied, BF16 and F16 are widened exactly;
// other dtypes fail with ErrUnsupportedDType.
func (f *File) Float32(name string) ([]float32, error) {
	var out []float32
	err := f.withCopy(name, func(e entry, b []byte) error {
		out = make([]float32, e.info.NumElements())
		switch e.info.DType {
		case F32:
			decodeF32(out, b)
		case BF16:
			decodeBF16(out, b)
		case F16:
			for i := range out {
				out[i] = F16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
			}
		default:
			out = nil
			return f.unsupported(name, e.info.DType, "float32")
		}
		return nil
	})
	return out, err
}

// Float32Finite is Float32 that also refuses a tensor holding a NaN or an
// infinity: the error wraps ErrNonFinite and names the tensor, the first bad
// element's index and value, and how many elements are bad. The check is
// fused into the conversion (one pass over the data, no branch per element),
// so it costs next to nothing on top of Float32.
func (f *File) Float32Finite(name string) ([]float32, error) {
	var out []float32
	err := f.withCopy(name, func(e entry, b []byte) error {
		out = make([]float32, e.info.NumElements())
		var ok bool
		switch e.info.DType {
		case F32:
			ok = decodeF32Finite(out, b)
		case BF16:
			ok = decodeBF16Finite(out, b)
		case F16:
			var bad uint32
			for i := range out {
				h := binary.LittleEndian.Uint16(b[2*i:])
				out[i] = F16ToF32(h)
				// Exponent all ones: x is 0 exactly then, and x-1 borrows
				// into bit 31.
				x := uint32(h&0x7c00) ^ 0x7c00
				bad |= (x - 1) & 0x80000000
			}
			ok = bad == 0
		default:
			out = nil
			return f.unsupported(name, e.info.DType, "float32")
		}
		if !ok {
			err := nonFinite(f.path, name, out)
			out = nil
			return err
		}
		return nil
	})
	return out, err
}

// nonFinite describes the non-finite values of x (the slow path, taken only
// for a bad tensor).
func nonFinite(path, name string, x []float32) error {
	first, count := -1, 0
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			if first < 0 {
				first = i
			}
			count++
		}
	}
	if first < 0 {
		// Unreachable: the fused check and this scan agree.
		return nil
	}
	return fmt.Errorf("safetensors: %s: tensor %q has %v at index %d (%d of %d values are NaN or infinite): %w",
		path, name, x[first], first, count, len(x), ErrNonFinite)
}

// BFloat16 returns the named tensor as bfloat16 bit patterns in a freshly
// allocated slice: BF16 is copied, F32 and F16 are rounded to nearest even
// (F16 goes through float32, which is exact, so it is rounded only once).
func (f *File) BFloat16(name string) ([]uint16, error) {
	var out []uint16
	err := f.withCopy(name, func(e entry, b []byte) error {
		out = make([]uint16, e.info.NumElements())
		switch e.info.DType {
		case BF16:
			for i := range out {
				out[i] = binary.LittleEndian.Uint16(b[2*i:])
			}
		case F32:
			for i := range out {
				out[i] = F32ToBF16(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
			}
		case F16:
			for i := range out {
				out[i] = F32ToBF16(F16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
			}
		default:
			out = nil
			return f.unsupported(name, e.info.DType, "bfloat16")
		}
		return nil
	})
	return out, err
}

// BFloat16Finite is BFloat16 that also refuses a tensor holding a NaN or an
// infinity, with Float32Finite's error.
func (f *File) BFloat16Finite(name string) ([]uint16, error) {
	out, err := f.BFloat16(name)
	if err != nil {
		return nil, err
	}
	var bad uint16
	for _, h := range out {
		// Exponent all ones: x is 0 exactly then, and x-1 borrows into bit 15.
		x := (h & 0x7f80) ^ 0x7f80
		bad |= (x - 1) & 0x8000
	}
	if bad != 0 {
		wide := make([]float32, len(out))
		for i, h := range out {
			wide[i] = BF16ToF32(h)
		}
		return nil, nonFinite(f.path, name, wide)
	}
	return out, nil
}

func (f *File) unsupported(name string, dt DType, to string) error {
	return fmt.Errorf("safetensors: %s: tensor %q: cannot convert %s to %s: %w", f.path, name, dt, to, ErrUnsupportedDType)
}

func decodeF32(out []float32, b []byte) {
	b = b[:4*len(out)]
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

// decodeF32Finite is decodeF32 that reports whether every value is finite.
// A float32 is NaN or infinite exactly when its exponent bits are all ones:
// then x below is 0 and x-1 sets bit 31, which no finite value's x-1 does
// (x < 1<<31). ORing those bits keeps the loop free of branches.
func decodeF32Finite(out []float32, b []byte) bool {
	const (
		expMask = 0x7f8000007f800000
		ones    = 0x0000000100000001
		tops    = 0x8000000080000000
	)
	b = b[:4*len(out)]
	var bad uint64
	i := 0
	// Two elements per 64-bit load, the same lane trick as decodeBF16Finite.
	for ; i+2 <= len(out); i += 2 {
		u := binary.LittleEndian.Uint64(b[4*i:])
		o := out[i : i+2 : i+2]
		o[0] = math.Float32frombits(uint32(u))
		o[1] = math.Float32frombits(uint32(u >> 32))
		x := (u & expMask) ^ expMask
		bad |= (x - ones) & tops
	}
	for ; i < len(out); i++ {
		u := binary.LittleEndian.Uint32(b[4*i:])
		out[i] = math.Float32frombits(u)
		x := (u & 0x7f800000) ^ 0x7f800000
		bad |= uint64((x - 1) & 0x80000000)
	}
	return bad == 0
}

// decodeBF16Finite is decodeBF16 that reports whether every value is finite,
// testing four bfloat16 exponents per 64-bit word: a lane of x is zero
// exactly when that element's exponent is all ones, and subtracting one from
// every lane then sets the lane's top bit (a lane of x never has it set, so
// only a zero lane, or a lane above one that borrows, can set it; any set bit
// means at least one zero lane).
func decodeBF16Finite(out []float32, b []byte) bool {
	const (
		expMask = 0x7f807f807f807f80
		ones    = 0x0001000100010001
		tops    = 0x8000800080008000
	)
	b = b[:2*len(out)]
	var bad uint64
	i := 0
	for ; i+4 <= len(out); i += 4 {
		u := binary.LittleEndian.Uint64(b[2*i:])
		o := out[i : i+4 : i+4]
		o[0] = math.Float32frombits(uint32(u) << 16)
		o[1] = math.Float32frombits(uint32(u>>16) << 16)
		o[2] = math.Float32frombits(uint32(u>>32) << 16)
		o[3] = math.Float32frombits(uint32(u>>48) << 16)
		x := (u & expMask) ^ expMask
		bad |= (x - ones) & tops
	}
	for ; i < len(out); i++ {
		h := binary.LittleEndian.Uint16(b[2*i:])
		out[i] = BF16ToF32(h)
		x := uint64(h&0x7f80) ^ 0x7f80
		bad |= (x - 1) & 0x8000
	}
	return bad == 0
}

// decodeBF16 widens four elements per 64-bit load; the embedding matrix is
// millions of elements and this is the hot path of model loading.
func decodeBF16(out []float32, b []byte) {
	b = b[:2*len(out)]
	i := 0
	for ; i+4 <= len(out); i += 4 {
		u := binary.LittleEndian.Uint64(b[2*i:])
		o := out[i : i+4 : i+4]
		o[0] = math.Float32frombits(uint32(u) << 16)
		o[1] = math.Float32frombits(uint32(u>>16) << 16)
		o[2] = math.Float32frombits(uint32(u>>32) << 16)
		o[3] = math.Float32frombits(uint32(u>>48) << 16)
	}
	for ; i < len(out); i++ {
		out[i] = BF16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
	}
}
