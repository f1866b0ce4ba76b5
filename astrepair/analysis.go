package astrepair

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/prunekit/pruner/internal/syntax"
)

// Analysis is a text analysed once for repeated repairs, closures and
// renders: a parsed text keeps only plain Go data, no tree-sitter objects,
// so it needs no Close and is safe for concurrent use.
type Analysis struct {
	lang        syntax.Language
	text        string
	lines       []syntax.Line
	parsed      bool
	parseErrors int

	items    []item
	rowItems [][]int32 // row -> items whose skeleton holds the row

	defRows  [][]int32 // name id -> rows that define the name
	imported []bool    // name id -> some definition is an import
	rowDefs  [][]int32 // row -> ids of names defined on the row
	useNames [][]int32 // row -> ids of defined names used on the row
	useRows  [][]int32 // name id -> rows that use the name

	pyBlocks []pyBlock
}

// item is a statement or member that can be dropped on its own: a child of
// a container (module, block, class body, case list ...).
type item struct {
	node       int32
	start, end int32
	parent     int32 // enclosing item, -1 for the root
	kind       kind
	skel       []skelRow // rows that must stay when anything in the item stays
	ret        int32     // row of a trivial final return, -1 if none
}

type skelRow struct {
	row    int32
	reason Reason
}

// pyBlock records what rendering needs to keep a Python block non-empty.
type pyBlock struct {
	header   int32   // row of the ':' that opens the block
	first    int32   // first statement row
	stmtRows []int32 // start rows of all statements
}

// Analyze parses text as lang and prepares it for Repair, Closure and
// Render. Non-code text (lang == syntax.Text) gives an Analysis that leaves
// masks unchanged. Errors come from parsing: ctx cancellation and
// syntax.ErrTooLarge.
func Analyze(ctx context.Context, text string, lang syntax.Language) (*Analysis, error) {
	return AnalyzeTree(ctx, text, lang, nil)
}

// AnalyzeTree is Analyze with text already parsed as lang (tree from
// syntax.Parse of exactly text), so a caller that needs the parse too pays
// for it once. A nil tree parses text.
func AnalyzeTree(ctx context.Context, text string, lang syntax.Language, tree *syntax.Tree) (*Analysis, error) {
	a := &Analysis{lang: lang, text: text, lines: syntax.SplitLines(text)}
	if !lang.IsCode() || len(a.lines) == 0 {
		return a, nil
	}
	if tree == nil {
		var err error
		if tree, err = syntax.Parse(ctx, lang, []byte(text)); err != nil {
			return nil, fmt.Errorf("analyze %s: %w", lang, err)
		}
	}
	a.parsed = true
	a.parseErrors = tree.Errors
	b := builder{a: a, t: tree, nodes: tree.Nodes, specs: containersFor(lang)}
	b.build()
	return a, nil
}

// Language returns the language the text was analysed as.
func (a *Analysis) Language() syntax.Language { return a.lang }

// Lines returns the number of lines of the text.
func (a *Analysis) Lines() int { return len(a.lines) }

// ParseErrors returns the number of ERROR and MISSING nodes in the parse of
// the full text; repairs only guarantee clean output when it is zero.
func (a *Analysis) ParseErrors() int { return a.parseErrors }

// builder holds the scratch state of one analysis.
type builder struct {
	a     *Analysis
	t     *syntax.Tree
	nodes []syntax.Node
	specs map[string]containerSpec

	container []bool
	itemOf    []int32 // node -> item index if the node is an item, else -1
	owner     []int32 // node -> nearest item ancestor-or-self
	defLevel  []bool  // container node -> names defined by its items are file-level
	defLeaf   []bool  // node -> the leaf names a definition
	curImport bool    // the item being walked by collectDefs is an import
	soft      []int32 // row -> 1 + item whose multi-line token spans it, 0 if none
	nameIDs   map[string]int32
}

func (b *builder) text(i int) string {
	n := &b.nodes[i]
	if int(n.EndByte) > len(b.a.text) || n.StartByte > n.EndByte {
		return ""
	}
	return b.a.text[n.StartByte:n.EndByte]
}

func (b *builder) build() {
	b.markStructure()
	b.collectDefs()
	owned := b.scanLeaves()
	b.buildSkeletons(owned)
	if b.a.lang == syntax.Python {
		b.collectPyBlocks()
	}
}

