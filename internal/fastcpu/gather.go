package fastcpu

import (
	"fmt"
	"reflect"
	"slices"
	"unsafe"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
)

// gatherPlan is a Gather that picks whole rows of a matrix (an embedding
// lookup): out[i, :] = table[clamp(idx[i]), :], copied row by row where
// simplego's general Gather walks element by element (3 ms for 512 rows of
// 1024 floats).
type gatherPlan struct {
	rows, width int // table dimensions
	elem        int // bytes per element
}

// planGather returns the plan for n, or nil when n stays in simplego: the
// table must be a rank-2 array of 4- or 2-byte elements (float32,
// bfloat16, ...) and the indices int32 or int64 with a trailing index
// vector of length 1, gathering full rows (graph.Gather's lowering of
// table[ids]).
func planGather(n *node) *gatherPlan {
	if n.kind != kindSeg || n.name != "Gather" || len(n.inputs) != 2 || len(n.args) != 6 {
		return nil
	}
	table, idx := n.inputs[0], n.inputs[1]
	if table.shape.Rank() != 2 || idx.shape.Rank() < 1 {
		return nil
	}
	elem := table.shape.DType.Size()
	if elem != 4 && elem != 2 || table.shape.DType != n.shape.DType {
		return nil
	}
	if idx.shape.DType != dtypes.Int32 && idx.shape.DType != dtypes.Int64 {
		return nil
	}
	ir := idx.shape.Rank()
	vecAxis, ok0 := n.args[0].(int)
	offset, ok1 := n.args[1].([]int)
	collapsed, ok2 := n.args[2].([]int)
	startMap, ok3 := n.args[3].([]int)
	sizes, ok4 := n.args[4].([]int)
	if !ok0 || !ok1 || !ok2 || !ok3 || !ok4 {
		return nil
	}
	rows, width := table.shape.Dimensions[0], table.shape.Dimensions[1]
	if vecAxis != ir-1 || idx.shape.Dimensions[ir-1] != 1 ||
		!slices.Equal(offset, []int{ir - 1}) || !slices.Equal(collapsed, []int{0}) ||
		!slices.Equal(startMap, []int{0}) || !slices.Equal(sizes, []int{1, width}) {
		return nil
	}
	want := append(slices.Clone(idx.shape.Dimensions[:ir-1]), width)
	if !slices.Equal(n.shape.Dimensions, want) || rows == 0 {
		return nil
	}
	return &gatherPlan{rows: rows, width: width, elem: elem}
}

// gather runs a kindGather node. Indices out of range are clamped to the
// first or last row, as XLA's Gather defines.
func (r *run) gather(n *node) error {
	p := n.gather
	table, err := r.e.backend.BufferData(r.vals[n.inputs[0].id])
	if err != nil {
		return err
	}
	idxData, err := r.e.backend.BufferData(r.vals[n.inputs[1].id])
	if err != nil {
		return err
	}
	var idx func(i int) int64
	var count int
	switch v := idxData.(type) {
	case []int32:
		idx, count = func(i int) int64 { return int64(v[i]) }, len(v)
	case []int64:
		idx, count = func(i int) int64 { return v[i] }, len(v)
	default:
		return fmt.Errorf("%w: gather indices are %T", ErrBuild, idxData)
	}
	src := rawBytes(table)
	if len(src) != p.rows*p.width*p.elem {
		return fmt.Errorf("%w: gather table holds %d bytes, want %d", ErrBuild, len(src), p.rows*p.width*p.elem)
	}
	out, flat, err := r.e.backend.NewSharedBuffer(0, n.shape)
	if err != nil {
		return fmt.Errorf("%w: gather output: %w", ErrBuild, err)
	}
	dst := rawBytes(flat)
	rowBytes := p.width * p.elem
	splitRows(r.e.backend.gemm.team, count, count*p.width, r.e.backend.gemm.workers, func(r0, r1 int) {
		for i := r0; i < r1; i++ {
			row := int(min(max(idx(i), 0), int64(p.rows-1)))
			copy(dst[i*rowBytes:(i+1)*rowBytes], src[row*rowBytes:(row+1)*rowBytes])
		}
	})
	r.done(n, out)
	return nil
}

// rawBytes views a flat slice (simplego's buffer data: a slice of a fixed-size
// element type) as bytes; nil for anything else.
func rawBytes(flat any) []byte {
	v := reflect.ValueOf(flat)
	if v.Kind() != reflect.Slice {
		return nil
	}
	if v.Len() == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(v.UnsafePointer()), v.Len()*int(v.Type().Elem().Size()))
}
