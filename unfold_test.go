package pruner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner"
	"github.com/prunekit/pruner/astrepair"
)

// A reader unfolds a fold by a name its placeholder prints, and is sent
// only the lines it had not seen.
func ExampleResult_Unfold() {
	ctx := context.Background()
	p, err := pruner.Load(ctx, "", pruner.WithLineBudget(0.4))
	if err != nil {
		log.Fatal(err)
	}
	first, err := p.Prune(ctx, "how long do we wait between retries?", clientSource)
	if err != nil {
		log.Fatal(err)
	}
	more, err := first.Unfold(ctx, "def get")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(more.Expanded[0].Names, more.Expanded[0].Lines)
	delta, err := more.Delta(first)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(delta)
	// Output:
	// [def get] [19-22]
	//       	    # ... 10 lines omitted (9-18): def __init__, def _headers
	//     19	    def get(self, path):
	//     20	        req = urllib.request.Request(self.base_url + path, headers=self._headers())
	//     21	        with urllib.request.urlopen(req, timeout=DEFAULT_TIMEOUT) as resp:
	//     22	            return json.load(resp)
	//       	# ... 1 line omitted (23)
}

const unfoldGo = `package client

import (
	"errors"
	"time"
)

// maxRetries bounds the attempts.
var maxRetries = 3

// Client sends requests.
type Client struct {
	base string
}

// do sends one request.
func (c *Client) do(path string) error {
	if path == "" {
		return errors.New("empty path")
	}
	return nil
}

// retry calls do until it succeeds.
func (c *Client) retry(path string) error {
	var err error
	for i := 0; i < maxRetries; i++ {
		if err = c.do(path); err == nil {
			return nil
		}
		time.Sleep(backoff(i))
	}
	return err
}

func backoff(i int) time.Duration {
	return time.Duration(i) * time.Second
}

type Server struct{}

func (s *Server) do(path string) error {
	return nil
}
`

func pruneTight(t *testing.T, query, text string, opts ...pruner.Option) *pruner.Result {
	t.Helper()
	ctx := context.Background()
	p, err := pruner.Load(ctx, "", append([]pruner.Option{pruner.WithLineBudget(0.15)}, opts...)...)
	require.NoError(t, err)
	res, err := p.Prune(ctx, query, text)
	require.NoError(t, err)
	return res
}

func TestUnfoldByName(t *testing.T) {
	ctx := context.Background()
	res := pruneTight(t, "how long is the backoff between retries?", unfoldGo, pruner.WithLanguage("go"))
	lines := strings.SplitAfter(unfoldGo, "\n")
	shown := func(r *pruner.Result, first, last int) {
		t.Helper()
		for n := first; n <= last; n++ {
			require.True(t, r.Lines[n-1].Kept, "line %d", n)
		}
		checkRendering(t, unfoldGo, r)
	}
	tests := []struct {
		name      string
		items     []string
		wantLines [][2]int // ranges that must be shown
		wantNames []string // labels of the first expansion
	}{
		{"bare name", []string{"maxRetries"}, [][2]int{{8, 9}}, []string{"var maxRetries"}},
		{"label", []string{"func (c *Client) do"}, [][2]int{{16, 22}}, []string{"func (c *Client) do"}},
		{"qualified", []string{"Client.retry"}, [][2]int{{24, 34}}, []string{"func (c *Client) retry"}},
		{"ambiguous shows each", []string{"do"}, [][2]int{{16, 22}, {42, 44}}, []string{"func (c *Client) do", "func (s *Server) do"}},
		{"name and range in one item", []string{"backoff, 1-2"}, [][2]int{{36, 38}, {1, 2}}, []string{"func backoff"}},
		{"items", []string{"type Client", "40"}, [][2]int{{11, 14}, {40, 40}}, []string{"type Client"}},
		{"a name overlapping a range", []string{"Client.do", "17-18"}, [][2]int{{16, 22}}, []string{"func (c *Client) do"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := res.Unfold(ctx, tc.items...)
			require.NoError(t, err)
			for _, r := range tc.wantLines {
				shown(got, r[0], r[1])
			}
			require.NotEmpty(t, got.Expanded)
			assert.Equal(t, tc.wantNames, got.Expanded[0].Names)
			// What was folded and is now shown says so.
			for n, l := range got.Lines {
				if l.Kept && !res.Lines[n].Kept {
					assert.Equal(t, pruner.ReasonExpanded, l.Reason)
				}
			}
			// The delta holds the new lines, verbatim after their number.
			delta, err := got.Delta(res)
			require.NoError(t, err)
			for _, r := range tc.wantLines {
				for n := r[0]; n <= r[1]; n++ {
					if !res.Lines[n-1].Kept {
						assert.Contains(t, delta, fmt.Sprintf("%6d\t%s", n, lines[n-1]))
					}
				}
			}
			for n, l := range res.Lines {
				if l.Kept {
					assert.NotContains(t, delta, fmt.Sprintf("%6d\t", n+1), "line %d was shown before", n+1)
				}
			}
		})
	}
}

