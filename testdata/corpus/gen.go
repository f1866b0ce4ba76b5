//go:build ignore

// gen writes cases.jsonl.gz: the in-repo corpus on which the library's
// promises are tested (budgets, output never longer, parse validity,
// cancellation and memory stress) in a clone with no ../shared beside it.
//
//	go run testdata/corpus/gen.go            # from the repository root
//
// It draws, deterministically, from the val splits of three sources that
// are all open-source code of the training repositories (none an eval
// source; see README.md beside this file for the repositories and their
// licenses):
//
//   - code questions: examples/train/agentdata/code.jsonl.gz, 4 files per
//     language;
//   - tool output: examples/train/tooldata/*.jsonl.gz and the labelled tool
//     questions of examples/train/agentdata/tool.jsonl.gz, 3 texts per
//     family;
//   - commit messages: ../shared/traindata/*.jsonl.gz, 2 cases per language
//     (the one source outside the repository: gen needs it, the tests do
//     not).
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// licensed lists the repositories whose files the corpus may carry, with
// their licenses (each repository's LICENSE file). Repositories under
// copyleft or source-available licenses are left out.
var licensed = map[string]string{
	"aio-libs/aiohttp": "Apache-2.0", "gin-gonic/gin": "MIT", "vuejs/core": "MIT",
	"pallets/werkzeug": "BSD-3-Clause", "prometheus/client_golang": "Apache-2.0",
	"pallets/jinja": "BSD-3-Clause", "labstack/echo": "MIT", "tornadoweb/tornado": "Apache-2.0",
	"uber-go/zap": "MIT", "psf/black": "MIT", "libuv/libuv": "MIT", "fmtlib/fmt": "MIT",
	"serde-rs/serde": "MIT OR Apache-2.0", "scrapy/scrapy": "BSD-3-Clause",
	"apache/commons-lang": "Apache-2.0", "go-chi/chi": "MIT", "etcd-io/bbolt": "MIT",
	"marshmallow-code/marshmallow": "MIT", "spf13/viper": "MIT", "axios/axios": "MIT",
	"nlohmann/json": "MIT", "pytest-dev/pytest": "MIT", "pydantic/pydantic": "MIT",
	"moment/moment": "MIT", "jhy/jsoup": "MIT", "rust-lang/regex": "MIT OR Apache-2.0",
	"encode/httpx": "BSD-3-Clause", "dtolnay/anyhow": "MIT OR Apache-2.0",
	"sindresorhus/got": "MIT", "go-yaml/yaml": "MIT AND Apache-2.0", "lodash/lodash": "MIT",
	"koajs/koa": "MIT", "tokio-rs/tokio": "MIT", "sharkdp/fd": "MIT OR Apache-2.0",
	"date-fns/date-fns": "MIT", "gorilla/mux": "BSD-3-Clause", "FasterXML/jackson-core": "Apache-2.0",
	"square/retrofit": "Apache-2.0",
}

// record is a case as the data files hold it; numbers may come as JSON
// numbers or strings (tooldata writes some fields as strings), so the raw
// messages are kept and written back as they came.
type record map[string]json.RawMessage

func (r record) str(k string) string {
	var s string
	_ = json.Unmarshal(r[k], &s)
	return s
}

func (r record) num(k string) int {
	var n int
	if json.Unmarshal(r[k], &n) == nil {
		return n
	}
	var s string
	_ = json.Unmarshal(r[k], &s)
	fmt.Sscan(s, &n)
	return n
}

func read(path string) []record {
	fh, err := os.Open(path)
	check(err)
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	check(err)
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 64<<20)
	var out []record
	for sc.Scan() {
		var r record
		check(json.Unmarshal(sc.Bytes(), &r))
		out = append(out, r)
	}
	check(sc.Err())
	return out
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// pick takes, per group, the first n val records (sorted by id) whose text
// has lines in [minLines, maxLines], one per distinct text.
func pick(recs []record, group func(record) string, n, minLines, maxLines int) []record {
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].str("id") < recs[j].str("id") })
	taken := map[string]int{}
	seen := map[string]bool{}
	var out []record
	for _, r := range recs {
		g := group(r)
		text := r.str("text")
		lines := strings.Count(text, "\n")
		if r.str("split") != "val" || g == "" || taken[g] >= n || seen[text] || lines < minLines || lines > maxLines {
			continue
		}
		if repo := r.str("repo"); !strings.HasPrefix(repo, "tool:") && licensed[repo] == "" {
			continue
		}
		seen[text] = true
		taken[g]++
		out = append(out, r)
	}
	return out
}

func main() {
	var out []record
	code := read("examples/train/agentdata/code.jsonl.gz")
	out = append(out, pick(code, func(r record) string { return r.str("lang") }, 4, 60, 700)...)

	var tool []record
	paths, err := filepath.Glob("examples/train/tooldata/*.jsonl.gz")
	check(err)
	sort.Strings(paths)
	for _, p := range paths {
		tool = append(tool, read(p)...)
	}
	tool = append(tool, read("examples/train/agentdata/tool.jsonl.gz")...)
	out = append(out, pick(tool, func(r record) string { return r.str("repo") }, 3, 20, 900)...)

	var commits []record
	paths, err = filepath.Glob("../shared/traindata/*.jsonl.gz")
	check(err)
	if len(paths) == 0 {
		check(fmt.Errorf("../shared/traindata is absent"))
	}
	sort.Strings(paths)
	for _, p := range paths {
		commits = append(commits, read(p)...)
	}
	out = append(out, pick(commits, func(r record) string { return r.str("lang") }, 2, 40, 400)...)

	fh, err := os.Create("testdata/corpus/cases.jsonl.gz")
	check(err)
	zw, err := gzip.NewWriterLevel(fh, gzip.BestCompression)
	check(err)
	repos := map[string]int{}
	for _, r := range out {
		b, err := json.Marshal(r) // map keys sorted: a stable file
		check(err)
		_, err = zw.Write(append(b, '\n'))
		check(err)
		repos[r.str("repo")]++
	}
	check(zw.Close())
	check(fh.Close())
	names := make([]string, 0, len(repos))
	for k := range repos {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		lic := licensed[k]
		if lic == "" {
			lic = "generated by examples/toolgen"
		}
		fmt.Printf("%-32s %3d  %s\n", k, repos[k], lic)
	}
	fmt.Printf("%d cases\n", len(out))
}
