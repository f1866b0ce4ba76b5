package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// chatClient calls an OpenAI-compatible chat completions endpoint.
type chatClient struct {
	url, model, key string
	maxTokens       int
	timeout         time.Duration
	hc              *http.Client
	tries           int           // attempts on a 429 or 5xx reply
	backoff         time.Duration // wait before the second attempt, doubled after
}

// newChatClient returns a client of base, which is the server
// (http://host:8000), its /v1, or the full .../chat/completions URL.
func newChatClient(base, model, key string, f *flags) *chatClient {
	u := strings.TrimRight(base, "/")
	switch {
	case strings.HasSuffix(u, "/chat/completions"):
	case strings.HasSuffix(u, "/v1"):
		u += "/chat/completions"
	default:
		u += "/v1/chat/completions"
	}
	return &chatClient{url: u, model: model, key: key, maxTokens: f.maxTokens, timeout: f.timeout,
		hc: http.DefaultClient, tries: 3, backoff: 2 * time.Second}
}

// errHTTP is wrapped by a reply that is not a success.
var errHTTP = errors.New("chat completions: request failed")

// complete returns the model's reply to msgs (temperature 0).
func (c *chatClient) complete(ctx context.Context, msgs []message) (string, error) {
	body, err := json.Marshal(map[string]any{"model": c.model, "messages": msgs, "temperature": 0, "max_tokens": c.maxTokens})
	if err != nil {
		return "", fmt.Errorf("chat completions: %w", err)
	}
	wait := c.backoff
	for try := 1; ; try++ {
		reply, retry, err := c.post(ctx, body)
		if err == nil || !retry || try >= c.tries {
			return reply, err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// post sends one request; retry says a later try may succeed.
func (c *chatClient) post(ctx context.Context, body []byte) (reply string, retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return "", false, fmt.Errorf("chat completions: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return "", ctx.Err() == nil, fmt.Errorf("chat completions: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return "", true, fmt.Errorf("chat completions: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		retry := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
		return "", retry, fmt.Errorf("%w: %s: %s", errHTTP, resp.Status, cut(string(data), 300))
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return "", false, fmt.Errorf("chat completions: %w: %s", err, cut(string(data), 300))
	}
	if len(out.Choices) == 0 {
		return "", false, fmt.Errorf("%w: no choices in %s", errHTTP, cut(string(data), 300))
	}
	return stripThinking(out.Choices[0].Message.Content), false, nil
}

// stripThinking drops a reasoning model's <think>...</think> block, whose
// drafts could hold an ANSWER: or UNFOLD: line.
func stripThinking(s string) string {
	if _, after, ok := strings.Cut(s, "</think>"); ok {
		return strings.TrimSpace(after)
	}
	return s
}

// cut shortens s to at most n bytes for an error message.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// llmReader is a model behind a chat completions endpoint.
type llmReader struct{ c *chatClient }

func (r llmReader) reply(ctx context.Context, t *turn) (string, error) {
	return r.c.complete(ctx, t.msgs)
}
