package fit

import (
	"math"
	"math/rand/v2"
	"testing"
)

// With many samples the fit recovers the calibration that generated them;
// with two it stays near the prior.
func TestFitRecoversCalibration(t *testing.T) {
	truth := Calibration{
		Ratio:   [numSizeKinds]float64{1.18, 1.05, 1.30, 1.09},
		Block:   [numSizeKinds]float64{0, 0, 40, 28},
		Message: 5,
	}
	r := rand.New(rand.NewPCG(1, 2))
	sample := func() (Features, float64) {
		var f Features
		for range 1 + r.IntN(3) {
			f.AddMessage()
			for range 1 + r.IntN(3) {
				k := SizeKind(r.IntN(int(numSizeKinds)))
				f.AddBlock(k, 1+r.IntN(3000))
			}
		}
		return f, truth.Predict(&f) + r.NormFloat64()*3 // a few tokens of noise
	}
	fit := NewRidge()
	for range 400 {
		f, y := sample()
		fit.Add(f, y)
	}
	got := fit.Solve()
	for k := range numSizeKinds {
		if math.Abs(got.Ratio[k]-truth.Ratio[k]) > 0.01 {
			t.Errorf("ratio[%d] = %.4f, want %.2f", k, got.Ratio[k], truth.Ratio[k])
		}
		if math.Abs(got.Block[k]-truth.Block[k]) > 8 {
			t.Errorf("block[%d] = %.1f, want %.0f", k, got.Block[k], truth.Block[k])
		}
	}
	if fit.N() != 400 {
		t.Errorf("N = %d", fit.N())
	}

	few := NewRidge()
	for range 2 {
		f, y := sample()
		few.Add(f, y)
	}
	c := few.Solve()
	for k := range numSizeKinds {
		// Two samples cannot pin four ratios: they stay within reach of
		// the prior (1.1) instead of flying off.
		if c.Ratio[k] < 0.8 || c.Ratio[k] > 1.5 {
			t.Errorf("two samples: ratio[%d] = %.3f, want near the prior", k, c.Ratio[k])
		}
	}
	if got := NewRidge().Solve(); got != DefaultCalibration {
		t.Errorf("no samples: %+v, want the prior", got)
	}
}

func TestCalibrationSize(t *testing.T) {
	c := Calibration{Ratio: [numSizeKinds]float64{1.1, 1, 1, 1}, Block: [numSizeKinds]float64{0, 0, 35, 30}}
	if got := c.Size(SizeText, 100); got != 110 {
		t.Errorf("text of 100 = %d, want 110", got)
	}
	if got := c.Size(SizeToolResult, 0); got != 30 {
		t.Errorf("empty tool result = %d, want its fixed 30", got)
	}
	if got := c.Size(SizeText, 0); got != 0 {
		t.Errorf("empty text = %d, want 0", got)
	}
}
