// Command annotate prepares tool outputs for annotators who write natural
// questions over them, and turns their answers back into training cases.
//
//	go run ./examples/toolgen/annotate sample -data examples/train/suitedata -n 520 -batches 8 -out /tmp/annot
//	go run ./examples/toolgen/annotate resplit -data examples/train/suitedata
//	go run ./examples/toolgen/annotate merge -in /tmp/annot -out examples/train/suitedata/natural/labelled.jsonl.gz
//
// sample draws distinct outputs from the generated families (stratified by
// family, at most -max-lines lines each) and writes each as a numbered
// text file into one of the batch folders, with an index (index.jsonl)
// that remembers where the output came from. Annotators see only the
// numbered output: no question the generator asked, no gold, no pruner.
//
// resplit moves a further fifth of the outputs (by a hash of the text, so
// every question over one output moves together) from train to val in
// every family file: at the generators' 5%, a family of 100 runs has five
// val outputs, too few to measure a runner on. merge applies the same rule.
//
// merge reads every batch's labels.jsonl (one {"file","query","gold_lines"}
// object per question), checks that every gold line exists and is not
// blank, and writes the cases with the split of the output they were asked
// of, so a val output's questions stay in val.
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/prunekit/pruner/examples/toolgen/internal/family"
	"github.com/prunekit/pruner/internal/evalset"
	lmtrain "github.com/prunekit/pruner/internal/linemodel/train"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "annotate:", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: annotate sample|merge [flags]")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "examples/train/suitedata", "folder of generated families (*.jsonl.gz)")
	out := fs.String("out", "", "sample: folder of batches; merge: output file")
	in := fs.String("in", "", "merge: folder of batches")
	n := fs.Int("n", 520, "sample: outputs to draw")
	batches := fs.Int("batches", 8, "sample: batch folders")
	maxLines := fs.Int("max-lines", 1200, "sample: skip outputs longer than this")
	seed := fs.Uint64("seed", 1, "sample: seed")
	skip := fs.String("skip", "", "sample: an earlier index.jsonl whose outputs are not drawn again")
	first := fs.Int("first-batch", 1, "sample: number of the first batch folder (a second wave continues the first's numbering)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	switch args[0] {
	case "sample":
		outs, err := loadOutputs(*data)
		if err != nil {
			return err
		}
		if *skip != "" {
			b, err := os.ReadFile(*skip)
			if err != nil {
				return err
			}
			for _, l := range strings.Split(string(b), "\n") {
				var e output
				if json.Unmarshal([]byte(l), &e) == nil {
					delete(outs, e.Key)
				}
			}
		}
		return sample(outs, *out, *n, *batches, *first, *maxLines, *seed, stderr)
	case "merge":
		return merge(*in, *out, stderr)
	case "resplit":
		return resplit(*data, stderr)
	}
	return fmt.Errorf("unknown subcommand %q", args[0])
}

// output is one distinct generated tool output.
type output struct {
	Key    string `json:"key"` // hash of the text
	Family string `json:"family"`
	Path   string `json:"path"`
	Source string `json:"source,omitempty"`
	Split  string `json:"split"`
	// Text is written into the index, so that a merge does not depend on
	// the family files staying as they were when the batch was drawn.
	Text string `json:"text"`
}

func textKey(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return fmt.Sprintf("%016x", h.Sum64())
}

func loadOutputs(dir string) (map[string]*output, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl.gz"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.jsonl.gz in %s", dir)
	}
	outs := map[string]*output{}
	for _, f := range files {
		cs, err := lmtrain.LoadFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		fam := strings.TrimSuffix(filepath.Base(f), ".jsonl.gz")
		for _, c := range cs {
			k := textKey(c.Text)
			if _, ok := outs[k]; !ok {
				outs[k] = &output{Key: k, Family: fam, Path: c.Path, Source: c.Source, Split: c.Split, Text: c.Text}
			}
		}
	}
	return outs, nil
}

func sample(outs map[string]*output, dir string, n, batches, first, maxLines int, seed uint64, stderr io.Writer) error {
	if dir == "" {
		return errors.New("-out is required")
	}
	// Val outputs first, up to a quarter of the sample: their questions
	// are the labelled val cases, and at 5% of the outputs a uniform draw
	// would leave too few to measure.
	r := rand.New(rand.NewPCG(seed, 7))
	picked := drawRoundRobin(r, outs, "val", n/4, maxLines)
	picked = append(picked, drawRoundRobin(r, outs, "train", n-len(picked), maxLines)...)
	r.Shuffle(len(picked), func(i, j int) { picked[i], picked[j] = picked[j], picked[i] })
	for b := 0; b < batches; b++ {
		if err := os.MkdirAll(filepath.Join(dir, fmt.Sprintf("batch%d", first+b)), 0o755); err != nil {
			return err
		}
	}
	// Appending lets a second wave share the first's index.
	idx, err := os.OpenFile(filepath.Join(dir, "index.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer idx.Close()
	enc := json.NewEncoder(idx)
	for i, o := range picked {
		name := fmt.Sprintf("batch%d/%03d-%s.txt", first+i%batches, i+1, o.Key[:8])
		var b strings.Builder
		fmt.Fprintf(&b, "# output of: %s (file %s)\n", runnerHint(o.Family), o.Path)
		for k, l := range family.SplitLines(o.Text) {
			fmt.Fprintf(&b, "%5d| %s\n", k+1, l)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			return err
		}
		if err := enc.Encode(struct {
			File string `json:"file"`
			*output
		}{name, o}); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "sampled %d outputs into %d batches\n", len(picked), batches)
	return idx.Close()
}

// splitOf is the split of an output that the generator put in split:
// val stays val, and a fifth of the rest (by text) becomes val.
func splitOf(text, split string) string {
	h := fnv.New64a()
	h.Write([]byte("val/" + text))
	if split == "val" || h.Sum64()%5 == 0 {
		return "val"
	}
	return split
}

func resplit(dir string, stderr io.Writer) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl.gz"))
	if err != nil {
		return err
	}
	for _, f := range files {
		cs, err := lmtrain.LoadFile(f)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		moved := 0
		for i := range cs {
			cs[i].Text = family.Scrub(cs[i].Text)
			if s := splitOf(cs[i].Text, cs[i].Split); s != cs[i].Split {
				cs[i].Split = s
				moved++
			}
		}
		if err := writeCases(f, cs); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "%s: %d of %d cases moved to val\n", f, moved, len(cs))
	}
	return nil
}

