package agenttool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
)

// pySource is a Python file of about 900 characters.
const pySource = `import time

DEFAULT_RETRIES = 3


class Client:
    """A tiny HTTP client."""

    def __init__(self, base_url, retries=DEFAULT_RETRIES):
        self.base_url = base_url
        self.retries = retries

    def get(self, path):
        for attempt in range(self.retries):
            try:
                return self._send("GET", path)
            except ConnectionError:
                time.sleep(2 ** attempt)
        raise RuntimeError("giving up")

    def _send(self, method, path):
        url = self.base_url + path
        headers = {"User-Agent": "tiny-client/1.0", "Accept": "application/json"}
        if method not in ("GET", "HEAD"):
            raise ValueError("unsupported method: " + method)
        raise NotImplementedError(method + " " + url + " " + repr(headers))


def main():
    print(Client("http://localhost").get("/health"))
`

// dummyTool records the arguments it was called with and returns the test
// log, or an error result.
type dummyTool struct {
	mu   sync.Mutex
	args []map[string]any
}

func (d *dummyTool) handle(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	d.mu.Lock()
	d.args = append(d.args, req.GetArguments())
	d.mu.Unlock()
	if req.GetBool("fail", false) {
		return mcp.NewToolResultError(buildLog()), nil
	}
	return mcp.NewToolResultText(buildLog()), nil
}

type harness struct {
	client *client.Client
	dummy  *dummyTool
	root   string
	server *server.MCPServer
	ws     *Workspace
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, newFolder(t, 1, WithMinChars(100), WithTailLines(2)))
}

// newHarnessWith is newHarness with the folder f and workspace options.
func newHarnessWith(t *testing.T, f *Folder, opts ...WorkspaceOption) *harness {
	t.Helper()
	root := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("src/retry.py", pySource)
	write("build.log", buildLog())
	write("notes.txt", "retry later\nnothing here\n")
	write(".git/config", "retry = true\n")
	write("blob.bin", "retry\x00\x01\x02")
	outside := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(outside, []byte("secret retry\n"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "escape.txt")))

	// The tests below read the Folder's own view; TestReadPrunedFirstView
	// reads the default first view.
	w, err := NewWorkspace(root, f, append([]WorkspaceOption{WithFirstView()}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	s := NewMCPServer("prunekit-test", "0.0.1", w)
	d := &dummyTool{}
	s.AddTool(mcp.NewTool("run_tests", mcp.WithBoolean("fail"), FocusQuestionParam()), d.handle)
	return &harness{client: connect(t, s), dummy: d, root: root, server: s, ws: w}
}

// connect starts an in-process client of s: a session of its own.
func connect(t *testing.T, s *server.MCPServer) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClient(s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	require.NoError(t, c.Start(ctx))
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "0"}
	_, err = c.Initialize(ctx, init)
	require.NoError(t, err)
	return c
}

func (h *harness) call(t *testing.T, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	return callWith(t, h.client, name, args)
}

// callWith calls a tool through client c and returns the result and its
// text.
func callWith(t *testing.T, c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	require.NoError(t, err)
	var texts []string
	for _, c := range res.Content {
		tc, ok := mcp.AsTextContent(c)
		require.True(t, ok, "text content")
		texts = append(texts, tc.Text)
	}
	return res, strings.Join(texts, "")
}

func TestMCPListTools(t *testing.T) {
	h := newHarness(t)
	res, err := h.client.ListTools(context.Background(), mcp.ListToolsRequest{})
	require.NoError(t, err)
	byName := map[string]mcp.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	for name, required := range map[string][]string{"read_pruned": {"path"}, "search_pruned": {"pattern"}, "run_tests": nil} {
		tool, ok := byName[name]
		require.True(t, ok, name)
		assert.Contains(t, tool.InputSchema.Properties, QuestionArg, name)
		assert.ElementsMatch(t, required, tool.InputSchema.Required, name)
	}
}

