package astrepair

import "fmt"

// Reason says why a line is in a repaired mask.
type Reason uint8

// Reasons recorded per line by Repair.
const (
	// ReasonNone marks a line that stays removed.
	ReasonNone Reason = iota
	// ReasonKept marks a line the caller (the model) already kept.
	ReasonKept
	// ReasonScope marks an enclosing scope header: a class, function or
	// method signature, including decorators, annotations and the lines of
	// a multi-line signature.
	ReasonScope
	// ReasonControl marks a control-flow header or companion: if/elif/else,
	// try/except/finally, switch/case, match arms, loops.
	ReasonControl
	// ReasonDependency marks a definition or import of a symbol used by a
	// kept line.
	ReasonDependency
	// ReasonBracket marks a line that only closes a bracket group, block or
	// string opened by a kept line.
	ReasonBracket
	// ReasonStatement marks the rest of a multi-line statement, expression or
	// string that a kept line is part of.
	ReasonStatement
	// ReasonReturn marks the trivial final return of a kept function.
	ReasonReturn
)

var reasonNames = [...]string{"none", "kept", "scope", "control", "dependency", "bracket", "statement", "return"}

// String returns the lower-case name of the reason.
func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}

// Added reports whether the reason marks a line added by repair.
func (r Reason) Added() bool { return r > ReasonKept }
