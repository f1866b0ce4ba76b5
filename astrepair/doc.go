// Package astrepair turns a line keep-mask into readable, parseable pruned
// code: it adds back the lines that syntax and comprehension need (scope
// headers with decorators and multi-line signatures, control-flow headers
// and companions, imports and definitions of used names, the rest of
// multi-line statements, strings and bracket groups, trivial returns) and
// renders removed runs as placeholder comments, with fillers that keep
// blocks non-empty.
//
// The analysis works on items: statements or members that are children of
// containers (modules, blocks, class bodies, case lists, literal element
// lists). Each item has a skeleton, the lines holding its own tokens, which
// stays whenever any line inside the item stays; nested containers' items
// can be dropped one by one. Because a kept line pulls in the skeletons of
// every item around it, the output of a file that parsed cleanly parses
// cleanly too.
//
// Lines follow the library's rule: split on '\n' only, a '\r' before it
// belongs to the terminator. Masks and reasons have one entry per line.
package astrepair
