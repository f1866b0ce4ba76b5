// Copyright 2024 The Sample Authors. All rights reserved.
// Use of this source code is governed by a BSD-style license.

package sample

import "strings"

// Stack is a last-in first-out list of strings.
type Stack struct {
	items []string
}

// Push puts a value on top of the stack and returns the new depth.
func (s *Stack) Push(v string) int {
	// trim surrounding whitespace before storing
	v = strings.TrimSpace(v)
	s.items = append(s.items, v)

	return len(s.items)
}

//nolint:errcheck
func (s *Stack) Pop() string {
	// x := s.items[0]; return x
	n := len(s.items)
	// TODO(bob): shrink the slice
	v := s.items[n-1]
	s.items = s.items[:n-1]
	return v
}

func (s *Stack) Len() int { return len(s.items) }
