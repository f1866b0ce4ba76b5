package safetensors

import (
	"errors"

	"github.com/prunekit/pruner/internal/regfile"
)

// Sentinel errors wrapped by every error this package returns, so that callers
// can tell a damaged checkpoint from a checkpoint of the wrong architecture.
var (
	// ErrCorrupt reports a truncated file, a malformed header, or tensor
	// byte ranges that do not fit the file.
	ErrCorrupt = errors.New("corrupt file")
	// ErrMissingTensor reports that a requested tensor is not in the file.
	ErrMissingTensor = errors.New("missing tensor")
	// ErrShapeMismatch reports a tensor whose shape (or data length) differs
	// from the one expected.
	ErrShapeMismatch = errors.New("shape mismatch")
	// ErrUnsupportedDType reports a dtype this package does not know, or one
	// that the requested conversion cannot handle.
	ErrUnsupportedDType = errors.New("unsupported dtype")
	// ErrInvalidTensor reports a tensor that cannot be written: an empty,
	// duplicate, reserved or non-UTF-8 name.
	ErrInvalidTensor = errors.New("invalid tensor")
	// ErrClosed reports an access to tensor data after Close.
	ErrClosed = errors.New("file closed")
	// ErrNonFinite reports a NaN or an infinity in a tensor read with
	// Float32Finite.
	ErrNonFinite = errors.New("non-finite value")
	// ErrNotRegular reports a path that is not a regular file (a FIFO, a
	// device, a socket or a directory): opening one could block forever or
	// read without end, so Open refuses it before opening.
	ErrNotRegular = regfile.ErrNotRegular
)
