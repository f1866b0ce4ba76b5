package astrepair

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/prunekit/pruner/internal/syntax"
)

// Analysis is a text analysed once for repeated repairs, closures and
// renders: a parsed text keeps only plain Go data, no tree-sitter objects,
// so it needs no Close and is safe for concurrent use.
//
// Per-line tables are compressed rows (csr) and line positions are 4-byte
// ends, so an analysis costs about 16 bytes per line plus a few dozen per
// syntax item, and building it is linear in the lines and nodes.
type Analysis struct {
	lang        syntax.Language
	text        string
	lines       lineIndex
	parsed      bool
	parseErrors int

	items    []item
	skels    []skelRow // item skeletons, item after item
	rowItems csr       // row -> items whose skeleton holds the row

	defRows  [][]int32 // name id -> rows that define the name
	imported []bool    // name id -> some definition is an import
	rowDefs  csr       // row -> ids of names defined on the row
	useNames csr       // row -> ids of defined names used on the row
	useRows  [][]int32 // name id -> rows that use the name

	pyBlocks []pyBlock
	pyStmts  []int32 // statement rows of the Python blocks, block after block

	required []int32 // rows of file-level required items (Go's package clause)

	names []nameRow // what placeholders name: definitions or records, by row
}

// item is a statement or member that can be dropped on its own: a child of
// a container (module, block, class body, case list ...).
type item struct {
	node       int32
	start, end int32
	parent     int32 // enclosing item, -1 for the root
	ret        int32 // row of a trivial final return, -1 if none
	// skel, skelEnd delimit in Analysis.skels the rows that must stay
	// when anything in the item stays.
	skel, skelEnd int32
	kind          kind
}

type skelRow struct {
	row    int32
	reason Reason
}

// pyBlock records what rendering needs to keep a Python block non-empty.
type pyBlock struct {
	header int32 // row of the ':' that opens the block
	first  int32 // first statement row
	// stmts, stmtsEnd delimit the start rows of all statements in
	// Analysis.pyStmts.
	stmts, stmtsEnd int32
}

// Analyze parses text as lang and prepares it for Repair, Closure and
// Render. Non-code text (lang == syntax.Text) gives an Analysis that leaves
// masks unchanged. Errors come from parsing (syntax.ErrTooLarge) and from
// ctx, which is checked throughout the analysis.
func Analyze(ctx context.Context, text string, lang syntax.Language) (*Analysis, error) {
	return AnalyzeTree(ctx, text, lang, nil)
}

// AnalyzeTree is Analyze with text already parsed as lang (tree from
// syntax.Parse of exactly text), so a caller that needs the parse too pays
// for it once. A nil tree parses text. The work is linear in the lines and
// nodes, whatever the nesting depth.
func AnalyzeTree(ctx context.Context, text string, lang syntax.Language, tree *syntax.Tree) (*Analysis, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("analyze %s: %w", lang, err)
	}
	if !lang.IsCode() {
		return textAnalysis(text, lang), nil
	}
	a := &Analysis{lang: lang, text: text, lines: newLineIndex(text)}
	if a.lines.n() == 0 {
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
	b := builder{ctx: ctx, a: a, t: tree, nodes: tree.Nodes, specs: containersFor(lang)}
	if err := b.build(); err != nil {
		return nil, fmt.Errorf("analyze %s: %w", lang, err)
	}
	return a, nil
}

// skelOf returns the skeleton of item j.
func (a *Analysis) skelOf(j int32) []skelRow {
	it := &a.items[j]
	return a.skels[it.skel:it.skelEnd]
}

// Required returns the rows (0-based, sorted) that the language's own front
// end needs in any output of the file: Go's package clause. Repair keeps
// them whenever it keeps any line; a caller whose mask may come out empty
// keeps them too, so that the output stays a file of its language (a lone
// placeholder comment is not a Go file). Nil for other languages.
func (a *Analysis) Required() []int {
	if len(a.required) == 0 {
		return nil
	}
	out := make([]int, len(a.required))
	for i, r := range a.required {
		out[i] = int(r)
	}
	slices.Sort(out)
	return out
}

// Language returns the language the text was analysed as.
func (a *Analysis) Language() syntax.Language { return a.lang }

// Lines returns the number of lines of the text.
func (a *Analysis) Lines() int { return a.lines.n() }

// ParseErrors returns the number of ERROR and MISSING nodes in the parse of
// the full text; repairs only guarantee clean output when it is zero.
func (a *Analysis) ParseErrors() int { return a.parseErrors }

// builder holds the scratch state of one analysis.
type builder struct {
	ctx   context.Context
	tk    ticker
	err   error
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
	soft      []int32 // row -> 1 + item whose multi-line token spans it, 0 if none; nil if none at all
	nameIDs   map[string]int32
	types     map[string]typeInfo
	leaves    int // leaf nodes, to size the owned rows
}

// stop reports whether the analysis must end: ctx is done (checked every
// tickEvery calls) or was found done before.
func (b *builder) stop() bool {
	if b.err != nil {
		return true
	}
	if b.tk.stop(b.ctx) {
		b.err = b.ctx.Err()
		return true
	}
	return false
}

