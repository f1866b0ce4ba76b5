package backend

import (
	"fmt"
	"strconv"
	"strings"
)

// xlaClientOptions splits an XLA backend config, "PLUGIN[,option...]", into
// the config GoMLX reads (the plugin and its own options, such as tf32) and
// the PJRT client's create options, written key=value:
//
//   - preallocate=false: the GPU allocator takes memory as it needs it
//     instead of reserving most of the device when the client starts, so
//     that two Pruners, or a Pruner and another user of the GPU, share it;
//   - memory_fraction=F (0 < F ≤ 1): the share of the device the allocator
//     may reserve;
//   - allocator=NAME: the plugin's allocator (default, platform, bfc,
//     cuda_async).
//
// These are the CUDA plugin's names; a plugin that does not know one
// refuses to start, with its own message.
func xlaClientOptions(config string) (gomlxConfig string, opts map[string]any, err error) {
	parts := strings.Split(config, ",")
	keep := parts[:1]
	for _, p := range parts[1:] {
		key, value, ok := strings.Cut(p, "=")
		if !ok {
			keep = append(keep, p)
			continue
		}
		if opts == nil {
			opts = map[string]any{}
		}
		switch key {
		case "preallocate":
			b, err := strconv.ParseBool(value)
			if err != nil {
				return "", nil, fmt.Errorf("%w: xla option %s: want true or false", ErrUnavailable, p)
			}
			opts[key] = b
		case "memory_fraction":
			f, err := strconv.ParseFloat(value, 32)
			if err != nil || !(f > 0 && f <= 1) {
				return "", nil, fmt.Errorf("%w: xla option %s: want a fraction in (0, 1]", ErrUnavailable, p)
			}
			opts[key] = float32(f)
		case "allocator":
			if value == "" {
				return "", nil, fmt.Errorf("%w: xla option %s: want an allocator name", ErrUnavailable, p)
			}
			opts[key] = value
		default:
			return "", nil, fmt.Errorf("%w: unknown xla option %q (want preallocate=BOOL, memory_fraction=F or allocator=NAME)", ErrUnavailable, key)
		}
	}
	return strings.Join(keep, ","), opts, nil
}
