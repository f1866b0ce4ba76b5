//go:build race

package pruner

// raceDetector is true when the tests run under -race, where work is 5–10×
// slower and memory carries shadow state: the time and memory bounds some
// tests hold do not apply (the pipeline is the same; CI measures them
// without -race).
const raceDetector = true
