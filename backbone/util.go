package backbone

import "fmt"

// panicf follows GoMLX's convention of panicking while a graph is built; the
// library recovers these at its API boundary and returns them as errors.
func panicf(format string, args ...any) {
	panic(fmt.Errorf(format, args...))
}
