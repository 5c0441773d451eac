package fit

import (
	"math"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/ctxsim/ctxsim/traces"
)

// SizeKind groups blocks whose tokens a provider's tokenizer counts alike,
// relative to the local tokenizer.
type SizeKind int

// Size kinds.
const (
	SizeText SizeKind = iota
	SizeThinking
	SizeToolUse
	SizeToolResult
	numSizeKinds
)

// KindOf is the size kind of a block.
func KindOf(b *traces.Block) SizeKind {
	switch b.Kind {
	case traces.Thinking:
		return SizeThinking
	case traces.ToolUse, traces.ToolSchema:
		return SizeToolUse
	case traces.ToolResultBlock:
		return SizeToolResult
	}
	return SizeText
}

// A Calibration converts local token counts into a provider's billed tokens:
// per size kind a ratio and a fixed cost per block (the provider's encoding
// of a tool call or result around its content), and a fixed cost per message
// (role framing). Claude's tokenizer is not public: a Calibration fitted on
// billed usage is how a local tokenizer is made to agree with it.
type Calibration struct {
	Ratio   [numSizeKinds]float64 `json:"ratio"`
	Block   [numSizeKinds]float64 `json:"block"`
	Message float64               `json:"message"`
}

// DefaultCalibration is the prior: Claude's tokenizer counts about 10% more
// tokens than o200k_base on the shared sessions' content, a tool call or
// result costs ~35 tokens of encoding, and a message a few.
var DefaultCalibration = Calibration{
	Ratio:   [numSizeKinds]float64{1.1, 1.1, 1.1, 1.1},
	Block:   [numSizeKinds]float64{0, 0, 35, 35},
	Message: 4,
}

// OpenAICalibration is the prior for OpenAI's models, whose tokenizer is
// the local one (o200k_base): in the API captures (../shared/traces/
// captures, trace_codex.json) and the corpus's Codex rollouts, a request
// grows by the o200k count of what was added, about 8 tokens per input
// item (a message, a tool call, a tool output) and a few more per call.
var OpenAICalibration = Calibration{
	Ratio:   [numSizeKinds]float64{1, 1, 1, 1},
	Block:   [numSizeKinds]float64{0, 0, 8, 0},
	Message: 8,
}

// PriorFor is the prior for a model: OpenAICalibration for OpenAI's
// (gpt-*, o1/o3/o4, codex-*), DefaultCalibration for the others.
func PriorFor(model string) Calibration {
	m := strings.TrimPrefix(strings.ToLower(model), "openai/")
	for _, p := range []string{"gpt-", "o1", "o3", "o4", "codex-"} {
		if strings.HasPrefix(m, p) {
			return OpenAICalibration
		}
	}
	return DefaultCalibration
}

// Size is the calibrated size of a block of local count n.
func (c *Calibration) Size(k SizeKind, n int) int {
	if n == 0 && k != SizeToolResult && k != SizeToolUse {
		return 0
	}
	return max(0, int(math.Round(c.Ratio[k]*float64(n)+c.Block[k])))
}

// Features are what a Calibration multiplies: local tokens per kind, blocks
// per kind, messages.
type Features [2*numSizeKinds + 1]float64

// AddBlock adds a block of local count n.
func (f *Features) AddBlock(k SizeKind, n int) {
	f[k] += float64(n)
	f[int(numSizeKinds)+int(k)]++
}

// AddMessage adds one message.
func (f *Features) AddMessage() { f[2*numSizeKinds]++ }

// Predict is the calibrated size of f.
func (c *Calibration) Predict(f *Features) float64 {
	s := c.Message * f[2*numSizeKinds]
	for k := range numSizeKinds {
		s += c.Ratio[k]*f[k] + c.Block[k]*f[int(numSizeKinds)+int(k)]
	}
	return s
}

// A Ridge estimates a Calibration from (features, billed size) samples by ridge
// regression toward a prior: with few samples it stays near the prior, with
// many it follows the data. It accumulates the normal equations, so adding a
// sample and solving cost O(1) in the number of samples.
type Ridge struct {
	Prior Calibration
	// Strength is the weight of the prior per coefficient, in the units of
	// the squared features: large for ratios (a few thousand tokens of
	// evidence move them), small for fixed costs.
	Strength Features
	xtx      [len(Features{})][len(Features{})]float64
	xty      [len(Features{})]float64
	n        int
}

// NewRidge returns a fit with the default prior and strengths.
func NewRidge() *Ridge { return NewRidgeFrom(DefaultCalibration) }

// NewRidgeFrom returns a fit with prior p and the default strengths.
func NewRidgeFrom(p Calibration) *Ridge {
	f := &Ridge{Prior: p}
	for k := range numSizeKinds {
		f.Strength[k] = 2e4
		f.Strength[int(numSizeKinds)+int(k)] = 4
	}
	f.Strength[2*numSizeKinds] = 4
	return f
}

// Add records that content with features x was billed y tokens.
func (f *Ridge) Add(x Features, y float64) {
	for i := range x {
		f.xty[i] += x[i] * y
		for j := range x {
			f.xtx[i][j] += x[i] * x[j]
		}
	}
	f.n++
}

// N is the number of samples added.
func (f *Ridge) N() int { return f.n }

func (c *Calibration) vector() Features {
	var v Features
	for k := range numSizeKinds {
		v[k] = c.Ratio[k]
		v[int(numSizeKinds)+int(k)] = c.Block[k]
	}
	v[2*numSizeKinds] = c.Message
	return v
}

// system is Solve's normal equations and solution.
type system struct {
	a *mat.Dense
	b *mat.VecDense
	w mat.VecDense
}

var systems = sync.Pool{New: func() any {
	n := len(Features{})
	return &system{a: mat.NewDense(n, n, nil), b: mat.NewVecDense(n, nil)}
}}

// Solve returns the calibration that best explains the samples given the
// prior. Negative ratios are clamped to the prior (a degenerate fit).
func (f *Ridge) Solve() Calibration {
	n := len(Features{})
	// The system's matrices come from a pool: an anchored replay solves
	// once per call. Every element is set below, so a reused one solves
	// exactly as a fresh one.
	sc := systems.Get().(*system)
	defer systems.Put(sc)
	a, b, w := sc.a, sc.b, &sc.w
	p := f.Prior.vector()
	for i := range n {
		for j := range n {
			a.Set(i, j, f.xtx[i][j])
		}
		a.Set(i, i, a.At(i, i)+f.Strength[i])
		b.SetVec(i, f.xty[i]+f.Strength[i]*p[i])
	}
	if err := w.SolveVec(a, b); err != nil {
		return f.Prior
	}
	var c Calibration
	for k := range numSizeKinds {
		c.Ratio[k] = w.AtVec(int(k))
		if c.Ratio[k] <= 0 {
			c.Ratio[k] = f.Prior.Ratio[k]
		}
		c.Block[k] = w.AtVec(int(numSizeKinds) + int(k))
	}
	c.Message = w.AtVec(2 * int(numSizeKinds))
	return c
}