func TestUnfoldRefusals(t *testing.T) {
	ctx := context.Background()
	res := pruneTight(t, "how long is the backoff between retries?", unfoldGo, pruner.WithLanguage("go"))
	tests := []struct {
		name   string
		items  []string
		target error
		msg    string
	}{
		{"unknown name lists the closest", []string{"retries"}, pruner.ErrUnknownName, "closest: var maxRetries"},
		{"unknown part of a list", []string{"backoff, nosuch"}, pruner.ErrUnknownName, `"nosuch"`},
		{"overlapping ranges", []string{"1-10", "5-6"}, pruner.ErrLineRange, "overlap"},
		{"outside the input", []string{"40-400"}, pruner.ErrLineRange, "outside the input's lines 1-44"},
		{"backwards", []string{"9-3"}, pruner.ErrLineRange, "FIRST ≤ LAST"},
		{"empty item", []string{" "}, pruner.ErrLineRange, "empty item"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := res.Unfold(ctx, tc.items...)
			require.ErrorIs(t, err, tc.target)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	var une *astrepair.UnknownNameError
	_, err := res.Unfold(ctx, "Client.dp")
	require.True(t, errors.As(err, &une))
	assert.Equal(t, "func (c *Client) do", une.Closest[0])

	// A result decoded from JSON cannot look names up.
	var decoded pruner.Result
	b, err := res.MarshalJSON()
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &decoded))
	_, err = decoded.Unfold(ctx, "backoff")
	require.ErrorIs(t, err, pruner.ErrNotExpandable)
}

func TestUnfoldToolOutput(t *testing.T) {
	ctx := context.Background()
	var b strings.Builder
	b.WriteString("=== RUN   TestParse\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "    --- PASS: TestParse/case_%02d (0.00s)\n", i)
	}
	b.WriteString("    --- FAIL: TestParse/case_31 (0.00s)\n        parse_test.go:40: got 3, want 4\n        parse_test.go:41: input \"a,b\"\n")
	b.WriteString("--- FAIL: TestParse (0.01s)\nFAIL\nFAIL\texample.com/parse\t0.02s\n")
	text := b.String()
	res := pruneTight(t, "which cases pass?", text)
	got, err := res.Unfold(ctx, "TestParse/case_31")
	require.NoError(t, err)
	for n := 32; n <= 34; n++ {
		assert.True(t, got.Lines[n-1].Kept, "line %d", n)
	}
	assert.Equal(t, []pruner.LineRange{{First: 32, Last: 34}}, got.Expanded[0].Lines)
	checkRendering(t, text, got)
}

func TestDelta(t *testing.T) {
	ctx := context.Background()
	res := pruneTight(t, "how long is the backoff between retries?", unfoldGo, pruner.WithLanguage("go"))
	// Nothing new: empty.
	d, err := res.Delta(res)
	require.NoError(t, err)
	assert.Empty(t, d)
	// Step by step: each delta holds what the step added.
	a, err := res.Unfold(ctx, "type Client")
	require.NoError(t, err)
	b, err := a.Unfold(ctx, "Server.do")
	require.NoError(t, err)
	assert.Len(t, b.Expanded, 2)
	dab, err := b.Delta(a)
	require.NoError(t, err)
	assert.Contains(t, dab, "    42\tfunc (s *Server) do(path string) error {\n")
	assert.NotContains(t, dab, "type Client struct")
	dres, err := b.Delta(res)
	require.NoError(t, err)
	assert.Contains(t, dres, "type Client struct")
	assert.Contains(t, dres, "func (s *Server) do")
	// Every numbered line of a delta is its input line, verbatim.
	in := strings.SplitAfter(unfoldGo, "\n")
	for _, l := range strings.SplitAfter(dres, "\n") {
		if l == "" {
			continue
		}
		num, rest, ok := strings.Cut(l, "\t")
		require.True(t, ok)
		if n := strings.TrimSpace(num); n != "" {
			var k int
			_, err := fmt.Sscan(n, &k)
			require.NoError(t, err)
			assert.Equal(t, in[k-1], rest)
		} else {
			assert.Contains(t, rest, "lines omitted")
		}
	}
	// Another input: refused.
	other := pruneTight(t, "how long is the backoff between retries?", strings.Replace(unfoldGo, "3", "4", 1), pruner.WithLanguage("go"))
	_, err = b.Delta(other)
	require.ErrorIs(t, err, pruner.ErrOtherInput)
	_, err = b.Delta(nil)
	require.ErrorIs(t, err, pruner.ErrOtherInput)
}

