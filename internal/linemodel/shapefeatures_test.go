package linemodel

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/prunekit/pruner/internal/syntax"
)

func TestShapeColumnsReadAnUnseenRunner(t *testing.T) {
	// A made-up runner: records start with "case", one of them fails.
	out := strings.Join([]string{
		"case alpha",
		"  step load",
		"  result good",
		"case beta",
		"  step load",
		"  error: value mismatch",
		"    expected 3",
		"    got 4",
		"  at /home/dev/project/src/calc.js:12:5",
		"  at node:internal/process/task_queues:95:5",
		"case gamma",
		"  step load",
		"  PASS",
	}, "\n")
	lines := strings.Split(out, "\n")
	ti := newToolInfo(context.Background(), "", lines, syntax.Text)
	s := newShapeInfo(&ti, lines)
	require.Len(t, s.blkErr, len(lines))
	// The failing record, and only it, holds a problem.
	for i := range lines {
		inBeta := i >= 3 && i <= 9
		assert.Equal(t, inBeta, s.recErr[i] > 0, "rec_err of line %d %q", i+1, lines[i])
	}
	assert.NotZero(t, s.flags[5]&flagErrFirst, "the error line is its block's first problem line")
	assert.Zero(t, s.flags[6]&flagErrFirst, "expected is not the first problem line of the block")
	assert.Less(t, s.near[7], s.near[11], "got 4 is nearer a problem than gamma's step")
	assert.Zero(t, s.flags[8]&flagLocLib, "project frame")
	assert.NotZero(t, s.flags[9]&flagLocLib, "runtime frame")
	assert.NotZero(t, s.flags[12]&flagOK)
	assert.Zero(t, s.flags[5]&flagOK)
}

func TestShapeColumnsCodeAndEmpty(t *testing.T) {
	lines := []string{"func f() error {", "\treturn errors.New(\"fail\")", "}"}
	ti := newToolInfo(context.Background(), "", lines, syntax.Go)
	assert.Nil(t, newShapeInfo(&ti, lines).blkErr, "code has no shape columns")
	ti = newToolInfo(context.Background(), "", nil, syntax.Text)
	assert.Empty(t, newShapeInfo(&ti, nil).blkErr)
}
