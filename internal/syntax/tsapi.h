// The part of the tree-sitter 0.22 C API this package calls. The definitions
// are compiled into github.com/smacker/go-tree-sitter, which the package
// links; its api.h is not on our include path, so the types are declared
// here and pinned by the static assertions below.
//
// When the real api.h has been included first (TREE_SITTER_API_H_ defined),
// the type declarations are skipped: the prototypes then must be compatible
// with the real ones, and the assertions check the real layouts. The test
// TestHeaderMatchesBinding compiles this file that way against the binding's
// own api.h, so an upgrade that moves a field fails a build or a test instead
// of misreading memory.
#ifndef PK_TSAPI_H
#define PK_TSAPI_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifndef TREE_SITTER_API_H_
typedef struct TSLanguage TSLanguage;
typedef struct TSParser TSParser;
typedef struct TSTree TSTree;
typedef uint16_t TSSymbol;
typedef uint16_t TSFieldId;
typedef struct TSPoint { uint32_t row; uint32_t column; } TSPoint;
typedef struct TSNode { uint32_t context[4]; const void *id; const TSTree *tree; } TSNode;
typedef struct TSTreeCursor { const void *tree; const void *id; uint32_t context[3]; } TSTreeCursor;
#endif

TSParser *ts_parser_new(void);
void ts_parser_delete(TSParser *self);
bool ts_parser_set_language(TSParser *self, const TSLanguage *language);
void ts_parser_set_cancellation_flag(TSParser *self, const size_t *flag);
TSTree *ts_parser_parse_string(TSParser *self, const TSTree *old_tree, const char *string, uint32_t length);
void ts_tree_delete(TSTree *self);
TSNode ts_tree_root_node(const TSTree *self);
TSSymbol ts_node_symbol(TSNode self);
uint32_t ts_node_start_byte(TSNode self);
uint32_t ts_node_end_byte(TSNode self);
TSPoint ts_node_start_point(TSNode self);
TSPoint ts_node_end_point(TSNode self);
bool ts_node_is_named(TSNode self);
bool ts_node_is_missing(TSNode self);
uint32_t ts_node_child_count(TSNode self);
uint32_t ts_node_descendant_count(TSNode self);
TSTreeCursor ts_tree_cursor_new(TSNode node);
void ts_tree_cursor_delete(TSTreeCursor *self);
TSNode ts_tree_cursor_current_node(const TSTreeCursor *self);
TSFieldId ts_tree_cursor_current_field_id(const TSTreeCursor *self);
bool ts_tree_cursor_goto_first_child(TSTreeCursor *self);
bool ts_tree_cursor_goto_next_sibling(TSTreeCursor *self);
bool ts_tree_cursor_goto_parent(TSTreeCursor *self);
const char *ts_language_symbol_name(const TSLanguage *self, TSSymbol symbol);
const char *ts_language_field_name_for_id(const TSLanguage *self, TSFieldId id);
uint32_t ts_language_symbol_count(const TSLanguage *self);
uint32_t ts_language_field_count(const TSLanguage *self);

// The layouts of tree-sitter 0.22.x (api.h at the pinned binding version).
// TSNode and TSTreeCursor travel by value across these calls, so any
// difference in size or field offset would misread memory.
#define PK_PTR sizeof(void *)
_Static_assert(sizeof(TSSymbol) == 2, "TSSymbol is not 16 bits");
_Static_assert(sizeof(TSFieldId) == 2, "TSFieldId is not 16 bits");
_Static_assert(sizeof(TSPoint) == 8, "TSPoint size changed");
_Static_assert(offsetof(TSPoint, row) == 0, "TSPoint.row moved");
_Static_assert(offsetof(TSPoint, column) == 4, "TSPoint.column moved");
_Static_assert(offsetof(TSNode, context) == 0, "TSNode.context moved");
_Static_assert(sizeof(((TSNode *)0)->context) == 16, "TSNode.context size changed");
_Static_assert(offsetof(TSNode, id) == 16, "TSNode.id moved");
_Static_assert(offsetof(TSNode, tree) == 16 + PK_PTR, "TSNode.tree moved");
_Static_assert(sizeof(TSNode) == 16 + 2 * PK_PTR, "TSNode size changed");
_Static_assert(offsetof(TSTreeCursor, tree) == 0, "TSTreeCursor.tree moved");
_Static_assert(offsetof(TSTreeCursor, id) == PK_PTR, "TSTreeCursor.id moved");
_Static_assert(offsetof(TSTreeCursor, context) == 2 * PK_PTR, "TSTreeCursor.context moved");
_Static_assert(sizeof(((TSTreeCursor *)0)->context) == 12, "TSTreeCursor.context size changed");
_Static_assert(sizeof(TSTreeCursor) == (2 * PK_PTR + 12 + PK_PTR - 1) / PK_PTR * PK_PTR,
               "TSTreeCursor size changed");
#undef PK_PTR

#endif
