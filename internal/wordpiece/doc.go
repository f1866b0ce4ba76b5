// Package wordpiece is a pure-Go port of the BERT WordPiece tokenizer as
// Hugging Face tokenizers runs it (BertTokenizerFast: the BertNormalizer,
// the BertPreTokenizer and the WordPiece model), for the uncased and cased
// BERT-family sentence encoders (all-MiniLM-L6-v2 and its kin). It reads a
// model folder's vocab.txt and tokenizer_config.json and reproduces HF's ids
// (checked against tokenizers on a table of hostile strings, see testdata).
//
// # Pipeline
//
// The text is cleaned (NUL, U+FFFD and control or format characters
// dropped, every white-space character made a space), CJK ideographs are
// surrounded by spaces, accents are stripped (NFD, then nonspacing marks
// dropped) and the text lowercased when the tokenizer is uncased, and it is
// split on white space and on punctuation (Unicode P* plus ASCII's symbol
// ranges, each punctuation character a word of its own). Each word is then
// cut into the longest vocabulary entries from its start, "##"-prefixed
// after the first; a word with a piece that is in no entry, or longer than
// 100 characters, is one [UNK].
//
// # Modes
//
// [Tokenizer.Encode] does not look for special tokens: "[SEP]" in a text is
// the word pieces of "[", "sep" and "]". [Tokenizer.EncodeSpecial] is HF's
// default: the special tokens ([PAD], [UNK], [CLS], [SEP], [MASK] or the
// names tokenizer_config.json gives them) found in the raw text, case
// sensitively and before normalisation, become their ids.
// [Tokenizer.Sequence] is what a sentence encoder reads: [CLS], the
// EncodeSpecial ids truncated to fit, [SEP].
//
// # Bad input
//
// Go strings may hold bytes that are not UTF-8 (HF cannot be given such
// text at all); each invalid byte decodes to U+FFFD and is dropped with the
// other U+FFFD characters. No input panics; an empty or all-space text has
// no word pieces.
//
// # Unicode versions
//
// Character classes come from Go's unicode package and NFD from
// golang.org/x/text (Unicode 15.0.0); HF's crates are older. The
// characters classified differently were found by comparing every code
// point with tokenizers and are listed in unicode.go, which follows HF.
package wordpiece
