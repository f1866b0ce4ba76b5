package main

import (
	"bufio"
	"os"
	"path"
	"regexp"
	"strings"
)

// The held-out evaluation sets draw on these sources (../shared/evalsets/
// EXCLUDE.md); no pair may come from them, at any version, fork or vendored
// copy. The list is hard-coded so that the command is safe without
// ../shared; EXCLUDE.md, when present, only adds to it.
var excludedRepos = []string{
	"urfave/cli", "sirupsen/logrus", "square/okhttp", "tj/commander.js", "pallets/flask",
	"clap-rs/clap", "colinhacks/zod", "spf13/cobra", "google/gson", "expressjs/express",
	"pallets/click", "psf/requests", "BurntSushi/ripgrep", "BurntSushi/toml", "rust-lang/log",
	"hyperium/http", "apache/commons-io", "honojs/hono", "node-fetch/node-fetch",
	"fsnotify/fsnotify", "hashicorp/go-retryablehttp",
	"DaveGamble/cJSON", "akheron/jansson", "lua/lua", "leethomason/tinyxml2", "gabime/spdlog",
	"immerjs/immer", "ianstormtaylor/superstruct", "square/javapoet", "square/moshi",
	// The Go toolchain, golang.org/x (the standard library vendors it), and
	// forks of the toolchain and standard library published as modules.
	"golang.org/toolchain", "golang.org/x", "twitchyliquid64/golang-asm", "rogpeppe/go-internal",
}

// excludedNames match a single path segment (a package, module or
// directory name): the package names of the repositories above and the
// excluded packages, plus Python packages that are copies or backports of
// the standard library.
var excludedNames = []string{
	"logrus", "okhttp", "commander", "flask", "clap", "zod", "cobra", "gson", "express",
	"click", "requests", "ripgrep", "toml", "commons-io", "hono", "node-fetch", "fsnotify",
	"go-retryablehttp", "retryablehttp",
	"cjson", "jansson", "lua", "tinyxml2", "spdlog", "immer", "superstruct", "javapoet", "moshi",
	"attr", "attrs", "python-dateutil", "dateutil", "cloudpickle", "blinker",
	// Python standard library copies and backports.
	"distutils", "_distutils", "typeshed", "typing_extensions", "future", "past", "libfuturize",
	"libpasteurize", "importlib_metadata", "importlib_resources", "backports", "tomli", "zipp",
	"exceptiongroup", "enum34", "pathlib2", "contextlib2", "singledispatch", "configparser",
}

// genericNames are repository names too common to match as a bare segment
// (a "log" or "http" directory is rarely a copy of rust-lang/log or
// hyperium/http): they match only as owner/name.
var genericNames = map[string]bool{"cli": true, "log": true, "http": true, "core": true, "lib": true, "utils": true}

// pythonStdlib names the Python standard library's directory
// (/usr/lib/python3.11), never to be read.
var pythonStdlib = regexp.MustCompile(`^python3\.\d+$`)

type exclusions struct {
	repos map[string]bool // "owner/name", lower case
	names map[string]bool
}

func newExclusions() *exclusions {
	e := &exclusions{repos: map[string]bool{}, names: map[string]bool{}}
	for _, r := range excludedRepos {
		e.addRepo(r)
	}
	for _, n := range excludedNames {
		e.names[normSegment(n)] = true
	}
	return e
}

func (e *exclusions) addRepo(r string) {
	r = strings.ToLower(r)
	owner, name, _ := strings.Cut(r, "/")
	name = normSegment(name)
	e.repos[owner+"/"+name] = true
	if !genericNames[name] {
		e.names[name] = true
	}
}

var excludeItem = regexp.MustCompile("^\\s*[-*]\\s+`?([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)?)`?\\s*$")

// load adds the repositories and packages EXCLUDE.md lists; a missing file
// is not an error, the hard-coded list stands alone.
func (e *exclusions) load(file string) error {
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := excludeItem.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		if strings.Contains(m[1], "/") {
			e.addRepo(m[1])
		} else {
			e.names[normSegment(m[1])] = true
		}
	}
	return sc.Err()
}

// normSegment reduces a path segment to the name it stands for: lower case
// (the Go module cache escapes capitals as !x), without a version
// (@v1.2.3), a source file extension or a .js suffix (commander.js).
func normSegment(s string) string {
	s = strings.ToLower(strings.ReplaceAll(s, "!", ""))
	if at := strings.IndexByte(s, '@'); at > 0 {
		s = s[:at]
	}
	switch ext := path.Ext(s); ext {
	case ".py", ".pyi", ".js", ".mjs", ".cjs", ".ts", ".go", ".rs", ".java":
		s = strings.TrimSuffix(s, ext)
	}
	return s
}

// excluded returns the rule that excludes name, "" if none. name is a
// source id ("go:github.com/!burnt!sushi/toml@v1.4.0"), a module path or a
// file path; any segment (or owner/name pair of segments) can match.
func (e *exclusions) excluded(name string) string {
	if _, rest, ok := strings.Cut(name, ":"); ok && !strings.Contains(name[:len(name)-len(rest)-1], "/") {
		name = rest // drop the go:, py:, npm:, git: kind
	}
	segs := strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' })
	for i := range segs {
		segs[i] = normSegment(segs[i])
	}
	for i, s := range segs {
		if e.names[s] {
			return s
		}
		if pythonStdlib.MatchString(s) {
			return "python standard library"
		}
		if i+1 < len(segs) && e.repos[s+"/"+segs[i+1]] {
			return s + "/" + segs[i+1]
		}
	}
	return ""
}

// stdlibCopy spots a file copied from the Go or Python standard library
// into another project (Go's internal packages in golang-asm or sonic,
// Python's modules in future or setuptools) by its copyright header.
func stdlibCopy(text string) bool {
	head := text[:min(len(text), 2000)]
	return strings.Contains(head, "The Go Authors") || strings.Contains(head, "Python Software Foundation")
}

// excludedCrates are crates of the excluded repositories whose names the
// segment rules miss: the generic log and http, and the workspace members
// of clap and ripgrep.
var excludedCrates = map[string]bool{
	"log": true, "http": true, "clap": true, "clap_builder": true, "clap_derive": true, "clap_lex": true,
	"clap_complete": true, "clap_mangen": true, "ripgrep": true, "grep": true, "grep-searcher": true,
	"grep-regex": true, "grep-matcher": true, "grep-printer": true, "grep-cli": true, "grep-pcre2": true,
	"globset": true, "ignore": true,
}

// excludedPackage says whether a package manifest (base is its file name)
// declares an excluded package: a vendored copy whose folder name does not
// give it away.
func (e *exclusions) excludedPackage(base, name string) bool {
	if base == "Cargo.toml" && excludedCrates[strings.ToLower(name)] {
		return true
	}
	return e.excluded(name) != ""
}