// markStructure finds containers and items and links items to parents.
func (b *builder) markStructure() {
	n := len(b.nodes)
	b.container = make([]bool, n)
	b.itemOf = make([]int32, n)
	b.owner = make([]int32, n)
	b.defLevel = make([]bool, n)
	for i := range b.nodes {
		nd := &b.nodes[i]
		b.itemOf[i] = -1
		if i == 0 {
			b.container[0] = true
			b.defLevel[0] = true
			b.itemOf[0] = 0
			b.owner[0] = 0
			b.a.items = append(b.a.items, item{node: 0, start: int32(nd.StartRow), end: int32(nd.LastRow()), parent: -1, ret: -1})
			continue
		}
		p := int(nd.Parent)
		if spec, ok := b.specs[nd.Type]; ok && nd.Named && (!spec.parenOnly || b.hasChild(i, "(")) {
			b.container[i] = true
		}
		if b.container[p] && nd.Named && b.isItem(p, i) {
			idx := int32(len(b.a.items))
			b.itemOf[i] = idx
			b.owner[i] = idx
			b.a.items = append(b.a.items, item{
				node: int32(i), start: int32(nd.StartRow), end: int32(nd.LastRow()),
				parent: b.owner[p], kind: b.kindOf(i), ret: -1,
			})
		} else {
			b.owner[i] = b.owner[p]
		}
		if b.container[i] {
			b.defLevel[i] = b.containerDefLevel(i)
		}
	}
}

func (b *builder) hasChild(i int, typ string) bool {
	for c := i + 1; c < int(b.nodes[i].End); c = int(b.nodes[c].End) {
		if b.nodes[c].Type == typ {
			return true
		}
	}
	return false
}

func (b *builder) isItem(container, child int) bool {
	if container == 0 {
		return true
	}
	spec := b.specs[b.nodes[container].Type]
	nd := &b.nodes[child]
	if spec.itemTypes != nil && !spec.itemTypes[nd.Type] {
		return nd.Type == "comment" || nd.Type == "line_comment" || nd.Type == "block_comment"
	}
	if spec.excludeFields[nd.Field] || spec.excludeTypes[nd.Type] {
		return false
	}
	return true
}

// containerDefLevel: names defined directly in container i are file-level
// when no function lies between i and a file-level container.
func (b *builder) containerDefLevel(i int) bool {
	for p := int(b.nodes[i].Parent); p >= 0; p = int(b.nodes[p].Parent) {
		if functionLike(b.nodes[p].Type) {
			return false
		}
		if b.container[p] {
			return b.defLevel[p]
		}
	}
	return true
}

// kindOf classifies an item, looking through wrappers such as
// expression_statement or export_statement (two levels down at most).
func (b *builder) kindOf(i int) kind {
	return b.kindAt(i, 2)
}

func (b *builder) kindAt(i, depth int) kind {
	if k := classify(b.nodes[i].Type); k != kindOther {
		return k
	}
	if depth == 0 {
		return kindOther
	}
	for c := i + 1; c < int(b.nodes[i].End); c = int(b.nodes[c].End) {
		if !b.nodes[c].Named {
			continue
		}
		if k := b.kindAt(c, depth-1); k != kindOther {
			return k
		}
	}
	return kindOther
}

func (b *builder) nameID(name string) int32 {
	if id, ok := b.nameIDs[name]; ok {
		return id
	}
	id := int32(len(b.a.defRows))
	b.nameIDs[name] = id
	b.a.defRows = append(b.a.defRows, nil)
	b.a.useRows = append(b.a.useRows, nil)
	b.a.imported = append(b.a.imported, false)
	return id
}

// ignoredNames are receivers and placeholders that never name a definition.
var ignoredNames = set("self", "this", "cls", "_", "super", "Self")

// collectDefs records the names defined by items of file-level containers
// (module, class bodies, namespaces) and the rows where they are defined.
func (b *builder) collectDefs() {
	b.nameIDs = make(map[string]int32)
	b.defLeaf = make([]bool, len(b.nodes))
	for idx := 1; idx < len(b.a.items); idx++ {
		it := &b.a.items[idx]
		p := int(b.nodes[it.node].Parent)
		if !b.defLevel[p] {
			continue
		}
		imp := importLike(b.nodes[it.node].Type)
		b.curImport = imp
		b.walkDefs(int(it.node), int(it.node), imp, imp)
	}
	b.a.rowDefs = make([][]int32, len(b.a.lines))
	for id, rows := range b.a.defRows {
		for _, r := range rows {
			if int(r) < len(b.a.rowDefs) {
				b.a.rowDefs[r] = appendUnique(b.a.rowDefs[r], int32(id))
			}
		}
	}
}

