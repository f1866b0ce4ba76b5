package linemodel

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRootDoesNotImportTrain keeps training apart from inference: the
// library's root package, which users' binaries import, depends on this
// package but not on internal/linemodel/train (the training data, loss
// graph, backward pass and optimizer).
func TestRootDoesNotImportTrain(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool to list the root package's dependencies: %v", err)
	}
	const root = "github.com/prunekit/pruner"
	cmd := exec.Command(goTool, "list", "-deps", root)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list -deps %s: %s", root, stderr.String())
	deps := strings.Fields(string(out))
	require.Contains(t, deps, root+"/internal/linemodel", "the root package scores lines with linemodel")
	assert.NotContains(t, deps, root+"/internal/linemodel/train", "the root package must not compile the training code")
}
