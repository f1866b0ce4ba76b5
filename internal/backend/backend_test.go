package backend

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNew(t *testing.T) {
	for _, name := range []string{"", Auto, Go} {
		b, err := New(name)
		require.NoError(t, err, name)
		if name == Go || !XLACompiled {
			assert.Equal(t, "fastgo", b.Name(), name)
		}
		b.Finalize()
	}
	b, err := New(SimpleGo)
	require.NoError(t, err)
	assert.Contains(t, b.Name(), "(go)")
	b.Finalize()
	_, err = New("tpu9000")
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), `"tpu9000"`)
}

func TestXLAWithoutPlugin(t *testing.T) {
	if XLACompiled {
		t.Setenv("PJRT_PLUGIN_LIBRARY_PATH", t.TempDir())
	}
	b, err := New(XLA)
	if XLACompiled && err == nil {
		// A plugin is installed system-wide on this machine; nothing to assert.
		b.Finalize()
		return
	}
	require.ErrorIs(t, err, ErrUnavailable)
	if !XLACompiled {
		assert.Contains(t, err.Error(), "-tags xla")
	} else {
		assert.Contains(t, err.Error(), "PJRT_PLUGIN_LIBRARY_PATH")
	}
}
