package agenttool

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"
	orderedmap "github.com/wk8/go-ordered-map/v2"
)

// EinoMiddleware returns an eino compose.ToolMiddleware (for
// compose.ToolsNodeConfig.ToolCallMiddlewares) that prunes the output of
// the named tools (all tools when none is named) when the model called
// them with a context_focus_question argument. The argument is removed
// from the call before the tool runs. Streaming tools asked to prune are
// read whole, pruned, and returned as a one-chunk stream; a stream longer
// than WithMaxStreamBytes passes through as it comes, with a note at its
// end. Without a question a stream passes through untouched.
func (f *Folder) EinoMiddleware(toolNames ...string) compose.ToolMiddleware {
	applies := func(name string) bool { return len(toolNames) == 0 || slices.Contains(toolNames, name) }
	return compose.ToolMiddleware{
		Invokable: func(next compose.InvokableToolEndpoint) compose.InvokableToolEndpoint {
			return func(ctx context.Context, in *compose.ToolInput) (*compose.ToolOutput, error) {
				if !applies(in.Name) {
					return next(ctx, in)
				}
				q, stripped := splitQuestion(in)
				if q == "" {
					return next(ctx, in)
				}
				out, err := next(ctx, stripped)
				if err != nil || out == nil {
					return out, err
				}
				o := f.Fold(ctx, q, out.Result)
				return &compose.ToolOutput{Result: o.Text}, nil
			}
		},
		Streamable: func(next compose.StreamableToolEndpoint) compose.StreamableToolEndpoint {
			return func(ctx context.Context, in *compose.ToolInput) (*compose.StreamToolOutput, error) {
				if !applies(in.Name) {
					return next(ctx, in)
				}
				q, stripped := splitQuestion(in)
				if q == "" {
					return next(ctx, in)
				}
				out, err := next(ctx, stripped)
				if err != nil || out == nil || out.Result == nil {
					return out, err
				}
				chunks, size, err := drain(ctx, out.Result, f.cfg.maxStream)
				if err != nil {
					out.Result.Close()
					return nil, fmt.Errorf("agenttool: reading %s stream: %w", in.Name, err)
				}
				if size > f.cfg.maxStream {
					// Too large to prune: what was read, then the rest of
					// the stream as it comes, then why.
					note := fmt.Sprintf("\n[context pruning skipped, full output shown: over %d bytes]", f.cfg.maxStream)
					return &compose.StreamToolOutput{Result: resume(chunks, out.Result, note)}, nil
				}
				out.Result.Close()
				o := f.Fold(ctx, q, strings.Join(chunks, ""))
				return &compose.StreamToolOutput{Result: schema.StreamReaderFromArray([]string{o.Text})}, nil
			}
		},
	}
}

// splitQuestion returns the focus question of a call and the call without
// it; ("", in) when the arguments carry none.
func splitQuestion(in *compose.ToolInput) (string, *compose.ToolInput) {
	var args map[string]json.RawMessage
	if err := json.Unmarshal([]byte(in.Arguments), &args); err != nil {
		return "", in
	}
	raw, ok := args[QuestionArg]
	if !ok {
		return "", in
	}
	var q string
	if err := json.Unmarshal(raw, &q); err != nil || strings.TrimSpace(q) == "" {
		return "", in
	}
	delete(args, QuestionArg)
	data, err := json.Marshal(args)
	if err != nil {
		return "", in
	}
	cp := *in
	cp.Arguments = string(data)
	return q, &cp
}

// drain reads r until its end or until more than limit bytes are read,
// whichever comes first, stopping when ctx is done between chunks (a
// chunk the tool never sends is waited for: eino's Recv takes no
// context). It returns the chunks read and their total size; r stays
// open.
func drain(ctx context.Context, r *schema.StreamReader[string], limit int) (chunks []string, size int, err error) {
	for size <= limit {
		if err := ctx.Err(); err != nil {
			return chunks, size, err
		}
		s, err := r.Recv()
		if err == io.EOF {
			return chunks, size, nil
		}
		if err != nil {
			return chunks, size, err
		}
		chunks = append(chunks, s)
		size += len(s)
	}
	return chunks, size, nil
}

// resume returns a stream of chunks, then what is left of r, then note; it
// closes r when done. Its copying goroutine ends when the stream is read to
// its end or closed by the consumer, as eino requires of every consumer.
func resume(chunks []string, r *schema.StreamReader[string], note string) *schema.StreamReader[string] {
	out, w := schema.Pipe[string](1)
	go func() {
		defer w.Close()
		defer r.Close()
		for _, c := range chunks {
			if w.Send(c, nil) {
				return // the reader is gone
			}
		}
		for {
			c, err := r.Recv()
			if err == io.EOF {
				break
			}
			if err != nil {
				w.Send("", err)
				return
			}
			if w.Send(c, nil) {
				return
			}
		}
		w.Send(note, nil)
	}()
	return out
}

// WithFocusQuestion wraps an eino tool so that its ToolInfo offers the
// optional context_focus_question argument to the model; the tool itself
// runs unchanged (the middleware removes the argument before calling it).
// For a streaming tool see WithFocusQuestionStreamable.
func WithFocusQuestion(t tool.InvokableTool) tool.InvokableTool { return focusTool{t} }

// WithFocusQuestionStreamable is WithFocusQuestion for a streaming tool.
func WithFocusQuestionStreamable(t tool.StreamableTool) tool.StreamableTool {
	return focusStreamTool{t}
}

type focusTool struct{ tool.InvokableTool }

// Info adds the focus question to the wrapped tool's parameters.
func (f focusTool) Info(ctx context.Context) (*schema.ToolInfo, error) {
	return withQuestion(f.InvokableTool.Info(ctx))
}

type focusStreamTool struct{ tool.StreamableTool }

// Info adds the focus question to the wrapped tool's parameters.
func (f focusStreamTool) Info(ctx context.Context) (*schema.ToolInfo, error) {
	return withQuestion(f.StreamableTool.Info(ctx))
}

// withQuestion returns a copy of info whose parameters include the focus
// question; the tool's own schema is never modified.
func withQuestion(info *schema.ToolInfo, err error) (*schema.ToolInfo, error) {
	if err != nil || info == nil {
		return info, err
	}
	js, err := info.ParamsOneOf.ToJSONSchema()
	if err != nil {
		return nil, fmt.Errorf("agenttool: %s parameters: %w", info.Name, err)
	}
	out := &jsonschema.Schema{Type: "object"}
	if js != nil {
		cp := *js // never modify the tool's own schema
		out = &cp
	}
	props := orderedmap.New[string, *jsonschema.Schema]()
	if out.Properties != nil {
		for p := out.Properties.Oldest(); p != nil; p = p.Next() {
			props.Set(p.Key, p.Value)
		}
	}
	props.Set(QuestionArg, &jsonschema.Schema{Type: "string", Description: focusDescription})
	out.Properties = props
	cp := *info
	cp.ParamsOneOf = schema.NewParamsOneOfByJSONSchema(out)
	return &cp, nil
}