// TestMCPToolAnnotations: the workspace tools declare every behaviour hint
// explicitly and truthfully (mcp-go's defaults claim destructive,
// non-idempotent, open-world tools): they read files under the root and
// nothing else.
func TestMCPToolAnnotations(t *testing.T) {
	h := newHarness(t)
	res, err := h.client.ListTools(context.Background(), mcp.ListToolsRequest{})
	require.NoError(t, err)
	want := map[string]string{
		"read_pruned":   `{"title":"Read a file, pruned to a question","readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`,
		"search_pruned": `{"title":"Search files, pruned to a question","readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`,
	}
	seen := 0
	for _, tool := range res.Tools {
		w, ok := want[tool.Name]
		if !ok {
			continue
		}
		seen++
		got, err := json.Marshal(tool.Annotations)
		require.NoError(t, err)
		assert.JSONEq(t, w, string(got), tool.Name)
	}
	assert.Equal(t, len(want), seen)
}

func TestMCPReadPruned(t *testing.T) {
	h := newHarness(t)
	log := buildLog()
	tests := []struct {
		name    string
		args    map[string]any
		isError bool
		check   func(t *testing.T, text string, res *mcp.CallToolResult)
	}{
		{name: "no question: whole file", args: map[string]any{"path": "src/retry.py"}, check: func(t *testing.T, text string, res *mcp.CallToolResult) {
			assert.Equal(t, pySource, text)
		}},
		{name: "no question, numbered", args: map[string]any{"path": "notes.txt", "line_numbers": true}, check: func(t *testing.T, text string, _ *mcp.CallToolResult) {
			assert.Equal(t, "     1\tretry later\n     2\tnothing here\n", text)
		}},
		{name: "dot-dot stays in the root", args: map[string]any{"path": "../../notes.txt"}, check: func(t *testing.T, text string, _ *mcp.CallToolResult) {
			assert.Equal(t, "retry later\nnothing here\n", text)
		}},
		{name: "question prunes the log once, keeping errors and tail", args: map[string]any{"path": "build.log", QuestionArg: "why did the build fail?"},
			check: func(t *testing.T, text string, res *mcp.CallToolResult) {
				lines := strings.Split(log, "\n")
				assert.Equal(t, 1, strings.Count(text, "[pruned for"), "pruned once")
				assert.True(t, strings.HasPrefix(text, "[pruned for \"why did the build fail?\": kept 3 of 30 lines"), text)
				assert.Contains(t, text, "\n"+lines[11]+"\n")
				assert.True(t, strings.HasSuffix(text, lines[28]+"\n"+lines[29]+"\n"), text)
				require.NotNil(t, res.Meta)
				assert.Contains(t, res.Meta.AdditionalFields, MetaKey)
			}},
		{name: "question with numbers on code", args: map[string]any{"path": "src/retry.py", QuestionArg: "how long does it wait between retries?", "line_numbers": true},
			check: func(t *testing.T, text string, _ *mcp.CallToolResult) {
				src := strings.Split(pySource, "\n")
				assert.True(t, strings.HasPrefix(text, "[pruned for"), text)
				assert.True(t, strings.HasSuffix(text, "    29\t"+src[28]+"\n    30\t"+src[29]+"\n"), "tail with original numbers: %s", text)
				assert.Contains(t, text, "      \t... 28 lines omitted (1-28) ...\n")
			}},
		{name: "missing file", args: map[string]any{"path": "nope.py"}, isError: true},
		{name: "directory", args: map[string]any{"path": "src"}, isError: true},
		{name: "missing path", args: map[string]any{}, isError: true},
		{name: "symlink out of the root", args: map[string]any{"path": "escape.txt"}, isError: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, text := h.call(t, "read_pruned", tc.args)
			require.Equal(t, tc.isError, res.IsError, text)
			if tc.check != nil {
				tc.check(t, text, res)
			}
		})
	}
}

