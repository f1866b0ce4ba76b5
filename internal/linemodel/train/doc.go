// Package train trains the line model of package linemodel: the training
// and eval cases and their loading (Case, LoadDir, Split), the per-line
// examples with their rubric labels and a feature cache (Example,
// BuildExamples, SaveExamples, LoadExamples), the feature standardisation
// (SetStandardisation), the loss graph with its hand-written backward
// pass, AdamW and the resumable training loop (Trainer), and the
// fixed-budget evaluation (Evaluate).
//
// It is apart from linemodel so that the library's binaries, which only
// score lines, compile none of it; examples/train is its command.
package train
