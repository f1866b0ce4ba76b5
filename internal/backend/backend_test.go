package backend

import (
	"testing"

	"github.com/prunekit/pruner/internal/fastcpu"

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

// Check knows every name New does, without starting anything: an XLA
// name passes even where no plugin is installed.
func TestCheck(t *testing.T) {
	for _, name := range []string{"", Auto, Go, "go:ops_sequential", SimpleGo, XLA, "xla:cuda,preallocate=false", "pjrt"} {
		assert.NoError(t, Check(name), name)
	}
	for _, name := range []string{"tpu9000", "Go", "cuda", "cuda:xla"} {
		err := Check(name)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "unknown backend")
	}
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

func TestWithPrecision(t *testing.T) {
	for _, c := range []struct {
		name, prec, want string
		graph            bool
	}{
		{"", "", "", false}, {"xla", Float32, "xla", false}, {"", BF16, "go:bf16", false}, {Auto, BF16, "go:bf16", false},
		{Go, BF16, "go:bf16", false}, {"go:purego", BF16, "go:purego,bf16", false},
		{"xla:cuda", BF16, "xla:cuda", true}, {XLA, BF16, XLA, true},
	} {
		got, graph, err := WithPrecision(c.name, c.prec)
		require.NoError(t, err, c)
		assert.Equal(t, c.want, got, c)
		assert.Equal(t, c.graph, graph, c)
	}
	for _, c := range [][2]string{{SimpleGo, BF16}, {"go:purego", "fp8"}, {Go, "fp8"}} {
		_, _, err := WithPrecision(c[0], c[1])
		require.ErrorIs(t, err, ErrUnavailable, c)
	}
	// The Go backend in bfloat16: where the CPU has AVX512_BF16, weight
	// products run in bfloat16; elsewhere New says why not.
	b, err := New("go:bf16")
	if !fastcpu.BF16Supported() {
		require.ErrorIs(t, err, ErrUnavailable)
		require.ErrorIs(t, err, fastcpu.ErrNoBF16)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, "bf16", b.(*fastcpu.Backend).Precision())
	b.Finalize()
	_, err = New("go:purego,bf16")
	require.ErrorIs(t, err, fastcpu.ErrNoBF16, "the portable kernels have no bfloat16 products")
}

// TestXLAClientOptions: key=value options of an XLA config become the PJRT
// client's create options, typed as the CUDA plugin wants them; GoMLX's own
// options and the plugin stay in its config; bad values and unknown keys
// are refused, naming what is accepted.
func TestXLAClientOptions(t *testing.T) {
	for _, tc := range []struct {
		config, want string
		opts         map[string]any
		err          string
	}{
		{config: "", want: ""},
		{config: "cuda", want: "cuda"},
		{config: "/opt/p/xla_cuda_plugin.so,tf32", want: "/opt/p/xla_cuda_plugin.so,tf32"},
		{config: "/opt/p.so,preallocate=false", want: "/opt/p.so", opts: map[string]any{"preallocate": false}},
		{config: "cuda,tf32,memory_fraction=0.25,allocator=platform", want: "cuda,tf32",
			opts: map[string]any{"memory_fraction": float32(0.25), "allocator": "platform"}},
		{config: "cuda,preallocate=maybe", err: "want true or false"},
		{config: "cuda,memory_fraction=1.5", err: "fraction in (0, 1]"},
		{config: "cuda,memory_fraction=0", err: "fraction in (0, 1]"},
		{config: "cuda,allocator=", err: "allocator name"},
		{config: "cuda,devices=2", err: `unknown xla option "devices"`},
	} {
		t.Run(tc.config, func(t *testing.T) {
			got, opts, err := xlaClientOptions(tc.config)
			if tc.err != "" {
				require.ErrorIs(t, err, ErrUnavailable)
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.opts, opts)
		})
	}
}
