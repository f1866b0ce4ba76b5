package agenttool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/chunk"
)

// MetaKey is the key under which pruned MCP results carry their pruning
// statistics in _meta, one Meta per text content; a result that has it is
// not pruned again.
const MetaKey = "prunekit/pruning"

// Meta is what _meta[MetaKey] holds for one text content of a result.
type Meta struct {
	// Pruned reports whether lines were folded.
	Pruned bool `json:"pruned"`
	// Skipped says why the content was left whole.
	Skipped string `json:"skipped,omitempty"`
	// Error is the pruning failure (the content is then the original
	// output with a note).
	Error string `json:"error,omitempty"`
	// ForcedLines counts the kept lines the policy asked for (see
	// Outcome).
	ForcedLines int `json:"forced_lines"`
	// Summary describes the pruning; absent when the pruner did not run.
	Summary *Summary `json:"summary,omitempty"`
}

// Summary is the part of the library's Result (Outcome.Result) an MCP
// client can use beside the content: what was kept and folded, as line
// ranges, and the counts. It leaves out what grows with the input (a row
// per input line, token scores, the text again), which for a 10 MB log
// made _meta 600 times the pruned content.
type Summary struct {
	// Lines counts the input lines.
	Lines int `json:"lines"`
	// KeptLines are the kept input lines as ranges, in order.
	KeptLines []pruner.LineRange `json:"kept_lines"`
	// Placeholders are the folded runs, where the content shows them.
	Placeholders []pruner.Placeholder `json:"placeholders"`
	Score        float64              `json:"score"`
	Tokens       pruner.TokenCounts   `json:"tokens"`
	Language     string               `json:"language"`
	Scorer       string               `json:"scorer"`
	Unpruned     string               `json:"unpruned,omitempty"`
	Notes        []string             `json:"notes,omitempty"`
}

// summarize returns res's Summary; nil for nil.
func summarize(res *pruner.Result) *Summary {
	if res == nil {
		return nil
	}
	s := &Summary{
		Lines:        len(res.Lines),
		KeptLines:    runs(len(res.Lines), func(i int) bool { return res.Lines[i].Kept }),
		Placeholders: res.Placeholders,
		Score:        res.Score, Tokens: res.Tokens, Language: res.Language, Scorer: res.Scorer,
		Unpruned: res.Unpruned, Notes: res.Notes,
	}
	// Arrays, never null, as the library's own JSON.
	if s.KeptLines == nil {
		s.KeptLines = []pruner.LineRange{}
	}
	if s.Placeholders == nil {
		s.Placeholders = []pruner.Placeholder{}
	}
	return s
}

// FocusQuestionParam adds the optional context_focus_question argument to
// an mcp-go tool definition, so that models know they may ask for pruning
// (the middleware honours it on any tool).
func FocusQuestionParam() mcp.ToolOption {
	return mcp.WithString(QuestionArg, mcp.Description(focusDescription))
}

// focusDescription tells the model what context_focus_question does.
const focusDescription = "Optional. What you are looking for in this output (e.g. \"where is the retry delay computed?\"). " +
	"When given, lines irrelevant to it are folded; call again without it for the full output."

type questionKey struct{}

// questionFrom returns the focus question from the call arguments or, when
// the middleware has taken it out of them, from the context.
func questionFrom(ctx context.Context, req mcp.CallToolRequest) string {
	if q := req.GetString(QuestionArg, ""); q != "" {
		return q
	}
	q, _ := ctx.Value(questionKey{}).(string)
	return q
}

// MCPMiddleware returns an mcp-go tool middleware that prunes the text
// output of any tool called with a context_focus_question argument. The
// argument is removed before the tool runs (tools need not know it). Error
// results, non-text content and results already pruned pass through.
func (f *Folder) MCPMiddleware() server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if v, ok := req.GetArguments()[QuestionArg]; ok {
				if _, isString := v.(string); !isString && v != nil {
					return mcp.NewToolResultError(fmt.Sprintf("%s must be a string, not %T", QuestionArg, v)), nil
				}
			}
			q := req.GetString(QuestionArg, "")
			if strings.TrimSpace(q) == "" {
				return next(ctx, withoutQuestion(req))
			}
			req = withoutQuestion(req)
			res, err := next(context.WithValue(ctx, questionKey{}, q), req)
			if err != nil || res == nil || res.IsError || hasMeta(res) {
				return res, err
			}
			// The tool's result may be shared (a cached answer): the
			// pruned copy must not replace what the next call gets.
			res = cloneResult(res)
			f.foldResult(ctx, q, res)
			return res, nil
		}
	}
}

