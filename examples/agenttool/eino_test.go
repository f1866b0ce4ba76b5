package agenttool

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logTool is an eino InvokableTool returning the test log; it records the
// arguments it receives.
type logTool struct {
	name string
	mu   sync.Mutex
	args []string
}

func (l *logTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: l.name, Desc: "prints the build log", ParamsOneOf: schema.NewParamsOneOfByParams(
		map[string]*schema.ParameterInfo{QuestionArg: {Type: schema.String, Desc: "what to look for"}})}, nil
}

func (l *logTool) InvokableRun(_ context.Context, args string, _ ...tool.Option) (string, error) {
	l.mu.Lock()
	l.args = append(l.args, args)
	l.mu.Unlock()
	return buildLog(), nil
}

func TestEinoToolsNode(t *testing.T) {
	ctx := context.Background()
	f := newFolder(t, 1, WithMinChars(100), WithTailLines(1))
	runTests, cat := &logTool{name: "run_tests"}, &logTool{name: "cat"}
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{
		Tools:               []tool.BaseTool{runTests, cat},
		ToolCallMiddlewares: []compose.ToolMiddleware{f.EinoMiddleware("run_tests")},
	})
	require.NoError(t, err)
	calls := []schema.ToolCall{
		{ID: "1", Type: "function", Function: schema.FunctionCall{Name: "run_tests", Arguments: `{"pkg":"./...","context_focus_question":"which step failed?"}`}},
		{ID: "2", Type: "function", Function: schema.FunctionCall{Name: "run_tests", Arguments: `{"pkg":"./..."}`}},
		{ID: "3", Type: "function", Function: schema.FunctionCall{Name: "cat", Arguments: `{"context_focus_question":"which step failed?"}`}},
	}
	out, err := node.Invoke(ctx, schema.AssistantMessage("", calls))
	require.NoError(t, err)
	require.Len(t, out, 3)
	byID := map[string]string{}
	for _, m := range out {
		byID[m.ToolCallID] = m.Content
	}
	log := buildLog()
	lines := strings.Split(log, "\n")
	assert.Equal(t, "[pruned for \"which step failed?\": kept 2 of 30 lines (6% of the text), folded 28; "+
		"for the full output call again without context_focus_question]\n"+
		"... 11 lines omitted (1-11) ...\n"+lines[11]+"\n... 17 lines omitted (13-29) ...\n"+lines[29]+"\n", byID["1"])
	assert.Equal(t, log, byID["2"], "no question: untouched")
	assert.Equal(t, log, byID["3"], "tool not chosen: untouched")

	assert.ElementsMatch(t, []string{`{"pkg":"./..."}`, `{"pkg":"./..."}`}, runTests.args, "question stripped")
	assert.Equal(t, []string{`{"context_focus_question":"which step failed?"}`}, cat.args)
}

func TestEinoStreamable(t *testing.T) {
	ctx := context.Background()
	f := newFolder(t, 1, WithMinChars(100), WithTailLines(0))
	log := buildLog()
	var got []string
	next := func(_ context.Context, in *compose.ToolInput) (*compose.StreamToolOutput, error) {
		got = append(got, in.Arguments)
		if strings.Contains(in.Arguments, "boom") {
			return nil, errors.New("boom")
		}
		half := len(log) / 2
		return &compose.StreamToolOutput{Result: schema.StreamReaderFromArray([]string{log[:half], log[half:]})}, nil
	}
	mw := f.EinoMiddleware().Streamable(next)
	tests := []struct {
		name, args, want string
		chunks           int
		wantErr          bool
	}{
		{"question: one pruned chunk", `{"context_focus_question":"why?"}`, "", 1, false},
		{"no question: stream untouched", `{}`, log, 2, false},
		{"not JSON: untouched", `not json`, log, 2, false},
		{"tool error passes through", `{"boom":1,"context_focus_question":"why?"}`, "", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := mw(ctx, &compose.ToolInput{Name: "tail", Arguments: tc.args})
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			var chunks []string
			for {
				s, err := out.Result.Recv()
				if err != nil {
					break
				}
				chunks = append(chunks, s)
			}
			assert.Len(t, chunks, tc.chunks)
			text := strings.Join(chunks, "")
			if tc.want != "" {
				assert.Equal(t, tc.want, text)
			} else {
				assert.True(t, strings.HasPrefix(text, "[pruned for \"why?\": kept 2 of 30 lines"), text)
			}
		})
	}
	assert.Equal(t, []string{`{}`, `{}`, `not json`, `{"boom":1}`}, got)
}

