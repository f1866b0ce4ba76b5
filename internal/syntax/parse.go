package syntax

import (
	"context"
	"errors"
	"fmt"
)

// MaxParseBytes is the largest text Parse accepts. tree-sitter addresses
// bytes with 32-bit offsets, and the Go copy of a tree costs roughly ten
// times the text size, so a bound keeps memory predictable.
const MaxParseBytes = 64 << 20

// ErrNotCode is returned when Parse is asked to parse Text.
var ErrNotCode = errors.New("syntax: language is not code")

// ErrTooLarge is returned when the text exceeds MaxParseBytes.
var ErrTooLarge = errors.New("syntax: text too large to parse")

// Node is one syntax node copied out of a tree-sitter tree. Nodes live in
// Tree.Nodes in pre-order, so a node's subtree is the index range
// [i, End).
//
// A node takes 32 bytes and holds no pointers: a parse of a large file has
// about one node per two bytes of code, and the tree-sitter walk writes the
// nodes straight into the Go slice. Its type and field names are looked up
// in the grammar's tables (Type, Field).
type Node struct {
	// Parent is the index of the parent node, -1 for the root.
	Parent int32
	// End is one past the index of the last node in this subtree.
	End int32
	// StartByte and EndByte delimit the node's bytes in the source.
	StartByte, EndByte uint32
	// StartRow and EndRow are 0-based rows; rows count '\n' terminators
	// exactly as the library's lines do. Columns are not kept (nothing
	// reads them, and dropping them takes a node from 40 to 32 bytes);
	// EndsAtLineStart says whether the end column is 0.
	StartRow, EndRow uint32
	// Symbol is the grammar's symbol id of the node's type (ErrorSymbol
	// for ERROR nodes); FieldID the id of the field under which the parent
	// holds it, 0 for none.
	Symbol, FieldID uint16
	flags           uint8
	lang            uint8 // index of the language in Languages(), plus 1
}

// ErrorSymbol is the Symbol of ERROR nodes.
const ErrorSymbol = 0xFFFF

// Node flags, as the C walk sets them.
const (
	flagNamed   = 1
	flagMissing = 2
	flagError   = 4
	flagLeaf    = 8
	flagEndCol0 = 16 // the node ends at column 0 of EndRow
)

// Type is the grammar's node type, e.g. "function_definition" or "{";
// "ERROR" for error nodes.
func (n *Node) Type() string { return symbolName(n.lang, n.Symbol) }

// Field is the field name under which the parent holds this node, or "".
func (n *Node) Field() string { return fieldName(n.lang, n.FieldID) }

// Named is false for anonymous tokens such as punctuation and keywords.
func (n *Node) Named() bool { return n.flags&flagNamed != 0 }

// IsError marks ERROR nodes.
func (n *Node) IsError() bool { return n.flags&flagError != 0 }

// IsMissing marks tokens the parser invented to recover from an error.
func (n *Node) IsMissing() bool { return n.flags&flagMissing != 0 }

// Leaf is true when the node has no children.
func (n *Node) Leaf() bool { return n.flags&flagLeaf != 0 }

// EndsAtLineStart is true when the node ends at column 0 of EndRow: its
// last byte is the newline that ends the row before (or it is empty there).
func (n *Node) EndsAtLineStart() bool { return n.flags&flagEndCol0 != 0 }

// LastRow returns the last row that holds any of the node's bytes: a node
// ending at column 0 of a row (it swallowed a newline) does not occupy it.
func (n *Node) LastRow() int {
	if n.EndsAtLineStart() && n.EndRow > n.StartRow {
		return int(n.EndRow) - 1
	}
	return int(n.EndRow)
}

// Tree is a parsed text. It holds only Go memory; the tree-sitter objects
// used to build it are released before Parse returns.
type Tree struct {
	// Lang is the language the text was parsed as.
	Lang Language
	// Nodes holds every node in pre-order; Nodes[0] is the root.
	Nodes []Node
	// Errors counts ERROR and MISSING nodes; zero means the text parsed
	// cleanly.
	Errors int
}

// Children returns the indices of the direct children of node i.
func (t *Tree) Children(i int) []int {
	var out []int
	for c := i + 1; c < int(t.Nodes[i].End); c = int(t.Nodes[c].End) {
		out = append(out, c)
	}
	return out
}

// Text returns the source bytes of node i.
func (t *Tree) Text(src []byte, i int) string {
	n := &t.Nodes[i]
	if int(n.EndByte) > len(src) || n.StartByte > n.EndByte {
		return ""
	}
	return string(src[n.StartByte:n.EndByte])
}

// Parse parses src as lang and returns a Go copy of the syntax tree. The
// tree-sitter parser, tree and cursor are released before it returns, on
// every path, because their C memory is invisible to Go's collector; the
// copy is made in one C call because a cgo crossing per node would cost
// more than the parse.
// Texts over 1 MiB are parsed in pieces cut at top-level boundaries, so
// that tree-sitter's own tree (several times the size of the Go copy) is
// bounded by a piece (cut at a weaker boundary when there is none within
// 2 MiB); a large text with a line longer than 2 MiB (minified code) is
// refused with ErrNoBoundary.
// Cancelling ctx aborts the parse with ctx's error.
func Parse(ctx context.Context, lang Language, src []byte) (*Tree, error) {
	if !lang.IsCode() {
		return nil, fmt.Errorf("parse %s: %w", lang, ErrNotCode)
	}
	if len(src) > MaxParseBytes {
		return nil, fmt.Errorf("parse %d bytes: %w", len(src), ErrTooLarge)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if len(src) > wholeParseBytes {
		return parsePieces(ctx, lang, src)
	}
	return parseC(ctx, lang, src)
}

// fixEnds computes each node's subtree end from the parent links: in
// pre-order a node's subtree ends where the next node that is not its
// descendant begins.
func fixEnds(nodes []Node) {
	for i := len(nodes) - 1; i >= 0; i-- {
		if nodes[i].End < int32(i+1) {
			nodes[i].End = int32(i + 1)
		}
		if p := nodes[i].Parent; p >= 0 && nodes[p].End < nodes[i].End {
			nodes[p].End = nodes[i].End
		}
	}
}