func (b *builder) walkDefs(root, i int, imp, nameCtx bool) {
	nd := &b.nodes[i]
	if i != root && b.container[i] && b.itemOf[i] < 0 {
		// Items of nested containers are analysed on their own.
		return
	}
	if i != root && b.itemOf[i] >= 0 {
		return
	}
	if !imp {
		if skipFields[nd.Field] {
			return
		}
		if nameFields[nd.Field] {
			nameCtx = true
		}
	}
	if nd.Leaf {
		if !nd.Named || !nameCtx {
			return
		}
		name := b.text(i)
		if isIdentifierType(nd.Type) && !ignoredNames[name] {
			b.defLeaf[i] = true
			b.addDef(name, int32(nd.StartRow))
		} else if imp && strings.Contains(nd.Type, "string") {
			b.addImportPath(name, int32(nd.StartRow))
		}
		return
	}
	if imp && (nd.Type == "interpreted_string_literal" || nd.Type == "string_literal" || nd.Type == "raw_string_literal") {
		b.addImportPath(b.text(i), int32(nd.StartRow))
		return
	}
	for c := i + 1; c < int(nd.End); c = int(b.nodes[c].End) {
		b.walkDefs(root, c, imp, nameCtx)
	}
}

func (b *builder) addDef(name string, row int32) {
	id := b.nameID(name)
	if b.curImport {
		b.a.imported[id] = true
	}
	rows := b.a.defRows[id]
	if len(rows) > 0 && rows[len(rows)-1] == row {
		return
	}
	b.a.defRows[id] = append(rows, row)
}

// addImportPath defines the package name of a quoted import path (Go's
// "net/http" binds http).
func (b *builder) addImportPath(lit string, row int32) {
	lit = strings.Trim(lit, "\"`'<>")
	if k := strings.LastIndexAny(lit, "/"); k >= 0 {
		lit = lit[k+1:]
	}
	if k := strings.IndexAny(lit, ".-"); k >= 0 {
		lit = lit[:k]
	}
	if lit != "" {
		b.addDef(lit, row)
	}
}

func (b *builder) addOwned(owned [][]ownedRow, own, r int32, closing bool) {
	rows := owned[own]
	if k := len(rows) - 1; k >= 0 && rows[k].row == r {
		rows[k].nonClosing = rows[k].nonClosing || !closing
		return
	}
	owned[own] = append(rows, ownedRow{row: r, nonClosing: !closing})
}

// softLeaf reports multi-line tokens whose middle rows may be replaced by
// a placeholder line without changing the syntax: block comments and
// strings that may hold raw newlines. Strings continued with a trailing
// backslash (C, Python single-quoted) are excluded because a placeholder
// would end them.
func (b *builder) softLeaf(i int, txt string) bool {
	nd := &b.nodes[i]
	if strings.Contains(nd.Type, "comment") {
		return strings.HasPrefix(txt, "/*")
	}
	parentText := ""
	if p := int(nd.Parent); p >= 0 {
		parentText = b.text(p)
	}
	switch b.a.lang {
	case syntax.Python:
		if nd.Type != "string_content" {
			return false
		}
		q := strings.TrimLeft(parentText, "rRbBuUfF")
		return strings.HasPrefix(q, `"""`) || strings.HasPrefix(q, "'''")
	case syntax.Go:
		return nd.Type == "raw_string_literal"
	case syntax.JavaScript, syntax.TypeScript, syntax.TSX:
		return nd.Type == "string_fragment" && strings.HasPrefix(parentText, "`")
	case syntax.Rust:
		return nd.Type == "string_content"
	case syntax.Java:
		return strings.Contains(nd.Type, "string_fragment") && strings.HasPrefix(parentText, `"""`)
	case syntax.CPP:
		return nd.Type == "raw_string_content"
	}
	return false
}

// ownedRow is one row on which an item owns leaves.
type ownedRow struct {
	row        int32
	nonClosing bool
}

