// Package tokenizer is a pure-Go port of the Qwen3 tokenizer as HuggingFace
// tokenizers runs it (Qwen2TokenizerFast): NFC normalisation, the Qwen2
// pre-tokenizer regex, byte-level BPE, added tokens. It reproduces HF's ids
// and offsets exactly (checked on 340 golden rows).
//
// # Modes
//
// [Tokenizer.Encode] does not look for added tokens: text such as
// "<|im_start|>" is BPE'd like any other text. This is the library's mode
// for user text, so that nothing in a document can forge a control token;
// callers insert special tokens as ids. [Tokenizer.EncodeSpecial] is HF's
// default (tokenizer(text, add_special_tokens=False)): every added token
// (special or not) found in the raw text, leftmost-longest and before
// normalisation, becomes its single id, and the pieces between them are
// normalised and encoded separately. Neither mode adds BOS/EOS tokens.
// [Tokenizer.EncodeIDs] and [Tokenizer.EncodeSpecialIDs] skip the offsets.
//
// # Offsets
//
// A [Token] carries [Start, End) in Unicode code points of the original
// text (what HF's return_offsets_mapping gives, = Python str indices) and
// [ByteStart, ByteEnd), the same span in bytes of the Go string. HF's rules
// apply, quirks included:
//
//   - a byte-level token that holds only part of a multi-byte character
//     gets the span of the whole character, so consecutive tokens can share
//     a span;
//   - the text is NFC-normalised before tokenisation and spans point back
//     into the original: a composed character maps to the first original
//     character it came from only (the combining marks it absorbed belong to
//     no token), characters moved by canonical reordering map positionally,
//     and a character that decomposition inserted shares the span of the
//     original character before it.
//
// Offsets never decrease from one token to the next.
//
// # Invalid UTF-8
//
// Go strings may hold bytes that are not UTF-8; the HF tokenizer cannot be
// given such text at all. Here encoding is lossless instead: every invalid
// byte (each byte of a truncated or otherwise ill-formed sequence, as Go's
// range loop sees them) is one "character" that NFC leaves alone and the
// pre-tokenizer treats like punctuation, and byte-level BPE encodes it as
// the raw byte. Decode(EncodeIDs(s)) therefore gives back s with its valid
// stretches in NFC and its invalid bytes untouched, and each invalid byte
// counts as one code point in the offsets. Rejecting or replacing such
// bytes (with U+FFFD) was the alternative; it would lose data and make byte
// offsets disagree with the caller's string.
//
// # Unicode versions
//
// Letter, number and white-space classes come from Go's unicode package and
// the NFC tables from golang.org/x/text (both Unicode 15.0.0). HF's
// Oniguruma and normalisation crate may use slightly different Unicode
// versions; characters assigned or changed in between could tokenize
// differently. None occurs in the golden corpus.
//
// # Performance
//
// Loading the embedded tokenizer takes about 0.1 s ([Qwen3] does it once
// per process) and about 20 MB of memory. On source code, Encode runs at
// roughly 50 MB/s and EncodeIDs at roughly 100 MB/s on one core once
// identifiers repeat; text never seen before goes at 20-30 MB/s. The BPE
// result of each recent pre-token is kept in a bounded (65,536 entries),
// lock-free cache shared by all goroutines.
package tokenizer
