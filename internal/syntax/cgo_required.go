//go:build !cgo

package syntax

// The library parses code with tree-sitter, whose grammars are C: it is
// built with cgo and a C compiler (CGO_ENABLED=1, Go's default where one is
// installed). This identifier turns a CGO_ENABLED=0 build's list of
// undefined parser symbols into an error that says so.
var _ = pruner_needs_cgo_for_its_tree_sitter_grammars_build_with_CGO_ENABLED_1_and_a_C_compiler