// scanLeaves assigns every non-blank leaf's rows to its owning item and
// records uses of defined names.
func (b *builder) scanLeaves() [][]ownedRow {
	a := b.a
	owned := make([][]ownedRow, len(a.items))
	b.soft = make([]int32, len(a.lines))
	lastItem := make(map[int32]int32)
	a.useNames = make([][]int32, len(a.lines))
	for i := 1; i < len(b.nodes); i++ {
		nd := &b.nodes[i]
		p := nd.Parent
		if b.itemOf[i] >= 0 && p >= 0 {
			lastItem[p] = b.itemOf[i]
		}
		if !nd.Leaf || nd.EndByte <= nd.StartByte {
			continue
		}
		txt := b.text(i)
		if strings.TrimSpace(txt) == "" {
			continue
		}
		own := b.owner[i]
		if !nd.Named && (nd.Type == "," || nd.Type == ";" || nd.Type == ":") && b.container[p] {
			// A separator leaves with the item before it, so dropping that
			// item does not strand its comma.
			if li, ok := lastItem[p]; ok {
				own = li
			}
		}
		closing := !nd.Named && closingTokens[nd.Type]
		last := int32(nd.LastRow())
		if int(last) >= len(a.lines) {
			last = int32(len(a.lines) - 1)
		}
		if last > int32(nd.StartRow)+1 && b.softLeaf(i, txt) {
			// Inside a block comment or a multi-line string a placeholder
			// is just more text, so only the opening and closing rows are
			// needed; the middle rows still lead to the item.
			for r := int32(nd.StartRow) + 1; r < last; r++ {
				b.soft[r] = own + 1
			}
			b.addOwned(owned, own, int32(nd.StartRow), closing)
			b.addOwned(owned, own, last, closing)
			continue
		}
		for r := int32(nd.StartRow); r <= last; r++ {
			rows := owned[own]
			if k := len(rows) - 1; k >= 0 && rows[k].row == r {
				rows[k].nonClosing = rows[k].nonClosing || !closing
				continue
			}
			owned[own] = append(rows, ownedRow{row: r, nonClosing: !closing})
		}
		if nd.Named && isIdentifierType(nd.Type) {
			if id, ok := b.nameIDs[txt]; ok && !b.defLeaf[i] {
				r := int32(nd.StartRow)
				a.useNames[r] = appendUnique(a.useNames[r], id)
				// Leaves come in row order, so a repeat is always last.
				if u := a.useRows[id]; len(u) == 0 || u[len(u)-1] != r {
					a.useRows[id] = append(u, r)
				}
			}
		}
	}
	return owned
}

