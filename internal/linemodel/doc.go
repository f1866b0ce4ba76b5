// Package linemodel is the library's embedded default model: a small
// query-conditioned LINE scorer trained here, in Go, on the commit-mined
// cases of shared/traindata, with LaMR's structure (multi-rubric emission
// heads, a gate and a linear-chain CRF) at line granularity.
//
// This package is what inference needs, and all that the library's binaries
// compile of the model:
//
//   - features: per-line features that are cheap at inference — BM25 and
//     IDF-weighted query-piece overlap (exact, stemmed and 4-character
//     prefix) of the line, its neighbours and its enclosing definition, the
//     definition's name and its rank among the file's definitions, distances
//     to strong lexical hits, the tree-sitter syntax role and depth of the
//     line, position, tool-output columns (toolfeatures.go: problem
//     words, file locations, repeated shapes, sizes ranked in the listing
//     and in their directory against the query's "larger than 50 KB",
//     dates ranked and matched against the query's "November 2021"
//     (dates.go), records and outline blocks of the text, the role of the
//     code a grep or blame line quotes), and soft
//     matches of the query's words in code-aware word vectors trained here
//     (wordvec.go) plus the query's quoted fragments found verbatim.
//   - model: a per-line trunk (two ReLU layers over the standardised
//     features), context pooled from the ±1 and ±2..3 neighbours and the
//     enclosing definition, a ReLU layer over line + context, then K=2
//     rubric keep emissions (semantic, dependency) mixed by a softmax gate
//     into fused emissions, decoded by a linear-chain CRF over the lines.
//     Inference is plain Go: Score returns the CRF marginal P(keep), Rank a
//     ranking score for fixed budgets. Load, Save and Embedded read and
//     write checkpoints; NewModel initialises one for training.
//
// Training lives in package train (internal/linemodel/train, used by
// examples/train):
//
//   - data: a loader for the training cases (gzipped JSONL with a split
//     field) and per-line labels: gold lines; the semantic rubric (gold lines
//     plus the smallest enclosing statement or block, when short, from
//     Analysis.Enclosing); the dependency rubric of the rubric package
//     (scope and control-flow headers, definitions, imports; decay^hops);
//     the fused label is their union.
//   - training: a GoMLX graph computing the loss — fused CRF-NLL +
//     λ·(semantic + dependency CRF-NLLs) + a gate-balance regulariser (LaMR
//     §3.3) + a listwise term training a ranking head on the gold lines —
//     whose gradient is taken by GoMLX only down to the head outputs; the
//     layers below are differentiated by hand-written matrix products, as
//     GoMLX's own DotGeneral gradient is slow on the pure Go backends.
//     AdamW runs in Go; checkpoints carry the optimizer state and resume at
//     the exact step.
//
// TestRootDoesNotImportTrain keeps the library's root package free of
// package train.
//
// The metric is the eval sets': keep the top r·n lines by score and compute
// recall and hit with internal/evalset.
package linemodel
