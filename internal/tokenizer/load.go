package tokenizer

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"

	"github.com/prunekit/pruner/internal/regfile"
)

// maxFileBytes bounds each tokenizer file read from a folder; Qwen's
// vocab.json is 2.8 MB.
const maxFileBytes = 256 << 20

// ErrInvalid is wrapped by every error about tokenizer files that exist but
// cannot be used (bad JSON, unknown tokens in merges.txt, duplicate ids...).
// A missing file gives an error wrapping fs.ErrNotExist instead.
var ErrInvalid = errors.New("tokenizer: invalid tokenizer files")

// maxID bounds the token ids accepted from files, so that a corrupt file
// cannot make the loader allocate gigabytes; it is also what the packed
// merge table can hold (2,097,152 tokens, far above real vocabularies).
const maxID = mergeMax + 1

// File names inside a checkpoint folder, as HuggingFace writes them.
const (
	vocabFile       = "vocab.json"
	mergesFile      = "merges.txt"
	addedTokensFile = "added_tokens.json"
	tokenizerConfig = "tokenizer_config.json"
)

//go:embed assets/vocab.json.gz assets/merges.txt.gz assets/added_tokens.json
var assets embed.FS

// qwen3 builds the embedded tokenizer once per process; the result is
// immutable, so sharing it is safe.
var qwen3 = sync.OnceValues(buildEmbedded)

func buildEmbedded() (*Tokenizer, error) {
	// The two files decompress concurrently.
	var merges []byte
	var mergesErr error
	var wg sync.WaitGroup
	wg.Go(func() { merges, mergesErr = readGzip(assets, "assets/"+mergesFile+".gz") })
	vocab, err := readGzip(assets, "assets/"+vocabFile+".gz")
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if mergesErr != nil {
		return nil, mergesErr
	}
	added, err := assets.ReadFile("assets/" + addedTokensFile)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: embedded %s: %w", addedTokensFile, err)
	}
	addedTokens, err := parseAddedTokensJSON(added)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: embedded %s: %w", addedTokensFile, err)
	}
	return build(vocab, merges, addedTokens)
}

// Qwen3 returns the Qwen3 tokenizer embedded in the binary (the files shipped
// with SWE-Pruner: 151,643 BPE tokens, 151,387 merges, 26 added tokens).
// It is built on the first call and the same immutable *Tokenizer is
// returned to every later caller (sync.OnceValues), so the cost of building
// it is paid once per process.
func Qwen3() (*Tokenizer, error) {
	return qwen3()
}

