// Package pruner cuts what a coding agent reads down to what matters for its
// question.
//
// An agent reads a file, a grep or a test log, and it knows what it is
// looking for ("how are retries scheduled?"). Prune takes that query and that
// text and returns the relevant lines verbatim, every removed run folded
// into one short placeholder, so the agent spends fewer tokens and is less
// distracted:
//
//	p, err := pruner.Load(ctx, "path/to/checkpoint", pruner.WithThreshold(0.5))
//	res, err := p.Prune(ctx, query, text)
//	fmt.Print(res.Text)  // pruned text with placeholders
//	res.Lines            // per input line: number, kept, score, why kept
//	res.Score            // document-level relevance in [0,1]
//
// It is the in-process Go form of SWE-Pruner and LaMR: a Qwen3 encoder (on
// GoMLX) reads query and text once, CRF heads score every token, token
// scores are averaged into line scores, and a tree-sitter repair pass keeps
// the output readable code. Published SWE-Pruner and LaMR checkpoints load
// unmodified and reproduce the PyTorch reference.
//
// # Scorers and decisions
//
// Load picks the scorer by checkpoint: SWE-Pruner checkpoints score tokens
// with keep probabilities, LaMR checkpoints decode their final CRF (Viterbi);
// WithDecision switches between probabilities, Viterbi paths and CRF
// marginals. Without a checkpoint (Load(ctx, "")) the embedded line model
// scores whole lines on the CPU (Result.Scorer "line"); WithScorer picks the
// lexical BM25 baseline ("lexical") instead. A threshold on line scores decides by default; WithTokenBudget,
// WithCompression and WithLineBudget take the best lines instead, each with
// what the repair pass adds for it, and never exceed the budget.
//
// New composes a Scorer of one's own (an ONNX or LLM-backed model, a grep
// for logs) with the same decision, repair and rendering; the Scorer
// interface states what its scores must mean.
//
// # Guarantees
//
// Every kept line is byte-identical to the input line with the same number
// and lines keep their input order; Result.Lines and Result.Placeholders map
// every output line back to the input. Lines end at "\n" (a "\r" before it
// belongs to the terminator), as cat -n, git and editors count them. Any
// text is accepted — invalid UTF-8, NUL bytes, megabytes, a single 50,000
// character line — long texts are cut into overlapping windows whose token
// scores are averaged. Prune is safe for concurrent use. Nothing is ever
// downloaded, except a checkpoint the caller names as "hf:owner/name"
// (below).
//
// # The output contract
//
// A budget bounds the whole output in its unit: WithTokenBudget counts every
// output token, placeholders included, with the tokenizer of Result.Tokens;
// WithLineBudget counts output lines, placeholder lines included;
// WithCompression bounds output tokens by input tokens ÷ ratio. When
// nothing useful fits, Result.Notes says so. A run is folded only when its
// placeholder costs fewer tokens than the run (otherwise its lines stay,
// with ReasonCheaper). Without a budget an output never has more tokens
// than its input — a text that folding would not shorten comes back whole
// with Result.Unpruned saying why — and texts under DefaultMinInputTokens
// tokens come back whole (WithMinInputTokens). With the line model a
// relevance gate folds a text that does not seem to answer the query to a
// skeleton with a note (WithMinRelevance; Result.Score is the gate's
// probability).
//
// # Bounded work
//
// Work and memory grow linearly with the text whatever its shape (deep
// nesting, a million empty lines, one huge line, long runs of one
// character), and a cancelled context or an expired deadline is noticed
// within milliseconds in every stage: tokenization, features, the model,
// parsing, repair, budgets and rendering. With the embedded line model a
// call's peak memory stays within about 64 bytes per input byte plus 700
// bytes per line plus a constant (the hostile-input suite checks this);
// texts over 1 MiB are parsed in pieces cut at top-level boundaries, so
// tree-sitter's own tree never holds more than a piece. By default Prune
// refuses texts over DefaultMaxInputBytes (16 MiB) or DefaultMaxInputLines
// lines with ErrInputTooLarge before doing any work; WithMaxInputBytes and
// WithMaxInputLines change or lift the limits. Input that looks binary (1%
// NUL bytes, 30% invalid UTF-8 or control bytes, or UTF-16/UTF-32 in its
// first 8 KiB) is refused with ErrBinaryInput, also before any work;
// WithBinaryInput(true) prunes it as text. Checkpoints are validated
// before Load returns: non-finite weights, config values that contradict
// the tensors or each other, and files that are not regular files are
// refused with ErrBadCheckpoint.
//
// # Checkpoints from the Hugging Face Hub
//
// Load (and every -model flag of the commands in examples/) accepts
// "hf:owner/name" or "hf:owner/name@revision" (a branch, a tag or a commit
// hash) for a SWE-Pruner or LaMR checkpoint published on the Hub:
//
//	p, err := pruner.Load(ctx, "hf:ayanami-kitasan/code-pruner",
//		pruner.WithDownloadProgress(func(file string, done, total int64) { ... }))
//
// config.json, model.safetensors and whichever Qwen tokenizer files the
// repository has are fetched into the cache of Python's huggingface_hub
// (HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub), in its
// layout: a model Python downloaded loads with no download, and one
// fetched here serves Python. HF_TOKEN authenticates (private or gated
// repositories), HF_ENDPOINT replaces https://huggingface.co (a mirror),
// and HF_HUB_OFFLINE=1 forbids the network: the name then resolves from
// the cache alone. Online, each Load asks the Hub which commit the
// revision names (one small request per file, nothing downloaded when
// cached); pin a commit hash to make no request at all once cached. Files
// are checked against the sha256 (LFS) or git sha1 the Hub reports before
// they enter the cache, an interrupted download resumes where it stopped,
// and failures wrap ErrDownload (ErrUnauthorized for 401/403, ErrNotFound
// for 404). Download fetches without loading and returns the folder.
//
// # Packages
//
// backbone holds the Qwen3 decoder and fusion block, crf the emission heads
// and the linear-chain CRF, chunk the model input and window logic,
// astrepair the syntax-aware repair and rendering, rubric the LaMR rubric
// labels for training. Each built-in scorer is a package of its own under
// internal/ (skimmer, linemodel, lexical) whose ScoreText hands the pipeline
// an internal/scoring Result; this package composes one scoring stage with
// the decision, repair and rendering.
package pruner
