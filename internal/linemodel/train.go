package linemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	G "github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/prunekit/pruner/internal/safetensors"
)

// TrainOptions configure Train.
type TrainOptions struct {
	Epochs      int
	Batch       int // cases per step
	MaxLines    int // lines per case (longer cases are cut)
	LR          float64
	WeightDecay float64
	Lambda      float32 // weight of dependency lines in the targets
	Seed        uint64
	// Out, when set, receives a checkpoint after every epoch (and the
	// optimizer state, for resuming).
	Out string
	// Log receives a progress line every few seconds and one per epoch.
	Log io.Writer
	// Validate, when set, runs after every epoch; its numbers are logged
	// and stored in the config.
	Validate func(m *Model) map[string]float64
}

// Trainer trains a Model with a GoMLX graph for the loss and its gradient
// and AdamW in Go.
type Trainer struct {
	M      *Model
	Opt    TrainOptions
	exec   *G.Exec
	m1, m2 [][]float32 // Adam moments, one per parameter (W0,B0,W1,B1,...)
	step   int
	epoch  int
}

// NewTrainer prepares a trainer; backend nil means simplego
// "ops_sequential".
func NewTrainer(m *Model, opt TrainOptions, backend backends.Backend) (*Trainer, error) {
	if backend == nil {
		b, err := simplego.New("ops_sequential")
		if err != nil {
			return nil, err
		}
		backend = b
	}
	if opt.Batch <= 0 {
		opt.Batch = 16
	}
	if opt.MaxLines <= 0 {
		opt.MaxLines = 400
	}
	if opt.LR == 0 {
		opt.LR = 2e-3
	}
	t := &Trainer{M: m, Opt: opt}
	nLayers := len(m.W)
	exec, err := G.NewExec(backend, func(in []*G.Node) []*G.Node {
		x, mask, tgt := in[0], in[1], in[2]
		params := in[3:]
		loss := listwiseLoss(x, mask, tgt, params, nLayers)
		return append([]*G.Node{loss}, G.Gradient(loss, params...)...)
	})
	if err != nil {
		return nil, err
	}
	t.exec = exec
	for _, p := range t.params() {
		t.m1 = append(t.m1, make([]float32, len(p)))
		t.m2 = append(t.m2, make([]float32, len(p)))
	}
	return t, nil
}

func (t *Trainer) params() [][]float32 {
	var ps [][]float32
	for l := range t.M.W {
		ps = append(ps, t.M.W[l], t.M.B[l])
	}
	return ps
}

// listwiseLoss is the mean over cases of the cross-entropy between the
// normalised targets tgt [B,L] and the softmax of the line scores over the
// case's valid lines (mask [B,L] of 0/1).
func listwiseLoss(x, mask, tgt *G.Node, params []*G.Node, nLayers int) *G.Node {
	dims := x.Shape().Dimensions
	B, L, F := dims[0], dims[1], dims[2]
	h := G.Reshape(x, B*L, F)
	for l := 0; l < nLayers; l++ {
		w, b := params[2*l], params[2*l+1]
		h = G.Add(G.MatMul(h, w), G.InsertAxes(b, 0))
		if l+1 < nLayers {
			h = G.Max(h, G.ZerosLike(h))
		}
	}
	s := G.Reshape(h, B, L)
	s = G.Add(s, G.MulScalar(G.OneMinus(mask), -1e4))
	mx := G.StopGradient(G.ReduceAndKeep(s, G.ReduceMax, 1))
	logZ := G.Add(mx, G.Log(G.ReduceAndKeep(G.Exp(G.Sub(s, mx)), G.ReduceSum, 1)))
	logp := G.Sub(s, logZ)
	return G.DivScalar(G.Neg(G.ReduceAllSum(G.Mul(tgt, logp))), float64(B))
}

// batch packs cases into padded [B,L,F] standardised features, mask and
// normalised targets.
func (t *Trainer) batch(exs []*Example) (x, mask, tgt []float32) {
	B, L, F := t.Opt.Batch, t.Opt.MaxLines, len(t.M.Mean)
	x = make([]float32, B*L*F)
	mask = make([]float32, B*L)
	tgt = make([]float32, B*L)
	for b, ex := range exs {
		n := min(ex.N, L)
		xs := t.M.Standardise(ex.X[:n*F])
		copy(x[b*L*F:], xs)
		tg := ex.Targets(t.Opt.Lambda)
		sum := float32(0)
		for i := 0; i < n; i++ {
			mask[b*L+i] = 1
			sum += tg[i]
		}
		if sum == 0 {
			continue
		}
		for i := 0; i < n; i++ {
			tgt[b*L+i] = tg[i] / sum
		}
	}
	return
}

