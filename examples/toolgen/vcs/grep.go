package main

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// defPatterns returns per-language regexps (with %s for the quoted
// identifier) matching a line that defines the identifier.
func defPatterns(lang string) []string {
	switch lang {
	case "go":
		return []string{`^\s*func\s+(\([^)]*\)\s*)?%s\b`, `^\s*type\s+%s\b`, `^(var|const)\s+%s\b`, `^\t%s\s+[\w*\[]`}
	case "python":
		return []string{`^\s*(async\s+)?def\s+%s\b`, `^\s*class\s+%s\b`}
	case "javascript", "typescript":
		return []string{`\bfunction\s*\*?\s*%s\s*\(`, `^(export\s+)?(const|let|var)\s+%s\s*=`, `^\s*(export\s+)?(default\s+)?(abstract\s+)?class\s+%s\b`,
			`^\s*(export\s+)?(interface|type|enum)\s+%s\b`, `^\s*(public\s+|private\s+|protected\s+|static\s+|async\s+)*%s\s*\([^)]*\)\s*(:\s*[^={]+)?\{\s*$`,
			`^\s*[\w.]*\b%s\s*[:=]\s*function\b`}
	case "java":
		return []string{`^\s*((public|private|protected|static|final|abstract|sealed)\s+)*(class|interface|enum|record|@interface)\s+%s\b`,
			`^\s*((public|private|protected|static|final|abstract|synchronized|native|default)\s+)+[\w<>\[\], ?.]+\s+%s\s*\(`}
	case "rust":
		return []string{`\bfn\s+%s\b`, `\b(struct|enum|trait|type|mod|union)\s+%s\b`, `\bmacro_rules!\s*%s\b`, `^\s*(pub(\([^)]*\))?\s+)?(const|static)\s+%s\b`}
	case "c", "cpp":
		return []string{`^\s*#\s*define\s+%s\b`, `^[A-Za-z_][\w\s\*:<>,&]*[\s\*&]%s\s*\([^;]*$`, `^\s*(typedef\s+)?(struct|class|enum|union)\s+%s\b[^;]*$`}
	}
	return nil
}

var importRe = regexp.MustCompile(`^\s*(import\b|from\s+\S+\s+import\b|#\s*include\b|use\s|extern crate\b)|\brequire\(|^\s*export\s+.*\bfrom\s`)

var errWordRe = regexp.MustCompile(`(?i)\b(invalid|cannot|can't|must|failed|unexpected|unable|missing|error|expected|unsupported|not allowed|too many|too long|unknown|no such)\b`)

// gline is a parsed grep output line.
type gline struct {
	path    string
	match   bool // ':' (match) rather than '-' (context)
	content string
}

func parseGrep(lines []string, known map[string]bool) []*gline {
	out := make([]*gline, len(lines))
	for i, l := range lines {
		s := strings.TrimPrefix(l, "./")
		for j := 0; j < len(s); j++ {
			if s[j] != ':' && s[j] != '-' {
				continue
			}
			if !known[s[:j]] {
				continue
			}
			rest := s[j+1:]
			k := 0
			for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
				k++
			}
			if k == 0 || k >= len(rest) || rest[k] != s[j] {
				continue
			}
			out[i] = &gline{path: s[:j], match: s[j] == ':', content: rest[k+1:]}
			break
		}
	}
	return out
}

