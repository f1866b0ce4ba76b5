// Package linemodel is the groundwork for the library's embedded default
// model: a small query-conditioned LINE scorer trained here, in Go, on the
// commit-mined cases of shared/traindata.
//
// It has four parts:
//
//   - data: a loader for the training cases (gzipped JSONL with a split
//     field) and per-line targets, gold lines widened with the rubric
//     package's dependency labels (scope headers, control-flow headers,
//     definitions, imports; weight decay^hops).
//   - features: per-line features that are cheap at inference — BM25 and
//     IDF-weighted query-piece overlap of the line, its neighbours and its
//     enclosing definition, the enclosing definition's name, distances to
//     strong lexical hits, the tree-sitter syntax role and depth of the
//     line, and position.
//   - model: an MLP over the standardised features giving one score per line
//     (plain-Go forward pass for inference; safetensors weights plus a
//     config.json).
//   - training: a GoMLX graph (simplego backend) computing a listwise loss —
//     the cross-entropy between the softmax of a case's line scores and its
//     normalised targets — and its gradient; AdamW runs in Go.
//
// The metric is the eval sets': keep the top r·n lines by score and compute
// recall and hit with internal/evalset.
package linemodel
