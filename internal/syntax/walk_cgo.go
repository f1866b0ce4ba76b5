package syntax

/*
#include <stdint.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stddef.h>

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

// pk_node is syntax.Node's layout (checked at compile time in Go): the walk
// writes Go's nodes directly.
typedef struct {
	int32_t parent;
	int32_t end;
	uint32_t start_byte, end_byte;
	uint32_t start_row, end_row;
	uint16_t symbol;
	uint16_t field;
	uint8_t flags;
	uint8_t lang;
} pk_node;

enum {
	PK_NAMED = 1, PK_MISSING = 2, PK_ERROR = 4, PK_LEAF = 8, PK_END_COL0 = 16,
	PK_OFF_SYMBOL = offsetof(pk_node, symbol),
	PK_OFF_FIELD = offsetof(pk_node, field),
	PK_OFF_FLAGS = offsetof(pk_node, flags),
	PK_OFF_LANG = offsetof(pk_node, lang),
	PK_OFF_END_ROW = offsetof(pk_node, end_row),
};

// pk_walk writes every node of tree in pre-order into out (cap nodes, which
// the caller sizes from the root's descendant count: the cursor visits
// exactly the visible nodes it counts), in one C call so that the per-node
// cost is not a cgo crossing. Returns the node count, -1 when out of
// memory, or -2 when cap is too small.
static int64_t pk_walk(TSTree *tree, pk_node *out, size_t cap, uint8_t lang) {
	size_t n = 0, depth = 0, scap = 64;
	int32_t *stack = malloc(scap * sizeof *stack);
	if (!stack) return -1;
	TSTreeCursor cur = ts_tree_cursor_new(ts_tree_root_node(tree));
	for (;;) {
		if (n == cap) {
			free(stack);
			ts_tree_cursor_delete(&cur);
			return -2;
		}
		TSNode node = ts_tree_cursor_current_node(&cur);
		pk_node *p = &out[n];
		TSPoint sp = ts_node_start_point(node), ep = ts_node_end_point(node);
		p->parent = depth > 0 ? stack[depth - 1] : -1;
		p->end = (int32_t)(n + 1);
		p->start_byte = ts_node_start_byte(node);
		p->end_byte = ts_node_end_byte(node);
		p->start_row = sp.row;
		p->end_row = ep.row;
		p->symbol = ts_node_symbol(node);
		p->field = ts_tree_cursor_current_field_id(&cur);
		p->flags = 0;
		p->lang = lang;
		if (ts_node_is_named(node)) p->flags |= PK_NAMED;
		if (ts_node_is_missing(node)) p->flags |= PK_MISSING;
		if (p->symbol == (TSSymbol)-1) p->flags |= PK_ERROR;
		if (ts_node_child_count(node) == 0) p->flags |= PK_LEAF;
		if (ep.column == 0) p->flags |= PK_END_COL0;
		n++;
		if (ts_tree_cursor_goto_first_child(&cur)) {
			if (depth == scap) {
				scap *= 2;
				int32_t *ns = realloc(stack, scap * sizeof *stack);
				if (!ns) { free(stack); ts_tree_cursor_delete(&cur); return -1; }
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
				return (int64_t)n;
			}
			depth--;
		}
	}
}

static uint32_t pk_node_count(TSTree *tree) {
	return ts_node_descendant_count(ts_tree_root_node(tree));
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
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
	nodes, err := parseAppend(ctx, lang, src, nil)
	if err != nil {
		return nil, err
	}
	out := &Tree{Lang: lang, Nodes: nodes, Errors: countErrors(nodes)}
	fixEnds(nodes)
	return out, nil
}

// parseAppend parses src and appends its nodes, in pre-order with indices
// relative to the first appended node, to dst, growing it only when its
// capacity is short. The walk writes the Go nodes directly, and the C tree
// goes as soon as they are written.
func parseAppend(ctx context.Context, lang Language, src []byte, dst []Node) ([]Node, error) {
	cl := cLanguage(lang)
	if cl == nil {
		return nil, fmt.Errorf("parse %s: %w", lang, ErrNotCode)
	}
	tree, err := parseTree(ctx, cl, lang, src)
	if err != nil {
		return nil, err
	}
	defer C.ts_tree_delete(tree)
	count := max(int(C.pk_node_count(tree)), 1)
	for {
		at := len(dst)
		if cap(dst)-at < count {
			grown := make([]Node, at, max(at+count, at+at/4))
			copy(grown, dst)
			dst = grown
		}
		buf := dst[at : at+count]
		n := C.pk_walk(tree, (*C.pk_node)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), C.uint8_t(langIndex(lang)))
		if n >= 0 {
			return dst[:at+int(n)], nil
		}
		if n == -1 {
			return nil, errors.New("parse: out of memory copying the tree")
		}
		// Unreachable unless the count and the cursor disagree.
		count *= 2
	}
}

func countErrors(nodes []Node) int {
	n := 0
	for i := range nodes {
		if nodes[i].flags&(flagError|flagMissing) != 0 {
			n++
		}
	}
	return n
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

// Node's layout is pk_node's: these fail to compile (a negative or
// overflowing constant) when the two disagree in size or field offsets.
var (
	_ [unsafe.Sizeof(Node{}) - C.sizeof_pk_node]struct{}
	_ [C.sizeof_pk_node - unsafe.Sizeof(Node{})]struct{}
	_ [unsafe.Offsetof(Node{}.Symbol) - C.PK_OFF_SYMBOL]struct{}
	_ [C.PK_OFF_SYMBOL - unsafe.Offsetof(Node{}.Symbol)]struct{}
	_ [unsafe.Offsetof(Node{}.FieldID) - C.PK_OFF_FIELD]struct{}
	_ [C.PK_OFF_FIELD - unsafe.Offsetof(Node{}.FieldID)]struct{}
	_ [unsafe.Offsetof(Node{}.flags) - C.PK_OFF_FLAGS]struct{}
	_ [C.PK_OFF_FLAGS - unsafe.Offsetof(Node{}.flags)]struct{}
	_ [unsafe.Offsetof(Node{}.lang) - C.PK_OFF_LANG]struct{}
	_ [C.PK_OFF_LANG - unsafe.Offsetof(Node{}.lang)]struct{}
	_ [unsafe.Offsetof(Node{}.EndRow) - C.PK_OFF_END_ROW]struct{}
	_ [C.PK_OFF_END_ROW - unsafe.Offsetof(Node{}.EndRow)]struct{}
	_ [flagNamed - C.PK_NAMED]struct{}
	_ [flagMissing - C.PK_MISSING]struct{}
	_ [flagError - C.PK_ERROR]struct{}
	_ [flagLeaf - C.PK_LEAF]struct{}
	_ [flagEndCol0 - C.PK_END_COL0]struct{}
	_ [C.PK_END_COL0 - flagEndCol0]struct{}
)

// grammarNames are one grammar's symbol and field names, read from its C
// tables once per process: they are immutable, and a Node's Type and Field
// are lookups in them.
type grammarNames struct {
	once    sync.Once
	symbols []string
	fields  []string
}

// names holds the tables of Languages(), in that order.
var names [9]grammarNames

// langIndex returns 1 + the index of lang in Languages() (0 for none).
func langIndex(lang Language) int {
	for i, l := range Languages() {
		if l == lang {
			return i + 1
		}
	}
	return 0
}

func grammar(lang uint8) *grammarNames {
	if lang == 0 || int(lang) > len(names) {
		return nil
	}
	g := &names[lang-1]
	g.once.Do(func() {
		cl := cLanguage(Languages()[lang-1])
		g.symbols = make([]string, int(C.ts_language_symbol_count(cl)))
		for i := range g.symbols {
			g.symbols[i] = C.GoString(C.ts_language_symbol_name(cl, C.TSSymbol(i)))
		}
		g.fields = make([]string, int(C.ts_language_field_count(cl))+1)
		for i := 1; i < len(g.fields); i++ {
			if p := C.ts_language_field_name_for_id(cl, C.TSFieldId(i)); p != nil {
				g.fields[i] = C.GoString(p)
			}
		}
	})
	return g
}

func symbolName(lang uint8, sym uint16) string {
	if sym == ErrorSymbol {
		return "ERROR"
	}
	if g := grammar(lang); g != nil && int(sym) < len(g.symbols) {
		return g.symbols[sym]
	}
	return ""
}

func fieldName(lang uint8, id uint16) string {
	if g := grammar(lang); g != nil && id > 0 && int(id) < len(g.fields) {
		return g.fields[id]
	}
	return ""
}
