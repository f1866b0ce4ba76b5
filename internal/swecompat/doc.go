// Package swecompat reproduces, byte for byte, the line-level
// post-processing of the SWE-Pruner Python reference and of its LaMR fork,
// quirks included: Python str.splitlines() line rules, the line aggregation
// whose positions drift on multi-character terminators, the "(filtered N
// lines)" renderer with its one-line gap filling and 18-character rule, and
// the fork's indented "# (filtered N lines)" / "pass  # (filtered N lines)"
// renderer (without its AST repair).
//
// The library's own line model is in package chunk; this package exists only
// for callers who need output identical to the Python service. All lengths
// and positions are Unicode code points, as Python str indices are. A Go
// string that is not valid UTF-8 is read one utf8.DecodeRuneInString step
// at a time: every invalid byte is one code point that is neither a line
// break nor whitespace, and output lines are copied from the input bytes, so
// they stay byte-identical.
package swecompat
