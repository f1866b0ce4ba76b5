package pruner

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"sync"
)

// DefaultViewBytes bounds a zero Views: 64 MiB of remembered views.
const DefaultViewBytes = 64 << 20

// Views remembers the last view of each text a reader was sent, so that a
// tool serving follow-ups (unfold this name) can reply with only what is
// new (Result.Delta) instead of the whole view again:
//
//	key := pruner.ViewKey(text, query, optionsKey, sessionID)
//	prev := views.Last(key)
//	if prev == nil { prev, err = p.Prune(ctx, query, text) } // same view again: Prune is deterministic
//	next, err := prev.Unfold(ctx, items...)
//	delta, err := next.Delta(prev)
//	views.Remember(key, next)
//
// Keys are digests of the text (ViewKey), so an edited text never meets the
// view of its old content. A key must also name the reader (a session, a
// client): two readers of one text and query were sent different views,
// and a delta against the other's view would skip lines this one never
// saw. The zero value is ready to use and holds at most
// DefaultViewBytes; it is safe for concurrent use, and a view it returns is
// never changed (Unfold returns copies). When the views' estimated sizes
// (their input, output and line table) pass MaxBytes, the least recently
// used are forgotten; a reader whose view was forgotten gets one rebuilt
// from the text.
type Views struct {
	// MaxBytes bounds the memory the views hold; 0 means DefaultViewBytes.
	// A view larger than the bound is not remembered.
	MaxBytes int64

	mu    sync.Mutex
	order *list.List // of *viewEntry, most recent first
	index map[string]*list.Element
	bytes int64
}

type viewEntry struct {
	key  string
	res  *Result
	size int64
}

// ViewKey returns the key of a view: a digest of the text, the query, and
// whatever else shapes the view (the options the Pruner was built with,
// the tool or the reader), each length-prefixed so that no two lists of
// strings share a key.
func ViewKey(text, query string, shape ...string) string {
	h := sha256.New()
	var n [8]byte
	write := func(s string) {
		l := uint64(len(s))
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write([]byte(s))
	}
	write(text)
	write(query)
	for _, s := range shape {
		write(s)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Last returns the view remembered under key, nil if none.
func (v *Views) Last(key string) *Result {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.index[key]
	if !ok {
		return nil
	}
	v.order.MoveToFront(e)
	return e.Value.(*viewEntry).res
}

// Remember makes r the view remembered under key (replacing any), unless r
// alone is larger than the bound; older views are forgotten to make room.
func (v *Views) Remember(key string, r *Result) {
	if r == nil {
		return
	}
	size := viewSize(r) + int64(len(key))
	limit := v.MaxBytes
	if limit <= 0 {
		limit = DefaultViewBytes
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.order == nil {
		v.order, v.index = list.New(), map[string]*list.Element{}
	}
	if e, ok := v.index[key]; ok {
		v.bytes -= e.Value.(*viewEntry).size
		v.order.Remove(e)
		delete(v.index, key)
	}
	if size > limit {
		return
	}
	for v.bytes+size > limit && v.order.Len() > 0 {
		old := v.order.Back()
		ent := old.Value.(*viewEntry)
		v.bytes -= ent.size
		v.order.Remove(old)
		delete(v.index, ent.key)
	}
	v.index[key] = v.order.PushFront(&viewEntry{key: key, res: r, size: size})
	v.bytes += size
}

// Len returns the number of views remembered and their estimated bytes.
func (v *Views) Len() (views int, bytes int64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.order == nil {
		return 0, 0
	}
	return v.order.Len(), v.bytes
}

// viewSize estimates what r holds: its input (shared by the views of one
// text, counted for each), its output, and its per-line and per-token
// tables.
func viewSize(r *Result) int64 {
	n := int64(len(r.Text)) + int64(len(r.Lines))*48 + int64(len(r.TokenScores))*24 + int64(len(r.Placeholders))*96 + 512
	if r.src != nil {
		n += int64(len(r.src.text))
	}
	for _, e := range r.Expanded {
		n += int64(len(e.Item)) + int64(len(e.Lines))*16 + 64
		for _, s := range e.Names {
			n += int64(len(s))
		}
	}
	return n
}
