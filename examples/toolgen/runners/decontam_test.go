package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

const evalToolPath = "../../../../shared/evalsets/questions/tool.jsonl"

var decontamFamilies = []string{"go-build-vet", "node-test", "python-job-log"}

// normWords lower-cases s, strips punctuation and splits it into words.
func normWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(c rune) bool {
		return !unicode.IsLetter(c) && !unicode.IsDigit(c)
	})
}

func ngrams(ws []string, n int) []string {
	var out []string
	for i := 0; i+n <= len(ws); i++ {
		out = append(out, strings.Join(ws[i:i+n], " "))
	}
	return out
}

// TestDecontam fails when a generated tool-output query equals an eval query
// or shares a run of 8 consecutive (normalised) words with one.
func TestDecontam(t *testing.T) {
	ef, err := os.Open(evalToolPath)
	if err != nil {
		t.Skipf("eval set not available (%v); cannot check contamination", err)
	}
	defer ef.Close()
	evalQ := map[string]bool{}
	evalGrams := map[string]string{}
	sc := bufio.NewScanner(ef)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var rec struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.Query == "" {
			continue
		}
		ws := normWords(rec.Query)
		evalQ[strings.Join(ws, " ")] = true
		for _, g := range ngrams(ws, 8) {
			evalGrams[g] = rec.Query
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(evalQ) == 0 {
		t.Skip("eval set has no queries")
	}
	checked := 0
	for _, fam := range decontamFamilies {
		p := filepath.Join("..", "..", "train", "tooldata", fam+".jsonl.gz")
		f, err := os.Open(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			f.Close()
			t.Fatalf("%s: %v", p, err)
		}
		dec := json.NewDecoder(zr)
		bad := 0
		for dec.More() {
			var c Case
			if err := dec.Decode(&c); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			checked++
			ws := normWords(c.Query)
			if evalQ[strings.Join(ws, " ")] {
				bad++
				if bad <= 20 {
					t.Errorf("%s: %s query equals an eval query: %q", fam, c.ID, c.Query)
				}
				continue
			}
			for _, g := range ngrams(ws, 8) {
				if _, ok := evalGrams[g]; ok {
					bad++
					if bad <= 20 {
						t.Errorf("%s: %s query %q shares the 8-word run %q with an eval query", fam, c.ID, c.Query, g)
					}
					break
				}
			}
		}
		zr.Close()
		f.Close()
		if bad > 0 {
			t.Errorf("%s: %d contaminated queries", fam, bad)
		}
	}
	t.Logf("checked %d queries against %d eval queries", checked, len(evalQ))
}