// Step runs one optimisation step on up to Batch examples and returns the
// loss.
func (t *Trainer) Step(exs []*Example) (float64, error) {
	B, L, F := t.Opt.Batch, t.Opt.MaxLines, len(t.M.Mean)
	x, mask, tgt := t.batch(exs)
	args := []any{
		tensors.FromFlatDataAndDimensions(x, B, L, F),
		tensors.FromFlatDataAndDimensions(mask, B, L),
		tensors.FromFlatDataAndDimensions(tgt, B, L),
	}
	dims := t.M.Cfg.LayerDims()
	for l := range t.M.W {
		args = append(args,
			tensors.FromFlatDataAndDimensions(t.M.W[l], dims[l][0], dims[l][1]),
			tensors.FromFlatDataAndDimensions(t.M.B[l], dims[l][1]))
	}
	outs, err := t.exec.Exec(args...)
	if err != nil {
		return 0, err
	}
	loss := float64(tensors.MustCopyFlatData[float32](outs[0])[0])
	t.step++
	const b1, b2, eps = 0.9, 0.999, 1e-8
	c1 := 1 - math.Pow(b1, float64(t.step))
	c2 := 1 - math.Pow(b2, float64(t.step))
	lr := t.Opt.LR
	for pi, p := range t.params() {
		g := tensors.MustCopyFlatData[float32](outs[1+pi])
		m1, m2 := t.m1[pi], t.m2[pi]
		decay := pi%2 == 0 // weights, not biases
		for i := range p {
			gi := float64(g[i])
			m1[i] = float32(b1*float64(m1[i]) + (1-b1)*gi)
			m2[i] = float32(b2*float64(m2[i]) + (1-b2)*gi*gi)
			upd := (float64(m1[i]) / c1) / (math.Sqrt(float64(m2[i])/c2) + eps)
			if decay {
				upd += t.Opt.WeightDecay * float64(p[i])
			}
			p[i] -= float32(lr * upd)
		}
	}
	for _, o := range outs {
		o.FinalizeAll()
	}
	return loss, nil
}

// Train runs the remaining epochs over exs (shuffled each epoch with the
// seed and epoch number, so a resumed run sees the same order).
func (t *Trainer) Train(exs []Example) error {
	logf := func(format string, a ...any) {
		if t.Opt.Log != nil {
			fmt.Fprintf(t.Opt.Log, format, a...)
		}
	}
	B := t.Opt.Batch
	for ; t.epoch < t.Opt.Epochs; t.epoch++ {
		rng := rand.New(rand.NewPCG(t.Opt.Seed, uint64(t.epoch)))
		perm := rng.Perm(len(exs))
		start := time.Now()
		last := start
		sum, cnt := 0.0, 0
		for i := 0; i+B <= len(perm); i += B {
			batch := make([]*Example, B)
			for j := range batch {
				batch[j] = &exs[perm[i+j]]
			}
			loss, err := t.Step(batch)
			if err != nil {
				return err
			}
			sum += loss
			cnt++
			if time.Since(last) > 5*time.Second {
				last = time.Now()
				logf("epoch %d step %d/%d loss %.4f (%.1f steps/s)\n", t.epoch+1, cnt, len(perm)/B, sum/float64(cnt), float64(cnt)/time.Since(start).Seconds())
			}
		}
		t.M.Cfg.Epochs = t.epoch + 1
		t.M.Cfg.Step = t.step
		msg := fmt.Sprintf("epoch %d done: loss %.4f, %d steps, %s", t.epoch+1, sum/math.Max(1, float64(cnt)), cnt, time.Since(start).Round(time.Millisecond))
		if t.Opt.Validate != nil {
			v := t.Opt.Validate(t.M)
			t.M.Cfg.Val = v
			msg += fmt.Sprintf(", val recall %.4f hit %.4f", v["recall"], v["hit"])
		}
		logf("%s\n", msg)
		if t.Opt.Out != "" {
			if err := t.Save(t.Opt.Out); err != nil {
				return err
			}
		}
	}
	return nil
}

type trainState struct {
	Epoch int `json:"epoch"`
	Step  int `json:"step"`
}

// Save writes the model and the optimizer state (optim.safetensors,
// state.json) to dir.
func (t *Trainer) Save(dir string) error {
	if err := t.M.Save(dir); err != nil {
		return err
	}
	var ts []safetensors.Tensor
	for i := range t.m1 {
		ts = append(ts,
			safetensors.NewFloat32Tensor(fmt.Sprintf("m1.%d", i), []int{len(t.m1[i])}, t.m1[i]),
			safetensors.NewFloat32Tensor(fmt.Sprintf("m2.%d", i), []int{len(t.m2[i])}, t.m2[i]))
	}
	if err := safetensors.WriteFile(filepath.Join(dir, "optim.safetensors"), ts, nil); err != nil {
		return err
	}
	b, _ := json.Marshal(trainState{Epoch: t.epoch + 1, Step: t.step})
	return os.WriteFile(filepath.Join(dir, "state.json"), b, 0o644)
}

// Resume loads the optimizer state written by Save from dir (the model
// itself must be loaded with Load and passed to NewTrainer).
func (t *Trainer) Resume(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		return err
	}
	var st trainState
	if err := json.Unmarshal(b, &st); err != nil {
		return err
	}
	f, err := safetensors.Open(filepath.Join(dir, "optim.safetensors"))
	if err != nil {
		return err
	}
	defer f.Close()
	for i := range t.m1 {
		if t.m1[i], err = f.Float32(fmt.Sprintf("m1.%d", i)); err != nil {
			return err
		}
		if t.m2[i], err = f.Float32(fmt.Sprintf("m2.%d", i)); err != nil {
			return err
		}
	}
	t.epoch, t.step = st.Epoch, st.Step
	return nil
}