func (b *builder) text(i int) string {
	n := &b.nodes[i]
	if int(n.EndByte) > len(b.a.text) || n.StartByte > n.EndByte {
		return ""
	}
	return b.a.text[n.StartByte:n.EndByte]
}

func (b *builder) build() error {
	steps := []func(){b.markStructure, b.collectDefs, b.collectNames}
	for _, f := range steps {
		if f(); b.err != nil {
			return b.err
		}
	}
	owned := b.scanLeaves()
	if b.err != nil {
		return b.err
	}
	b.buildSkeletons(owned)
	if b.err == nil && b.a.lang == syntax.Python {
		b.collectPyBlocks()
	}
	return b.err
}

// markStructure finds containers and items and links items to parents.
func (b *builder) markStructure() {
	n := len(b.nodes)
	b.container = make([]bool, n)
	b.itemOf = make([]int32, n)
	b.owner = make([]int32, n)
	b.defLevel = make([]bool, n)
	// inherit[i]: whether a container directly below i defines file-level
	// names: false below a function, else the nearest container's level.
	// Computed in pre-order, so each node looks at its parent only.
	inherit := make([]bool, n)
	items := int32(0)
	for i := range b.nodes {
		if b.stop() {
			return
		}
		nd := &b.nodes[i]
		b.itemOf[i] = -1
		if nd.Leaf() {
			b.leaves++
		}
		if i == 0 {
			b.container[0] = true
			b.defLevel[0] = true
			b.itemOf[0] = 0
			b.owner[0] = 0
			inherit[0] = !b.info(nd.Type()).function
			items = 1
			continue
		}
		p := int(nd.Parent)
		if spec, ok := b.specs[nd.Type()]; ok && nd.Named() && (!spec.parenOnly || b.hasChild(i, "(")) {
			b.container[i] = true
		}
		if b.container[p] && nd.Named() && b.isItem(p, i) {
			b.itemOf[i] = items
			b.owner[i] = items
			items++
		} else {
			b.owner[i] = b.owner[p]
		}
		if b.container[i] {
			// Names defined directly in container i are file-level when
			// no function lies between i and a file-level container.
			b.defLevel[i] = inherit[p]
		}
		switch {
		case b.info(nd.Type()).function:
			inherit[i] = false
		case b.container[i]:
			inherit[i] = b.defLevel[i]
		default:
			inherit[i] = inherit[p]
		}
	}
	b.a.items = make([]item, 0, items)
	for i := range b.nodes {
		if b.stop() {
			return
		}
		if b.itemOf[i] < 0 {
			continue
		}
		nd := &b.nodes[i]
		if i == 0 {
			b.a.items = append(b.a.items, item{node: 0, start: int32(nd.StartRow), end: int32(nd.LastRow()), parent: -1, ret: -1})
			continue
		}
		b.a.items = append(b.a.items, item{
			node: int32(i), start: int32(nd.StartRow), end: int32(nd.LastRow()),
			parent: b.owner[nd.Parent], kind: b.kindOf(i), ret: -1,
		})
	}
}

// typeInfo caches what the analysis asks of a node type.
type typeInfo struct {
	kind     kind
	function bool
}

// info returns the cached classification of a node type: the string
// tests behind it cost more than a map lookup, once per node.
func (b *builder) info(typ string) typeInfo {
	if ti, ok := b.types[typ]; ok {
		return ti
	}
	if b.types == nil {
		b.types = make(map[string]typeInfo)
	}
	ti := typeInfo{kind: classify(typ), function: functionLike(typ)}
	b.types[typ] = ti
	return ti
}

func (b *builder) hasChild(i int, typ string) bool {
	for c := i + 1; c < int(b.nodes[i].End); c = int(b.nodes[c].End) {
		if b.nodes[c].Type() == typ {
			return true
		}
	}
	return false
}

func (b *builder) isItem(container, child int) bool {
	if container == 0 {
		return true
	}
	spec := b.specs[b.nodes[container].Type()]
	nd := &b.nodes[child]
	if spec.itemTypes != nil && !spec.itemTypes[nd.Type()] {
		return nd.Type() == "comment" || nd.Type() == "line_comment" || nd.Type() == "block_comment"
	}
	if spec.excludeFields[nd.Field()] || spec.excludeTypes[nd.Type()] {
		return false
	}
	return true
}

// kindOf classifies an item, looking through wrappers such as
// expression_statement or export_statement (two levels down at most).
func (b *builder) kindOf(i int) kind {
	return b.kindAt(i, 2)
}

