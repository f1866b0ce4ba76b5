//go:build !unix

package bert

import "time"

func processCPU() time.Duration { return 0 }
