// Package crf implements the linear-chain conditional random field used by
// the SWE-Pruner and LaMR heads: exact inference in plain Go (Viterbi
// decoding, log-partition, gold-path score, normalised negative
// log-likelihood, forward-backward marginals) and differentiable GoMLX graph
// versions of the training loss.
//
// # Tags, emissions and parameters
//
// A CRF has T ≥ 1 tags (T = 2 in the published checkpoints: 0 = prune,
// 1 = keep). Emissions are an n×T score matrix stored row-major in a flat
// slice (see [Emissions]), so the output buffer of a model can be decoded
// without copying. [Params] holds the T×T transition matrix exactly as the
// checkpoint tensor `transitions` stores it (the PyTorch parameter layout),
// plus the start and end vectors.
//
// # The two transition conventions
//
// The reference CRFLayer indexes the same matrix in two different ways:
//
//   - Training convention, [Training]: the loss, the normaliser and therefore
//     the distribution the model was trained to represent score a step from
//     tag p to tag j with Transitions[j][p], i.e. [next][prev]. [LogPartition],
//     [GoldScore], [NLL], [Marginals], [ViterbiMAP], [LogPartitionGraph] and
//     [NLLGraph] all use it; [ViterbiMAP] returns the true MAP path of the
//     trained CRF.
//   - As-coded convention, [AsCoded]: the reference `_viterbi_decode` adds
//     Transitions[p][j], i.e. [prev][next] — the transpose of training. The
//     LaMR fork decodes with exactly this at inference, so [Viterbi] uses it
//     to reproduce the fork's decisions.
//
// For two tags the conventions change a path's score only by ±(T01 − T10)
// depending on its first and last tags, so they rarely disagree, but they do.
//
// # Masks
//
// Masks mark valid positions (nil means all valid) and are meant to be right
// padding. Position 0 is always counted. Masked steps leave the forward
// scores unchanged. Decoding reproduces a quirk of the reference: a masked
// step still records back-pointers computed from the frozen scores, and the
// returned path covers all n positions, so its valid prefix can differ from
// the best valid-prefix path; the returned score is still the best
// valid-prefix score. With an all-valid mask (the inference case) the quirk
// has no effect.
//
// # Numerics
//
// All arithmetic is float64 whatever the emission type. The plain-Go routines
// run in O(n·T²) time with O(n·T) memory for back-pointers or marginals and
// no per-position allocations; a [Workspace] lets repeated calls reuse their
// scratch buffers. [Marginals] runs the forward-backward recursion with
// every vector renormalised at each position (log-space offsets, Rabiner
// scaling), falling back to a fully log-space recursion if a scaled vector
// ever underflows, so it stays exact and finite for sequences of 10^5
// positions and more.
//
// The graph functions ([LogPartitionGraph], [GoldScoreGraph], [NLLGraph])
// compute the same quantities for batches inside a GoMLX graph, for
// training; their gradients only use operations the pure Go backend can
// differentiate.
package crf