func appendUnique(xs []int32, x int32) []int32 {
	if len(xs) > 0 && xs[len(xs)-1] == x {
		return xs
	}
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// buildSkeletons computes, per item, the rows that must stay whenever any
// row of the item stays: rows of its own tokens plus rows of its span that
// no nested container covers (continuations of multi-line statements).
func (b *builder) buildSkeletons(owned [][]ownedRow) {
	a := b.a
	nItems := len(a.items)
	holes := make([][][2]int32, nItems)
	hasBody := make([]bool, nItems)
	for i := range b.nodes {
		if !b.container[i] {
			continue
		}
		o := b.owner[i]
		nd := &b.nodes[i]
		holes[o] = append(holes[o], [2]int32{int32(nd.StartRow), int32(nd.LastRow())})
		if i != 0 && !literalContainers[nd.Type] {
			hasBody[o] = true
		}
	}
	a.rowItems = make([][]int32, len(a.lines))
	maxRow := int32(len(a.lines) - 1)
	for idx := range a.items {
		it := &a.items[idx]
		if it.end > maxRow {
			it.end = maxRow
		}
		k := it.kind
		if k == kindOther && hasBody[idx] && !importLike(b.nodes[it.node].Type) {
			k = kindScope
		}
		var rowReason = func(nonClosing bool) Reason {
			if !nonClosing {
				return ReasonBracket
			}
			switch k {
			case kindScope:
				return ReasonScope
			case kindControl:
				return ReasonControl
			}
			return ReasonStatement
		}
		rows := make(map[int32]Reason)
		for _, o := range owned[idx] {
			rows[o.row] = rowReason(o.nonClosing)
		}
		if idx != 0 {
			hs := holes[idx]
			sort.Slice(hs, func(x, y int) bool { return hs[x][0] < hs[y][0] })
			r := it.start
			for _, h := range hs {
				for ; r < h[0] && r <= it.end; r++ {
					if _, ok := rows[r]; !ok && b.soft[r] == 0 {
						rows[r] = ReasonStatement
					}
				}
				if h[1]+1 > r {
					r = h[1] + 1
				}
			}
			for ; r <= it.end; r++ {
				if _, ok := rows[r]; !ok && b.soft[r] == 0 {
					rows[r] = ReasonStatement
				}
			}
		}
		it.skel = make([]skelRow, 0, len(rows))
		for r, why := range rows {
			if r < 0 || r > maxRow {
				continue
			}
			it.skel = append(it.skel, skelRow{row: r, reason: why})
		}
		sort.Slice(it.skel, func(x, y int) bool { return it.skel[x].row < it.skel[y].row })
		for _, s := range it.skel {
			a.rowItems[s.row] = append(a.rowItems[s.row], int32(idx))
		}
	}
	for r, it := range b.soft {
		if it > 0 {
			a.rowItems[r] = append(a.rowItems[r], it-1)
		}
	}
	b.linkCompanions()
	b.findReturns()
}

// linkCompanions adds rows that must come along with an item although they
// are separate items in the grammar: Rust attributes before an item, and
// the case headers of a Python match (a match needs at least one case).
func (b *builder) linkCompanions() {
	a := b.a
	for i := range b.nodes {
		if !b.container[i] {
			continue
		}
		var pending []int32
		isMatch := b.a.lang == syntax.Python && i > 0 && b.nodes[b.nodes[i].Parent].Type == "match_statement"
		for c := i + 1; c < int(b.nodes[i].End); c = int(b.nodes[c].End) {
			idx := b.itemOf[c]
			if idx < 0 {
				continue
			}
			typ := b.nodes[c].Type
			if isMatch && typ == "case_clause" {
				o := b.owner[i]
				a.items[o].skel = append(a.items[o].skel, skelRow{row: a.items[idx].start, reason: ReasonControl})
			}
			if attachedPrefix[typ] {
				pending = append(pending, idx)
				continue
			}
			if strings.Contains(typ, "comment") {
				continue
			}
			for _, p := range pending {
				for _, s := range a.items[p].skel {
					a.items[idx].skel = append(a.items[idx].skel, skelRow{row: s.row, reason: ReasonScope})
				}
				// An attribute cannot end a block, so it brings its item.
				a.items[p].skel = append(a.items[p].skel, skelRow{row: a.items[idx].start, reason: ReasonScope})
			}
			pending = pending[:0]
		}
	}
}

// findReturns records, for function items, a one-line return that ends
// the body.
func (b *builder) findReturns() {
	a := b.a
	for idx := 1; idx < len(a.items); idx++ {
		it := &a.items[idx]
		body := b.functionBody(int(it.node))
		if body < 0 {
			continue
		}
		last := -1
		for c := body + 1; c < int(b.nodes[body].End); c = int(b.nodes[c].End) {
			if b.itemOf[c] >= 0 && !strings.Contains(b.nodes[c].Type, "comment") {
				last = c
			}
		}
		if last < 0 {
			continue
		}
		nd := &b.nodes[last]
		if isReturn(nd.Type) && nd.StartRow == uint32(nd.LastRow()) {
			it.ret = int32(nd.StartRow)
		}
	}
}

// functionBody returns the body container of a function item (looking
// through decorators and export wrappers), or -1.
func (b *builder) functionBody(i int) int {
	for c := i; c < int(b.nodes[i].End) && c < i+8; c++ {
		nd := &b.nodes[c]
		if c != i && b.container[c] {
			return -1
		}
		if !functionLike(nd.Type) {
			continue
		}
		for k := c + 1; k < int(nd.End); k = int(b.nodes[k].End) {
			if b.nodes[k].Field == "body" && b.container[k] {
				return k
			}
		}
		return -1
	}
	return -1
}

// collectPyBlocks records each Python block's header row and statement
// rows so rendering can put `pass` into a block left empty.
func (b *builder) collectPyBlocks() {
	for i := 1; i < len(b.nodes); i++ {
		if !b.container[i] || b.nodes[i].Type != "block" {
			continue
		}
		header := int32(-1)
		// The ':' that opens the block lies inside the parent, before it.
		for k := i - 1; k > int(b.nodes[i].Parent); k-- {
			if b.nodes[k].Leaf && b.nodes[k].EndByte > b.nodes[k].StartByte && b.nodes[k].Type != "comment" {
				header = int32(b.nodes[k].LastRow())
				break
			}
		}
		pb := pyBlock{header: header, first: -1}
		for c := i + 1; c < int(b.nodes[i].End); c = int(b.nodes[c].End) {
			if b.itemOf[c] < 0 || b.nodes[c].Type == "comment" {
				continue
			}
			r := int32(b.nodes[c].StartRow)
			if pb.first < 0 {
				pb.first = r
			}
			pb.stmtRows = append(pb.stmtRows, r)
		}
		if header >= 0 && pb.first >= 0 {
			b.a.pyBlocks = append(b.a.pyBlocks, pb)
		}
	}
}
