package astrepair

import (
	"strings"

	"github.com/prunekit/pruner/internal/syntax"
)

// containerSpec says which children of a container node are items, i.e.
// statements or members that can be dropped one by one without breaking the
// syntax of what is left.
type containerSpec struct {
	// itemTypes, when non-nil, restricts items to these child types.
	itemTypes map[string]bool
	// excludeFields and excludeTypes name children that belong to the
	// container's own header (a case value, a switch label).
	excludeFields map[string]bool
	excludeTypes  map[string]bool
	// parenOnly marks declaration groups that are containers only in their
	// parenthesised form (Go's "const ( ... )").
	parenOnly bool
}

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

var anyItems = containerSpec{}

// Literal element lists are containers only in languages that accept a
// trailing comma there, so dropping the last element cannot strand one.
var pythonContainers = map[string]containerSpec{
	"module":     anyItems,
	"block":      anyItems,
	"dictionary": anyItems,
	"list":       anyItems,
	"set":        anyItems,
}

var goContainers = map[string]containerSpec{
	"source_file":                 anyItems,
	"block":                       anyItems,
	"expression_switch_statement": {itemTypes: set("expression_case", "default_case")},
	"type_switch_statement":       {itemTypes: set("type_case", "default_case")},
	"select_statement":            {itemTypes: set("communication_case", "default_case")},
	"expression_case":             {excludeFields: set("value")},
	"default_case":                anyItems,
	"type_case":                   {excludeFields: set("type")},
	"communication_case":          {excludeFields: set("communication")},
	"import_spec_list":            anyItems,
	"field_declaration_list":      anyItems,
	"interface_type":              anyItems,
	"literal_value":               anyItems,
	"const_declaration":           {itemTypes: set("const_spec"), parenOnly: true},
	"var_declaration":             {itemTypes: set("var_spec"), parenOnly: true},
}

var jsContainers = map[string]containerSpec{
	"program":         anyItems,
	"statement_block": anyItems,
	"class_body":      anyItems,
	"switch_body":     anyItems,
	"switch_case":     {excludeFields: set("value")},
	"switch_default":  anyItems,
	"interface_body":  anyItems,
	"enum_body":       anyItems,
	"object":          anyItems,
	"array":           anyItems,
}

var javaContainers = map[string]containerSpec{
	"program":                      anyItems,
	"block":                        anyItems,
	"class_body":                   anyItems,
	"interface_body":               anyItems,
	"enum_body_declarations":       anyItems,
	"constructor_body":             anyItems,
	"annotation_type_body":         anyItems,
	"switch_block":                 {itemTypes: set("switch_block_statement_group", "switch_rule")},
	"switch_block_statement_group": {excludeTypes: set("switch_label")},
	"array_initializer":            anyItems,
}

var rustContainers = map[string]containerSpec{
	"source_file":            anyItems,
	"block":                  anyItems,
	"declaration_list":       anyItems,
	"field_declaration_list": anyItems,
	"enum_variant_list":      anyItems,
	"match_block":            anyItems,
	"field_initializer_list": anyItems,
}

var cContainers = map[string]containerSpec{
	"translation_unit":       anyItems,
	"compound_statement":     anyItems,
	"field_declaration_list": anyItems,
	"enumerator_list":        anyItems,
	"declaration_list":       anyItems,
	"case_statement":         {excludeFields: set("value")},
	"preproc_if":             {excludeFields: set("condition")},
	"preproc_ifdef":          {excludeFields: set("name")},
	"preproc_elif":           {excludeFields: set("condition")},
	"preproc_elifdef":        {excludeFields: set("name")},
	"preproc_else":           anyItems,
	"initializer_list":       anyItems,
}

func containersFor(l syntax.Language) map[string]containerSpec {
	switch l {
	case syntax.Python:
		return pythonContainers
	case syntax.Go:
		return goContainers
	case syntax.JavaScript, syntax.TypeScript, syntax.TSX:
		return jsContainers
	case syntax.Java:
		return javaContainers
	case syntax.Rust:
		return rustContainers
	case syntax.C, syntax.CPP:
		return cContainers
	}
	return nil
}

// literalContainers hold data elements rather than statements; an item
// holding one is a statement, not a scope.
var literalContainers = set("dictionary", "list", "set", "literal_value", "object",
	"array", "array_initializer", "field_initializer_list", "initializer_list",
	"import_spec_list", "enumerator_list", "enum_variant_list", "enum_body")

// attachedPrefix lists item types that belong to the item after them even
// though the grammar makes them siblings (Rust attributes, decorators in
// JavaScript class bodies).
var attachedPrefix = set("attribute_item", "decorator", "annotation", "marker_annotation")

// kind classifies items for the reasons recorded on added lines.
type kind uint8

const (
	kindOther kind = iota
	kindScope
	kindControl
)

var controlPrefixes = []string{
	"if_", "for_", "while_", "try_", "switch_", "match_", "case_", "with_",
	"do_", "loop_", "select_", "else_", "except_", "finally_", "catch_",
	"elif_", "expression_switch", "type_switch", "expression_case",
	"default_case", "type_case", "communication_case", "preproc_if",
	"preproc_else", "preproc_elif", "switch", "case", "conditional",
	"enhanced_for", "labeled_statement", "unsafe_block", "async_block",
	"synchronized", "try",
}

var scopeMarkers = []string{
	"function", "method", "class", "interface", "struct", "enum", "impl",
	"trait", "mod_item", "namespace", "decorated_definition", "constructor",
	"template_declaration", "type_declaration", "record", "module",
	"union", "macro_definition", "linkage_specification", "object",
}

func classify(typ string) kind {
	for _, p := range controlPrefixes {
		if strings.HasPrefix(typ, p) {
			return kindControl
		}
	}
	for _, m := range scopeMarkers {
		if strings.Contains(typ, m) {
			return kindScope
		}
	}
	return kindOther
}

// functionLike reports node types whose body is a function body: names
// defined inside are locals, not file-level definitions.
func functionLike(typ string) bool {
	return strings.Contains(typ, "function") || strings.Contains(typ, "method") ||
		strings.Contains(typ, "lambda") || strings.Contains(typ, "arrow") ||
		strings.Contains(typ, "constructor") || strings.Contains(typ, "closure") ||
		typ == "func_literal"
}

// isReturn reports return statements for the trivial-return rule.
func isReturn(typ string) bool {
	return typ == "return_statement" || typ == "return_expression"
}

// importLike reports items that bind imported names.
func importLike(typ string) bool {
	return strings.Contains(typ, "import") || typ == "use_declaration" ||
		typ == "using_declaration" || typ == "alias_declaration"
}

// nameFields are fields under which a declaration names what it defines.
var nameFields = set("name", "declarator", "left", "pattern", "alias")

// skipFields are fields whose identifiers are uses, not definitions.
var skipFields = set("body", "parameters", "value", "right", "arguments",
	"superclass", "superclasses", "type_parameters", "return_type", "result",
	"condition", "initializer", "type", "receiver", "decorator",
	"default_value", "interfaces", "bound", "trait", "size")

// closingTokens are tokens that only close something; a line holding
// nothing else is recorded as a bracket repair.
var closingTokens = set("}", ")", "]", ";", ",", "end", "#endif", "fi", ">", "\"", "'", "`", "\"\"\"")

func isIdentifierType(typ string) bool {
	return strings.HasSuffix(typ, "identifier") || typ == "constant"
}