// withoutQuestion returns req with context_focus_question removed from its
// arguments (decoded and raw).
func withoutQuestion(req mcp.CallToolRequest) mcp.CallToolRequest {
	if args := req.GetArguments(); args != nil {
		cp := make(map[string]any, len(args))
		for k, v := range args {
			if k != QuestionArg {
				cp[k] = v
			}
		}
		req.Params.Arguments = cp
	}
	if len(req.Params.RawArguments) > 0 {
		var raw map[string]json.RawMessage
		if json.Unmarshal(req.Params.RawArguments, &raw) == nil {
			delete(raw, QuestionArg)
			if data, err := json.Marshal(raw); err == nil {
				req.Params.RawArguments = data
			}
		}
	}
	return req
}

// cloneResult copies what foldResult changes: the content slice and the
// meta's fields.
func cloneResult(res *mcp.CallToolResult) *mcp.CallToolResult {
	cp := *res
	cp.Content = slices.Clone(res.Content)
	if res.Meta != nil {
		m := *res.Meta
		m.AdditionalFields = maps.Clone(res.Meta.AdditionalFields)
		cp.Meta = &m
	}
	return &cp
}

func hasMeta(res *mcp.CallToolResult) bool {
	if res.Meta == nil {
		return false
	}
	_, ok := res.Meta.AdditionalFields[MetaKey]
	return ok
}

// foldResult prunes every text content of res in place and records the
// statistics in res.Meta.
func (f *Folder) foldResult(ctx context.Context, q string, res *mcp.CallToolResult, opts ...CallOption) {
	var stats []Meta
	for i, c := range res.Content {
		tc, ok := mcp.AsTextContent(c)
		if !ok {
			continue
		}
		o := f.Fold(ctx, q, tc.Text, opts...)
		cp := *tc
		cp.Text = o.Text
		res.Content[i] = cp
		m := Meta{Pruned: o.Pruned, Skipped: o.Skipped, ForcedLines: o.ForcedLines, Summary: summarize(o.Result)}
		if o.Err != nil {
			m.Error = o.Err.Error()
		}
		stats = append(stats, m)
	}
	if res.Meta == nil {
		res.Meta = &mcp.Meta{}
	}
	if res.Meta.AdditionalFields == nil {
		res.Meta.AdditionalFields = map[string]any{}
	}
	res.Meta.AdditionalFields[MetaKey] = stats
}

// Workspace serves read_pruned and search_pruned over the files under one
// root directory; paths cannot leave the root (symbolic links included).
type Workspace struct {
	root       *os.Root
	dir        string // the root's absolute path
	folder     *Folder
	maxFile    int64
	maxMatches int
}

// WorkspaceOption configures a Workspace.
type WorkspaceOption func(*Workspace)

// DefaultMaxFileBytes is the default of WithMaxFileBytes, the pruner's own
// input limit (pruner.DefaultMaxInputBytes).
const DefaultMaxFileBytes = pruner.DefaultMaxInputBytes

// WithMaxFileBytes caps the files read_pruned reads and search_pruned
// searches (default DefaultMaxFileBytes); larger files are refused or
// skipped, and no more than n+1 bytes of a file are ever read. 0 lifts the
// cap.
func WithMaxFileBytes(n int64) WorkspaceOption { return func(w *Workspace) { w.maxFile = max(n, 0) } }

// WithMaxMatches caps the lines search_pruned reports (default 2000); 0
// lifts the cap.
func WithMaxMatches(n int) WorkspaceOption { return func(w *Workspace) { w.maxMatches = max(n, 0) } }

// NewWorkspace opens root for the tools. Close releases it.
func NewWorkspace(root string, f *Folder, opts ...WorkspaceOption) (*Workspace, error) {
	if f == nil {
		return nil, errors.New("agenttool: nil folder")
	}
	dir, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("agenttool: workspace: %w", err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("agenttool: workspace: %w", err)
	}
	w := &Workspace{root: r, dir: dir, folder: f, maxFile: DefaultMaxFileBytes, maxMatches: 2000}
	for _, o := range opts {
		o(w)
	}
	return w, nil
}

