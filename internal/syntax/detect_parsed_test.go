package syntax

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blameOf annotates src's lines as git blame prints them.
func blameOf(src string) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(src, "\n"), "\n") {
		fmt.Fprintf(&b, "%08x (Ann Lee      2025-09-01 10:%02d:00 +0000 %2d) %s\n", 0x3300d215+i%3, i%60, i+1, l)
	}
	return b.String()
}

const goSource = `package cache

import (
	"errors"
	"sync"
)

// Cache holds values until they expire.
type Cache struct {
	mu    sync.Mutex
	items map[string]string
}

func (c *Cache) Get(key string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.items[key]
	if !ok {
		return "", errors.New("cache: no such key")
	}
	return v, nil
}

func (c *Cache) Put(key, value string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items[key] = value
}

func (c *Cache) Keys() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.items))
	for k := range c.items {
		keys = append(keys, k)
	}
	return keys
}

func (c *Cache) Len() int {
	n := len(c.items)
	return n
}
`

const pySource = `import os


class Config:
    """Settings read from the environment."""

    def __init__(self, prefix):
        self.prefix = prefix

    def get(self, name, default=None):
        value = os.environ.get(self.prefix + name)
        if value is None:
            return default
        return value

    def names(self):
        return [k[len(self.prefix):] for k in os.environ if k.startswith(self.prefix)]

    def as_dict(self):
        return {name: self.get(name) for name in self.names()}
`

func TestDetectParsed(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name, text, file string
		want             Language
	}{
		{"go source", goSource, "", Go},
		{"python source", pySource, "", Python},
		// Detection alone calls these code; they do not parse as it.
		{"blame of python", blameOf(pySource), "", Text},
		// A file name is trusted.
		{"blame named .py", blameOf(pySource), "config.py", Python},
		{"go named", goSource, "cache.go", Go},
		{"text", "just some words\nand more words\n", "", Text},
		{"empty", "", "", Text},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, DetectParsed(ctx, tt.text, tt.file))
		})
	}
	// The blame is the case the parse is for: content detection alone
	// takes it for code.
	require.Equal(t, Python, Detect(blameOf(pySource), ""))
}

// TestDetectParsedWindow: only the detection window is parsed, and a
// line cut at its end does not count against the text.
func TestDetectParsedWindow(t *testing.T) {
	var b strings.Builder
	for b.Len() < 4*detectWindow {
		b.WriteString(goSource)
		b.WriteString("\n")
	}
	src := strings.ReplaceAll(b.String(), "package cache\n", "")
	src = "package cache\n" + src
	assert.Equal(t, Go, DetectParsed(context.Background(), src, ""))
}