func (b *builder) kindAt(i, depth int) kind {
	if k := b.info(b.nodes[i].Type()).kind; k != kindOther {
		return k
	}
	if depth == 0 {
		return kindOther
	}
	for c := i + 1; c < int(b.nodes[i].End); c = int(b.nodes[c].End) {
		if !b.nodes[c].Named() {
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
		if b.stop() {
			return
		}
		it := &b.a.items[idx]
		p := int(b.nodes[it.node].Parent)
		if !b.defLevel[p] {
			continue
		}
		imp := importLike(b.nodes[it.node].Type())
		b.curImport = imp
		b.walkDefs(int(it.node), imp)
	}
	if b.err != nil || len(b.a.defRows) == 0 {
		return
	}
	// rowDefs lists each id once per row, ids in increasing order.
	nRows := b.a.lines.n()
	mark := make([]int32, nRows) // row -> 1 + last id listed on it
	cb := newCSRBuilder(nRows)
	for pass := 0; pass < 2; pass++ {
		if pass == 1 {
			cb.start()
			clear(mark)
		}
		for id, rows := range b.a.defRows {
			for _, r := range rows {
				if b.stop() {
					return
				}
				if r < 0 || int(r) >= nRows || mark[r] == int32(id)+1 {
					continue
				}
				mark[r] = int32(id) + 1
				if pass == 0 {
					cb.count(r)
				} else {
					cb.put(r, int32(id))
				}
			}
		}
	}
	b.a.rowDefs = cb.done()
}

// walkDefs records the names that item root defines: leaves under name
// fields (or every name and path of an import), not looking into nested
// items or containers, which are analysed on their own. The walk is
// iterative, in pre-order, so deep nesting costs no stack.
func (b *builder) walkDefs(root int, imp bool) {
	type frame struct {
		end     int32
		nameCtx bool
	}
	stack := []frame{{end: int32(len(b.nodes)), nameCtx: imp}}
	for i := root; i < int(b.nodes[root].End); {
		if b.stop() {
			return
		}
		nd := &b.nodes[i]
		for len(stack) > 1 && stack[len(stack)-1].end <= int32(i) {
			stack = stack[:len(stack)-1]
		}
		nameCtx := stack[len(stack)-1].nameCtx
		if i != root && (b.container[i] || b.itemOf[i] >= 0) {
			// Items of nested containers are analysed on their own.
			i = int(nd.End)
			continue
		}
		if !imp {
			if nd.Type() == "export_specifier" {
				// export { a as b }: a is the module's own a, used here,
				// and b a name for importers, not one of this file.
				i = int(nd.End)
				continue
			}
			if skipFields[nd.Field()] {
				i = int(nd.End)
				continue
			}
			if nameFields[nd.Field()] {
				nameCtx = true
			}
		}
		if nd.Leaf() {
			if nd.Named() && nameCtx {
				name := b.text(i)
				if isIdentifierType(nd.Type()) && !ignoredNames[name] {
					b.defLeaf[i] = true
					b.addDef(name, int32(nd.StartRow))
				} else if imp && strings.Contains(nd.Type(), "string") {
					b.addImportPath(name, int32(nd.StartRow))
				}
			}
			i = int(nd.End)
			continue
		}
		if imp && (nd.Type() == "interpreted_string_literal" || nd.Type() == "string_literal" || nd.Type() == "raw_string_literal") {
			b.addImportPath(b.text(i), int32(nd.StartRow))
			i = int(nd.End)
			continue
		}
		stack = append(stack, frame{end: nd.End, nameCtx: nameCtx})
		i++
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

// softLeaf reports multi-line tokens whose middle rows may be replaced by
// a placeholder line without changing the syntax: block comments and
// strings that may hold raw newlines. Strings continued with a trailing
// backslash (C, Python single-quoted) are excluded because a placeholder
// would end them.
func (b *builder) softLeaf(i int, txt string) bool {
	nd := &b.nodes[i]
	if strings.Contains(nd.Type(), "comment") {
		return strings.HasPrefix(txt, "/*")
	}
	parentText := ""
	if p := int(nd.Parent); p >= 0 {
		parentText = b.text(p)
	}
	switch b.a.lang {
	case syntax.Python:
		if nd.Type() != "string_content" {
			return false
		}
		q := strings.TrimLeft(parentText, "rRbBuUfF")
		return strings.HasPrefix(q, `"""`) || strings.HasPrefix(q, "'''")
	case syntax.Go:
		return nd.Type() == "raw_string_literal"
	case syntax.JavaScript, syntax.TypeScript, syntax.TSX:
		return nd.Type() == "string_fragment" && strings.HasPrefix(parentText, "`")
	case syntax.Rust:
		return nd.Type() == "string_content"
	case syntax.Java:
		return strings.Contains(nd.Type(), "string_fragment") && strings.HasPrefix(parentText, `"""`)
	case syntax.CPP:
		return nd.Type() == "raw_string_content"
	}
	return false
}

// ownedRow is one row on which an item owns leaves.
type ownedRow struct {
	item       int32
	row        int32
	nonClosing bool
}

// softAt returns 1 + the item whose multi-line token spans row r in its
// middle, or 0.
func (b *builder) softAt(r int32) int32 {
	if b.soft == nil {
		return 0
	}
	return b.soft[r]
}

// scanLeaves assigns every non-blank leaf's rows to its owning item and
// records uses of defined names. It returns the owned rows grouped by item,
// each item's rows in leaf order.
func (b *builder) scanLeaves() csrOwned {
	a := b.a
	nRows := a.lines.n()
	owned := make([]ownedRow, 0, b.leaves)
	lastOwned := make([]int32, len(a.items)) // item -> 1 + its last entry in owned
	lastItem := make([]int32, len(b.nodes))  // container node -> 1 + its last item child seen
	var uses []int32                         // row, id pairs in leaf order
	addOwned := func(own, r int32, closing bool) {
		if k := lastOwned[own] - 1; k >= 0 && owned[k].row == r {
			owned[k].nonClosing = owned[k].nonClosing || !closing
			return
		}
		owned = append(owned, ownedRow{item: own, row: r, nonClosing: !closing})
		lastOwned[own] = int32(len(owned))
	}
	for i := 1; i < len(b.nodes); i++ {
		if b.stop() {
			return csrOwned{}
		}
		nd := &b.nodes[i]
		p := nd.Parent
		if b.itemOf[i] >= 0 && p >= 0 {
			lastItem[p] = b.itemOf[i] + 1
		}
		if !nd.Leaf() || nd.EndByte <= nd.StartByte {
			continue
		}
		txt := b.text(i)
		if strings.TrimSpace(txt) == "" {
			continue
		}
		own := b.owner[i]
		if !nd.Named() && (nd.Type() == "," || nd.Type() == ";" || nd.Type() == ":") && b.container[p] {
			// A separator leaves with the item before it, so dropping that
			// item does not strand its comma.
			if li := lastItem[p]; li > 0 {
				own = li - 1
			}
		}
		closing := !nd.Named() && closingTokens[nd.Type()]
		last := int32(nd.LastRow())
		if int(last) >= nRows {
			last = int32(nRows - 1)
		}
		if last > int32(nd.StartRow)+1 && b.softLeaf(i, txt) {
			// Inside a block comment or a multi-line string a placeholder
			// is just more text, so only the opening and closing rows are
			// needed; the middle rows still lead to the item.
			if b.soft == nil {
				b.soft = make([]int32, nRows)
			}
			for r := int32(nd.StartRow) + 1; r < last; r++ {
				if b.stop() {
					return csrOwned{}
				}
				b.soft[r] = own + 1
			}
			addOwned(own, int32(nd.StartRow), closing)
			addOwned(own, last, closing)
			continue
		}
		for r := int32(nd.StartRow); r <= last; r++ {
			if b.stop() {
				return csrOwned{}
			}
			addOwned(own, r, closing)
		}
		if nd.Named() && isIdentifierType(nd.Type()) {
			if id, ok := b.nameIDs[txt]; ok && !b.defLeaf[i] {
				r := int32(nd.StartRow)
				uses = append(uses, r, id)
				// Leaves come in row order, so a repeat is always last.
				if u := a.useRows[id]; len(u) == 0 || u[len(u)-1] != r {
					a.useRows[id] = append(u, r)
				}
			}
		}
	}
	b.buildUseNames(uses)
	// Group the owned rows by item, keeping their order.
	ob := newCSRBuilder(len(a.items))
	for _, o := range owned {
		ob.count(o.item)
	}
	ob.start()
	for k, o := range owned {
		ob.put(o.item, int32(k))
	}
	return csrOwned{idx: ob.done(), rows: owned}
}

// csrOwned is scanLeaves' result: idx lists, per item, indices into rows.
type csrOwned struct {
	idx  csr
	rows []ownedRow
}

// buildUseNames stores the (row, id) pairs of uses as useNames: per row,
// each id once, in order of first use.
func (b *builder) buildUseNames(uses []int32) {
	if len(uses) == 0 || b.err != nil {
		return
	}
	cb := newCSRBuilder(b.a.lines.n())
	for k := 0; k < len(uses); k += 2 {
		cb.count(uses[k])
	}
	cb.start()
	for k := 0; k < len(uses); k += 2 {
		cb.put(uses[k], uses[k+1])
	}
	c := cb.done()
	// Keep the first use of each id per row: ids listed on row r are
	// marked r+1.
	mark := make([]int32, len(b.a.defRows))
	w := int32(0)
	for r := 0; r+1 < len(c.off); r++ {
		lo, hi := c.off[r], c.off[r+1]
		c.off[r] = w
		for k := lo; k < hi; k++ {
			if b.stop() {
				return
			}
			id := c.data[k]
			if mark[id] == int32(r)+1 {
				continue
			}
			mark[id] = int32(r) + 1
			c.data[w] = id
			w++
		}
	}
	c.off[len(c.off)-1] = w
	c.data = c.data[:w:w]
	b.a.useNames = c
}

// buildSkeletons computes, per item, the rows that must stay whenever any
// row of the item stays: rows of its own tokens plus rows of its span that
// no nested container covers (continuations of multi-line statements).
// Skeletons share one backing array; the work is linear in the owned rows,
// the containers and the rows of the items' spans outside containers.
func (b *builder) buildSkeletons(owned csrOwned) {
	a := b.a
	nItems := len(a.items)
	// Containers come in pre-order, so each item's holes come sorted by
	// start row.
	hb := newCSRBuilder(nItems)
	hasBody := make([]bool, nItems)
	for pass := 0; pass < 2; pass++ {
		if pass == 1 {
			hb.start()
		}
		for i := range b.nodes {
			if b.stop() {
				return
			}
			if !b.container[i] {
				continue
			}
			o := b.owner[i]
			if pass == 0 {
				hb.count(o)
				if i != 0 && !literalContainers[b.nodes[i].Type()] {
					hasBody[o] = true
				}
			} else {
				hb.put(o, int32(i))
			}
		}
	}
	holes := hb.done()
	maxRow := int32(a.lines.n() - 1)
	// Most items own a row or two besides their leaves' rows.
	all := make([]skelRow, 0, len(owned.rows)+2*nItems)
	offs := make([]int32, nItems+1)
	var own, gaps []skelRow // scratch, reused across items
	var spans [][2]int32
	for idx := range a.items {
		if b.stop() {
			return
		}
		it := &a.items[idx]
		if it.end > maxRow {
			it.end = maxRow
		}
		k := it.kind
		if k == kindOther && hasBody[idx] && !importLike(b.nodes[it.node].Type()) {
			k = kindScope
		}
		rowReason := func(nonClosing bool) Reason {
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
		// The item's own rows, sorted, the last entry of a row winning.
		own = own[:0]
		sorted := true
		for _, o := range owned.idx.row(int32(idx)) {
			or := &owned.rows[o]
			if n := len(own); n > 0 && own[n-1].row >= or.row {
				sorted = false
			}
			own = append(own, skelRow{row: or.row, reason: rowReason(or.nonClosing)})
		}
		if !sorted {
			sort.SliceStable(own, func(x, y int) bool { return own[x].row < own[y].row })
			w := 0
			for _, o := range own {
				if w > 0 && own[w-1].row == o.row {
					own[w-1] = o
					continue
				}
				own[w] = o
				w++
			}
			own = own[:w]
		}
		// Rows of the span outside every hole (and outside soft tokens).
		gaps = gaps[:0]
		if idx != 0 {
			hs := holes.row(int32(idx))
			r := it.start
			addGaps := func(to int32) bool {
				for ; r < to && r <= it.end; r++ {
					if b.stop() {
						return false
					}
					if b.softAt(r) == 0 {
						gaps = append(gaps, skelRow{row: r, reason: ReasonStatement})
					}
				}
				return true
			}
			spans = spans[:0]
			for _, h := range hs {
				hn := &b.nodes[h]
				spans = append(spans, [2]int32{int32(hn.StartRow), int32(hn.LastRow())})
			}
			if !slices.IsSortedFunc(spans, func(x, y [2]int32) int { return cmp.Compare(x[0], y[0]) }) {
				slices.SortFunc(spans, func(x, y [2]int32) int { return cmp.Compare(x[0], y[0]) })
			}
			for _, h := range spans {
				if !addGaps(h[0]) {
					return
				}
				if h[1]+1 > r {
					r = h[1] + 1
				}
			}
			if !addGaps(it.end + 1) {
				return
			}
		}
		// Merge: an own row wins over a gap row.
		offs[idx] = int32(len(all))
		x, y := 0, 0
		for x < len(own) || y < len(gaps) {
			var s skelRow
			switch {
			case y == len(gaps) || (x < len(own) && own[x].row <= gaps[y].row):
				if y < len(gaps) && own[x].row == gaps[y].row {
					y++
				}
				s = own[x]
				x++
			default:
				s = gaps[y]
				y++
			}
			if s.row < 0 || s.row > maxRow {
				continue
			}
			all = append(all, s)
		}
	}
	offs[nItems] = int32(len(all))
	for idx := range a.items {
		a.items[idx].skel, a.items[idx].skelEnd = offs[idx], offs[idx+1]
	}
	if cap(all)-len(all) > len(all)/4 {
		all = slices.Clone(all) // the estimate was generous: keep what is used
	}
	a.skels = all
	// rowItems: per row, the items whose skeleton holds it, item by item,
	// then the item whose soft token spans it. When the file has required
	// items, rows in no item (blank lines between items) lead to the file
	// itself, so that keeping one still keeps what the front end needs.
	rb := newCSRBuilder(a.lines.n())
	var orphans []int32
	for pass := 0; pass < 2; pass++ {
		if pass == 1 {
			if b.hasFileRequired() {
				for r := range a.lines.n() {
					if rb.c.off[r+1] == 0 {
						orphans = append(orphans, int32(r))
					}
				}
				for _, r := range orphans {
					rb.count(r)
				}
			}
			rb.start()
			for _, r := range orphans {
				rb.put(r, 0)
			}
		}
		for idx := range a.items {
			for _, s := range a.skelOf(int32(idx)) {
				if b.stop() {
					return
				}
				if pass == 0 {
					rb.count(s.row)
				} else {
					rb.put(s.row, int32(idx))
				}
			}
		}
		for r, it := range b.soft {
			if it > 0 {
				if pass == 0 {
					rb.count(int32(r))
				} else {
					rb.put(int32(r), it-1)
				}
			}
		}
	}
	a.rowItems = rb.done()
	b.linkCompanions()
	if b.err == nil {
		b.findReturns()
	}
}

// linkCompanions adds rows that must come along with an item although they
// are separate items in the grammar: Rust attributes before an item, the
// case headers of a Python match (a match needs at least one case), and
// file-level required items (Go's package clause, without which no Go
// front end accepts the file), which join the skeleton of the file itself
// and so stay whenever any line in the file stays. The rows come after the
// item's own skeleton, in the order found.
func (b *builder) linkCompanions() {
	a := b.a
	extra := map[int32][]skelRow{} // item -> rows added after its skeleton
	var pending, docs []int32
	for i := range b.nodes {
		if b.stop() {
			return
		}
		if !b.container[i] {
			continue
		}
		pending, docs = pending[:0], docs[:0]
		isMatch := b.a.lang == syntax.Python && i > 0 && b.nodes[b.nodes[i].Parent].Type() == "match_statement"
		for c := i + 1; c < int(b.nodes[i].End); c = int(b.nodes[c].End) {
			if b.stop() {
				return
			}
			idx := b.itemOf[c]
			if idx < 0 {
				continue
			}
			typ := b.nodes[c].Type()
			if i == 0 && fileRequired(b.a.lang, typ) {
				for _, s := range a.skelOf(idx) {
					extra[0] = append(extra[0], skelRow{row: s.row, reason: ReasonScope})
					a.required = append(a.required, s.row)
				}
			}
			if isMatch && typ == "case_clause" {
				o := b.owner[i]
				extra[o] = append(extra[o], skelRow{row: a.items[idx].start, reason: ReasonControl})
			}
			if attachedPrefix[typ] {
				pending = append(pending, idx)
				continue
			}
			if strings.Contains(typ, "comment") {
				if b.rustOuterDoc(c) {
					docs = append(docs, idx)
				}
				continue
			}
			// A Rust outer doc comment (///, /** */) is an attribute of
			// the item after it: it cannot end a block or the file, so it
			// brings the item's header (the item does not bring its docs).
			for _, d := range docs {
				extra[d] = append(extra[d], skelRow{row: a.items[idx].start, reason: ReasonScope})
			}
			docs = docs[:0]
			for _, p := range pending {
				for _, s := range a.skelOf(p) {
					extra[idx] = append(extra[idx], skelRow{row: s.row, reason: ReasonScope})
				}
				for _, s := range extra[p] {
					extra[idx] = append(extra[idx], skelRow{row: s.row, reason: ReasonScope})
				}
				// An attribute cannot end a block, so it brings its item.
				extra[p] = append(extra[p], skelRow{row: a.items[idx].start, reason: ReasonScope})
			}
			pending = pending[:0]
		}
	}
	b.linkJSNames(extra)
	b.linkPyNonlocal(extra)
	if len(extra) == 0 {
		return
	}
	n := len(a.skels)
	for _, rows := range extra {
		n += len(rows)
	}
	skels := make([]skelRow, 0, n)
	for idx := range a.items {
		it := &a.items[idx]
		start := int32(len(skels))
		skels = append(skels, a.skels[it.skel:it.skelEnd]...)
		skels = append(skels, extra[int32(idx)]...)
		it.skel, it.skelEnd = start, int32(len(skels))
	}
	a.skels = skels
}

// rustOuterDoc says whether node c is a Rust outer doc comment: "///"
// but not "////", or "/**" but not "/***" or "/**/".
func (b *builder) rustOuterDoc(c int) bool {
	if b.a.lang != syntax.Rust {
		return false
	}
	t := b.text(c)
	switch {
	case strings.HasPrefix(t, "///"):
		return !strings.HasPrefix(t, "////")
	case strings.HasPrefix(t, "/**"):
		return !strings.HasPrefix(t, "/***") && !strings.HasPrefix(t, "/**/")
	}
	return false
}

// hasNode says whether the parse has a node of type typ.
func (b *builder) hasNode(typ string) bool {
	for i := range b.nodes {
		if b.nodes[i].Type() == typ {
			return true
		}
	}
	return false
}

// nearestAbove returns, for every node, the nearest proper ancestor of
// type typ (-1 for none), in one preorder pass (a parent comes before its
// children), so that lookups cost nothing per node however deep.
func (b *builder) nearestAbove(typ string) []int32 {
	out := make([]int32, len(b.nodes))
	for i := range b.nodes {
		switch p := b.nodes[i].Parent; {
		case p < 0:
			out[i] = -1
		case b.nodes[p].Type() == typ:
			out[i] = p
		default:
			out[i] = out[p]
		}
	}
	return out
}

// maxClassNesting bounds how many enclosing classes a private name is
// looked up through.
const maxClassNesting = 64

// linkJSNames adds to extra the declarations that JavaScript and
// TypeScript refuse to parse without, whatever the dependency hops: the
// class member declaring a private name (#cache) for each item that uses
// it ("Private field '#cache' must be declared in an enclosing class"),
// and the module's declarations of the names an export list names
// (export { Registry }: "Export 'Registry' is not defined in module").
func (b *builder) linkJSNames(extra map[int32][]skelRow) {
	switch b.a.lang {
	case syntax.JavaScript, syntax.TypeScript, syntax.TSX:
	default:
		return
	}
	nodes := b.nodes
	// A private name is declared by the member whose name it is.
	isDecl := func(i int) bool {
		if nodes[i].Parent < 0 {
			return false
		}
		switch nodes[nodes[i].Parent].Type() {
		case "field_definition", "public_field_definition", "method_definition", "method_signature", "abstract_method_signature":
			return nodes[i].Field() == "property" || nodes[i].Field() == "name"
		}
		return false
	}
	// cb[i] is the class body nearest above node i: walking the parents
	// per private name was quadratic in the nesting depth.
	var cb []int32
	if b.hasNode("private_property_identifier") {
		cb = b.nearestAbove("class_body")
	}
	classBody := func(i int) int32 {
		if cb == nil {
			return -1
		}
		return cb[i]
	}
	type privKey struct {
		body int32
		name string
	}
	decl := map[privKey]int32{}
	for i := range nodes {
		if b.stop() {
			return
		}
		if nodes[i].Type() == "private_property_identifier" && isDecl(i) {
			k := privKey{classBody(i), b.text(i)}
			if _, ok := decl[k]; !ok && k.body >= 0 {
				decl[k] = int32(nodes[nodes[i].Parent].StartRow)
			}
		}
	}
	for i := range nodes {
		if b.stop() {
			return
		}
		switch nodes[i].Type() {
		case "private_property_identifier":
			if isDecl(i) || len(decl) == 0 {
				continue
			}
			// Through the nested classes outwards: the nearest that
			// declares the name (within maxClassNesting, so that the work
			// stays linear whatever the nesting).
			for body, depth := classBody(i), 0; body >= 0 && depth < maxClassNesting; body, depth = classBody(int(body)), depth+1 {
				if row, ok := decl[privKey{body, b.text(i)}]; ok {
					if it := b.owner[i]; it >= 0 {
						extra[it] = append(extra[it], skelRow{row: row, reason: ReasonDependency})
					}
					break
				}
			}
		case "export_statement":
			it := b.owner[i]
			if it < 0 || b.hasField(i, "source") {
				continue // export { a } from "./x": another module's a
			}
			for c := i + 1; c < int(nodes[i].End); c++ {
				if nodes[c].Type() != "export_specifier" {
					continue
				}
				for n := c + 1; n < int(nodes[c].End); n++ {
					if nodes[n].Field() != "name" || !nodes[n].Leaf() {
						continue
					}
					if id, ok := b.nameIDs[b.text(n)]; ok {
						for _, r := range b.a.defRows[id] {
							extra[it] = append(extra[it], skelRow{row: r, reason: ReasonDependency})
						}
					}
				}
			}
		}
	}
}

// linkPyNonlocal adds to extra, for each nonlocal statement, a statement
// of the enclosing function that binds each name it lists: Python's
// compiler refuses "nonlocal x" without one ("no binding for nonlocal 'x'
// found"), which ast.parse and tree-sitter accept. A name the enclosing
// function takes as a parameter needs nothing: its header stays with the
// nested function's.
func (b *builder) linkPyNonlocal(extra map[int32][]skelRow) {
	if b.a.lang != syntax.Python {
		return
	}
	nodes := b.nodes
	if !b.hasNode("nonlocal_statement") {
		return
	}
	fdef := b.nearestAbove("function_definition")
	enclosingDef := func(i int) int { return int(fdef[i]) }
	// binds says whether leaf n (an identifier) is assigned to.
	binds := func(n int) bool {
		p := nodes[n].Parent
		if p < 0 {
			return false
		}
		switch nodes[p].Type() {
		case "assignment", "augmented_assignment", "for_statement":
			return nodes[n].Field() == "left"
		case "named_expression":
			return nodes[n].Field() == "name"
		case "pattern_list", "tuple_pattern", "list_pattern", "as_pattern_target":
			return true
		}
		return false
	}
	bindings := map[int]map[string]int32{} // function node -> its scope's first bindings
	for i := range nodes {
		if b.stop() {
			return
		}
		if nodes[i].Type() != "nonlocal_statement" {
			continue
		}
		it := b.owner[i]
		outer := enclosingDef(i)
		if it < 0 || outer < 0 {
			continue
		}
		if outer = enclosingDef(outer); outer < 0 {
			continue // at module or class level: the compiler's error either way
		}
		for c := i + 1; c < int(nodes[i].End); c++ {
			if !nodes[c].Leaf() || nodes[c].Type() != "identifier" {
				continue
			}
			name := b.text(c)
			scope, ok := bindings[outer]
			if !ok {
				scope = b.pyBindings(outer, binds)
				bindings[outer] = scope
			}
			if row, ok := scope[name]; ok {
				extra[it] = append(extra[it], skelRow{row: row, reason: ReasonDependency})
			}
		}
	}
}

// pyBindings returns, for function node fn, the row of the first
// statement binding each name in fn's own scope: an assignment, a loop or
// with target, a walrus (also inside a comprehension, where it binds in
// fn), or a nested def or class of that name. Nested functions, lambdas,
// classes and comprehensions have scopes of their own, so only their
// names (and the walrus targets of comprehensions) count. One pass over
// fn, skipping those scopes: each node is read by the scan of its own
// function only.
func (b *builder) pyBindings(fn int, binds func(int) bool) map[string]int32 {
	nodes := b.nodes
	out := map[string]int32{}
	first := func(name string, row int32) {
		if _, ok := out[name]; !ok {
			out[name] = row
		}
	}
	for n := fn + 1; n < int(nodes[fn].End); {
		switch t := nodes[n].Type(); t {
		case "function_definition", "class_definition":
			for k := n + 1; k < int(nodes[n].End); k = int(nodes[k].End) {
				if nodes[k].Field() == "name" {
					first(b.text(k), int32(nodes[n].StartRow))
					break
				}
			}
			n = int(nodes[n].End)
			continue
		case "lambda":
			n = int(nodes[n].End)
			continue
		case "list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression":
			for k := n + 1; k < int(nodes[n].End); k++ {
				if nodes[k].Type() == "identifier" && nodes[k].Field() == "name" && nodes[nodes[k].Parent].Type() == "named_expression" {
					if o := b.owner[k]; o >= 0 {
						first(b.text(k), b.a.items[o].start)
					}
				}
			}
			n = int(nodes[n].End)
			continue
		case "identifier":
			if nodes[n].Leaf() && binds(n) {
				if o := b.owner[n]; o >= 0 {
					first(b.text(n), b.a.items[o].start)
				}
			}
		}
		n++
	}
	return out
}

// hasField says whether node i has a child under field f.
func (b *builder) hasField(i int, f string) bool {
	for c := i + 1; c < int(b.nodes[i].End); c = int(b.nodes[c].End) {
		if b.nodes[c].Field() == f {
			return true
		}
	}
	return false
}

// findReturns records, for function items, a one-line return that ends
// the body.
func (b *builder) findReturns() {
	a := b.a
	for idx := 1; idx < len(a.items); idx++ {
		if b.stop() {
			return
		}
		it := &a.items[idx]
		body := b.functionBody(int(it.node))
		if body < 0 {
			continue
		}
		last := -1
		for c := body + 1; c < int(b.nodes[body].End); c = int(b.nodes[c].End) {
			if b.stop() {
				return
			}
			if b.itemOf[c] >= 0 && !strings.Contains(b.nodes[c].Type(), "comment") {
				last = c
			}
		}
		if last < 0 {
			continue
		}
		nd := &b.nodes[last]
		if isReturn(nd.Type()) && nd.StartRow == uint32(nd.LastRow()) {
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
		if !b.info(nd.Type()).function {
			continue
		}
		for k := c + 1; k < int(nd.End); k = int(b.nodes[k].End) {
			if b.nodes[k].Field() == "body" && b.container[k] {
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
		if b.stop() {
			return
		}
		if !b.container[i] || b.nodes[i].Type() != "block" {
			continue
		}
		header := int32(-1)
		// The ':' that opens the block lies inside the parent, before it.
		for k := i - 1; k > int(b.nodes[i].Parent); k-- {
			if b.stop() {
				return
			}
			if b.nodes[k].Leaf() && b.nodes[k].EndByte > b.nodes[k].StartByte && b.nodes[k].Type() != "comment" {
				header = int32(b.nodes[k].LastRow())
				break
			}
		}
		mark := len(b.a.pyStmts)
		pb := pyBlock{header: header, first: -1, stmts: int32(mark)}
		for c := i + 1; c < int(b.nodes[i].End); c = int(b.nodes[c].End) {
			if b.stop() {
				return
			}
			if b.itemOf[c] < 0 || b.nodes[c].Type() == "comment" {
				continue
			}
			r := int32(b.nodes[c].StartRow)
			if pb.first < 0 {
				pb.first = r
			}
			b.a.pyStmts = append(b.a.pyStmts, r)
		}
		if header >= 0 && pb.first >= 0 {
			pb.stmtsEnd = int32(len(b.a.pyStmts))
			b.a.pyBlocks = append(b.a.pyBlocks, pb)
		} else {
			b.a.pyStmts = b.a.pyStmts[:mark]
		}
	}
}

// hasFileRequired reports whether the file has a fileRequired item.
func (b *builder) hasFileRequired() bool {
	if len(b.nodes) == 0 {
		return false
	}
	for c := 1; c < int(b.nodes[0].End); c = int(b.nodes[c].End) {
		if b.itemOf[c] >= 0 && fileRequired(b.a.lang, b.nodes[c].Type()) {
			return true
		}
	}
	return false
}

// fileRequired reports top-level items that the language's own front end
// needs whenever the file holds anything: Go's package clause (tree-sitter
// accepts a Go file without it, go/parser and gofmt do not).
func fileRequired(lang syntax.Language, typ string) bool {
	return lang == syntax.Go && typ == "package_clause"
}
