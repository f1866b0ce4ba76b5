package pruner

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite the README's shown output with the command's real output")

// readmeOutputMarker precedes the text block that shows the main command's
// output.
const readmeOutputMarker = "<!-- readme-output: the test compares this block with the command's output -->"

// readmeCommands returns the lines of the README's ```sh blocks.
func readmeCommands(readme string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
		case in && strings.HasPrefix(l, "```"):
			in = false
		case in && strings.TrimSpace(l) != "":
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// TestReadmeCommands runs every command of the README's shell blocks as
// written, from the repository root, and checks that the output the
// README shows for the main command is what the command prints. `go test
// ./...` is this run; `go get` would reach the network and is only
// checked to name this module. -update-readme rewrites the shown output.
func TestReadmeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the README's commands")
	}
	data, err := os.ReadFile("README.md")
	require.NoError(t, err)
	readme := string(data)
	cmds := readmeCommands(readme)
	require.NotEmpty(t, cmds)
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	bin := t.TempDir()
	built := map[string]string{}
	runRe := regexp.MustCompile(`^go run (\./[\w/]+)`)
	var mainOut string
	for _, c := range cmds {
		switch {
		case c == "go test ./...":
			continue
		case strings.HasPrefix(c, "go get "):
			require.Equal(t, "go get github.com/prunekit/pruner", c)
			continue
		}
		m := runRe.FindStringSubmatch(c)
		require.NotNil(t, m, "README command %q: the test knows how to run `go run ./...`, `go test ./...` and `go get` only", c)
		pkg := m[1]
		exe, ok := built[pkg]
		if !ok {
			exe = filepath.Join(bin, filepath.Base(pkg))
			out, err := exec.Command(goTool, "build", "-o", exe, pkg).CombinedOutput()
			require.NoError(t, err, "go build %s: %s", pkg, out)
			built[pkg] = exe
		}
		line := exe + c[len(m[0]):]
		cmd := exec.Command("bash", "-c", line)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "README command %q: %s", c, stderr.String())
		t.Logf("%s\n%s", c, stderr.String())
		if mainOut == "" {
			mainOut = stdout.String()
		}
	}
	require.NotEmpty(t, mainOut, "the README's first command prints the pruned text")

	k := strings.Index(readme, readmeOutputMarker)
	require.GreaterOrEqual(t, k, 0, "the README shows the main command's output after %q", readmeOutputMarker)
	rest := readme[k+len(readmeOutputMarker):]
	open := strings.Index(rest, "```text\n")
	require.GreaterOrEqual(t, open, 0)
	body := rest[open+len("```text\n"):]
	end := strings.Index(body, "\n```\n")
	require.GreaterOrEqual(t, end, 0)
	shown := body[:end+1]
	want := mainOut
	if !strings.HasSuffix(want, "\n") {
		want += "\n"
	}
	if *updateReadme {
		start := k + len(readmeOutputMarker) + open + len("```text\n")
		updated := readme[:start] + want + readme[start+end+1:]
		require.NoError(t, os.WriteFile("README.md", []byte(updated), 0o644))
		return
	}
	require.Equal(t, want, shown, "the README's shown output is not what its main command prints (go test -run TestReadmeCommands -update-readme . rewrites it)")
}