// writeCases writes cases as gzipped JSONL (the generators' encoding).
func writeCases(path string, cases []lmtrain.Case) error {
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, c := range cases {
		if err := enc.Encode(c); err != nil {
			return err
		}
	}
	w, err := os.Create(path)
	if err != nil {
		return err
	}
	defer w.Close()
	zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
	if _, err := io.WriteString(zw, buf.String()); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return w.Close()
}

// drawRoundRobin draws up to n outputs of one split, one family at a time
// in turn, so each family gets an equal share until it runs out.
func drawRoundRobin(r *rand.Rand, outs map[string]*output, split string, n, maxLines int) []*output {
	byFam := map[string][]*output{}
	for _, o := range outs {
		if l := len(family.SplitLines(o.Text)); o.Split == split && l >= 5 && l <= maxLines {
			byFam[o.Family] = append(byFam[o.Family], o)
		}
	}
	fams := make([]string, 0, len(byFam))
	for f, os := range byFam {
		fams = append(fams, f)
		sort.Slice(os, func(i, j int) bool { return os[i].Key < os[j].Key })
	}
	sort.Strings(fams)
	for _, f := range fams {
		r.Shuffle(len(byFam[f]), func(i, j int) { byFam[f][i], byFam[f][j] = byFam[f][j], byFam[f][i] })
	}
	var picked []*output
	for len(picked) < n {
		took := false
		for _, f := range fams {
			if len(byFam[f]) > 0 && len(picked) < n {
				picked = append(picked, byFam[f][0])
				byFam[f] = byFam[f][1:]
				took = true
			}
		}
		if !took {
			break
		}
	}
	return picked
}

// runnerHint names the tool the way the annotators' header shows it.
func runnerHint(fam string) string { return strings.ReplaceAll(fam, "-", " ") }

// label is one annotator's question.
type label struct {
	File  string `json:"file"`
	Query string `json:"query"`
	Gold  []int  `json:"gold_lines"`
	Kind  string `json:"kind,omitempty"` // debug, locate, explain, count, ...
}

func merge(dir, outFile string, stderr io.Writer) error {
	if dir == "" || outFile == "" {
		return errors.New("-in and -out are required")
	}
	index := map[string]*output{}
	f, err := os.Open(filepath.Join(dir, "index.jsonl"))
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e struct {
			File string `json:"file"`
			output
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return err
		}
		o := e.output
		o.Text = family.Scrub(o.Text)
		index[e.File] = &o
	}
	f.Close()
	labelFiles, _ := filepath.Glob(filepath.Join(dir, "batch*", "labels.jsonl"))
	var cases []lmtrain.Case
	bad, perOut := 0, map[string]int{}
	for _, lf := range labelFiles {
		b, err := os.ReadFile(lf)
		if err != nil {
			return err
		}
		for ln, line := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			var l label
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				fmt.Fprintf(stderr, "%s:%d: %v\n", lf, ln+1, err)
				bad++
				continue
			}
			o := index[l.File]
			if o == nil {
				fmt.Fprintf(stderr, "%s:%d: unknown file %q\n", lf, ln+1, l.File)
				bad++
				continue
			}
			lines := family.SplitLines(o.Text)
			gold := family.UniqSorted(l.Gold)
			ok := len(gold) > 0 && strings.TrimSpace(l.Query) != ""
			for _, g := range gold {
				if g < 1 || g > len(lines) || strings.TrimSpace(lines[g-1]) == "" {
					ok = false
				}
			}
			if !ok {
				fmt.Fprintf(stderr, "%s:%d: gold %v invalid for %s (%d lines)\n", lf, ln+1, l.Gold, l.File, len(lines))
				bad++
				continue
			}
			perOut[l.File]++
			cases = append(cases, lmtrain.Case{Case: evalset.Case{
				ID: fmt.Sprintf("tool:%s/natural-%s#%d", o.Family, o.Key[:8], perOut[l.File]), Repo: "tool:" + o.Family,
				Source: o.Source, Lang: "text", Path: o.Path, Kind: "tool", Query: strings.TrimSpace(l.Query), Text: o.Text,
				GoldLines: gold, WindowStart: 1, FileLines: len(lines),
			}, Split: splitOf(o.Text, o.Split)})
		}
	}
	slices.SortStableFunc(cases, func(a, b lmtrain.Case) int { return strings.Compare(a.ID, b.ID) })
	if err := os.MkdirAll(filepath.Dir(outFile), 0o755); err != nil {
		return err
	}
	val := 0
	for _, c := range cases {
		if c.Split == "val" {
			val++
		}
	}
	if err := writeCases(outFile, cases); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "merged %d questions over %d outputs (%d val), %d rejected\n", len(cases), len(perOut), val, bad)
	return nil
}
