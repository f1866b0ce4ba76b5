package backbone

import (
	"fmt"
	"sort"
)

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// panicf follows GoMLX's convention of panicking while a graph is built; the
// library recovers these at its API boundary and returns them as errors.
func panicf(format string, args ...any) {
	panic(fmt.Errorf(format, args...))
}
