package synth

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/policies/estimate"
)

func TestScratchRatios(t *testing.T) {
	tok, err := estimate.Tiktoken("o200k_base")
	require.NoError(t, err)
	for _, k := range Contents() {
		r := rand.New(rand.NewPCG(1, 2))
		chars, toks := 0, 0
		for range 50 {
			s := Sample(r, k, 4000)
			chars += utf8.RuneCountInString(s)
			toks += tok.Count(s)
		}
		t.Logf("%-9s %.3f chars/token", k, float64(chars)/float64(toks))
	}
}

func TestScratchFloor(t *testing.T) {
	tok, _ := estimate.Tiktoken("o200k_base")
	for _, h := range []harness{codingHarness, cronHarness} {
		n := 0
		for _, b := range h.floor() {
			n += tok.Count(estimate.BlockText(&b))
		}
		t.Logf("%s floor %d tokens", h.name, n)
	}
}

func TestScratchProfiles(t *testing.T) {
	tok, _ := estimate.Tiktoken("o200k_base")
	for _, p := range Profiles() {
		ss, err := Generate(p.Name, 3, 1, Options{})
		require.NoError(t, err)
		st := Measure(ss, tok)
		t.Logf("%-13s %+v dur=%v", p.Name, st, st.Duration)
	}
}