// genGrep writes a repository's latest files and greps them.
func genGrep(rng *rand.Rand, repo *repoData, id, dir string) ([]*output, error) {
	known := map[string]bool{}
	texts := map[string]string{}
	paths := append([]string{}, repo.paths...)
	sort.Strings(paths)
	for _, p := range paths {
		recs := repo.byPath[p]
		// A random version of the file, usually the newest.
		rec := recs[len(recs)-1]
		if rng.IntN(3) == 0 {
			rec = recs[rng.IntN(len(recs))]
		}
		long := false
		for _, l := range strings.Split(rec.Text, "\n") {
			if len(l) > 300 {
				long = true
				break
			}
		}
		if long || strings.ContainsRune(p, ':') {
			continue
		}
		if err := writeFile(dir, p, rec.Text); err != nil {
			return nil, err
		}
		known[p] = true
		texts[p] = rec.Text
	}
	r := newRunner(dir)
	useGit := rng.IntN(3) == 0
	if useGit {
		if _, err := r.run("", nil, "git", "init", "-q", "-b", "main"); err != nil {
			return nil, err
		}
		if _, err := r.run("", nil, "git", "add", "."); err != nil {
			return nil, err
		}
		env := []string{"GIT_AUTHOR_NAME=Dev", "GIT_AUTHOR_EMAIL=dev@example.org", "GIT_COMMITTER_NAME=Dev", "GIT_COMMITTER_EMAIL=dev@example.org"}
		if _, err := r.run("", env, "git", "commit", "-q", "-m", "snapshot"); err != nil {
			return nil, err
		}
	}
	// Candidate identifiers: lines containing them (substring, as grep).
	tokLines := map[string]int{}
	for _, p := range paths {
		if !known[p] {
			continue
		}
		for _, l := range strings.Split(texts[p], "\n") {
			seen := map[string]bool{}
			for _, t := range identRe.FindAllString(l, -1) {
				if goodIdent(t) && !seen[t] {
					seen[t] = true
					tokLines[t]++
				}
			}
		}
	}
	var cands []string
	for t, n := range tokLines {
		if n >= 8 && n <= 250 {
			cands = append(cands, t)
		}
	}
	sort.Strings(cands)
	if len(cands) == 0 {
		return nil, fmt.Errorf("no identifiers")
	}
	msgMode := rng.IntN(4) == 0
	for try := 0; try < 10; try++ {
		var pattern, lit string
		if msgMode && try < 5 {
			lit, pattern = pickMessage(rng, texts, paths)
			if lit == "" {
				continue
			}
		} else {
			pattern = cands[rng.IntN(len(cands))]
		}
		n := 0
		for _, p := range paths {
			if known[p] {
				n += strings.Count(texts[p], pattern)
			}
		}
		var args []string
		ctx := n < 40
		switch {
		case useGit:
			args = []string{"git", "grep", "-n"}
			if ctx {
				args = append(args, pick(rng, []string{"-C2", "-C3", "-A3"}))
			}
			args = append(args, pattern)
		default:
			args = []string{"grep", pick(rng, []string{"-rn", "-rn", "-rnI", "-nr"})}
			if ctx {
				args = append(args, pick(rng, []string{"-C2", "-C2", "-C3", "-B1 -A3"}))
			}
			if lit == "" && rng.IntN(4) == 0 {
				args = append(args, "-w")
			}
			args = append(args, pattern, pick(rng, []string{".", ".", "."}))
		}
		var flat []string
		for _, a := range args {
			flat = append(flat, strings.Fields(a)...)
		}
		if strings.Contains(pattern, " ") {
			flat[len(flat)-2] = pattern // keep phrase patterns whole
		}
		out, err := r.run("", nil, flat[0], flat[1:]...)
		if err != nil || out == "" {
			continue
		}
		text := r.clean(out)
		lines := splitLines(text)
		if len(lines) < 40 || len(lines) > 800 {
			continue
		}
		o := newOutput(id, pick(rng, []string{"grep.txt", "grep_output.txt", "search.txt", "grep_" + strings.ToLower(pattern) + ".txt"}), text)
		if strings.Contains(pattern, " ") {
			o.file = "grep.txt"
		}
		gl := parseGrep(lines, known)
		parsed := 0
		for _, g := range gl {
			if g != nil {
				parsed++
			}
		}
		if parsed*10 < len(lines)*8 {
			continue
		}
		grepQuestions(rng, o, gl, repo.lang, pattern, lit)
		if len(o.qs) >= 2 {
			return []*output{o}, nil
		}
	}
	return nil, fmt.Errorf("no usable grep")
}

