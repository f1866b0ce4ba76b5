package pruner_test

import (
	"context"
	"fmt"
	"log"

	"github.com/prunekit/pruner"
)

const retrySource = `import time


def backoff(attempt):
    return min(30, 2 ** attempt)


def retry(call, attempts=5):
    for attempt in range(attempts):
        try:
            return call()
        except ConnectionError:
            time.sleep(backoff(attempt))
    raise RuntimeError("gave up")
`

const clientSource = `import json
import time
import urllib.request

DEFAULT_TIMEOUT = 10


class Client:
    def __init__(self, base_url, token=None):
        self.base_url = base_url.rstrip("/")
        self.token = token

    def _headers(self):
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        return headers

    def get(self, path):
        req = urllib.request.Request(self.base_url + path, headers=self._headers())
        with urllib.request.urlopen(req, timeout=DEFAULT_TIMEOUT) as resp:
            return json.load(resp)

    def get_with_retries(self, path, attempts=5):
        for attempt in range(attempts):
            try:
                return self.get(path)
            except ConnectionError:
                time.sleep(backoff(attempt))
        raise RuntimeError("gave up after %d attempts" % attempts)


def backoff(attempt):
    return min(30, 2 ** attempt)


def parse_link_header(value):
    links = {}
    for part in value.split(","):
        url, _, rel = part.partition(";")
        links[rel.strip().removeprefix('rel="').rstrip('"')] = url.strip("<> ")
    return links
`

// Without a checkpoint, Load uses the embedded line model: no download, no
// GPU, milliseconds per file. Here a line budget allows an output of 40% of
// the input's lines, placeholders included.
// Kept lines are verbatim; removed runs fold into placeholders in the
// language's comment syntax, naming the definitions they fold (see
// Result.Expand to unfold one); the repair pass keeps the headers the kept
// lines need, so the output is still valid code.
func Example() {
	ctx := context.Background()
	p, err := pruner.Load(ctx, "", pruner.WithLineBudget(0.4))
	if err != nil {
		log.Fatal(err)
	}
	res, err := p.Prune(ctx, "how long do we wait between retries?", clientSource)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(res.Text)
	fmt.Printf("%s kept %d of %d lines\n", res.Scorer, len(res.KeptLines()), len(res.Lines))
	// Output:
	// import json
	// import time
	// import urllib.request
	// # ... 4 lines omitted (4-7): DEFAULT_TIMEOUT
	// class Client:
	//     # ... 15 lines omitted (9-23): def __init__, def _headers, def get
	//     def get_with_retries(self, path, attempts=5):
	//         for attempt in range(attempts):
	//             try:
	//                 return self.get(path)
	//             except ConnectionError:
	//                 time.sleep(backoff(attempt))
	//         raise RuntimeError("gave up after %d attempts" % attempts)
	// # ... 2 lines omitted (31-32)
	// def backoff(attempt):
	//     return min(30, 2 ** attempt)
	// # ... 8 lines omitted (35-42): def parse_link_header
	// line kept 13 of 42 lines
}

// Load a checkpoint once, then prune any number of texts with it. The tiny
// test checkpoint has random weights, so its choices are arbitrary; the
// output lists the runs it folded into placeholders.
func ExampleLoad() {
	ctx := context.Background()
	p, err := pruner.Load(ctx, "testdata/tiny-lamr",
		pruner.WithDecision(pruner.Marginal), pruner.WithThreshold(0.9))
	if err != nil {
		log.Fatal(err)
	}
	res, err := p.Prune(ctx, "how long do we wait between retries?", clientSource)
	if err != nil {
		log.Fatal(err)
	}
	for _, ph := range res.Placeholders {
		fmt.Printf("lines %d-%d folded\n", ph.FirstLine, ph.LastLine)
	}
	fmt.Printf("kept %d of %d lines\n", len(res.KeptLines()), len(res.Lines))
	// Output:
	// lines 9-12 folded
	// lines 20-20 folded
	// lines 29-42 folded
	// kept 23 of 42 lines
}

// Result.Lines says, for every input line, whether it was kept and why.
func ExampleResult_Lines() {
	ctx := context.Background()
	p, err := pruner.Load(ctx, "testdata/tiny-lamr", pruner.WithRepair(false))
	if err != nil {
		log.Fatal(err)
	}
	res, err := p.Prune(ctx, "which exception triggers a retry?", clientSource)
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range res.Lines[7:11] {
		fmt.Printf("%2d kept=%-5v reason=%q\n", l.Number, l.Kept, l.Reason)
	}
	// Output:
	// 8 kept=true  reason="model"
	//  9 kept=true  reason="model"
	// 10 kept=true  reason="model"
	// 11 kept=true  reason="cheaper"
}

// The SWE-Pruner renderer reproduces the original service's output, for
// agents that already parse "(filtered N lines)".
func ExampleWithSWEPrunerCompat() {
	ctx := context.Background()
	p, err := pruner.Load(ctx, "testdata/tiny-swepruner", pruner.WithSWEPrunerCompat())
	if err != nil {
		log.Fatal(err)
	}
	res, err := p.Prune(ctx, "how long do we wait between retries?", retrySource)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text)
	// Output:
	// import time
	// (filtered 13 lines)
}

// A token budget replaces the threshold: the best lines are taken, with
// what the repair pass adds for them, until the budget is spent. The budget
// bounds the whole output, placeholders included, counted with the
// tokenizer of Result.Tokens. Lines come first: placeholders name what they
// fold as far as the budget leaves room, here one name on the largest fold.
func ExampleWithTokenBudget() {
	ctx := context.Background()
	p, err := pruner.Load(ctx, "", pruner.WithTokenBudget(120))
	if err != nil {
		log.Fatal(err)
	}
	res, err := p.Prune(ctx, "how long do we wait between retries?", clientSource)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(res.Text)
	fmt.Printf("%d of %d tokens\n", res.Tokens.Kept, res.Tokens.Input)
	// Output:
	// import json
	// # ... 6 lines omitted (2-7)
	// class Client:
	//     # ... 15 lines omitted (9-23): def __init__ and 2 more
	//     def get_with_retries(self, path, attempts=5):
	//         for attempt in range(attempts):
	//             try:
	//                 return self.get(path)
	//             except ConnectionError:
	//                 time.sleep(backoff(attempt))
	//         raise RuntimeError("gave up after %d attempts" % attempts)
	// # ... 12 lines omitted (31-42)
	// 113 of 261 tokens
}

// A process that loads a checkpoint sets a soft memory limit once, before
// loading (the embedded line model needs none).
func ExampleSuggestedMemoryLimit() {
	dir := "testdata/tiny-swepruner"
	if limit := pruner.SuggestedMemoryLimit(dir); limit > 0 {
		// debug.SetMemoryLimit(limit) in a real program.
		fmt.Printf("soft limit: %.2f GiB\n", float64(limit)/(1<<30))
	}
	fmt.Println("line model:", pruner.SuggestedMemoryLimit(""))
	// Output:
	// soft limit: 1.01 GiB
	// line model: 0
}
