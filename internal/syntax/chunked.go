package syntax

import (
	"context"
	"fmt"
	"strings"
)

// Large texts are parsed in pieces. tree-sitter's own tree costs about
// 115 bytes per node, and dense code has close to one node per byte, so a
// whole-text parse of megabytes peaks at several times the memory that the
// Go copy needs (32 bytes per node). Pieces cut at top-level boundaries
// parse to the same top-level items as the whole text would, and only one
// piece's C tree is alive at a time.
const (
	// wholeParseBytes is the largest text parsed in one piece.
	wholeParseBytes = 1 << 20
	// pieceBytes is the size a piece grows to before it is cut at the next
	// top-level boundary.
	pieceBytes = 512 << 10
	// maxPieceBytes bounds a piece: a piece with no top-level boundary in
	// this many bytes is cut at a weaker one, and a line longer than this
	// (minified code) is not parsed at all.
	maxPieceBytes = 2 << 20
)

// ErrNoBoundary is returned (wrapping ErrTooLarge) for a large text with a
// line longer than maxPieceBytes (minified code), which cannot be parsed in
// bounded memory.
var ErrNoBoundary = fmt.Errorf("%w: a line longer than %d bytes", ErrTooLarge, maxPieceBytes)

// parsePieces parses src piece by piece and joins the pieces' top-level
// nodes under one root, with rows and bytes of the whole text.
func parsePieces(ctx context.Context, lang Language, src []byte) (*Tree, error) {
	return parsePiecesOf(ctx, lang, src, pieceBytes)
}

// parsePiecesOf is parsePieces with pieces of at least size bytes.
func parsePiecesOf(ctx context.Context, lang Language, src []byte, size int) (*Tree, error) {
	cuts, err := pieceCuts(lang, src, size)
	if err != nil {
		return nil, err
	}
	var nodes []Node
	row := uint32(0) // row of the current piece's first byte
	var last Node    // the last piece's root, for the end of the joined root
	for k := 0; k+1 < len(cuts); k++ {
		a, b := cuts[k], cuts[k+1]
		if k == 0 {
			var err error
			if nodes, err = parseAppend(ctx, lang, src[a:b], nil); err != nil {
				return nil, err
			}
			// Size the joined slice from the first piece's density.
			est := int(float64(len(nodes)) * float64(len(src)) / float64(b-a) * 1.1)
			grown := make([]Node, len(nodes), max(est, len(nodes)))
			copy(grown, nodes)
			nodes = grown
			last = nodes[0]
			row += uint32(strings.Count(string(src[a:b]), "\n"))
			continue
		}
		// The piece's root lands on the joined slice's last node, which is
		// saved and put back: the piece's other nodes follow it in place.
		at := len(nodes) - 1
		saved := nodes[at]
		var err error
		if nodes, err = parseAppend(ctx, lang, src[a:b], nodes[:at]); err != nil {
			return nil, err
		}
		last = nodes[at]
		nodes[at] = saved
		base := int32(at) // piece node i (i >= 1) is at base+i
		for i := at + 1; i < len(nodes); i++ {
			n := &nodes[i]
			if n.Parent == 0 {
				n.Parent = 0
			} else {
				n.Parent += base
			}
			n.End += base
			n.StartByte += uint32(a)
			n.EndByte += uint32(a)
			n.StartRow += row
			n.EndRow += row
		}
		last.EndRow += row
		row += uint32(strings.Count(string(src[a:b]), "\n"))
	}
	if len(nodes) == 0 {
		return parseC(ctx, lang, src[:0])
	}
	root := &nodes[0]
	root.StartByte, root.StartRow = 0, 0
	root.EndByte = uint32(len(src))
	root.EndRow = last.EndRow
	root.flags = root.flags&^flagEndCol0 | last.flags&flagEndCol0
	out := &Tree{Lang: lang, Nodes: nodes, Errors: countErrors(nodes)}
	fixEnds(nodes)
	root.End = int32(len(nodes))
	return out, nil
}

