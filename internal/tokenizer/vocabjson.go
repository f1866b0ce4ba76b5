package tokenizer

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// errSyntax is wrapped by every vocab.json syntax error.
var errSyntax = errors.New("invalid JSON")

// parseVocabJSON calls fn for each member of a flat JSON object whose values
// are non-negative integers, as vocab.json and added_tokens.json are (key
// is only valid during the call). It is a
// small hand-written scanner because encoding/json into a map costs several
// times more, and loading the 150k-entry Qwen vocabulary is on the start-up
// path of every process.
func parseVocabJSON(data []byte, fn func(key []byte, id int64) error) error {
	p := jsonScanner{data: data}
	p.skipSpace()
	if !p.consume('{') {
		return p.errorf("expected '{'")
	}
	p.skipSpace()
	if p.consume('}') {
		return p.trailing()
	}
	var buf []byte
	for {
		p.skipSpace()
		key, err := p.str(buf[:0])
		if err != nil {
			return err
		}
		buf = key
		p.skipSpace()
		if !p.consume(':') {
			return p.errorf("expected ':'")
		}
		p.skipSpace()
		id, err := p.integer()
		if err != nil {
			return err
		}
		if err := fn(key, id); err != nil {
			return err
		}
		p.skipSpace()
		if p.consume(',') {
			continue
		}
		if p.consume('}') {
			return p.trailing()
		}
		return p.errorf("expected ',' or '}'")
	}
}

type jsonScanner struct {
	data []byte
	pos  int
}

func (p *jsonScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", errSyntax, p.pos, fmt.Sprintf(format, args...))
}

func (p *jsonScanner) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonScanner) consume(c byte) bool {
	if p.pos < len(p.data) && p.data[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func (p *jsonScanner) trailing() error {
	p.skipSpace()
	if p.pos != len(p.data) {
		return p.errorf("trailing data")
	}
	return nil
}

func (p *jsonScanner) integer() (int64, error) {
	start := p.pos
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		p.pos++
	}
	if start == p.pos {
		return 0, p.errorf("expected a non-negative integer")
	}
	v, err := strconv.ParseInt(string(p.data[start:p.pos]), 10, 32)
	if err != nil {
		return 0, p.errorf("bad integer: %v", err)
	}
	return v, nil
}

// str appends the decoded JSON string at the cursor to dst.
func (p *jsonScanner) str(dst []byte) ([]byte, error) {
	if !p.consume('"') {
		return nil, p.errorf("expected a string")
	}
	for {
		start := p.pos
		for p.pos < len(p.data) && p.data[p.pos] != '"' && p.data[p.pos] != '\\' && p.data[p.pos] >= 0x20 {
			p.pos++
		}
		dst = append(dst, p.data[start:p.pos]...)
		if p.pos >= len(p.data) {
			return nil, p.errorf("unterminated string")
		}
		switch c := p.data[p.pos]; {
		case c == '"':
			p.pos++
			return dst, nil
		case c < 0x20:
			return nil, p.errorf("control character in string")
		}
		// Backslash escape.
		p.pos++
		if p.pos >= len(p.data) {
			return nil, p.errorf("unterminated escape")
		}
		c := p.data[p.pos]
		p.pos++
		switch c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return nil, p.errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
					p.pos += 2
					if r2, ok = p.hex4(); !ok {
						return nil, p.errorf("bad \\u escape")
					}
				}
				r = utf16.DecodeRune(r, r2)
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return nil, p.errorf("bad escape \\%c", c)
		}
	}
}

func (p *jsonScanner) hex4() (rune, bool) {
	if p.pos+4 > len(p.data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	p.pos += 4
	return rune(v), true
}
