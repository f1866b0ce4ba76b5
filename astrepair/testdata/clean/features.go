package features

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrClosed is returned after Close.
var ErrClosed = errors.New("closed")

const (
	modeA = iota
	modeB
	modeC
)

type Pool struct {
	mu      sync.Mutex
	workers []*worker
	closed  bool
}

type worker struct {
	id   int
	jobs chan func()
}

type Runner interface {
	Run(ctx context.Context) error
	Close() error
}

func New(n int) *Pool {
	p := &Pool{}
	for i := 0; i < n; i++ {
		p.workers = append(p.workers, &worker{
			id:   i,
			jobs: make(chan func(), 1),
		})
	}
	return p
}

func (p *Pool) Run(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	} else if len(p.workers) == 0 {
		return fmt.Errorf("no workers: %w", ErrClosed)
	}
	for _, w := range p.workers {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case w.jobs <- func() {
			fmt.Println("job", w.id)
		}:
		default:
		}
	}
	switch mode := modeB; mode {
	case modeA, modeB:
		fmt.Println("a or b")
		fallthrough
	case modeC:
		fmt.Println("c")
	default:
		return nil
	}
	var x interface{} = p
	switch v := x.(type) {
	case *Pool:
		_ = v
	case error:
		return v
	}
	msg := `multi
line
string`
	_ = msg
	go func() {
		defer func() {
			if r := recover(); r != nil {
				fmt.Println(r)
			}
		}()
	}()
	return nil
}

func (p *Pool) Close() error {
	p.closed = true
	return nil
}
