package syntax

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHeaderMatchesBinding compiles tsapi.h after the binding's own api.h
// (the header its tree-sitter runtime was built from): the prototypes must
// be compatible with the real ones and the layout assertions must hold for
// the real structs. The cgo build checks tsapi.h's own declarations; this
// checks that they are the binding's.
func TestHeaderMatchesBinding(t *testing.T) {
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command is needed to locate the binding's module")
	out, err := exec.Command(goBin, "list", "-m", "-f", "{{.Dir}}", "github.com/smacker/go-tree-sitter").Output()
	require.NoError(t, err, "go list the tree-sitter binding")
	dir := strings.TrimSpace(string(out))
	api := filepath.Join(dir, "api.h")
	require.FileExists(t, api, "the binding's api.h")

	cc, err := exec.Command(goBin, "env", "CC").Output()
	require.NoError(t, err)
	compiler := strings.Fields(strings.TrimSpace(string(cc)))
	require.NotEmpty(t, compiler, "go env CC is empty: cgo needs a C compiler")

	here, err := os.Getwd()
	require.NoError(t, err)
	src := filepath.Join(t.TempDir(), "check.c")
	require.NoError(t, os.WriteFile(src, []byte(
		"#include \""+api+"\"\n#include \"tsapi.h\"\nint pk_check;\n"), 0o644))
	args := append(compiler[1:], "-std=c11", "-Werror", "-fsyntax-only", "-I", here, src)
	msg, err := exec.Command(compiler[0], args...).CombinedOutput()
	require.NoError(t, err, "tsapi.h disagrees with the binding's api.h:\n%s", msg)
}