// Numbered numbers every kept line with its input line, placeholders with
// a blank column, and is Text otherwise.
func TestNumbered(t *testing.T) {
	res := pruneTight(t, "how long is the backoff between retries?", unfoldGo, pruner.WithLanguage("go"))
	in := strings.SplitAfter(unfoldGo, "\n")
	out := strings.SplitAfter(res.Numbered(), "\n")
	text := strings.SplitAfter(res.Text, "\n")
	require.Equal(t, len(text), len(out))
	for i, l := range out {
		if l == "" {
			continue
		}
		num, rest, ok := strings.Cut(l, "\t")
		require.True(t, ok)
		assert.Equal(t, text[i], rest)
		assert.Len(t, num, 6)
		if n := strings.TrimSpace(num); n != "" {
			var k int
			_, err := fmt.Sscan(n, &k)
			require.NoError(t, err)
			assert.Equal(t, in[k-1], rest)
		}
	}
}

// One Result unfolded from many goroutines at once: each gets its own
// copy; the Result itself is unchanged.
func TestUnfoldConcurrent(t *testing.T) {
	ctx := context.Background()
	res := pruneTight(t, "how long is the backoff between retries?", unfoldGo, pruner.WithLanguage("go"))
	before := res.Text
	names := []string{"do", "backoff", "type Client", "maxRetries", "Client.retry", "10-12"}
	var wg sync.WaitGroup
	errs := make([]error, 24)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := res.Unfold(ctx, names[i%len(names)])
			if err == nil {
				_, err = got.Delta(res)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, before, res.Text)
	assert.Empty(t, res.Expanded)
}

// FuzzUnfoldItems: any item list gives a rendering of kept input lines or
// an error wrapping ErrLineRange or ErrUnknownName; never a panic.
func FuzzUnfoldItems(f *testing.F) {
	f.Add("do")
	f.Add("backoff, 1-2")
	f.Add("func (c *Client) do,40")
	f.Add("9-3,,x")
	f.Add("Client.retry, type Client, 44")
	f.Add("\xff\x00, 0-0")
	f.Add("(((,))),[")
	ctx := context.Background()
	p, err := pruner.Load(ctx, "", pruner.WithLineBudget(0.15), pruner.WithLanguage("go"))
	if err != nil {
		f.Fatal(err)
	}
	res, err := p.Prune(ctx, "how long is the backoff between retries?", unfoldGo)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, items string) {
		got, err := res.Unfold(ctx, items)
		if err != nil {
			if !errors.Is(err, pruner.ErrLineRange) && !errors.Is(err, pruner.ErrUnknownName) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		checkRendering(t, unfoldGo, got)
		if _, err := got.Delta(res); err != nil {
			t.Fatal(err)
		}
	})
}

func TestUnfoldBounds(t *testing.T) {
	res := pruneTight(t, "how long is the backoff between retries?", unfoldGo, pruner.WithLanguage("go"))
	many := make([]string, pruner.MaxUnfoldNames+1)
	for i := range many {
		many[i] = "do"
	}
	_, err := res.Unfold(context.Background(), many...)
	require.ErrorIs(t, err, pruner.ErrTooManyNames)
	// Ranges do not count.
	ranges := make([]string, 200)
	for i := range ranges {
		ranges[i] = fmt.Sprint(i + 1)
	}
	_, err = res.Unfold(context.Background(), append(ranges[:44], many[:pruner.MaxUnfoldNames]...)...)
	require.NoError(t, err)
	// A cancelled context stops the lookups.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = res.Unfold(ctx, "do")
	require.ErrorIs(t, err, context.Canceled)
	// Each call's items are recorded after the earlier calls', repeats too.
	a, err := res.Unfold(context.Background(), "do")
	require.NoError(t, err)
	b, err := a.Unfold(context.Background(), "do", "do")
	require.NoError(t, err)
	assert.Len(t, b.Expanded, 3)
}

func TestCheckUnfoldItems(t *testing.T) {
	many := strings.Repeat("a,", pruner.MaxUnfoldNames) + "b"
	tests := []struct {
		items  []string
		target error
	}{
		{[]string{"do", "120-159", "readEvents, 7"}, nil},
		{[]string{"func (l *List[K, V]) Push"}, nil},
		{[]string{" "}, pruner.ErrLineRange},
		{[]string{"9-3"}, pruner.ErrLineRange},
		{[]string{"do, 12-x"}, pruner.ErrLineRange},
		{[]string{many}, pruner.ErrTooManyNames},
		{[]string{strings.Repeat("1,", 5000) + "2"}, nil}, // ranges do not count
	}
	for _, tc := range tests {
		err := pruner.CheckUnfoldItems(tc.items...)
		if tc.target == nil {
			assert.NoError(t, err, "%q", tc.items)
		} else {
			assert.ErrorIs(t, err, tc.target, "%q", tc.items)
		}
	}
}

// What CheckUnfoldItems lets through, Unfold does not refuse for its count.
func TestUnfoldCountsAsCheck(t *testing.T) {
	res := pruneTight(t, "how long is the backoff between retries?", unfoldGo, pruner.WithLanguage("go"))
	var items []string
	for i := 0; i < pruner.MaxUnfoldNames/2; i++ {
		items = append(items, "do, backoff")
	}
	require.NoError(t, pruner.CheckUnfoldItems(items...))
	_, err := res.Unfold(context.Background(), items...)
	require.NoError(t, err)
}
