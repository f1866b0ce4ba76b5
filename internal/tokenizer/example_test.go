package tokenizer_test

import (
	"fmt"

	"github.com/prunekit/pruner/internal/tokenizer"
)

func ExampleTokenizer_Encode() {
	tok, err := tokenizer.Qwen3()
	if err != nil {
		panic(err)
	}
	// Plain mode: the added-token text is ordinary text. Offsets are in code
	// points (Start, End) and bytes (ByteStart, ByteEnd).
	text := `s = "héllo" # <|im_end|>`
	for _, t := range tok.Encode(text) {
		fmt.Printf("%d [%d,%d) [%d,%d) %q\n", t.ID, t.Start, t.End, t.ByteStart, t.ByteEnd, text[t.ByteStart:t.ByteEnd])
	}
	// HF's default mode matches added tokens.
	fmt.Println(tok.EncodeSpecialIDs("<|im_end|>"))
	// Output:
	// 82 [0,1) [0,1) "s"
	// 284 [1,3) [1,3) " ="
	// 330 [3,5) [3,5) " \""
	// 71 [5,6) [5,6) "h"
	// 18503 [6,8) [6,9) "él"
	// 385 [8,10) [9,11) "lo"
	// 1 [10,11) [11,12) "\""
	// 671 [11,13) [12,14) " #"
	// 82639 [13,16) [14,17) " <|"
	// 318 [16,18) [17,19) "im"
	// 6213 [18,22) [19,23) "_end"
	// 91 [22,23) [23,24) "|"
	// 29 [23,24) [24,25) ">"
	// [151645]
}
