// Package bert runs BERT-family sentence encoders (all-MiniLM-L6-v2 and
// other sentence-transformers models with a BERT body) on CPUs in pure Go:
// a hand-written forward pass whose matrix products are internal/fastcpu's
// Gemm kernels, and internal/wordpiece for the tokenizer.
//
// The model is Hugging Face's BertModel in inference: word + absolute
// position + token-type-0 embeddings and a LayerNorm; per layer,
// multi-head self-attention (q/k/v with bias, scores scaled by 1/√d,
// softmax over the sequence's own tokens), an output projection with the
// residual and a post-LayerNorm, and a GELU (erf) feed-forward block with
// the residual and a post-LayerNorm. Embed then pools the last hidden
// states as the folder's sentence-transformers Pooling module says (mean
// over the tokens, or the [CLS] state) and L2-normalises the result.
//
// A batch of texts runs as its tokens packed end to end, without padding:
// the dense layers see each real token once, and attention runs per
// sequence, which is what HF's padding mask computes. Outputs match
// PyTorch within 1e-4 (see testdata/tiny-bert and the opt-in MiniLM test;
// the largest difference seen is 6e-6).
//
// The workers (GOMAXPROCS by default) take blocks of rows for the dense
// products, each a single-threaded fastcpu product, and groups of heads
// for attention; softmax, bias+GELU and the residual LayerNorms are row
// kernels in Go assembly (AVX-512, AVX2+FMA, or Go elsewhere).
// BenchmarkEmbed times the shapes, and testdata/ort_peer.py times
// ONNX Runtime on the same model and shapes, turn by turn with Go.
//
// Load takes a folder; resolving "hf:owner/name" is internal/hfhub's job.
package bert
