package wordpiece

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/prunekit/pruner/internal/regfile"
)

// Bounds on the files Load reads (bert-base-uncased's vocab.txt is 232 KB,
// its tokenizer_config.json under 1 KB).
const (
	maxVocabBytes  = 64 << 20
	maxConfigBytes = 1 << 20
)

// tokenizerConfig mirrors the fields of tokenizer_config.json that change
// the tokenization. Pointers tell "absent" (BertTokenizer's default) from
// an explicit value.
type tokenizerConfig struct {
	DoLowerCase          *bool           `json:"do_lower_case"`
	StripAccents         *bool           `json:"strip_accents"`
	TokenizeChineseChars *bool           `json:"tokenize_chinese_chars"`
	UNK                  json.RawMessage `json:"unk_token"`
	CLS                  json.RawMessage `json:"cls_token"`
	SEP                  json.RawMessage `json:"sep_token"`
	PAD                  json.RawMessage `json:"pad_token"`
	Mask                 json.RawMessage `json:"mask_token"`
}

// Load reads a tokenizer from a model folder: vocab.txt, and
// tokenizer_config.json when there is one (do_lower_case, strip_accents,
// tokenize_chinese_chars and the special tokens' names; without it the
// tokenizer is bert-base-uncased's). Both must be regular files. Errors
// wrap ErrInvalid and name the file.
func Load(dir string) (*Tokenizer, error) {
	cfg := DefaultConfig()
	path := filepath.Join(dir, "tokenizer_config.json")
	data, err := regfile.ReadFile(path, maxConfigBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	default:
		if cfg, err = parseConfig(data); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, path, err)
		}
	}
	path = filepath.Join(dir, "vocab.txt")
	vocab, err := regfile.ReadFile(path, maxVocabBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	t, err := New(vocab, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// parseConfig reads a tokenizer_config.json into a Config.
func parseConfig(data []byte) (Config, error) {
	cfg := DefaultConfig()
	var tc tokenizerConfig
	if err := json.Unmarshal(data, &tc); err != nil {
		return cfg, err
	}
	if tc.DoLowerCase != nil {
		cfg.Lowercase = *tc.DoLowerCase
	}
	// strip_accents null (or absent) follows do_lower_case, as in HF.
	cfg.StripAccents = cfg.Lowercase
	if tc.StripAccents != nil {
		cfg.StripAccents = *tc.StripAccents
	}
	if tc.TokenizeChineseChars != nil {
		cfg.ChineseChars = *tc.TokenizeChineseChars
	}
	var errs []error
	for _, f := range []struct {
		field string
		raw   json.RawMessage
		dst   *string
	}{
		{"unk_token", tc.UNK, &cfg.UNK}, {"cls_token", tc.CLS, &cfg.CLS}, {"sep_token", tc.SEP, &cfg.SEP},
		{"pad_token", tc.PAD, &cfg.PAD}, {"mask_token", tc.Mask, &cfg.Mask},
	} {
		s, err := tokenName(f.raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.field, err))
		}
		*f.dst = s
	}
	return cfg, errors.Join(errs...)
}

// tokenName reads a special token's name, stored either as a string or as
// an AddedToken object ({"content": ...}); absent or null gives "".
func tokenName(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var obj struct {
		Content *string `json:"content"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.Content == nil {
		return "", fmt.Errorf("want a string or an object with a content string, got %.40s", raw)
	}
	return *obj.Content, nil
}
