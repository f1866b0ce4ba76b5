// Package safetensors reads and writes checkpoints in the safetensors format
// used by Hugging Face and PyTorch exports.
//
// A safetensors file is an 8-byte little-endian header length N, N bytes of
// UTF-8 JSON describing every tensor (dtype, shape and byte range), and then
// the raw little-endian tensor data. Open maps the file read-only, validates
// the whole header up front (so that later accessors never index out of
// bounds) and hands out either the mapped bytes (Raw) or freshly allocated
// float32 copies (Float32), converting BF16 and F16 on the way.
//
// Write and WriteFile produce the same layout as the reference checkpoint
// writer: a compact JSON header whose first key is "__metadata__" (when there
// is metadata), tensors in name order with contiguous data, and the header
// padded with spaces to a multiple of 8 bytes. Files written here load in the
// Python safetensors library and files written there load here.
//
// All errors name the file and, where one is involved, the tensor, and wrap
// one of the sentinel errors (ErrCorrupt, ErrMissingTensor, ErrShapeMismatch,
// ErrUnsupportedDType, ErrInvalidTensor, ErrClosed, ErrNonFinite,
// ErrNotRegular) so callers can branch with errors.Is.
//
// Open only opens regular files (symbolic links to them included): it checks
// the path with Stat first and opens it non-blocking, so a FIFO or a device
// named like a checkpoint is refused at once instead of blocking the caller.
package safetensors
