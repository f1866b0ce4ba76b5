//go:build !unix

package hfhub

import "os"

// tryLock is a no-op where flock is not available: concurrent downloads of
// one blob by several processes are not serialised there.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) {}
