// Package chunk builds model inputs for the Qwen3 skimmer, plans token
// windows over long texts, merges per-window token scores and turns token
// scores into line scores.
//
// Everything here is a pure function of its arguments: no model, no
// tokenizer (the caller passes tokens through the small [Token] and
// [Encoder] types) and no I/O. [Prepare] strings the steps together for one
// (query, text) pair; [Merge] and [LineScores] take the scores back.
//
// Two coordinate systems meet in this package. Token offsets from the
// tokenizer follow the HuggingFace convention: [Start, End) in Unicode code
// points of the text, where a token that holds only part of a multi-byte
// character carries the span of the whole character, so consecutive tokens
// may share a span. Go callers slice strings by bytes, so windows carry byte
// spans too, and lines and the spans fed to [LineScores] are in bytes
// ([SpansToBytes] converts). A "code point" of a Go string that is not
// valid UTF-8 is one step of utf8.DecodeRuneInString: every invalid byte
// counts as one code point.
//
// The input building, window planning and score merging reproduce the
// SWE-Pruner reference (build_input_for_llm, split_code_into_chunks,
// merge_token_scores_from_chunks) exactly. Lines and line scores follow the
// library's own rules (SPEC §4): lines end at "\n" only, and a line's score
// is the character-weighted mean of the token scores covering it. The
// reference's Python line rules live in internal/swecompat.
package chunk
