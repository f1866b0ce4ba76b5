package chunk_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/chunk"
)

func idTokens(ids []int32) []chunk.Token {
	out := make([]chunk.Token, len(ids))
	for i, id := range ids {
		out[i] = chunk.Token{ID: id, Start: i, End: i + 1, ByteStart: i, ByteEnd: i + 1}
	}
	return out
}

func TestDefaultsMatchGoldens(t *testing.T) {
	for _, file := range []string{"golden_swepruner.json", "golden_lamr.json"} {
		g := loadGolden(t, file)
		for _, c := range g.Cases {
			assert.Equal(t, c.PrefixIDs, chunk.DefaultPrefixIDs(), c.Name)
			assert.Equal(t, c.SuffixIDs, chunk.DefaultSuffixIDs(), c.Name)
			assert.Equal(t, c.PrefixText, chunk.DefaultPrefixText, c.Name)
			assert.Equal(t, c.SuffixText, chunk.DefaultSuffixText, c.Name)
			assert.Equal(t, c.Instruction, chunk.DefaultInstruction, c.Name)
			assert.Equal(t, c.BudgetInstruction, chunk.BudgetInstruction, c.Name)
			assert.Equal(t, chunk.DefaultOverlap, c.Overlap, c.Name)
			assert.Equal(t, c.CodeMaxTokens,
				chunk.TextBudget(c.MaxLength, len(c.PrefixIDs), c.QueryTokensForBudget, len(c.SuffixIDs)), c.Name)
			for i, ch := range c.Chunks {
				assert.Equal(t, ch.FormattedQuery, chunk.FormatQuery(chunk.DefaultInstruction, c.Query), "%s chunk %d", c.Name, i)
			}
		}
	}
	// The defaults are copies: changing one must not change the next.
	p := chunk.DefaultPrefixIDs()
	p[0] = -1
	assert.Equal(t, int32(151644), chunk.DefaultPrefixIDs()[0])
}

// TestBuildInputGolden rebuilds every golden model input. For a truncated
// chunk the golden only records the kept text ids, so one extra token stands
// for what the reference cut.
func TestBuildInputGolden(t *testing.T) {
	g := loadGolden(t, "golden_swepruner.json")
	for _, c := range g.Cases {
		for i, ch := range c.Chunks {
			text := idTokens(ch.InputIDs[ch.DocStart:ch.DocEnd])
			if ch.CodeTruncated {
				text = append(text, chunk.Token{ID: 42})
			}
			in, err := chunk.BuildInput(c.PrefixIDs, idTokens(ch.QueryIDs), text, c.SuffixIDs, c.MaxLength)
			require.NoError(t, err)
			assert.Equal(t, ch.InputIDs, in.IDs, "%s chunk %d", c.Name, i)
			assert.Equal(t, ch.DocStart, in.DocStart, "%s chunk %d", c.Name, i)
			assert.Equal(t, ch.DocEnd, in.DocEnd, "%s chunk %d", c.Name, i)
			assert.Equal(t, ch.CodeTruncated, in.Truncated, "%s chunk %d", c.Name, i)
			assert.Equal(t, text[:ch.DocEnd-ch.DocStart], in.Tokens, "%s chunk %d", c.Name, i)
		}
	}
}

func TestBuildInputEdges(t *testing.T) {
	prefix, suffix := []int32{1, 2}, []int32{9}
	tests := []struct {
		name      string
		query     []int32
		text      []int32
		maxLength int
		wantIDs   []int32
		wantDoc   [2]int
		wantTrunc bool
		wantErr   error
	}{
		{name: "fits", query: []int32{5}, text: []int32{7, 8}, maxLength: 10,
			wantIDs: []int32{1, 2, 5, 7, 8, 9}, wantDoc: [2]int{3, 5}},
		{name: "exactly full", query: []int32{5}, text: []int32{7, 8}, maxLength: 6,
			wantIDs: []int32{1, 2, 5, 7, 8, 9}, wantDoc: [2]int{3, 5}},
		{name: "one cut", query: []int32{5}, text: []int32{7, 8}, maxLength: 5,
			wantIDs: []int32{1, 2, 5, 7, 9}, wantDoc: [2]int{3, 4}, wantTrunc: true},
		{name: "no room for text", query: []int32{5}, text: []int32{7}, maxLength: 4,
			wantIDs: []int32{1, 2, 5, 9}, wantDoc: [2]int{3, 3}, wantTrunc: true},
		{name: "empty text", query: []int32{5}, maxLength: 4,
			wantIDs: []int32{1, 2, 5, 9}, wantDoc: [2]int{3, 3}},
		{name: "no room for prompt", query: []int32{5, 6}, text: []int32{7}, maxLength: 4,
			wantErr: chunk.ErrNoRoom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := chunk.BuildInput(prefix, idTokens(tt.query), idTokens(tt.text), suffix, tt.maxLength)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantIDs, in.IDs)
			assert.Equal(t, tt.wantDoc, [2]int{in.DocStart, in.DocEnd})
			assert.Equal(t, tt.wantTrunc, in.Truncated)
			assert.Len(t, in.Tokens, in.DocEnd-in.DocStart)
			assert.LessOrEqual(t, len(in.IDs), tt.maxLength)
		})
	}
}

func TestBuildInputDoesNotAlias(t *testing.T) {
	prefix := []int32{1, 2}
	text := idTokens([]int32{7, 8})
	in, err := chunk.BuildInput(prefix, nil, text, nil, 10)
	require.NoError(t, err)
	in.IDs[0] = 100
	in.Tokens[0].ID = 100
	assert.Equal(t, int32(1), prefix[0])
	assert.Equal(t, int32(7), text[0].ID)
}