// Close releases the root directory.
func (w *Workspace) Close() error { return w.root.Close() }

// Tools returns the read_pruned and search_pruned tools for
// server.MCPServer.AddTools.
func (w *Workspace) Tools() []server.ServerTool {
	read := mcp.NewTool("read_pruned",
		mcp.WithDescription("Read a text file of the workspace. With context_focus_question, lines irrelevant to the question "+
			"are folded into markers naming the hidden line numbers and what they hold, e.g. "+
			"\"// ... 40 lines omitted (120-159): func (c *Client) do, func retry, and 3 more\"; "+
			"error lines and the file's last line (a log's last lines) are always kept. To see folded lines, call again with the same path and "+
			"context_focus_question and expand set to the line ranges of the markers you just read."),
		mcp.WithString("path", mcp.Required(), mcp.Description("file path relative to the workspace root (or absolute, inside it)")),
		FocusQuestionParam(),
		mcp.WithString(ExpandArg, mcp.Description(expandDescription)),
		mcp.WithBoolean("line_numbers", mcp.Description("prefix lines with their line numbers (nl -ba style)")),
		mcp.WithTitleAnnotation("Read a file, pruned to a question"),
		readOnlyTool(),
	)
	search := mcp.NewTool("search_pruned",
		mcp.WithDescription("Search the workspace's text files for a regular expression (RE2 syntax), grep -rn style: "+
			"one path:line:text row per matching line. With context_focus_question, irrelevant rows are folded."),
		mcp.WithString("pattern", mcp.Required(), mcp.Description("regular expression (RE2 syntax)")),
		mcp.WithString("path", mcp.Description("file or directory to search, relative to the root (default: the whole workspace)")),
		FocusQuestionParam(),
		mcp.WithTitleAnnotation("Search files, pruned to a question"),
		readOnlyTool(),
	)
	return []server.ServerTool{
		{Tool: read, Handler: w.readPruned},
		{Tool: search, Handler: w.searchPruned},
	}
}

// readOnlyTool sets every behaviour hint of a workspace tool explicitly
// (mcp-go's defaults would claim a destructive, non-idempotent, open-world
// tool): it only reads files under the root (read-only, not destructive),
// the same call gives the same answer on the same files (idempotent), and
// it reaches nothing outside the workspace (closed world).
func readOnlyTool() mcp.ToolOption {
	return func(t *mcp.Tool) {
		for _, o := range []mcp.ToolOption{
			mcp.WithReadOnlyHintAnnotation(true),
			mcp.WithDestructiveHintAnnotation(false),
			mcp.WithIdempotentHintAnnotation(true),
			mcp.WithOpenWorldHintAnnotation(false),
		} {
			o(t)
		}
	}
}

// NewMCPServer returns an mcp-go server with the workspace tools and the
// pruning middleware installed, so that tools added later prune too.
func NewMCPServer(name, version string, w *Workspace, opts ...server.ServerOption) *server.MCPServer {
	opts = append([]server.ServerOption{
		server.WithToolCapabilities(false),
		server.WithToolHandlerMiddleware(w.folder.MCPMiddleware()),
	}, opts...)
	s := server.NewMCPServer(name, version, opts...)
	s.AddTools(w.Tools()...)
	return s
}

// rel turns a tool path argument into a name inside the root: a relative
// path is taken from the root (".." cannot climb out of it), an absolute
// one must lie under the root's directory.
func (w *Workspace) rel(p string) (string, error) {
	p = strings.TrimSpace(p)
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(w.dir, filepath.Clean(p))
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("%s is outside the workspace %s", p, w.dir)
		}
		p = r
	}
	p = path.Clean("/" + filepath.ToSlash(p))
	if p == "/" {
		return ".", nil
	}
	return strings.TrimPrefix(p, "/"), nil
}

// ExpandArg is read_pruned's argument naming the line ranges to show in
// full.
const ExpandArg = "expand"

// expandDescription tells the model what read_pruned's expand does.
const expandDescription = "Optional. Line ranges of this file to show in full, comma-separated, e.g. \"120-159,300-310\": " +
	"copy them from the markers \"... N lines omitted (120-159) ...\" of your previous read_pruned call of this file. " +
	"Use the same context_focus_question as that call: the other lines stay pruned as they were."