// pickMessage picks an error-like string literal that occurs on at most two
// lines and a word of it to grep for.
func pickMessage(rng *rand.Rand, texts map[string]string, paths []string) (lit, word string) {
	var cands []string
	count := map[string]int{}
	for _, p := range paths {
		for _, l := range strings.Split(texts[p], "\n") {
			for _, m := range literalRe.FindAllStringSubmatch(l, -1) {
				s := m[1] + m[2]
				if errWordRe.MatchString(s) && len(strings.Fields(s)) >= 3 {
					if count[s] == 0 {
						cands = append(cands, s)
					}
					count[s]++
				}
			}
		}
	}
	rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	for _, c := range cands {
		if count[c] > 2 {
			continue
		}
		var ws []string
		for _, w := range wordRe.FindAllString(c, -1) {
			if len(w) >= 5 {
				ws = append(ws, w)
			}
		}
		if m := errWordRe.FindString(c); m != "" && !strings.Contains(m, " ") {
			ws = append(ws, m, m)
		}
		if len(ws) == 0 {
			continue
		}
		return c, ws[rng.IntN(len(ws))]
	}
	return "", ""
}

func grepQuestions(rng *rand.Rand, o *output, gl []*gline, lang, pattern, lit string) {
	want := 2 + rng.IntN(3)
	var matches []int
	for i, g := range gl {
		if g != nil && g.match {
			matches = append(matches, i)
		}
	}
	var defRes []*regexp.Regexp
	for _, p := range defPatterns(lang) {
		defRes = append(defRes, regexp.MustCompile(fmt.Sprintf(p, regexp.QuoteMeta(pattern))))
	}
	isDef := func(s string) bool {
		for _, re := range defRes {
			if re.MatchString(s) {
				return true
			}
		}
		return false
	}
	sel := func(keep func(g *gline) bool) []int {
		var out []int
		for _, i := range matches {
			if keep(gl[i]) {
				out = append(out, i)
			}
		}
		return out
	}
	id := regexp.MustCompile(`^[A-Za-z_]\w*$`).MatchString(pattern)
	defs := []int{}
	if id && lit == "" {
		defs = sel(func(g *gline) bool { return isDef(g.content) })
	}
	gens := []func() bool{
		func() bool { // definition
			if len(defs) == 0 || len(defs) > 3 || len(matches) < len(defs)+4 {
				return false
			}
			q := fmt.Sprintf(pick(rng, []string{"Find the declaration of %s among these matches.", "Jump to where %s gets declared: file and line?", "`%s` — locate its definition site."}), pattern)
			if rng.IntN(2) == 0 {
				q = pick(rng, []string{"Skip the usages; show only the line that declares it.", "Among the results, find the declaring line.",
					"Just the definition from this search, please."})
			}
			return o.add(q, defs)
		},
		func() bool { // calls passing a given argument
			if !id || lit != "" {
				return false
			}
			call := pattern + "("
			calls := sel(func(g *gline) bool { return strings.Contains(g.content, call) && !isDef(g.content) })
			if len(calls) < 4 {
				return false
			}
			argTok := map[string][]int{}
			for _, i := range calls {
				c := gl[i].content
				args := c[strings.Index(c, call)+len(call):]
				if k := strings.Index(args, ")"); k >= 0 {
					args = args[:k]
				}
				seen := map[string]bool{}
				for _, t := range identRe.FindAllString(args, -1) {
					if len(t) >= 3 && t != pattern && !seen[t] && !stopIdents[strings.ToLower(t)] {
						seen[t] = true
						argTok[t] = append(argTok[t], i)
					}
				}
			}
			var ts []string
			for t, is := range argTok {
				if len(is) >= 1 && len(is) <= 6 && len(is) <= len(calls)-2 {
					ts = append(ts, t)
				}
			}
			if len(ts) == 0 {
				return false
			}
			sort.Strings(ts)
			t := ts[rng.IntN(len(ts))]
			q := fmt.Sprintf(pick(rng, []string{"Invocations of %s that hand it %s?", "Filter the %s call sites to those passing %s.", "Find %s being invoked with %s as an argument."}), pattern, t)
			return o.add(q, argTok[t])
		},
		func() bool { // hits in tests
			ts := sel(func(g *gline) bool { return isTestPath(g.path) })
			if len(ts) == 0 || len(ts) > 12 || len(matches)-len(ts) < 3 {
				return false
			}
			q := pick(rng, []string{"Filter these results to test code.", "Show only the hits coming from test sources.", "Do any tests exercise it? Point at those matches."})
			if rng.IntN(2) == 0 {
				q = fmt.Sprintf(pick(rng, []string{"Test-side references to %s, with locations?", "Restrict to tests: where do they mention %s?"}), pattern)
			}
			return o.add(q, ts)
		},
		func() bool { // imports
			is := sel(func(g *gline) bool { return importRe.MatchString(g.content) })
			if len(is) == 0 || len(is) > 12 || len(matches)-len(is) < 3 {
				return false
			}
			q := fmt.Sprintf(pick(rng, []string{"Show the import lines bringing in %s.", "Find modules pulling %s in through an import statement.", "Import sites for %s?"}), pattern)
			return o.add(q, is)
		},
		func() bool { // assignments
			if !id || lit != "" {
				return false
			}
			as := regexp.MustCompile(`\b` + regexp.QuoteMeta(pattern) + `\s*(=|:=|\+=|\|=)[^=]`)
			is := sel(func(g *gline) bool { return as.MatchString(g.content) && !isDef(g.content) })
			if len(is) == 0 || len(is) > 8 || len(matches)-len(is) < 4 {
				return false
			}
			q := fmt.Sprintf(pick(rng, []string{"Find assignments to %s in these results.", "Show lines that store a value into %s.", "Locate writes to %s, not reads."}), pattern)
			if rng.IntN(3) == 0 {
				q = pick(rng, []string{"Show only the lines that overwrite it.", "Which matches are stores into it?"})
			}
			return o.add(q, is)
		},
		func() bool { // error message
			if lit == "" {
				return false
			}
			is := sel(func(g *gline) bool { return strings.Contains(g.content, lit) })
			if len(is) == 0 || len(matches) < len(is)+4 {
				return false
			}
			q := fmt.Sprintf(pick(rng, []string{"Source of the error text \"%s\"?", "A user reported '%s'; find the line emitting it.", "Track down the origin of the message \"%s\"."}), lit)
			if rng.IntN(3) == 0 {
				q = fmt.Sprintf("Locate the check that reports %s.", strings.ToLower(strings.TrimRight(lit, ".:!% ")))
			}
			return o.add(q, is)
		},
		func() bool { // one file's hits
			by := map[string][]int{}
			for _, i := range matches {
				by[gl[i].path] = append(by[gl[i].path], i)
			}
			if len(by) < 3 {
				return false
			}
			var ps []string
			for p, is := range by {
				if len(is) >= 2 && len(is) <= 10 && !isTestPath(p) {
					ps = append(ps, p)
				}
			}
			if len(ps) == 0 {
				return false
			}
			sort.Strings(ps)
			p := ps[rng.IntN(len(ps))]
			q := fmt.Sprintf(pick(rng, []string{"Narrow the hits to %s.", "Show just the matches inside %s.", "Usages within %s only, please."}), pick(rng, []string{p, filepath.Base(p)}))
			return o.add(q, by[p])
		},
	}
	// Definitions and messages first when available: they are the most
	// common questions.
	order := rng.Perm(len(gens))
	sort.SliceStable(order, func(i, j int) bool { return (order[i] == 0 || order[i] == 5) && !(order[j] == 0 || order[j] == 5) })
	for _, k := range order {
		if len(o.qs) >= want {
			break
		}
		gens[k]()
	}
}
