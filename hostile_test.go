package pruner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/chunk"
	"github.com/prunekit/pruner/internal/memtest"
)

// Bounds every call must meet, whatever the text: peak memory (resident,
// C heap and garbage not yet collected included) of at most
// hostileBytesFactor bytes per input byte plus hostileLineBytes per line
// plus a constant, and a deadline noticed within hostileDeadlineSlack. The
// line bound is what the line model needs: its input holds 28 bytes per
// line (NewInputRows computes the feature rows as the forward pass needs
// them) and the forward pass keeps 208, and Go's collector lets the heap
// grow to about twice what is live; 700 leaves room for the collector's
// timing (200K one-line definitions peak at 180-395 MB of a 503 MB bound).
// The slack is loose on purpose: the suite runs on a shared 2-core
// machine, and what it catches is work that ignores the
// context for seconds or minutes (measured overshoot: a few milliseconds).
const (
	hostileBytesFactor   = 64
	hostileLineBytes     = 700
	hostileConstBytes    = 128 << 20
	hostileDeadline      = 5 * time.Millisecond
	hostileDeadlineSlack = 2 * time.Second
)

type hostileCase struct {
	name string
	// text builds the input; long selects the -long sizes.
	text func(t testing.TB, long bool) string
	opts []Option
}

func nested(open, body, close string, n int) string {
	return strings.Repeat(open, n) + body + strings.Repeat(close, n)
}

func pick(long bool, short, full int) int {
	if long {
		return full
	}
	return short
}

var hostileCases = []hostileCase{
	{"deep nesting javascript", func(t testing.TB, long bool) string {
		return "function f() " + nested("{", "x()", "}", pick(long, 50_000, 200_000))
	}, []Option{WithLanguage("javascript")}},
	{"deep nesting go", func(t testing.TB, long bool) string {
		return "package p\n\nfunc f() " + nested("{", "g()", "}", pick(long, 50_000, 200_000)) + "\n"
	}, []Option{WithLanguage("go")}},
	{"deep nesting python", func(t testing.TB, long bool) string {
		n := pick(long, 1_500, 5_000)
		var b strings.Builder
		b.WriteString("def f(x):\n")
		for i := 1; i <= n; i++ {
			b.WriteString(strings.Repeat(" ", i))
			b.WriteString("if x:\n")
		}
		b.WriteString(strings.Repeat(" ", n+1) + "return x\n")
		return b.String()
	}, []Option{WithLanguage("python"), WithMaxInputBytes(0)}},
	{"many definitions", func(t testing.TB, long bool) string {
		var b strings.Builder
		for i := range pick(long, 100_000, 600_000) {
			fmt.Fprintf(&b, "def f%d(x):\n    return x + %d\n", i, i)
		}
		return b.String()
	}, []Option{WithLanguage("python"), WithMaxInputLines(0), WithMaxInputBytes(0)}},
	{"real Go source", func(t testing.TB, long bool) string {
		return realGoSource(t, pick(long, 2<<20, 20<<20))
	}, []Option{WithMaxInputBytes(0)}},
	{"1M empty lines", func(t testing.TB, long bool) string {
		return strings.Repeat("\n", pick(long, 1_000_000, 4_000_000))
	}, []Option{WithMaxInputLines(0)}},
	{"5 MB single line", func(t testing.TB, long bool) string {
		return strings.Repeat("x := a + b; ", pick(long, 5<<20, 15<<20)/12)
	}, nil},
	{"long whitespace runs", func(t testing.TB, long bool) string {
		n := pick(long, 1<<20, 8<<20)
		return "x = 1\n" + strings.Repeat(" ", n) + "y = 2\n" + strings.Repeat("\t", n) + "\n" + strings.Repeat(" \t\r", n/3) + "z\n"
	}, []Option{WithMaxInputBytes(0)}},
	{"NUL only", func(t testing.TB, long bool) string {
		return strings.Repeat("\x00", pick(long, 1<<20, 10<<20))
	}, nil},
	{"invalid UTF-8", func(t testing.TB, long bool) string {
		r := rand.New(rand.NewPCG(1, 2))
		b := make([]byte, pick(long, 1<<20, 10<<20))
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		return string(b)
	}, nil},
	{"one letter", func(t testing.TB, long bool) string {
		return strings.Repeat("a", pick(long, 1<<20, 10<<20)) + "\n"
	}, nil},
}