func (w *Workspace) readPruned(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	p, err := req.RequireString("path")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	ranges, err := pruner.ParseLineRanges(req.GetString(ExpandArg, ""))
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("read_pruned: %s: %v", ExpandArg, err)), nil
	}
	name, err := w.rel(p)
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("read_pruned: %v", err)), nil
	}
	data, err := w.readFile(name)
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("read_pruned: %v", err)), nil
	}
	if err := pruner.CheckLineRanges(chunk.CountLines(string(data)), ranges...); err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("read_pruned: %s: %v", ExpandArg, err)), nil
	}
	res := mcp.NewToolResultText(string(data))
	w.folder.foldResult(ctx, questionFrom(ctx, req), res, FileName(name),
		LineNumbers(req.GetBool("line_numbers", w.folder.cfg.lineNumbers)), Expand(ranges...))
	return res, nil
}

// readFile reads a regular file of the root, refusing one over the cap; at
// most cap+1 bytes are read even when the file grows meanwhile.
func (w *Workspace) readFile(name string) ([]byte, error) {
	f, err := w.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory", name)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	if w.maxFile > 0 && st.Size() > w.maxFile {
		return nil, fmt.Errorf("%s has %d bytes, over the %d byte limit", name, st.Size(), w.maxFile)
	}
	var r io.Reader = f
	if w.maxFile > 0 {
		r = io.LimitReader(f, w.maxFile+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if w.maxFile > 0 && int64(len(data)) > w.maxFile {
		return nil, fmt.Errorf("%s has over %d bytes, the limit", name, w.maxFile)
	}
	return data, nil
}

func (w *Workspace) searchPruned(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	pat, err := req.RequireString("pattern")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("search_pruned: bad pattern: %v", err)), nil
	}
	start, err := w.rel(req.GetString("path", ""))
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("search_pruned: %v", err)), nil
	}
	out, err := w.search(ctx, re, start)
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("search_pruned: %v", err)), nil
	}
	if out == "" || strings.HasPrefix(out, "[skipped") {
		out = "no matches\n" + out
	}
	res := mcp.NewToolResultText(out)
	w.folder.foldResult(ctx, questionFrom(ctx, req), res, FileName("search.txt"), LineNumbers(false))
	return res, nil
}

// search greps the files under start (a file or directory) in lexical
// order, skipping VCS folders. A binary file that matches is reported as
// grep reports it; files and folders it cannot read, and files over the
// size cap, are skipped and listed at the end, so that "no matches" is
// never said of text it did not read.
func (w *Workspace) search(ctx context.Context, re *regexp.Regexp, start string) (string, error) {
	var b strings.Builder
	var skipped []string
	matches := 0
	fsys := w.root.FS()
	err := fs.WalkDir(fsys, start, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			if name == start {
				return err
			}
			skipped = append(skipped, skipNote(name, err))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".hg", ".svn":
				if name != start {
					return fs.SkipDir
				}
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := w.readFile(name)
		if err != nil {
			skipped = append(skipped, skipNote(name, err))
			return nil
		}
		if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			if re.Match(data) {
				if w.maxMatches > 0 && matches == w.maxMatches {
					fmt.Fprintf(&b, "[search stopped after %d matching lines; narrow the pattern or the path]\n", matches)
					return fs.SkipAll
				}
				matches++
				fmt.Fprintf(&b, "Binary file %s matches\n", name)
			}
			return nil
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), len(data)+1)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if !re.MatchString(line) {
				continue
			}
			if w.maxMatches > 0 && matches == w.maxMatches {
				fmt.Fprintf(&b, "[search stopped after %d matching lines; narrow the pattern or the path]\n", matches)
				return fs.SkipAll
			}
			matches++
			fmt.Fprintf(&b, "%s:%d:%s\n", name, n, strings.TrimSuffix(line, "\r"))
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(skipped) > 0 {
		const show = 20
		fmt.Fprintf(&b, "[skipped %d not searched: %s", len(skipped), strings.Join(skipped[:min(len(skipped), show)], ", "))
		if len(skipped) > show {
			fmt.Fprintf(&b, ", and %d more", len(skipped)-show)
		}
		b.WriteString("]\n")
	}
	return b.String(), nil
}

// skipNote names a file or folder search skipped and why, once.
func skipNote(name string, err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s: %v", name, pe.Err)
	}
	return err.Error() // readFile's own errors name the file
}
