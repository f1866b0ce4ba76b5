package evalset

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNameMatches(t *testing.T) {
	tests := []struct {
		query string
		names []string
		want  int
	}{
		{"how are retries scheduled?", []string{"func retry", "def schedule"}, 2},
		{"how are retries scheduled?", []string{"class Parser"}, 0},
		{"where is the config parsed", []string{"parseConfig"}, 2},
		{"", []string{"x"}, 0},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, NameMatches(tc.query, tc.names), "%q %q", tc.query, tc.names)
	}
	assert.True(t, TermMatch("retries", "retry"))
	assert.False(t, TermMatch("ret", "retry"))
	assert.False(t, TermMatch("column", "colour"))
}
