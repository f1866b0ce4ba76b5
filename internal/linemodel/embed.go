package linemodel

import (
	"embed"
	"io/fs"
)

//go:embed weights/config.json weights/model.safetensors
var weights embed.FS

// Embedded parses the model shipped in the binary (weights/). Each call
// returns a fresh Model; parsing takes well under a millisecond.
func Embedded() (*Model, error) {
	sub, err := fs.Sub(weights, "weights")
	if err != nil {
		return nil, err
	}
	return LoadFS(sub, "embedded")
}
