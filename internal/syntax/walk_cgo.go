package syntax

/*
#include <stdint.h>
#include <stdlib.h>
#include <stdbool.h>

#include "tsapi.h"

const TSLanguage *tree_sitter_python(void);
const TSLanguage *tree_sitter_go(void);
const TSLanguage *tree_sitter_javascript(void);
const TSLanguage *tree_sitter_typescript(void);
const TSLanguage *tree_sitter_tsx(void);
const TSLanguage *tree_sitter_java(void);
const TSLanguage *tree_sitter_rust(void);
const TSLanguage *tree_sitter_c(void);
const TSLanguage *tree_sitter_cpp(void);

typedef struct {
	int32_t parent;
	int32_t end;
	uint32_t start_byte, end_byte;
	uint32_t start_row, start_col, end_row, end_col;
	uint16_t symbol;
	uint16_t field;
	uint8_t flags;
} pk_node;

enum { PK_NAMED = 1, PK_MISSING = 2, PK_ERROR = 4, PK_LEAF = 8 };

// pk_walk copies every node of tree in pre-order into a malloc'd array in
// one C call, so the per-node cost is not a cgo crossing. Returns the node
// count, or -1 when out of memory.
static int64_t pk_walk(TSTree *tree, pk_node **out) {
	// The cursor visits the visible nodes, which the root counts; sizing
	// the buffer from the count saves the doubling's slack and copies.
	size_t cap = ts_node_descendant_count(ts_tree_root_node(tree)), n = 0, depth = 0, scap = 64;
	if (cap < 16) cap = 16;
	pk_node *buf = malloc(cap * sizeof *buf);
	int32_t *stack = malloc(scap * sizeof *stack);
	if (!buf || !stack) { free(buf); free(stack); return -1; }
	TSTreeCursor cur = ts_tree_cursor_new(ts_tree_root_node(tree));
	for (;;) {
		if (n == cap) {
			cap *= 2;
			pk_node *nb = realloc(buf, cap * sizeof *buf);
			if (!nb) { free(buf); free(stack); ts_tree_cursor_delete(&cur); return -1; }
			buf = nb;
		}
		TSNode node = ts_tree_cursor_current_node(&cur);
		pk_node *p = &buf[n];
		TSPoint sp = ts_node_start_point(node), ep = ts_node_end_point(node);
		p->parent = depth > 0 ? stack[depth - 1] : -1;
		p->end = (int32_t)(n + 1);
		p->start_byte = ts_node_start_byte(node);
		p->end_byte = ts_node_end_byte(node);
		p->start_row = sp.row; p->start_col = sp.column;
		p->end_row = ep.row; p->end_col = ep.column;
		p->symbol = ts_node_symbol(node);
		p->field = ts_tree_cursor_current_field_id(&cur);
		p->flags = 0;
		if (ts_node_is_named(node)) p->flags |= PK_NAMED;
		if (ts_node_is_missing(node)) p->flags |= PK_MISSING;
		if (p->symbol == (TSSymbol)-1) p->flags |= PK_ERROR;
		if (ts_node_child_count(node) == 0) p->flags |= PK_LEAF;
		n++;
		if (ts_tree_cursor_goto_first_child(&cur)) {
			if (depth == scap) {
				scap *= 2;
				int32_t *ns = realloc(stack, scap * sizeof *stack);
				if (!ns) { free(buf); free(stack); ts_tree_cursor_delete(&cur); return -1; }
				stack = ns;
			}
			stack[depth++] = (int32_t)(n - 1);
			continue;
		}
		for (;;) {
			if (ts_tree_cursor_goto_next_sibling(&cur)) break;
			if (!ts_tree_cursor_goto_parent(&cur)) {
				ts_tree_cursor_delete(&cur);
				free(stack);
				*out = buf;
				return (int64_t)n;
			}
			depth--;
		}
	}
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	// The tree-sitter runtime and grammars are linked from these packages;
	// this package calls their C functions directly (see the preamble).
	sitter "github.com/smacker/go-tree-sitter"
	_ "github.com/smacker/go-tree-sitter/c"
	_ "github.com/smacker/go-tree-sitter/cpp"
	_ "github.com/smacker/go-tree-sitter/golang"
	_ "github.com/smacker/go-tree-sitter/java"
	_ "github.com/smacker/go-tree-sitter/javascript"
	_ "github.com/smacker/go-tree-sitter/python"
	_ "github.com/smacker/go-tree-sitter/rust"
	_ "github.com/smacker/go-tree-sitter/typescript/tsx"
	_ "github.com/smacker/go-tree-sitter/typescript/typescript"
)

// The binding's sitter.Node holds a C TSNode compiled from the binding's own
// api.h, followed by one pointer. These two declarations fail to compile
// (negative array length) when that TSNode and the one tsapi.h declares
// differ in size, which is what a tree-sitter upgrade that changes the
// layout would do; tsapi.h's static assertions pin the field offsets.
const bindingTSNodeSize = unsafe.Sizeof(sitter.Node{}) - unsafe.Sizeof(uintptr(0))

var (
	_ [bindingTSNodeSize - C.sizeof_TSNode]struct{}
	_ [C.sizeof_TSNode - bindingTSNodeSize]struct{}
)

func cLanguage(l Language) *C.TSLanguage {
	switch l {
	case Python:
		return C.tree_sitter_python()
	case Go:
		return C.tree_sitter_go()
	case JavaScript:
		return C.tree_sitter_javascript()
	case TypeScript:
		return C.tree_sitter_typescript()
	case TSX:
		return C.tree_sitter_tsx()
	case Java:
		return C.tree_sitter_java()
	case Rust:
		return C.tree_sitter_rust()
	case C:
		return C.tree_sitter_c()
	case CPP:
		return C.tree_sitter_cpp()
	}
	return nil
}

// parseC parses src and copies the tree into Go memory. The parser, the
// tree, the cursor and the copy buffer are all released before it returns.
func parseC(ctx context.Context, lang Language, src []byte) (*Tree, error) {
	cl := cLanguage(lang)
	if cl == nil {
		return nil, fmt.Errorf("parse %s: %w", lang, ErrNotCode)
	}
	tree, err := parseTree(ctx, cl, lang, src)
	if err != nil {
		return nil, err
	}
	// The C tree goes as soon as its nodes are copied out, before the Go
	// copy is built: peak memory holds two of the three forms, not all.
	var buf *C.pk_node
	n := C.pk_walk(tree, &buf)
	C.ts_tree_delete(tree)
	if n < 0 {
		return nil, errors.New("parse: out of memory copying the tree")
	}
	defer C.free(unsafe.Pointer(buf))
	return copyNodes(unsafe.Slice(buf, int(n)), cl, lang), nil
}

// parseTree runs tree-sitter on src with ctx wired to the parser's
// cancellation flag, and releases the parser and the flag before it returns.
//
// Lifetimes, which a request context makes racy (issue 14): the flag is C
// memory that tree-sitter reads during the parse, and a context.AfterFunc
// callback may store into it from another goroutine at any moment until it
// is stopped. stop() reports false once the callback has started; then we
// wait for it to finish, so no store can reach the flag after it is freed.
// src is Go memory that tree-sitter reads only during the call (its lexer
// keeps a chunk pointer afterwards but never reads it again before
// ts_parser_delete, which does not read input); it is kept alive until the
// parser is gone all the same.
func parseTree(ctx context.Context, cl *C.TSLanguage, lang Language, src []byte) (*C.TSTree, error) {
	parser := C.ts_parser_new()
	if parser == nil {
		return nil, errors.New("parse: tree-sitter could not allocate a parser")
	}
	defer C.ts_parser_delete(parser)
	if !C.ts_parser_set_language(parser, cl) {
		return nil, fmt.Errorf("parse %s: incompatible grammar version", lang)
	}
	in := src
	if len(in) == 0 {
		in = []byte{0}
	}
	defer runtime.KeepAlive(in)
	if ctx.Done() == nil {
		// Never cancelled: no flag, no watcher.
		return parseString(ctx, parser, in, len(src))
	}
	flag := (*C.size_t)(C.calloc(1, C.size_t(unsafe.Sizeof(C.size_t(0)))))
	if flag == nil {
		return nil, errors.New("parse: out of memory")
	}
	C.ts_parser_set_cancellation_flag(parser, flag)
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		atomic.StoreUintptr((*uintptr)(unsafe.Pointer(flag)), 1)
		close(fired)
	})
	tree, err := parseString(ctx, parser, in, len(src))
	if !stop() {
		<-fired
	}
	C.ts_parser_set_cancellation_flag(parser, nil)
	C.free(unsafe.Pointer(flag))
	return tree, err
}

// parseString runs the parse itself; n is the text length (in may hold one
// extra byte so that an empty text still has an address).
func parseString(ctx context.Context, parser *C.TSParser, in []byte, n int) (*C.TSTree, error) {
	tree := C.ts_parser_parse_string(parser, nil, (*C.char)(unsafe.Pointer(&in[0])), C.uint32_t(n))
	if tree == nil {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("parse: %w", err)
		}
		return nil, errors.New("parse: tree-sitter returned no tree")
	}
	return tree, nil
}

// copyNodes converts the C walk's nodes into the Go tree.
func copyNodes(raw []C.pk_node, cl *C.TSLanguage, lang Language) *Tree {
	out := &Tree{Lang: lang, Nodes: make([]Node, len(raw))}
	symNames := make([]string, int(C.ts_language_symbol_count(cl))+1)
	symSeen := make([]bool, len(symNames))
	fieldNames := make([]string, int(C.ts_language_field_count(cl))+1)
	fieldSeen := make([]bool, len(fieldNames))
	for i := range raw {
		r := &raw[i]
		flags := uint8(r.flags)
		isErr := flags&C.PK_ERROR != 0
		var typ string
		if isErr {
			typ = "ERROR"
		} else if s := int(r.symbol); s < len(symNames) {
			if !symSeen[s] {
				symNames[s] = C.GoString(C.ts_language_symbol_name(cl, r.symbol))
				symSeen[s] = true
			}
			typ = symNames[s]
		}
		var field string
		if f := int(r.field); f > 0 && f < len(fieldNames) {
			if !fieldSeen[f] {
				fieldNames[f] = C.GoString(C.ts_language_field_name_for_id(cl, r.field))
				fieldSeen[f] = true
			}
			field = fieldNames[f]
		}
		missing := flags&C.PK_MISSING != 0
		if isErr || missing {
			out.Errors++
		}
		out.Nodes[i] = Node{
			Type: typ, Field: field, Parent: int32(r.parent), End: int32(r.end),
			StartByte: uint32(r.start_byte), EndByte: uint32(r.end_byte),
			StartRow: uint32(r.start_row), StartCol: uint32(r.start_col),
			EndRow: uint32(r.end_row), EndCol: uint32(r.end_col),
			Named: flags&C.PK_NAMED != 0, Error: isErr, Missing: missing,
			Leaf: flags&C.PK_LEAF != 0,
		}
	}
	fixEnds(out.Nodes)
	return out
}
