package compact

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// The prune passes give the same messages with no memo (every argument
// decoded, every demotion written, every text hashed where it is needed),
// with a fresh memo and with one that has seen every block, at every length
// of a growing session: the batch compaction's phase 1 (tail demoted) and
// the proactive prune's passes. Results repeat (pass 1), arguments are long
// JSON (pass 3), some results are errors or have no call.
func TestPruneMemoSameAsFullPass(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 2))
	outputs := []string{strings.Repeat("same output\n", 40), "short", strings.Repeat("é line\n", 90)}
	var msgs []prompt.Message
	for i := range 100 {
		id := fmt.Sprint("call", i)
		input := fmt.Sprintf(`{"path":"f%d.go","content":%q}`, i, strings.Repeat("x", 100+r.IntN(900)))
		if r.IntN(5) == 0 {
			input = "not json " + strings.Repeat("y", 600)
		}
		msgs = append(msgs, prompt.NewMessage(prompt.RoleAssistant, []traces.Block{txt("step"), {Kind: traces.ToolUse, ID: id, Name: "Write", Input: input}}, 2*i, prompt.Plain))
		if r.IntN(8) == 0 {
			id = "orphan" // a result whose call is not in the view
		}
		out := outputs[r.IntN(len(outputs))] + strings.Repeat("z", r.IntN(3)*150)
		msgs = append(msgs, prompt.NewMessage(prompt.RoleTool, []traces.Block{{Kind: traces.ToolResultBlock, ID: id, Text: out, IsError: r.IntN(6) == 0}}, 2*i+1, prompt.Plain))
	}
	warm := &Memo{}
	edits := 0
	for range 2 { // the second round finds every value in warm
		for n := 8; n <= len(msgs); n += 7 {
			for _, o := range []pruneOpts{
				{head: 3, tailStart: max(n-20, 3), minChars: 200},
				{head: 0, tailStart: n - 8, minChars: summaryMinChars, demoteTail: true, tailBudget: 200},
			} {
				full := prunePasses(msgs[:n], o)
				for i := range full {
					if full[i].Hash() != msgs[i].Hash() {
						edits++
					}
				}
				o.memo = &Memo{}
				require.Equal(t, full, prunePasses(msgs[:n], o), "fresh memo, %d messages", n)
				o.memo = warm
				require.Equal(t, full, prunePasses(msgs[:n], o), "warm memo, %d messages", n)
			}
		}
	}
	// The passes rewrote messages, and the memo was read: arguments cut,
	// results demoted and hashed.
	require.Positive(t, edits)
	require.NotEmpty(t, warm.args)
	require.NotEmpty(t, warm.lines)
	require.NotEmpty(t, warm.texts)
}

// Masking decides the same with no memo, a fresh memo and one that has
// seen every observation, at every length of a growing session and every
// gate: what masking a message reclaims is a function of the message.
func TestMaskMemoSameAsFullPass(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 3))
	var msgs []prompt.Message
	for i := range 60 {
		id := fmt.Sprint("call", i)
		msgs = append(msgs, prompt.NewMessage(prompt.RoleAssistant, []traces.Block{txt("step"), {Kind: traces.ToolUse, ID: id, Name: "Read"}}, 2*i, prompt.Plain))
		out := strings.Repeat("line of output\n", r.IntN(80))
		if r.IntN(6) == 0 {
			out = ClearedPlaceholder // masked already
		}
		msgs = append(msgs, prompt.NewMessage(prompt.RoleTool, []traces.Block{{Kind: traces.ToolResultBlock, ID: id, Text: out}}, 2*i+1, prompt.Plain))
	}
	cfg := DefaultConfig()
	cfg.Masking.KeepLast = 3
	m, err := New(cfg, Model{Name: "m", Window: 200_000}, nil, nil)
	require.NoError(t, err)
	warm := &Memo{}
	commits := 0
	for range 2 { // the second round finds every reclaim in warm
		for n := 4; n <= len(msgs); n += 5 {
			v := &prompt.View{Messages: msgs[:n]}
			for _, gate := range []int{1, 300, 4096} {
				m.ShareMemo(nil)
				full, fp, fok := m.mask(v, "t", gate)
				for _, mm := range []*Memo{{}, warm} {
					m.ShareMemo(mm)
					got, p, ok := m.mask(v, "t", gate)
					require.Equal(t, fok, ok, "%d messages, gate %d", n, gate)
					require.Equal(t, fp, p, "%d messages, gate %d", n, gate)
					require.Equal(t, full.Messages, got.Messages, "%d messages, gate %d", n, gate)
				}
				if fok {
					commits++
				}
			}
		}
	}
	require.Positive(t, commits)
	require.NotEmpty(t, warm.masks)
}