// Load reads a byte-level BPE tokenizer from a HuggingFace checkpoint folder:
// vocab.json and merges.txt are required; the added (special) tokens come
// from added_tokens.json or, when that file is absent, from the
// added_tokens_decoder of tokenizer_config.json (both optional). Every added
// token is treated as HF's normalized=false, without lstrip/rstrip, which is
// how Qwen tokenizers declare them.
//
// Each file must be a regular file of at most 256 MiB: a FIFO or a device
// under one of these names is refused at once instead of blocking the load.
func Load(dir string) (*Tokenizer, error) {
	vocab, err := regfile.ReadFile(filepath.Join(dir, vocabFile), maxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	merges, err := regfile.ReadFile(filepath.Join(dir, mergesFile), maxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	var added []addedToken
	if data, err := regfile.ReadFile(filepath.Join(dir, addedTokensFile), maxFileBytes); err == nil {
		if added, err = parseAddedTokensJSON(data); err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", filepath.Join(dir, addedTokensFile), err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("tokenizer: %w", err)
	} else if data, err := regfile.ReadFile(filepath.Join(dir, tokenizerConfig), maxFileBytes); err == nil {
		if added, err = parseTokenizerConfig(data); err != nil {
			return nil, fmt.Errorf("tokenizer: %s: %w", filepath.Join(dir, tokenizerConfig), err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := build(vocab, merges, added)
	if err != nil {
		return nil, fmt.Errorf("%w (folder %s)", err, dir)
	}
	return t, nil
}

func readGzip(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: embedded asset: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: embedded asset %s: %w", name, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: embedded asset %s: %w", name, err)
	}
	return data, nil
}

type addedToken struct {
	content string
	id      int32
}

func parseAddedTokensJSON(data []byte) ([]addedToken, error) {
	var out []addedToken
	err := parseVocabJSON(data, func(key []byte, id int64) error {
		out = append(out, addedToken{content: string(key), id: int32(id)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return out, nil
}

func parseTokenizerConfig(data []byte) ([]addedToken, error) {
	var cfg struct {
		AddedTokensDecoder map[string]struct {
			Content string `json:"content"`
		} `json:"added_tokens_decoder"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	out := make([]addedToken, 0, len(cfg.AddedTokensDecoder))
	for k, v := range cfg.AddedTokensDecoder {
		id, err := strconv.ParseInt(k, 10, 32)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("%w: added token id %q", ErrInvalid, k)
		}
		out = append(out, addedToken{content: v.Content, id: int32(id)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, nil
}

// build assembles a Tokenizer from the contents of vocab.json, merges.txt
// and the added tokens.
func build(vocabJSON, mergesTxt []byte, added []addedToken) (*Tokenizer, error) {
	t := &Tokenizer{bl: newByteLevel()}

	// Raw token bytes go into one arena so that the id→bytes table and the
	// bytes→id map share a single allocation.
	type entry struct{ off, end, id int32 }
	entries := make([]entry, 0, 1<<17)
	arena := make([]byte, 0, len(vocabJSON)/2)
	maxVocabID := int32(-1)
	err := parseVocabJSON(vocabJSON, func(key []byte, id int64) error {
		if id >= maxID {
			return fmt.Errorf("token id %d too large", id)
		}
		off := len(arena)
		var ok bool
		if arena, ok = t.bl.decode(arena, key); !ok || len(arena) == off {
			return fmt.Errorf("token %q is not a byte-level spelling", key)
		}
		entries = append(entries, entry{int32(off), int32(len(arena)), int32(id)})
		maxVocabID = max(maxVocabID, int32(id))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, vocabFile, err)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%w: %s: empty vocabulary", ErrInvalid, vocabFile)
	}
	size := maxVocabID + 1
	for _, a := range added {
		if a.id < 0 || a.id >= maxID {
			return nil, fmt.Errorf("%w: added token %q has id %d", ErrInvalid, a.content, a.id)
		}
		if a.content == "" {
			return nil, fmt.Errorf("%w: added token with id %d is empty", ErrInvalid, a.id)
		}
		size = max(size, a.id+1)
	}

	all := string(arena)
	t.pieces = make([]string, size)
	t.vocab = make(map[string]int32, len(entries))
	for _, e := range entries {
		piece := all[e.off:e.end]
		if t.pieces[e.id] != "" {
			return nil, fmt.Errorf("%w: %s: id %d used twice", ErrInvalid, vocabFile, e.id)
		}
		if _, dup := t.vocab[piece]; dup {
			return nil, fmt.Errorf("%w: %s: token %q listed twice", ErrInvalid, vocabFile, t.bl.encode(piece))
		}
		t.pieces[e.id] = piece
		t.vocab[piece] = e.id
	}
	for b := 0; b < 256; b++ {
		id, ok := t.vocab[string([]byte{byte(b)})]
		if !ok {
			return nil, fmt.Errorf("%w: %s: no token for byte 0x%02X", ErrInvalid, vocabFile, b)
		}
		t.byteID[b] = id
	}
	t.tokLen = make([]int32, size)
	for id, p := range t.pieces {
		t.tokLen[id] = int32(len(p))
	}

	if err := t.buildMerges(mergesTxt); err != nil {
		return nil, err
	}
	t.monotone = t.merges.monotone(int(size))

	t.added = newAddedMatcher()
	t.isAdded = make([]bool, size)
	for _, a := range added {
		if p := t.pieces[a.id]; p != "" && p != a.content {
			return nil, fmt.Errorf("%w: added token %q reuses id %d of vocabulary token %q", ErrInvalid, a.content, a.id, t.bl.encode(p))
		}
		if prev, ok := t.added.ids[a.content]; ok && prev != a.id {
			return nil, fmt.Errorf("%w: added token %q has two ids", ErrInvalid, a.content)
		}
		t.pieces[a.id] = a.content
		t.tokLen[a.id] = int32(len(a.content))
		t.isAdded[a.id] = true
		t.added.add(a.content, a.id)
	}
	t.added.finish()
	t.cache = newWordCache()
	return t, nil
}

// buildMerges parses merges.txt: an optional "#version" header, then one
// merge "A B" per line in byte-level spelling, highest priority first.
// Resolving the 150k lines against the vocabulary is most of the loading
// time, so it is split across CPUs; the ranks stay in file order.
func (t *Tokenizer) buildMerges(data []byte) error {
	parts := min(max(runtime.GOMAXPROCS(0), 1), 4)
	if len(data) < 1<<16 {
		parts = 1
	}
	bounds := make([]int, parts+1)
	bounds[parts] = len(data)
	for i := 1; i < parts; i++ {
		b := max(i*len(data)/parts, bounds[i-1])
		if nl := bytes.IndexByte(data[b:], '\n'); nl >= 0 {
			b += nl + 1
		} else {
			b = len(data)
		}
		bounds[i] = b
	}
	recs := make([][]mergeRec, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for i := 0; i < parts; i++ {
		wg.Go(func() { recs[i], errs[i] = t.resolveMerges(data, bounds[i], bounds[i+1]) })
	}
	wg.Wait()
	total := 0
	for i, err := range errs {
		if err != nil { // the earliest part holds the first bad line
			return err
		}
		total += len(recs[i])
	}
	t.merges = newMergeTable(total)
	line := 0
	for _, part := range recs {
		for _, r := range part {
			line++
			if err := t.merges.add(r.a, r.b, r.ab); err != nil {
				return fmt.Errorf("%w: %s merge %d: %w", ErrInvalid, mergesFile, line, err)
			}
		}
	}
	return nil
}

// mergeRec is one resolved line of merges.txt.
type mergeRec struct{ a, b, ab int32 }

// resolveMerges resolves the lines of data[start:end] (start at a line
// start) to token ids. It only reads the vocabulary.
func (t *Tokenizer) resolveMerges(data []byte, start, end int) ([]mergeRec, error) {
	out := make([]mergeRec, 0, (end-start)/10)
	lineNo := func(pos int) int { return bytes.Count(data[:pos], []byte{'\n'}) + 1 }
	var a, b, ab []byte
	for pos := start; pos < end; {
		lineStart := pos
		l := data[pos:end]
		if nl := bytes.IndexByte(l, '\n'); nl >= 0 {
			l = l[:nl]
			pos += nl + 1
		} else {
			pos = end
		}
		if lineStart == 0 && bytes.HasPrefix(l, []byte("#version")) {
			continue
		}
		l = bytes.TrimRight(l, "\r")
		if len(l) == 0 {
			continue
		}
		sp := bytes.IndexByte(l, ' ')
		if sp <= 0 || sp == len(l)-1 || bytes.IndexByte(l[sp+1:], ' ') >= 0 {
			return nil, fmt.Errorf("%w: %s line %d: want two tokens separated by one space, got %q", ErrInvalid, mergesFile, lineNo(lineStart), l)
		}
		var okA, okB bool
		a, okA = t.bl.decode(a[:0], l[:sp])
		b, okB = t.bl.decode(b[:0], l[sp+1:])
		if !okA || !okB {
			return nil, fmt.Errorf("%w: %s line %d: %q is not a byte-level spelling", ErrInvalid, mergesFile, lineNo(lineStart), l)
		}
		idA, okA := t.vocab[string(a)]
		idB, okB := t.vocab[string(b)]
		ab = append(append(ab[:0], a...), b...)
		idAB, okAB := t.vocab[string(ab)]
		if !okA || !okB || !okAB {
			return nil, fmt.Errorf("%w: %s line %d: merge %q uses a token missing from %s", ErrInvalid, mergesFile, lineNo(lineStart), l, vocabFile)
		}
		out = append(out, mergeRec{idA, idB, idAB})
	}
	return out, nil
}
