package evalset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPyFloatRepr checks the ratio formatting that seeds the random
// baseline against CPython's repr.
func TestPyFloatRepr(t *testing.T) {
	var ref struct {
		Repr [][2]any `json:"repr"`
	}
	b, err := os.ReadFile(filepath.Join("testdata", "random_ref.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &ref))
	require.NotEmpty(t, ref.Repr)
	for _, p := range ref.Repr {
		f, ok := p[0].(float64)
		require.True(t, ok)
		assert.Equal(t, p[1], pyFloatRepr(f), "%v", f)
	}
}
