package compact

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// referenceTranscript is SummaryTranscript as it was written first, with a
// string builder per message: the one-buffer version must render the same
// bytes.
func referenceTranscript(msgs []prompt.Message) string {
	var b strings.Builder
	for i := range msgs {
		m := &msgs[i]
		var body strings.Builder
		for j := range m.Blocks {
			bl := &m.Blocks[j]
			switch bl.Kind {
			case traces.Thinking:
				continue
			case traces.ToolUse:
				body.WriteString("[tool call " + bl.Name + "] " + capMiddle(bl.Input, argCapChars, argHeadChars, argCapChars-argHeadChars-100) + "\n")
			case traces.ToolResultBlock:
				body.WriteString("[tool result] " + bl.Text + "\n")
			case traces.Image:
				body.WriteString("[image]\n")
			default:
				if bl.Opaque() {
					body.WriteString("[" + bl.Name + ": " + strconv.Itoa(bl.Tokens) + " tokens not shown]\n")
					continue
				}
				body.WriteString(bl.Text + "\n")
			}
		}
		b.WriteString(strings.ToUpper(m.Role.String()) + ": " + capMiddle(body.String(), msgCapChars, msgHeadChars, msgTailChars) + "\n")
	}
	s := b.String()
	if len(s) > SummaryInputChars {
		head := int(SummaryInputChars * summaryInputHead)
		tail := SummaryInputChars - head
		s = s[:safeCut(s, head)] + "\n...[middle of the conversation omitted]...\n" + s[safeCut(s, len(s)-tail):]
	}
	return s
}

// Random windows of every block kind, with multi-byte text so that the
// caps' cuts land inside runes, and bodies on both sides of each cap.
func TestSummaryTranscriptReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 3))
	pieces := []string{"a", "ok\n", "é", "日本", "🙂", " ", "{\"k\":\"v\"}"}
	text := func() string {
		n := []int{0, 10, 1400, 1600, 5990, 6010, 9000}[r.IntN(7)]
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	kinds := []traces.BlockKind{traces.Text, traces.Thinking, traces.ToolUse, traces.ToolResultBlock, traces.Image}
	for round := range 60 {
		var msgs []prompt.Message
		for range 1 + r.IntN(60) {
			var bs []traces.Block
			for range 1 + r.IntN(3) {
				b := traces.Block{Kind: kinds[r.IntN(len(kinds))], Name: "Bash"}
				switch b.Kind {
				case traces.ToolUse:
					b.Input = text()
				default:
					b.Text = text()
				}
				if r.IntN(10) == 0 {
					b.Kind, b.Text, b.Tokens = traces.Text, "", 1+r.IntN(1e6)
				}
				bs = append(bs, b)
			}
			msgs = append(msgs, prompt.NewMessage(prompt.Role(r.IntN(4)), bs, -1, prompt.Plain))
		}
		// The bound the one-allocation path sizes the string by holds.
		for i := range msgs {
			if n, bound := len(referenceTranscript(msgs[i:i+1])), transcriptBound(&msgs[i]); n > bound {
				t.Fatalf("round %d: message %d renders to %d bytes, over its bound %d", round, i, n, bound)
			}
		}
		if got, want := SummaryTranscript(msgs), referenceTranscript(msgs); got != want {
			t.Fatalf("round %d: transcript differs from the reference (%d vs %d bytes)", round, len(got), len(want))
		}
	}
}
