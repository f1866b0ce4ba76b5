package pruner

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fullResult has every field of Result and of the types it holds set.
func fullResult() *Result {
	return &Result{
		Text: "def f():\n    # ... 2 lines omitted (2-3)\n",
		Lines: []Line{
			{Number: 1, Kept: true, Score: 0.9, Reason: ReasonModel},
			{Number: 2, Score: 0.1},
			{Number: 3, Score: 0.2},
		},
		Placeholders: []Placeholder{{OutputLine: 2, FirstLine: 2, LastLine: 3}},
		Score:        0.75,
		TokenScores:  []TokenScore{{Start: 0, End: 3, Score: 0.5}},
		Tokens:       TokenCounts{Input: 20, Kept: 12, ModelInput: 40},
		Windows:      1,
		Language:     "python",
		Scorer:       "swe-pruner",
		Unpruned:     "why not",
		Notes:        []string{"a note"},
	}
}

// TestResultJSONShape pins the JSON field names of Result, the one shape
// the CLI's -json, /v1/prune and the MCP tools' _meta emit.
func TestResultJSONShape(t *testing.T) {
	data, err := json.Marshal(fullResult())
	require.NoError(t, err)
	var got map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &got))
	assert.ElementsMatch(t, []string{"text", "lines", "kept_lines", "placeholders", "score", "token_scores",
		"tokens", "windows", "language", "scorer", "unpruned", "notes"}, keys(got))

	sub := func(raw json.RawMessage) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(raw, &m))
		return m
	}
	first := func(raw json.RawMessage) json.RawMessage {
		var a []json.RawMessage
		require.NoError(t, json.Unmarshal(raw, &a))
		require.NotEmpty(t, a)
		return a[0]
	}
	assert.ElementsMatch(t, []string{"number", "kept", "score", "reason"}, keys(sub(first(got["lines"]))))
	assert.ElementsMatch(t, []string{"output_line", "first_line", "last_line"}, keys(sub(first(got["placeholders"]))))
	assert.ElementsMatch(t, []string{"start", "end", "score"}, keys(sub(first(got["token_scores"]))))
	assert.ElementsMatch(t, []string{"input", "kept", "model_input"}, keys(sub(got["tokens"])))
	assert.JSONEq(t, `[1]`, string(got["kept_lines"]))
	var lines []json.RawMessage
	require.NoError(t, json.Unmarshal(got["lines"], &lines))
	assert.JSONEq(t, `{"number":2,"kept":false,"score":0.1}`, string(lines[1]), "a removed line has no reason")

	// Empty lists are arrays, optional fields are left out.
	data, err = json.Marshal(&Result{Scorer: "line"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"text":"","lines":[],"kept_lines":[],"placeholders":[],"score":0,
		"tokens":{"input":0,"kept":0,"model_input":0},"windows":0,"language":"","scorer":"line","notes":[]}`, string(data))
}

// TestResultJSONRoundTrip: the JSON decodes back into the same Result.
func TestResultJSONRoundTrip(t *testing.T) {
	want := fullResult()
	data, err := json.Marshal(want)
	require.NoError(t, err)
	var got Result
	require.NoError(t, json.Unmarshal(data, &got))
	assert.Equal(t, want, &got)
}

// TestResultJSONTagsSnakeCase walks Result and every type it holds: each
// exported field carries an explicit snake_case json name, so a field added
// later cannot slip into the JSON under its Go name.
func TestResultJSONTagsSnakeCase(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			assert.Regexp(t, snake, name, "%s.%s has no snake_case json tag", typ.Name(), f.Name)
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[Result]())
	assert.True(t, seen[reflect.TypeFor[Line]()] && seen[reflect.TypeFor[TokenCounts]()], "walked the nested types")
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
