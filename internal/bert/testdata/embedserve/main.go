// Command embedserve times bert.Model.EmbedIDs for testdata/ort_peer.py's
// paired comparison: it loads a model folder, then for each line "batch
// tokens" on stdin runs one batch of random sequences of that shape and
// prints the milliseconds it took. Timing the two encoders turn by turn
// keeps a shared machine's load from favouring either.
//
//	go run ./testdata/embedserve /path/to/all-MiniLM-L6-v2
package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/prunekit/pruner/internal/bert"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: embedserve MODEL_DIR")
		os.Exit(2)
	}
	ctx := context.Background()
	m, err := bert.Load(ctx, os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rng := rand.New(rand.NewPCG(3, 7))
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var batch, tokens int
		if _, err := fmt.Sscan(in.Text(), &batch, &tokens); err != nil || batch < 1 || tokens < 2 {
			fmt.Fprintln(os.Stderr, "want a line \"batch tokens\"")
			os.Exit(2)
		}
		seqs := make([][]int32, batch)
		for i := range seqs {
			s := make([]int32, tokens)
			s[0], s[tokens-1] = 101, 102
			for j := 1; j < tokens-1; j++ {
				s[j] = int32(1000 + rng.IntN(m.Config().VocabSize-1000))
			}
			seqs[i] = s
		}
		start := time.Now()
		if _, err := m.EmbedIDs(ctx, seqs); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%.3f\n", float64(time.Since(start).Microseconds())/1e3)
	}
}
