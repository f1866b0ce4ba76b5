package chunk_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/chunk"
)

// tableEncoder returns recorded tokens for known texts and fails the test
// on any other text.
type tableEncoder struct {
	t      testing.TB
	tokens map[string][]chunk.Token
}

func (e tableEncoder) Encode(text string) []chunk.Token {
	toks, ok := e.tokens[text]
	if !ok {
		e.t.Errorf("unexpected text to encode: %.60q", text)
	}
	return toks
}

// goldenEncoder records what the reference tokenized for case c: the query
// parts, the whole code and every window text. A truncated window's last
// token is not in the golden, so a stand-in token takes its place.
func goldenEncoder(t testing.TB, c goldenCase) tableEncoder {
	enc := tableEncoder{t: t, tokens: map[string][]chunk.Token{}}
	enc.tokens[chunk.FormatQuery(c.BudgetInstruction, c.Query)] = make([]chunk.Token, c.QueryTokensForBudget)
	enc.tokens[c.Chunks[0].FormattedQuery] = idTokens(c.Chunks[0].QueryIDs)
	whole := offsetTokens(c.Code, c.CodeTokenOffsets)
	for i := range whole {
		whole[i].ID = c.CodeTokenIDs[i]
	}
	enc.tokens[c.Code] = whole
	for _, ch := range c.Chunks {
		text := pySlice(c.Code, ch.StartChar, ch.EndChar)
		toks := offsetTokens(text, ch.CodeTokenOffsets)
		for i, id := range ch.InputIDs[ch.DocStart:ch.DocEnd] {
			toks[i].ID = id
		}
		if ch.CodeTruncated {
			toks = append(toks, chunk.Token{ID: -1})
		}
		if _, ok := enc.tokens[text]; !ok || text != c.Code {
			enc.tokens[text] = toks
		}
	}
	return enc
}

func TestPrepareGolden(t *testing.T) {
	g := loadGolden(t, "golden_swepruner.json")
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			plan, err := chunk.Prepare(goldenEncoder(t, c), c.Query, c.Code, chunk.Options{
				BudgetInstruction: chunk.BudgetInstruction,
				MaxLength:         c.MaxLength,
			})
			require.NoError(t, err)
			assert.Equal(t, c.CodeMaxTokens, plan.Budget)
			assert.Equal(t, len(c.CodeTokenIDs), plan.TextTokens)
			require.Len(t, plan.Inputs, len(c.Chunks))
			for i, ch := range c.Chunks {
				in := plan.Inputs[i]
				assert.Equal(t, [2]int{ch.StartChar, ch.EndChar}, [2]int{plan.Windows[i].Start, plan.Windows[i].End}, "window %d", i)
				assert.Equal(t, ch.InputIDs, in.IDs, "window %d", i)
				assert.Equal(t, [2]int{ch.DocStart, ch.DocEnd}, [2]int{in.DocStart, in.DocEnd}, "window %d", i)
				assert.Equal(t, ch.CodeTruncated, in.Truncated, "window %d", i)
			}

			// The plan's windows feed Merge straight to the golden scores.
			scores := make([][]float64, len(c.Chunks))
			for i, ch := range c.Chunks {
				for _, p := range ch.KeepProbs {
					scores[i] = append(scores[i], float64(p))
				}
			}
			merged := chunk.Merge(chunk.CodePointLen(c.Code), plan.WindowScores(scores)...)
			require.Len(t, merged, len(c.Merged))
			for i, m := range merged {
				require.Equal(t, [2]int{int(c.Merged[i][0]), int(c.Merged[i][1])}, [2]int{m.Start, m.End})
				require.InDelta(t, c.Merged[i][2], m.Score, 1e-9)
			}
		})
	}
}

// runeEncoder gives one token per code point, id = the code point.
type runeEncoder struct{}

func (runeEncoder) Encode(text string) []chunk.Token {
	var out []chunk.Token
	cp := 0
	for b, r := range text {
		out = append(out, chunk.Token{ID: int32(r), Start: cp, End: cp + 1, ByteStart: b, ByteEnd: b + len(string(r))})
		cp++
	}
	return out
}

func TestPrepareDefaultsAndErrors(t *testing.T) {
	query := "q"
	queryLen := len([]rune(chunk.FormatQuery(chunk.DefaultInstruction, query)))
	fixed := len(chunk.DefaultPrefixIDs()) + len(chunk.DefaultSuffixIDs()) + queryLen

	plan, err := chunk.Prepare(runeEncoder{}, query, "héllo", chunk.Options{})
	require.NoError(t, err)
	assert.Equal(t, chunk.DefaultMaxLength-fixed, plan.Budget)
	require.Len(t, plan.Inputs, 1)
	assert.Equal(t, []int32{'h', 'é', 'l', 'l', 'o'}, plan.Inputs[0].IDs[plan.Inputs[0].DocStart:plan.Inputs[0].DocEnd])
	assert.Equal(t, chunk.DefaultPrefixIDs(), plan.Inputs[0].IDs[:39])

	// A budget of 4 tokens with the default overlap (50 >= 4, so none).
	plan, err = chunk.Prepare(runeEncoder{}, query, "abcdefghij", chunk.Options{MaxLength: fixed + 4})
	require.NoError(t, err)
	require.Len(t, plan.Windows, 3)
	assert.Equal(t, "ij", plan.Windows[2].Text("abcdefghij"))
	assert.Equal(t, []int32{'i', 'j'}, plan.Inputs[2].IDs[plan.Inputs[2].DocStart:plan.Inputs[2].DocEnd])
	for _, in := range plan.Inputs {
		assert.False(t, in.Truncated)
		assert.LessOrEqual(t, len(in.IDs), fixed+4)
	}

	plan, err = chunk.Prepare(runeEncoder{}, query, "", chunk.Options{})
	require.NoError(t, err)
	assert.Empty(t, plan.Windows)
	assert.Empty(t, plan.Inputs)

	_, err = chunk.Prepare(runeEncoder{}, query, "abc", chunk.Options{MaxLength: fixed})
	require.ErrorIs(t, err, chunk.ErrNoRoom)
	_, err = chunk.Prepare(nil, query, "abc", chunk.Options{})
	require.ErrorIs(t, err, chunk.ErrNilEncoder)
}
