package tokenizer

import (
	"sort"
	"strings"
)

// addedMatcher finds added tokens in raw text, leftmost-longest (as HF's
// Aho-Corasick matcher with MatchKind::LeftmostLongest): the match that
// starts first wins, and among those the longest.
type addedMatcher struct {
	ids     map[string]int32
	byFirst [256][]string // candidates by first byte, longest first
	firsts  []byte        // distinct first bytes
}

func newAddedMatcher() *addedMatcher {
	return &addedMatcher{ids: map[string]int32{}}
}

func (m *addedMatcher) add(content string, id int32) {
	if _, ok := m.ids[content]; ok {
		return
	}
	m.ids[content] = id
	c := content[0]
	if len(m.byFirst[c]) == 0 {
		m.firsts = append(m.firsts, c)
	}
	m.byFirst[c] = append(m.byFirst[c], content)
}

func (m *addedMatcher) finish() {
	for _, c := range m.firsts {
		sort.SliceStable(m.byFirst[c], func(i, j int) bool { return len(m.byFirst[c][i]) > len(m.byFirst[c][j]) })
	}
}

// find returns the leftmost-longest added token in s at or after from.
func (m *addedMatcher) find(s string, from int) (start, end int, id int32, ok bool) {
	if len(m.firsts) == 0 {
		return 0, 0, 0, false
	}
	for i := from; i < len(s); i++ {
		if len(m.firsts) == 1 {
			k := strings.IndexByte(s[i:], m.firsts[0])
			if k < 0 {
				return 0, 0, 0, false
			}
			i += k
		}
		for _, cand := range m.byFirst[s[i]] {
			if strings.HasPrefix(s[i:], cand) {
				return i, i + len(cand), m.ids[cand], true
			}
		}
	}
	return 0, 0, 0, false
}
