package pruner

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/prunekit/pruner/internal/hfhub"
)

// HubPrefix starts a checkpoint name that Load fetches from the Hugging
// Face Hub: "hf:owner/name" or "hf:owner/name@revision" (a branch, a tag
// or a commit hash).
const HubPrefix = "hf:"

// Errors of checkpoints fetched from the Hugging Face Hub (Load and
// Download with an hf: name).
var (
	// ErrDownload is wrapped by every failure to fetch an hf: checkpoint:
	// the network, an HTTP error, a file whose hash or size is not the
	// one the Hub reported, offline with nothing cached, a cancelled
	// context (errors.Is(err, context.Canceled) holds too).
	ErrDownload = hfhub.ErrDownload
	// ErrUnauthorized: the Hub answered 401 or 403 (a private or gated
	// repository; set HF_TOKEN to a token that can read it). It comes
	// wrapped with ErrDownload.
	ErrUnauthorized = hfhub.ErrUnauthorized
	// ErrNotFound: the Hub has no such repository, revision or required
	// file. It comes wrapped with ErrDownload.
	ErrNotFound = hfhub.ErrNotFound
)

// hubOptions are the settings of an hf: download.
type hubOptions struct {
	progress func(file string, done, total int64)
	client   *http.Client
}

// WithDownloadProgress sets a function that Load (and Download) call while
// an hf: checkpoint's files download: the file's name, the bytes on disk
// so far (a resumed download starts above zero) and the file's size (-1
// when the Hub did not say). Files already in the cache report nothing.
// It is called from the goroutine that called Load.
func WithDownloadProgress(fn func(file string, done, total int64)) Option {
	return func(c *config) error { c.hub.progress = fn; return nil }
}

// WithHTTPClient sets the HTTP client that fetches hf: checkpoints
// (default: http.DefaultClient), for proxies, timeouts or tests.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) error { c.hub.client = hc; return nil }
}

// hubFiles are the files of a SWE-Pruner or LaMR checkpoint: the weights and
// their config, and the Qwen tokenizer files when the repository has them
// (Load uses the embedded Qwen3 tokenizer otherwise).
var hubFiles = []hfhub.File{
	{Name: "config.json"},
	{Name: "model.safetensors"},
	{Name: "vocab.json", Optional: true},
	{Name: "merges.txt", Optional: true},
	{Name: "tokenizer_config.json", Optional: true},
	{Name: "added_tokens.json", Optional: true},
	{Name: "tokenizer.json", Optional: true},
	// A sentence encoder (the semantic scorer): its WordPiece vocabulary
	// and sentence-transformers modules.
	{Name: "vocab.txt", Optional: true},
	{Name: "modules.json", Optional: true},
	{Name: "1_Pooling/config.json", Optional: true},
	{Name: "sentence_bert_config.json", Optional: true},
}

// Download returns the local folder of checkpoint name: a name without the
// "hf:" prefix is returned as it is; "hf:owner/name[@revision]" is fetched
// from the Hugging Face Hub into its cache, as Python's huggingface_hub
// lays it out, and the snapshot folder (…/models--owner--name/snapshots/
// <commit>) is returned. Load(ctx, name) does the same before loading;
// Download is for callers that need the folder itself (a tokenizer, a
// memory limit) or want to fetch ahead of time. Options other than
// WithDownloadProgress and WithHTTPClient are checked (an invalid one is
// refused before anything is fetched) and otherwise ignored.
//
// The cache is HF_HUB_CACHE, else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub; a model
// Python downloaded is used as it is, and one downloaded here serves
// Python. HF_ENDPOINT replaces https://huggingface.co, HF_TOKEN (else the
// token file of huggingface-cli login) authenticates, and HF_HUB_OFFLINE=1
// forbids the network: the name then resolves from the cache alone. Online,
// the revision is resolved on every call (one small request per missing
// file, nothing downloaded when cached); when the Hub cannot be reached,
// or does not answer within 10 seconds, a complete cached snapshot is
// used. A download that stops sending for a minute fails, its bytes kept
// to resume from. The token goes to the Hub's own scheme, host and port
// only, never along a redirect elsewhere. Each file is checked against the size
// and hash the Hub reports before it enters the cache, an interrupted
// download resumes where it stopped, and a snapshot folder appears only
// with all its required files. Errors wrap ErrDownload (and
// ErrUnauthorized, ErrNotFound or the context's error where they apply);
// a malformed name wraps ErrBadCheckpoint.
func Download(ctx context.Context, name string, opts ...Option) (string, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return "", fmt.Errorf("pruner: %w", err)
		}
	}
	if err := cfg.check(); err != nil {
		return "", fmt.Errorf("pruner: %w", err) // before gigabytes come down for a Load that would refuse them
	}
	dir, err := download(ctx, name, cfg.hub)
	if err != nil {
		return "", fmt.Errorf("pruner: %w", err)
	}
	return dir, nil
}

// download is Download with the options applied; its errors have no
// "pruner:" prefix.
func download(ctx context.Context, name string, o hubOptions) (string, error) {
	return hubSnapshot(ctx, name, hfhub.WithProgress(o.progress), hfhub.WithHTTPClient(o.client))
}

// cachedHubDir resolves an hf: name from the cache alone (no network); ""
// when it is not cached.
func cachedHubDir(name string) string {
	dir, err := hubSnapshot(context.Background(), name, hfhub.WithOffline(true))
	if err != nil {
		return ""
	}
	return dir
}

// hubSnapshot returns the snapshot folder of an hf: name from a client
// with opts, and any other name as it is.
func hubSnapshot(ctx context.Context, name string, opts ...hfhub.Option) (string, error) {
	spec, ok := strings.CutPrefix(name, HubPrefix)
	if !ok {
		return name, nil
	}
	ref, err := hfhub.ParseRef(spec)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadCheckpoint, err)
	}
	return hfhub.New(opts...).Snapshot(ctx, ref, hubFiles)
}

// DownloadProgressTo returns a WithDownloadProgress function that writes
// one line to w per tenth of a large file (and one line for a small one),
// as the commands in examples/ do on standard error:
//
//	downloading model.safetensors: 30% of 1.2 GiB
//	downloading model.safetensors: done (1.2 GiB)
func DownloadProgressTo(w io.Writer) func(file string, done, total int64) {
	const large = 8 << 20
	var cur string
	last := int64(-1) // the last tenth (or 64 MiB step when total < 0) printed
	return func(file string, done, total int64) {
		if file != cur {
			cur, last = file, -1
		}
		switch {
		case total >= 0 && done >= total:
			if last != 10 {
				fmt.Fprintf(w, "downloading %s: done (%s)\n", file, byteSize(total))
				last = 10
			}
		case total > large:
			if step := done * 10 / total; step > last {
				fmt.Fprintf(w, "downloading %s: %d%% of %s\n", file, step*10, byteSize(total))
				last = step
			}
		case total < 0:
			if step := done / (64 << 20); step > last {
				fmt.Fprintf(w, "downloading %s: %s\n", file, byteSize(done))
				last = step
			}
		}
	}
}

// byteSize writes n in B, KiB, MiB or GiB.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