func TestMCPSearchPruned(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name    string
		args    map[string]any
		want    string
		isError bool
	}{
		{name: "whole workspace, VCS folders skipped, binary files named", args: map[string]any{"pattern": `retr(y|ies)\b`},
			want: "Binary file blob.bin matches\n" +
				"notes.txt:1:retry later\n" +
				"src/retry.py:9:    def __init__(self, base_url, retries=DEFAULT_RETRIES):\n" +
				"src/retry.py:11:        self.retries = retries\n" +
				"src/retry.py:14:        for attempt in range(self.retries):\n"},
		{name: "a binary file that matches is named", args: map[string]any{"pattern": `retry`, "path": "blob.bin"}, want: "Binary file blob.bin matches\n"},
		{name: "absolute path inside the root", args: map[string]any{"pattern": `^import`, "path": filepath.Join(h.root, "src", "retry.py")}, want: "src/retry.py:1:import time\n"},
		{name: "absolute path outside the root", args: map[string]any{"pattern": `x`, "path": filepath.Dir(h.root)}, isError: true},
		{name: "one file", args: map[string]any{"pattern": `^import`, "path": "src/retry.py"}, want: "src/retry.py:1:import time\n"},
		{name: "no match", args: map[string]any{"pattern": `zzz`}, want: "no matches\n"},
		{name: "bad pattern", args: map[string]any{"pattern": `(`}, isError: true},
		{name: "missing directory", args: map[string]any{"pattern": `x`, "path": "nope"}, isError: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, text := h.call(t, "search_pruned", tc.args)
			require.Equal(t, tc.isError, res.IsError, text)
			if !tc.isError {
				assert.Equal(t, tc.want, text)
			}
		})
	}
	t.Run("question prunes the matches", func(t *testing.T) {
		_, text := h.call(t, "search_pruned", map[string]any{"pattern": `.`, "path": "build.log", QuestionArg: "what failed?"})
		assert.True(t, strings.HasPrefix(text, "[pruned for \"what failed?\": kept 3 of 30 lines"), text)
		assert.Contains(t, text, "build.log:12:ERROR cannot open config file\n")
		assert.True(t, strings.HasSuffix(text, "build.log:29:step d ok: compiled module\nbuild.log:30:make: exit status 2\n"), text)
	})
}

func TestMCPMiddlewareOnOtherTools(t *testing.T) {
	h := newHarness(t)
	log := buildLog()

	res, text := h.call(t, "run_tests", map[string]any{})
	assert.Equal(t, log, text, "no question: untouched")
	if res.Meta != nil {
		assert.NotContains(t, res.Meta.AdditionalFields, MetaKey)
	}

	res, text = h.call(t, "run_tests", map[string]any{QuestionArg: "which step failed?"})
	assert.False(t, res.IsError)
	assert.True(t, strings.HasPrefix(text, "[pruned for \"which step failed?\": kept 3 of 30 lines"), text)
	assert.Contains(t, text, "ERROR cannot open config file\n")
	require.NotNil(t, res.Meta)
	stats, ok := res.Meta.AdditionalFields[MetaKey].([]any)
	require.True(t, ok, "%#v", res.Meta.AdditionalFields)
	require.Len(t, stats, 1)
	// _meta holds the Fold's outcome and a summary of its result: kept
	// lines as ranges, the placeholders, the counts.
	o := newFolder(t, 1, WithMinChars(100), WithTailLines(2)).Fold(context.Background(), "which step failed?", log)
	require.NotNil(t, o.Result)
	want, err := json.Marshal(Meta{Pruned: true, ForcedLines: 2, Summary: summarize(o.Result)})
	require.NoError(t, err)
	got, err := json.Marshal(stats[0])
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got))
	summary := stats[0].(map[string]any)["summary"].(map[string]any)
	assert.Equal(t, []any{
		map[string]any{"first_line": float64(12), "last_line": float64(12)},
		map[string]any{"first_line": float64(29), "last_line": float64(30)},
	}, summary["kept_lines"])
	assert.Equal(t, float64(30), summary["lines"])
	assert.Len(t, summary["placeholders"], len(o.Result.Placeholders))

	res, text = h.call(t, "run_tests", map[string]any{"fail": true, QuestionArg: "which step failed?"})
	assert.True(t, res.IsError)
	assert.Equal(t, log, text, "error results pass through")

	h.dummy.mu.Lock()
	defer h.dummy.mu.Unlock()
	require.Len(t, h.dummy.args, 3)
	for _, a := range h.dummy.args {
		assert.NotContains(t, a, QuestionArg, "the tool never sees the question")
	}
}