// pieceCuts returns the byte offsets that cut src into pieces, first 0
// and last len(src). A cut is the start of a line that opens a top-level
// item (see topLevelStart) right after a blank line, outside every bracket,
// string and comment as a light lexer sees them: the first such line once
// the piece has reached size bytes. A piece that reaches maxPieceBytes
// without one is cut at the last line in column 0 outside brackets, else at
// the last line start: tree-sitter recovers from a cut in the wrong place
// with a local error, and memory stays bounded. Only a single line longer
// than maxPieceBytes cannot be cut (ErrNoBoundary).
func pieceCuts(lang Language, src []byte, size int) ([]int, error) {
	cuts := []int{0}
	text := string(src)
	var lx lexState
	prevBlank, prevCont := false, false
	lastWeak, lastAny := 0, 0
	for start := 0; start < len(text); {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		line := text[start:end]
		if piece := cuts[len(cuts)-1]; start > piece {
			if start-piece >= size && prevBlank && !prevCont && lx.topLevel() && topLevelStart(lang, line) {
				cuts = append(cuts, start)
			} else {
				if lx.topLevel() && line != "" && line[0] != ' ' && line[0] != '\t' {
					lastWeak = start
				}
				lastAny = start
			}
		}
		if piece := cuts[len(cuts)-1]; end-piece > maxPieceBytes {
			c := lastAny
			if lastWeak > piece {
				c = lastWeak
			}
			if c <= piece || end-c > maxPieceBytes {
				return nil, fmt.Errorf("parse %d bytes of %s: %w", len(src), lang, ErrNoBoundary)
			}
			cuts = append(cuts, c)
		}
		lx.scan(lang, line)
		trimmed := strings.TrimRight(line, " \t\r")
		if trimmed != "" {
			prevCont = strings.HasSuffix(trimmed, "\\")
		}
		prevBlank = trimmed == ""
		start = end + 1
	}
	return append(cuts, len(src)), nil
}

// lexState is what a light lexer carries from line to line: bracket depth,
// an open block comment, an open multi-line string and its closing quote,
// and C preprocessor conditional depth.
type lexState struct {
	depth   int
	comment bool   // inside /* */
	str     string // closing quote of an open multi-line string
	preproc int    // open #if blocks
}

func (l *lexState) topLevel() bool {
	return l.depth == 0 && !l.comment && l.str == "" && l.preproc == 0
}

// scan advances the state over one line.
func (l *lexState) scan(lang Language, line string) {
	cLike := lang != Python
	if (lang == C || lang == CPP) && !l.comment && l.str == "" {
		t := strings.TrimLeft(line, " \t")
		switch {
		case strings.HasPrefix(t, "#if"):
			l.preproc++
		case strings.HasPrefix(t, "#endif") && l.preproc > 0:
			l.preproc--
		}
	}
	for i := 0; i < len(line); i++ {
		switch {
		case l.comment:
			if strings.HasPrefix(line[i:], "*/") {
				l.comment = false
				i++
			}
			continue
		case l.str != "":
			if line[i] == '\\' && l.str != "`" {
				i++
				continue
			}
			if strings.HasPrefix(line[i:], l.str) {
				i += len(l.str) - 1
				l.str = ""
			}
			continue
		}
		c := line[i]
		switch {
		case cLike && strings.HasPrefix(line[i:], "//"), !cLike && c == '#':
			return
		case cLike && strings.HasPrefix(line[i:], "/*"):
			l.comment = true
			i++
		case !cLike && (strings.HasPrefix(line[i:], `"""`) || strings.HasPrefix(line[i:], "'''")):
			l.str = line[i : i+3]
			i += 2
		case c == '`' && (lang == Go || lang == JavaScript || lang == TypeScript || lang == TSX):
			l.str = "`"
		case c == '\'' && lang == Rust && !(i+2 < len(line) && line[i+2] == '\'') && !(i+1 < len(line) && line[i+1] == '\\'):
			// A lifetime ('a), not a character literal.
		case c == '"' || c == '\'':
			// A one-line string: skip to its end on this line.
			j := i + 1
			for j < len(line) && line[j] != c {
				if line[j] == '\\' {
					j++
				}
				j++
			}
			i = j
		case c == '(' || c == '[' || c == '{':
			l.depth++
		case c == ')' || c == ']' || c == '}':
			if l.depth > 0 {
				l.depth--
			}
		}
	}
}

// topLevelStart reports whether line, following a blank line, opens a
// top-level item of lang: it starts in column 0 with a keyword that only
// begins declarations there.
func topLevelStart(lang Language, line string) bool {
	if line == "" || line[0] == ' ' || line[0] == '\t' {
		return false
	}
	var heads []string
	switch lang {
	case Python:
		heads = []string{"def ", "class ", "async def ", "@"}
	case Go:
		heads = []string{"func ", "type ", "var ", "const ", "//"}
	case JavaScript, TypeScript, TSX:
		heads = []string{"function ", "async function ", "export ", "class ", "interface ", "type ", "enum ", "declare ", "const ", "let ", "var ", "module.exports", "//", "/*"}
	case Java:
		heads = []string{"public ", "final ", "abstract ", "class ", "interface ", "enum ", "record ", "@", "//", "/*"}
	case Rust:
		heads = []string{"fn ", "pub ", "pub(", "impl ", "impl<", "struct ", "enum ", "trait ", "mod ", "#[", "//", "/*"}
	case C, CPP:
		heads = []string{"static ", "int ", "void ", "char ", "unsigned ", "long ", "double ", "float ", "struct ", "typedef ", "const ", "bool ", "size_t ", "namespace ", "template", "class ", "inline ", "//", "/*"}
	}
	for _, h := range heads {
		if strings.HasPrefix(line, h) {
			return true
		}
	}
	return false
}