// A stream longer than WithMaxStreamBytes is not held whole: what was read
// comes first, the rest as it arrives, then the note; a cancelled caller
// stops the reading.
func TestEinoStreamOverTheCap(t *testing.T) {
	f := newFolder(t, 1, WithMinChars(100), WithMaxStreamBytes(1000))
	chunk := strings.Repeat("x", 99) + "\n"
	const n = 50 // 5,000 bytes
	var sent atomic.Int32
	next := func(context.Context, *compose.ToolInput) (*compose.StreamToolOutput, error) {
		r, w := schema.Pipe[string](0)
		go func() {
			defer w.Close()
			for range n {
				if w.Send(chunk, nil) {
					return
				}
				sent.Add(1)
			}
		}()
		return &compose.StreamToolOutput{Result: r}, nil
	}
	mw := f.EinoMiddleware().Streamable(next)
	out, err := mw(context.Background(), &compose.ToolInput{Name: "tail", Arguments: `{"context_focus_question":"why?"}`})
	require.NoError(t, err)
	// Only a little past the cap has been read before the answer comes.
	assert.LessOrEqual(t, int(sent.Load()), 12)
	var b strings.Builder
	for {
		s, err := out.Result.Recv()
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
		b.WriteString(s)
	}
	assert.Equal(t, strings.Repeat(chunk, n)+"\n[context pruning skipped, full output shown: over 1000 bytes]", b.String())

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = mw(ctx, &compose.ToolInput{Name: "tail", Arguments: `{"context_focus_question":"why?"}`})
	require.ErrorIs(t, err, context.Canceled)
}

// plainTool has one parameter and knows nothing about pruning.
type plainTool struct{ params *schema.ParamsOneOf }

func (p plainTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "grep", Desc: "search", ParamsOneOf: p.params}, nil
}

func (plainTool) InvokableRun(context.Context, string, ...tool.Option) (string, error) {
	return "", nil
}

func (plainTool) StreamableRun(context.Context, string, ...tool.Option) (*schema.StreamReader[string], error) {
	return schema.StreamReaderFromArray([]string{"x"}), nil
}

func TestWithFocusQuestion(t *testing.T) {
	ctx := context.Background()
	byParams := schema.NewParamsOneOfByParams(map[string]*schema.ParameterInfo{"pattern": {Type: schema.String, Required: true}})
	tests := []struct {
		name   string
		params *schema.ParamsOneOf
		want   []string
	}{
		{"params", byParams, []string{"pattern", QuestionArg}},
		{"no params", nil, []string{QuestionArg}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, err := WithFocusQuestion(plainTool{tc.params}).Info(ctx)
			require.NoError(t, err)
			streamInfo, err := WithFocusQuestionStreamable(plainTool{tc.params}).Info(ctx)
			require.NoError(t, err)
			assert.Equal(t, info, streamInfo, "the streaming wrapper offers the same parameters")
			assert.Equal(t, "grep", info.Name)
			js, err := info.ParamsOneOf.ToJSONSchema()
			require.NoError(t, err)
			var keys []string
			for p := js.Properties.Oldest(); p != nil; p = p.Next() {
				keys = append(keys, p.Key)
			}
			assert.Equal(t, tc.want, keys)
			if tc.params != nil {
				assert.Equal(t, []string{"pattern"}, js.Required, "the question stays optional")
				orig, err := tc.params.ToJSONSchema()
				require.NoError(t, err)
				assert.Equal(t, 1, orig.Properties.Len(), "the tool's own schema is unchanged")
			}
		})
	}
}