// TestMCPMiddlewareDirect runs the middleware on a bare handler, with a
// question in the raw JSON arguments as they arrive from the wire.
func TestMCPMiddlewareDirect(t *testing.T) {
	f := newFolder(t, 1, WithMinChars(100), WithTailLines(0))
	var seen mcp.CallToolRequest
	next := server.ToolHandlerFunc(func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		seen = req
		return &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewTextContent(buildLog()),
			mcp.NewImageContent("aGk=", "image/png"),
			mcp.NewTextContent("short"),
		}}, nil
	})
	req := mcp.CallToolRequest{}
	req.Params.Arguments = map[string]any{"n": 1, QuestionArg: "why?"}
	req.Params.RawArguments = []byte(`{"n": 12345678901234567890, "context_focus_question": "why?"}`)
	res, err := f.MCPMiddleware()(next)(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"n": 1}, seen.GetArguments())
	assert.JSONEq(t, `{"n": 12345678901234567890}`, string(seen.Params.RawArguments))
	require.Len(t, res.Content, 3)
	first, _ := mcp.AsTextContent(res.Content[0])
	assert.True(t, strings.HasPrefix(first.Text, "[pruned for \"why?\": kept 2 of 30 lines"), first.Text)
	_, isImage := mcp.AsImageContent(res.Content[1])
	assert.True(t, isImage)
	last, _ := mcp.AsTextContent(res.Content[2])
	assert.Equal(t, "short", last.Text)
}

// A file search could not read is listed, never taken for "no matches".
func TestMCPSearchSaysWhatItSkipped(t *testing.T) {
	root := t.TempDir()
	big := strings.Repeat("ok line\n", 100) + "ERROR disk full\n"
	require.NoError(t, os.WriteFile(filepath.Join(root, "app.log"), []byte(big), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "small.txt"), []byte("fine\n"), 0o644))
	w, err := NewWorkspace(root, newFolder(t, 1), WithMaxFileBytes(200))
	require.NoError(t, err)
	defer w.Close()
	req := mcp.CallToolRequest{}
	req.Params.Arguments = map[string]any{"pattern": "ERROR"}
	res, err := w.searchPruned(context.Background(), req)
	require.NoError(t, err)
	require.False(t, res.IsError)
	text := res.Content[0].(mcp.TextContent).Text
	assert.True(t, strings.HasPrefix(text, "no matches\n"), text)
	assert.Contains(t, text, fmt.Sprintf("[skipped 1 not searched: app.log has %d bytes, over the 200 byte limit]", len(big)))

	// WithMaxMatches(0) lifts the cap.
	w0, err := NewWorkspace(root, newFolder(t, 1), WithMaxMatches(0))
	require.NoError(t, err)
	defer w0.Close()
	req.Params.Arguments = map[string]any{"pattern": "ok line", "path": "app.log"}
	res, err = w0.searchPruned(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, 100, strings.Count(res.Content[0].(mcp.TextContent).Text, "app.log:"))
}

// A tool that hands out one shared result (a cache) must get it back
// unchanged: the middleware prunes a copy.
func TestMCPMiddlewareLeavesTheToolsResult(t *testing.T) {
	f := newFolder(t, 1, WithMinChars(100), WithTailLines(0))
	shared := mcp.NewToolResultText(buildLog())
	next := server.ToolHandlerFunc(func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return shared, nil })
	call := func(args map[string]any) string {
		req := mcp.CallToolRequest{}
		req.Params.Arguments = args
		res, err := f.MCPMiddleware()(next)(context.Background(), req)
		require.NoError(t, err)
		return res.Content[0].(mcp.TextContent).Text
	}
	first := call(map[string]any{QuestionArg: "which step failed?"})
	assert.True(t, strings.HasPrefix(first, "[pruned for \"which step failed?\""), first)
	assert.Equal(t, buildLog(), call(map[string]any{}), "without a question: the full output")
	again := call(map[string]any{QuestionArg: "what is the exit status?"})
	assert.True(t, strings.HasPrefix(again, "[pruned for \"what is the exit status?\""), again)
	assert.Equal(t, buildLog(), shared.Content[0].(mcp.TextContent).Text)
	assert.Nil(t, shared.Meta)

	// A question that is not a string is refused, not passed to the tool.
	req := mcp.CallToolRequest{}
	req.Params.Arguments = map[string]any{QuestionArg: 123}
	res, err := f.MCPMiddleware()(next)(context.Background(), req)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content[0].(mcp.TextContent).Text, "must be a string")
}

