// Command checkpoint writes a SWE-Pruner-layout checkpoint with random
// weights and a real model's dimensions, for measuring load memory and
// pruning speed at full size without the released weights:
//
//	go run ./bench/checkpoint -out /tmp/qwen3-0.6b-random
//	/usr/bin/time -v go run ./examples/prune -model /tmp/qwen3-0.6b-random -q "..." -f file.go
//
// The backbone is stored in BF16 and the head in F32, as in the released
// checkpoints.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/prunekit/pruner/backbone"
	"github.com/prunekit/pruner/internal/skimmer"
)

// shapes are the backbones this command can write.
var shapes = map[string]backbone.Config{
	// Qwen3-0.6B as published (config.json of Qwen/Qwen3-0.6B), the
	// backbone of SWE-Pruner.
	"0.6b": {VocabSize: 151669, HiddenSize: 1024, NumLayers: 28, NumHeads: 16, NumKVHeads: 8, HeadDim: 128, IntermediateSize: 3072},
	// The 4-layer, hidden-256 shape of bench/qwen3's h256.
	"h256": {VocabSize: 151669, HiddenSize: 256, NumLayers: 4, NumHeads: 4, NumKVHeads: 2, HeadDim: 64, IntermediateSize: 768},
}

func main() {
	out := flag.String("out", "", "directory to write (created)")
	shape := flag.String("shape", "0.6b", "backbone dimensions: 0.6b or h256")
	seed := flag.Int64("seed", 1, "random seed")
	flag.Parse()
	cfg, ok := shapes[*shape]
	if *out == "" || !ok {
		fmt.Fprintln(os.Stderr, "usage: checkpoint -out DIR [-shape 0.6b|h256] [-seed N]")
		os.Exit(2)
	}
	cfg.RopeTheta, cfg.RMSNormEps = backbone.DefaultRopeTheta, backbone.DefaultRMSNormEps
	if err := skimmer.WriteRandom(*out, cfg, 1, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "checkpoint:", err)
		os.Exit(1)
	}
	fmt.Println("wrote", *out)
}
