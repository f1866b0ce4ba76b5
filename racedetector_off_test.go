//go:build !race

package pruner

// raceDetector: see racedetector_on_test.go.
const raceDetector = false
