package estimate

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// An estimator (and the calibrated fingerprint) that extends its last
// estimate when a view grows in place gives what a fresh one gives, whatever the sequence: appends into
// one backing array (as the engine makes them), rewrites in a cloned view,
// truncations, and floor changes. Writing into a view's messages in place
// breaks the View contract (views are immutable; Clone to change one) and
// is not tested: the estimators key their last view on slice identity.
func TestEstimateIncrementalEqualsFresh(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	memo := NewMemo(byteTok{})
	words := []string{"ok", "read the file", "日本語のテキスト", "error: exit 1", "привет мир"}
	newMsg := func() prompt.Message {
		role := []prompt.Role{prompt.RoleUser, prompt.RoleAssistant, prompt.RoleTool}[r.IntN(3)]
		bs := []traces.Block{{Kind: traces.Text, Text: words[r.IntN(len(words))]}}
		if r.IntN(4) == 0 {
			bs = append(bs, traces.Block{Kind: traces.ToolUse, ID: fmt.Sprint(r.IntN(9)), Name: "Bash", Input: `{"c":"ls"}`})
		}
		return prompt.NewMessage(role, bs, -1, prompt.Plain)
	}
	for seed := range 6 {
		rough, exact := NewRough(), NewExact(memo, 3)
		cal := NewCalibrated(NewRough())
		backing := make([]prompt.Message, 0, 1024)
		v := &prompt.View{System: []traces.Block{{Kind: traces.System, Text: "system prompt"}}}
		for step := range 400 {
			switch k := r.IntN(20); {
			case k < 12 || len(v.Messages) < 2:
				// Append in place when v still ends the backing array.
				n := len(v.Messages)
				if n == 0 || len(backing) != n || &backing[0] != &v.Messages[0] {
					backing = append(backing[:0:0], v.Messages...)
				}
				backing = append(backing, newMsg())
				w := *v
				w.Messages = backing[: n+1 : n+1]
				v = &w
			case k < 14:
				w := v.Clone()
				w.Messages[r.IntN(len(w.Messages))] = newMsg()
				v = w
			case k < 16:
				w := *v
				w.Messages = v.Messages[:r.IntN(len(v.Messages))]
				v = &w
			case k < 17:
				w := *v
				w.System = []traces.Block{{Kind: traces.System, Text: words[r.IntN(len(words))]}}
				v = &w
			}
			if got, want := rough.Estimate(v), NewRough().Estimate(v); got != want {
				t.Fatalf("seed %d step %d (%d messages): rough %d, fresh %d", seed, step, len(v.Messages), got, want)
			}
			if got, want := exact.Estimate(v), NewExact(memo, 3).Estimate(v); got != want {
				t.Fatalf("seed %d step %d (%d messages): exact %d, fresh %d", seed, step, len(v.Messages), got, want)
			}
			// The calibrated fingerprint of a prefix (an anchor's count)
			// and of the whole view, as Matches and Capture take them.
			for _, n := range []int{r.IntN(len(v.Messages) + 1), len(v.Messages)} {
				if got, want := cal.fingerprint(v, n), NewCalibrated(NewRough()).fingerprint(v, n); got != want {
					t.Fatalf("seed %d step %d: fingerprint of %d of %d messages %x, fresh %x", seed, step, n, len(v.Messages), got, want)
				}
			}
		}
	}
}
