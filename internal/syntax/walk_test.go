package syntax

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/c"
	"github.com/smacker/go-tree-sitter/cpp"
	"github.com/smacker/go-tree-sitter/golang"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/rust"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
	"github.com/stretchr/testify/require"
)

var bindingLanguages = map[Language]*sitter.Language{
	Python: python.GetLanguage(), Go: golang.GetLanguage(), JavaScript: javascript.GetLanguage(),
	TypeScript: typescript.GetLanguage(), TSX: tsx.GetLanguage(), Java: java.GetLanguage(),
	Rust: rust.GetLanguage(), C: c.GetLanguage(), CPP: cpp.GetLanguage(),
}

// bindingWalk walks src's tree with the binding's own Go API, node by node
// through cgo: slow, but it reads every field through the binding's real
// api.h, so it is the reference for the one-call C walk.
func bindingWalk(t *testing.T, lang Language, src []byte) []nodeView {
	t.Helper()
	p := sitter.NewParser()
	defer p.Close()
	p.SetLanguage(bindingLanguages[lang])
	tree, err := p.ParseCtx(context.Background(), nil, src)
	require.NoError(t, err)
	defer tree.Close()
	root := tree.RootNode()
	cur := sitter.NewTreeCursor(root)
	defer cur.Close()
	var out []nodeView
	var stack []int32
	for {
		n := cur.CurrentNode()
		parent := int32(-1)
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		sp, ep := n.StartPoint(), n.EndPoint()
		out = append(out, nodeView{
			Type: n.Type(), Field: cur.CurrentFieldName(), Parent: parent,
			StartByte: n.StartByte(), EndByte: n.EndByte(),
			StartRow: sp.Row, EndRow: ep.Row, EndsAtLineStart: ep.Column == 0,
			Named: n.IsNamed(), Error: n.IsError(), Missing: n.IsMissing(), Leaf: n.ChildCount() == 0,
		})
		if cur.GoToFirstChild() {
			stack = append(stack, int32(len(out)-1))
			continue
		}
		for !cur.GoToNextSibling() {
			if !cur.GoToParent() {
				for i := len(out) - 1; i >= 0; i-- {
					out[i].End = max(out[i].End, int32(i+1))
					if p := out[i].Parent; p >= 0 {
						out[p].End = max(out[p].End, out[i].End)
					}
				}
				return out
			}
			stack = stack[:len(stack)-1]
		}
	}
}

// TestWalkMatchesBinding compares Parse's copy of the tree, node for node,
// with the binding's API on real files of every language and on broken
// input (ERROR and MISSING nodes).
func TestWalkMatchesBinding(t *testing.T) {
	byExt := map[string]Language{".py": Python, ".go": Go, ".js": JavaScript, ".ts": TypeScript,
		".tsx": TSX, ".java": Java, ".rs": Rust, ".c": C, ".cpp": CPP}
	files, err := filepath.Glob(filepath.Join("..", "..", "astrepair", "testdata", "clean", "*"))
	require.NoError(t, err)
	type sample struct {
		name string
		lang Language
		src  []byte
	}
	var samples []sample
	for _, f := range files {
		lang, ok := byExt[filepath.Ext(f)]
		if !ok {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		samples = append(samples, sample{filepath.Base(f), lang, src})
	}
	require.GreaterOrEqual(t, len(samples), 9, "testdata files of every language")
	for lang := range bindingLanguages {
		samples = append(samples,
			sample{"broken " + string(lang), lang, []byte("func ( { class x = ] (\n  if {{ def\n")},
			sample{"empty " + string(lang), lang, nil})
	}
	for _, s := range samples {
		got, err := Parse(context.Background(), s.lang, s.src)
		require.NoError(t, err, s.name)
		want := bindingWalk(t, s.lang, s.src)
		require.Equal(t, len(want), len(got.Nodes), "%s: node count", s.name)
		for i := range want {
			require.Equal(t, want[i], view(&got.Nodes[i]), "%s: node %d", s.name, i)
		}
	}
}

// nodeView is a Node with its names and flags spelled out.
type nodeView struct {
	Type, Field                 string
	Parent, End                 int32
	StartByte, EndByte          uint32
	StartRow, EndRow            uint32
	EndsAtLineStart             bool
	Named, Error, Missing, Leaf bool
}

func view(n *Node) nodeView {
	return nodeView{
		Type: n.Type(), Field: n.Field(), Parent: n.Parent, End: n.End,
		StartByte: n.StartByte, EndByte: n.EndByte,
		StartRow: n.StartRow, EndRow: n.EndRow, EndsAtLineStart: n.EndsAtLineStart(),
		Named: n.Named(), Error: n.IsError(), Missing: n.IsMissing(), Leaf: n.Leaf(),
	}
}

// TestNodeLayout: a Node is 32 bytes, the size the memory bounds assume,
// and every language has a name table.
func TestNodeLayout(t *testing.T) {
	require.EqualValues(t, 32, unsafe.Sizeof(Node{}))
	require.Equal(t, len(names), len(Languages()))
}