// TestHostileInputs runs each built-in line scorer (the line model and the
// lexical baseline) and a user's Scorer on inputs built to find superlinear work: deep
// nesting, a million empty lines, a 5 MB line, long whitespace runs, NULs,
// random bytes (refused as binary by default, pruned as text with
// WithBinaryInput). Every call must finish with the verbatim contract intact,
// within its memory bound, and must notice a 5 ms deadline promptly.
func TestHostileInputs(t *testing.T) {
	// The built-in line scorers and a user's Scorer (New): the bounds hold
	// for the pipeline around any scorer that is itself linear.
	scorers := map[string]func(opts ...Option) (*Pruner, error){
		ScorerLine: func(opts ...Option) (*Pruner, error) { return Load(context.Background(), "", opts...) },
		ScorerLexical: func(opts ...Option) (*Pruner, error) {
			return Load(context.Background(), "", append(opts, WithScorer(ScorerLexical))...)
		},
		"grep": func(opts ...Option) (*Pruner, error) { return New(grepScorer{}, opts...) },
	}
	names := []string{ScorerLine, ScorerLexical, "grep"}
	for _, hc := range hostileCases {
		text := hc.text(t, *long)
		// Binary inputs (NULs, random bytes) are refused by default; the
		// contract runs on them with WithBinaryInput(true).
		binary := binaryReason(text) != ""
		lines := chunk.CountLines(text)
		for _, scorer := range names {
			t.Run(hc.name+"/"+scorer, func(t *testing.T) {
				p, err := scorers[scorer](hc.opts...)
				require.NoError(t, err)
				if binary {
					_, err := p.Prune(context.Background(), "how are errors handled?", text)
					require.ErrorIs(t, err, ErrBinaryInput)
					t.Logf("refused by default: %v", err)
					p, err = p.With(WithBinaryInput(true))
					require.NoError(t, err)
				}

				// Completes, whole and verbatim, within the memory bound.
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				var res *Result
				start := time.Now()
				peak := memtest.Peak(func() {
					res, err = p.Prune(ctx, "how are errors handled?", text)
				})
				elapsed := time.Since(start)
				cancel()
				require.NoError(t, err)
				checkInvariants(t, text, res)
				bound := int64(hostileBytesFactor*len(text) + hostileLineBytes*lines + hostileConstBytes)
				t.Logf("%d bytes, %d lines: %v, peak memory +%.1f MB (bound %.1f MB), kept %d lines",
					len(text), lines, elapsed.Round(time.Millisecond), float64(peak)/1e6, float64(bound)/1e6, len(res.KeptLines()))
				if !raceDetector {
					require.LessOrEqual(t, peak, bound, "peak memory over the bound")
				}

				// A short deadline is noticed promptly.
				ctx, cancel = context.WithTimeout(context.Background(), hostileDeadline)
				defer cancel()
				start = time.Now()
				res, err = p.Prune(ctx, "how are errors handled?", text)
				elapsed = time.Since(start)
				if err == nil {
					checkInvariants(t, text, res)
				} else {
					require.ErrorIs(t, err, context.DeadlineExceeded)
				}
				t.Logf("with a %v deadline: returned after %v (%v)", hostileDeadline, elapsed.Round(100*time.Microsecond), err)
				if !raceDetector {
					require.Less(t, elapsed, hostileDeadline+hostileDeadlineSlack,
						"a %v deadline was noticed after %v", hostileDeadline, elapsed)
				}
			})
		}
	}
}

// TestInputLimits: the default limits refuse oversized texts before any
// work, with an error that names the option lifting them.
func TestInputLimits(t *testing.T) {
	p, err := Load(context.Background(), "")
	require.NoError(t, err)
	_, err = p.Prune(context.Background(), "q", strings.Repeat("x", DefaultMaxInputBytes+1))
	require.ErrorIs(t, err, ErrInputTooLarge)
	require.ErrorContains(t, err, "WithMaxInputBytes")
	_, err = p.Prune(context.Background(), "q", strings.Repeat("\n", DefaultMaxInputLines+1))
	require.ErrorIs(t, err, ErrInputTooLarge)
	require.ErrorContains(t, err, "WithMaxInputLines")
	// At the limits, and with the limits set or lifted by options.
	_, err = p.Prune(context.Background(), "q", strings.Repeat("\n", DefaultMaxInputLines))
	require.NoError(t, err)
	q, err := p.With(WithMaxInputLines(3))
	require.NoError(t, err)
	_, err = q.Prune(context.Background(), "q", "a\nb\nc\n")
	require.NoError(t, err)
	_, err = q.Prune(context.Background(), "q", "a\nb\nc\nd")
	require.ErrorIs(t, err, ErrInputTooLarge)
	q, err = q.With(WithMaxInputLines(0), WithMaxInputBytes(0))
	require.NoError(t, err)
	_, err = q.Prune(context.Background(), "q", "a\nb\nc\nd")
	require.NoError(t, err)
	_, err = p.With(WithMaxInputLines(-1))
	require.ErrorIs(t, err, ErrOption)
}