// _meta stays small beside the content: a summary, not a row per input
// line.
func TestMCPMetaIsASummary(t *testing.T) {
	p, err := pruner.Load(context.Background(), "") // the embedded line model: fast on 20,000 lines
	require.NoError(t, err)
	f, err := NewFolder(p)
	require.NoError(t, err)
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "2026-01-01T00:00:%02d INFO worker %d processed job %d\n", i%60, i%8, i)
	}
	b.WriteString("2026-01-01T00:01:00 ERROR worker 3 job 77 failed: disk full\n")
	res := mcp.NewToolResultText(b.String())
	f.foldResult(context.Background(), "why did job 77 fail?", res)
	text := res.Content[0].(mcp.TextContent).Text
	require.True(t, strings.HasPrefix(text, "[pruned for"), text[:min(len(text), 200)])
	meta, err := json.Marshal(res.Meta.AdditionalFields[MetaKey])
	require.NoError(t, err)
	assert.Less(t, len(meta), len(text)+4096, "meta %d bytes for %d of content", len(meta), len(text))
}

// "Binary file X matches" rows count toward the match cap too.
func TestMCPSearchCapsBinaryMatches(t *testing.T) {
	root := t.TempDir()
	for i := range 5 {
		require.NoError(t, os.WriteFile(filepath.Join(root, fmt.Sprintf("b%d.bin", i)), []byte("needle\x00"), 0o644))
	}
	w, err := NewWorkspace(root, newFolder(t, 1), WithMaxMatches(2))
	require.NoError(t, err)
	defer w.Close()
	req := mcp.CallToolRequest{}
	req.Params.Arguments = map[string]any{"pattern": "needle"}
	res, err := w.searchPruned(context.Background(), req)
	require.NoError(t, err)
	text := res.Content[0].(mcp.TextContent).Text
	assert.Equal(t, 2, strings.Count(text, "Binary file"), text)
	assert.Contains(t, text, "[search stopped after 2 matching lines")
}

// TestReadPrunedFirstView: read_pruned's first view is made for a reader
// that unfolds: a tenth of the lines, one placeholder saying what is
// likely relevant, and that item unfolds by name into a delta.
func TestReadPrunedFirstView(t *testing.T) {
	ctx := context.Background()
	p, err := pruner.Load(ctx, "") // the embedded line model
	require.NoError(t, err)
	f, err := NewFolder(p)
	require.NoError(t, err)
	h := newHarnessWith(t, f, WithFirstView(DefaultFirstView...))
	call := func(args map[string]any) string {
		req := mcp.CallToolRequest{}
		req.Params.Name = "read_pruned"
		req.Params.Arguments = args
		res, err := h.client.CallTool(ctx, req)
		require.NoError(t, err)
		require.False(t, res.IsError, "%v", res.Content)
		return res.Content[0].(mcp.TextContent).Text
	}
	q := "how long does the client wait between retries?"
	first := call(map[string]any{"path": "src/retry.py", QuestionArg: q})
	m := regexp.MustCompile(`; likely relevant: ([^\n]+)`).FindStringSubmatch(first)
	require.NotNil(t, m, first)
	item := strings.TrimSuffix(m[1], " ...")
	delta := call(map[string]any{"path": "src/retry.py", QuestionArg: q, ExpandArg: item})
	assert.Contains(t, delta, "[unfolded ")
	assert.Contains(t, delta, "new lines only, numbered")
	assert.NotContains(t, delta, "likely relevant: "+item, "the item is shown now")
}
