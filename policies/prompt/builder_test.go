package prompt

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/traces"
)

// size is the test counter: one token per 4 bytes of text and input, plus
// an opaque block's size, so every number below can be worked out by hand.
// size is the tests' counter; it checks the hash the builder hands it.
func size(b *traces.Block, h uint64) int {
	if h != b.Hash() {
		panic(fmt.Sprintf("counter given hash %x for a block whose hash is %x", h, b.Hash()))
	}
	return (len(b.Text)+len(b.Input)+3)/4 + b.Tokens
}

func txt(s string) traces.Block { return traces.Block{Kind: traces.Text, Text: s} }

func msg(role Role, blocks ...traces.Block) Message {
	return NewMessage(role, blocks, -1, Plain)
}

// sameBlocks reports the first difference between two builds, or "".
// Src is compared by content: a split block's Src lives in the builder.
func sameBlocks(got, want *Request) string {
	if got.Total != want.Total || got.Model != want.Model || got.Output != want.Output {
		return fmt.Sprintf("request (%s, total %d, output %d), want (%s, %d, %d)",
			got.Model, got.Total, got.Output, want.Model, want.Total, want.Output)
	}
	if len(got.Blocks) != len(want.Blocks) {
		return fmt.Sprintf("%d blocks, want %d", len(got.Blocks), len(want.Blocks))
	}
	for i := range got.Blocks {
		g, w := got.Blocks[i], want.Blocks[i]
		if (g.Src == nil) != (w.Src == nil) || (g.Src != nil && *g.Src != *w.Src) {
			return fmt.Sprintf("block %d: src %+v, want %+v", i, g.Src, w.Src)
		}
		g.Src, w.Src = nil, nil
		if g != w {
			return fmt.Sprintf("block %d: %+v, want %+v", i, g, w)
		}
	}
	return ""
}

// gen draws views from a small vocabulary, so equal blocks and equal
// messages recur at different positions (their chains must still differ).
type gen struct {
	r *rand.Rand
	n int
}

var words = []string{"read the file", "ok", "func main() {}", "error: exit 1", "日本語のテキスト", "{\"path\":\"a.go\"}", strings.Repeat("long output line\n", 40)}

func (g *gen) block(role Role) traces.Block {
	g.n++
	w := words[g.r.IntN(len(words))]
	switch role {
	case RoleAssistant:
		switch g.r.IntN(4) {
		case 0:
			return traces.Block{Kind: traces.Thinking, Text: "hmm " + w}
		case 1:
			return traces.Block{Kind: traces.ToolUse, ID: fmt.Sprintf("t%d", g.r.IntN(5)), Name: "Bash", Input: w}
		}
		return txt(w)
	case RoleTool:
		return traces.Block{Kind: traces.ToolResultBlock, ID: fmt.Sprintf("t%d", g.r.IntN(5)), Text: w, IsError: g.r.IntN(8) == 0}
	}
	if g.r.IntN(4) == 0 {
		// A registered scaffold: a static head and a volatile tail.
		head := strings.Repeat("You are a cron job. ", 1+g.r.IntN(3))
		return traces.Block{Kind: traces.Text, Text: head + w, ScaffoldEnd: len(head)}
	}
	if g.r.IntN(10) == 0 {
		return traces.Block{Kind: traces.Image, Name: fmt.Sprintf("img%d", g.r.IntN(3)), Tokens: 1 + g.r.IntN(2000)}
	}
	return txt(w)
}

func (g *gen) message() Message {
	role := []Role{RoleUser, RoleAssistant, RoleTool}[g.r.IntN(3)]
	bs := make([]traces.Block, 1+g.r.IntN(3))
	for i := range bs {
		bs[i] = g.block(role)
	}
	return NewMessage(role, bs, g.n, Plain)
}

// step changes v the way policies do: mostly appends, sometimes a rewrite
// in place, a compaction (prefix kept, summary, tail), a dropped tail, a
// floor change, or nothing.
func (g *gen) step(v *View) *View {
	v = v.Clone()
	n := len(v.Messages)
	switch k := g.r.IntN(20); {
	case k < 11 || n < 3:
		v.Messages = append(v.Messages, g.message())
	case k < 14:
		m := g.message()
		v.Messages[g.r.IntN(n)] = NewMessage(m.Role, m.Blocks, -1, Edited)
	case k < 16:
		from := g.r.IntN(n - 1)
		to := from + 1 + g.r.IntN(n-from-1)
		sum := NewMessage(RoleUser, []traces.Block{txt(fmt.Sprintf("summary of %d..%d", from, to))}, -1, BatchSummary)
		v.Messages = append(append(v.Messages[:from:from], sum), v.Messages[to:]...)
	case k < 17:
		v.Messages = v.Messages[:g.r.IntN(n)]
	case k < 18:
		v.System = []traces.Block{txt(words[g.r.IntN(3)])}
	}
	return v
}

// The incremental build is an optimization only: after any sequence of
// appends and rewrites it equals a fresh builder's build of the same view.
func TestBuilderIncrementalEqualsFresh(t *testing.T) {
	wires := []Wire{
		{},
		{PerMessage: 3, Tail: 1, SplitScaffolds: true},
		{PerMessage: 4, Tail: 2, StripStaleThinking: true},
		{PerMessage: 3, Tail: 1, StripStaleThinking: true, SplitScaffolds: true},
	}
	extra := func(m *Message) int { return int(m.Hash() % 7) }
	for wi, w := range wires {
		for seed := uint64(1); seed <= 8; seed++ {
			g := &gen{r: rand.New(rand.NewPCG(seed, uint64(wi)))}
			v := &View{
				Tools:  []traces.Block{{Kind: traces.ToolSchema, Name: "Bash", Input: `{"type":"object"}`}},
				System: []traces.Block{txt("You are helpful.")},
			}
			inc := NewBuilder(size, w)
			if seed%2 == 0 {
				inc.Extra = extra
			}
			for step := range 300 {
				v = g.step(v)
				if g.r.IntN(50) == 0 {
					inc.Reset()
				}
				fresh := NewBuilder(size, w)
				fresh.Extra = inc.Extra
				want := fresh.Build("m", v, step)
				got := inc.Build("m", v, step)
				if d := sameBlocks(got, want); d != "" {
					t.Fatalf("wire %d seed %d step %d (%d messages): %s", wi, seed, step, len(v.Messages), d)
				}
			}
		}
	}
}

// An append counts only the new message's blocks: the common prefix is not
// re-counted, which is what makes a replay linear in its calls.
func TestBuilderCountsOnlyWhatChanged(t *testing.T) {
	calls := 0
	counting := func(b *traces.Block, h uint64) int {
		if h != b.Hash() {
			t.Fatalf("counter given hash %x for a block whose hash is %x", h, b.Hash())
		}
		calls++
		return size(b, h)
	}
	b := NewBuilder(counting, Wire{PerMessage: 3})
	v := &View{System: []traces.Block{txt("sys")}}
	for i := range 50 {
		v.Messages = append(v.Messages, msg(RoleUser, txt(fmt.Sprintf("message %d", i)), txt("second block")))
	}
	b.Build("m", v, 0)
	if calls != 101 {
		t.Fatalf("first build counted %d blocks, want 101", calls)
	}
	calls = 0
	v.Messages = append(v.Messages, msg(RoleAssistant, txt("reply")))
	b.Build("m", v, 0)
	if calls != 1 {
		t.Errorf("append counted %d blocks, want 1", calls)
	}
	calls = 0
	v.Messages[40] = msg(RoleUser, txt("edited"))
	b.Build("m", v, 0)
	if want := 1 + 9*2 + 1; calls != want {
		t.Errorf("rewrite of message 40 of 51 counted %d blocks, want %d", calls, want)
	}
}

// Editing a block of message k changes the chain of every block from the
// edited one on, and of none before it, even when later messages are
// unchanged.
func TestChainChangesFromFirstEdit(t *testing.T) {
	v := &View{System: []traces.Block{txt("sys")}}
	for i := range 10 {
		v.Messages = append(v.Messages, msg(RoleUser, txt(fmt.Sprintf("u%d", i)), txt("same")))
	}
	before := NewBuilder(size, Wire{PerMessage: 3}).Build("m", v, 0)
	for k := range 10 {
		w := v.Clone()
		w.Messages[k] = msg(RoleUser, txt(fmt.Sprintf("u%d", k)), txt("changed"))
		after := NewBuilder(size, Wire{PerMessage: 3}).Build("m", w, 0)
		for i := range after.Blocks {
			a, o := after.Blocks[i], before.Blocks[i]
			edited := i >= 2+2*k // message k's first block kept its content and prefix
			if edited && a.Chain == o.Chain {
				t.Errorf("edit of message %d: block %d (message %d) kept its chain", k, i, a.Msg)
			}
			if !edited && a.Chain != o.Chain {
				t.Errorf("edit of message %d: block %d (message %d) changed its chain", k, i, a.Msg)
			}
		}
		if got, want := after.Prefix(before), 1+2*k+1; got != want {
			t.Errorf("edit of message %d: Prefix = %d, want %d", k, got, want)
		}
	}
}

// The same block at two positions has one Hash and two Chains; a message
// boundary is part of the chain, so [a b] and [a][b] differ.
func TestChainIdentity(t *testing.T) {
	b1 := NewBuilder(size, Wire{}).Build("m", &View{Messages: []Message{msg(RoleUser, txt("a"), txt("b"))}}, 0)
	b2 := NewBuilder(size, Wire{}).Build("m", &View{Messages: []Message{msg(RoleUser, txt("a")), msg(RoleUser, txt("b"))}}, 0)
	if b1.Blocks[1].Hash != b2.Blocks[1].Hash {
		t.Errorf("block b hashes %x and %x, want equal", b1.Blocks[1].Hash, b2.Blocks[1].Hash)
	}
	if b1.Blocks[1].Chain == b2.Blocks[1].Chain {
		t.Errorf("[a b] and [a][b] share the chain %x", b1.Blocks[1].Chain)
	}
	r := NewBuilder(size, Wire{}).Build("m", &View{Messages: []Message{msg(RoleUser, txt("x")), msg(RoleAssistant, txt("x"))}}, 0)
	if r.Blocks[0].Chain == r.Blocks[1].Chain {
		t.Errorf("x then x share the chain %x", r.Blocks[0].Chain)
	}
}

// The floor: tools first, then system; tools are never charged framing, the
// first system block is (as the first block of its section) not either.
func TestBuildFloorAndSizes(t *testing.T) {
	v := &View{
		Tools:    []traces.Block{{Kind: traces.ToolSchema, Name: "Bash", Input: "0123456"}},          // 2 tokens
		System:   []traces.Block{txt("12345678"), {Kind: traces.System, Name: "floor", Tokens: 100}}, // 2, 100
		Messages: []Message{msg(RoleUser, txt("1234")), msg(RoleAssistant, txt("12345678"), txt(""))},
	}
	r := NewBuilder(size, Wire{PerMessage: 3, Tail: 2}).Build("m", v, 7)
	type row struct {
		sec            Section
		msg, tok, end  int
		cacheable, scf bool
	}
	want := []row{
		{Tools, -1, 2, 2, true, false},
		{System, -1, 2, 4, true, false},
		{System, -1, 100, 104, true, false},
		{Messages, 0, 1 + 3, 108, true, false},
		{Messages, 1, 2 + 3, 113, true, false},
		{Messages, 1, 0, 113, false, false}, // empty text may not carry a breakpoint
	}
	if len(r.Blocks) != len(want) {
		t.Fatalf("%d blocks, want %d", len(r.Blocks), len(want))
	}
	for i, w := range want {
		b := r.Blocks[i]
		got := row{b.Section, b.Msg, b.Tokens, b.End, b.Cacheable, b.Scaffold}
		if got != w {
			t.Errorf("block %d = %+v, want %+v", i, got, w)
		}
	}
	if r.Total != 115 || r.Output != 7 || r.Model != "m" {
		t.Errorf("request total %d output %d model %q, want 115, 7, m", r.Total, r.Output, r.Model)
	}
}

// SplitScaffolds renders a registered scaffold as two blocks at ScaffoldEnd,
// the head marked Scaffold and charged the message framing; a message
// without a registration, or with it at an edge, stays one block.
func TestSplitScaffolds(t *testing.T) {
	head := strings.Repeat("static ", 8) // 56 bytes, 14 tokens
	sc := traces.Block{Kind: traces.Text, Text: head + "volatile", ScaffoldEnd: len(head)}
	edge := traces.Block{Kind: traces.Text, Text: head, ScaffoldEnd: len(head)}
	v := &View{Messages: []Message{msg(RoleUser, sc), msg(RoleUser, edge), msg(RoleUser, txt("plain"))}}

	r := NewBuilder(size, Wire{PerMessage: 3, SplitScaffolds: true}).Build("m", v, 0)
	if len(r.Blocks) != 4 {
		t.Fatalf("%d blocks, want 4 (scaffold, tail, edge, plain)", len(r.Blocks))
	}
	type row struct {
		text     string
		tok      int
		scaffold bool
		msg      int
	}
	want := []row{{head, 14 + 3, true, 0}, {"volatile", 2, false, 0}, {head, 14 + 3, false, 1}, {"plain", 2 + 3, false, 2}}
	for i, w := range want {
		b := r.Blocks[i]
		if got := (row{b.Src.Text, b.Tokens, b.Scaffold, b.Msg}); got != w {
			t.Errorf("block %d = %+v, want %+v", i, got, w)
		}
		if b.Src.ScaffoldEnd != 0 && i < 2 {
			t.Errorf("split block %d keeps ScaffoldEnd %d", i, b.Src.ScaffoldEnd)
		}
	}
	// The scaffold head is the same block whatever the tail: two cron runs
	// share it and differ only after it.
	v2 := &View{Messages: []Message{msg(RoleUser, traces.Block{Kind: traces.Text, Text: head + "other tail", ScaffoldEnd: len(head)})}}
	r2 := NewBuilder(size, Wire{PerMessage: 3, SplitScaffolds: true}).Build("m", v2, 0)
	if r2.Blocks[0].Chain != r.Blocks[0].Chain || r2.Blocks[1].Chain == r.Blocks[1].Chain {
		t.Errorf("scaffold chains %x/%x, tails %x/%x: want the heads equal and the tails different",
			r2.Blocks[0].Chain, r.Blocks[0].Chain, r2.Blocks[1].Chain, r.Blocks[1].Chain)
	}

	off := NewBuilder(size, Wire{PerMessage: 3}).Build("m", v, 0)
	if len(off.Blocks) != 3 || off.Blocks[0].Scaffold || off.Blocks[0].Tokens != 16+3 {
		t.Errorf("without SplitScaffolds: %d blocks, first scaffold=%v tokens %d; want 3, false, 19",
			len(off.Blocks), off.Blocks[0].Scaffold, off.Blocks[0].Tokens)
	}
}

// StripStaleThinking drops an assistant's thinking only before the last
// plain user message: the thinking of the current turn is still sent.
func TestStripStaleThinking(t *testing.T) {
	think := func(s string) traces.Block { return traces.Block{Kind: traces.Thinking, Text: s} }
	v := &View{Messages: []Message{
		msg(RoleUser, txt("q1")),
		msg(RoleAssistant, think("old thought"), txt("a1")),
		msg(RoleTool, traces.Block{Kind: traces.ToolResultBlock, ID: "t", Text: "out"}),
		msg(RoleAssistant, think("old thought 2"), txt("a2")),
		msg(RoleUser, txt("q2")),
		msg(RoleAssistant, think("new thought"), txt("a3")),
		msg(RoleTool, traces.Block{Kind: traces.ToolResultBlock, ID: "u", Text: "out"}),
	}}
	kinds := func(r *Request) string {
		var s []string
		for _, b := range r.Blocks {
			s = append(s, fmt.Sprintf("%d:%s", b.Msg, b.Src.Text))
		}
		return strings.Join(s, " ")
	}
	b := NewBuilder(size, Wire{PerMessage: 3, StripStaleThinking: true})
	r := b.Build("m", v, 0)
	want := "0:q1 1:a1 2:out 3:a2 4:q2 5:new thought 5:a3 6:out"
	if got := kinds(r); got != want {
		t.Errorf("stripped build = %s\nwant %s", got, want)
	}
	// The assistant message keeps its framing on its first sent block.
	if r.Blocks[1].Tokens != 1+3 {
		t.Errorf("a1 tokens %d, want 4 (its framing moves to it)", r.Blocks[1].Tokens)
	}
	// A new user message makes the current turn's thinking stale too.
	v.Messages = append(v.Messages, msg(RoleUser, txt("q3")))
	want = "0:q1 1:a1 2:out 3:a2 4:q2 5:a3 6:out 7:q3"
	if got := kinds(b.Build("m", v, 0)); got != want {
		t.Errorf("after q3 = %s\nwant %s", got, want)
	}
	all := NewBuilder(size, Wire{PerMessage: 3}).Build("m", v, 0)
	if len(all.Blocks) != 11 {
		t.Errorf("without stripping %d blocks, want 11", len(all.Blocks))
	}
}

// Extra is a message's calibration: it is added once, to the message's
// first block, beside the per-message framing.
func TestExtraChargedOncePerMessage(t *testing.T) {
	v := &View{Messages: []Message{
		msg(RoleUser, txt("1234"), txt("5678"), txt("9abc")),
		msg(RoleAssistant, traces.Block{Kind: traces.Thinking, Text: "zzzz"}, txt("1234")),
		msg(RoleUser, txt("1234")),
	}}
	calls := 0
	b := NewBuilder(size, Wire{PerMessage: 3, StripStaleThinking: true})
	b.Extra = func(m *Message) int { calls++; return 10 * (len(m.Blocks)) }
	r := b.Build("m", v, 0)
	want := []int{1 + 3 + 30, 1, 1, 1 + 3 + 20, 1 + 3 + 10} // the stripped thinking passes its charge on
	if len(r.Blocks) != len(want) {
		t.Fatalf("%d blocks, want %d", len(r.Blocks), len(want))
	}
	for i, w := range want {
		if r.Blocks[i].Tokens != w {
			t.Errorf("block %d: %d tokens, want %d", i, r.Blocks[i].Tokens, w)
		}
	}
	if calls != 3 {
		t.Errorf("Extra called %d times, want 3 (once per message)", calls)
	}
	if r.Blocks[4].End != 34+1+1+24+14 {
		t.Errorf("end %d, want %d", r.Blocks[4].End, 34+1+1+24+14)
	}
}

// Reset forgets the last build; the next one is whole and equal.
func TestBuilderReset(t *testing.T) {
	v := &View{System: []traces.Block{txt("sys")}, Messages: []Message{msg(RoleUser, txt("a")), msg(RoleAssistant, txt("b"))}}
	calls := 0
	b := NewBuilder(func(bl *traces.Block, h uint64) int { calls++; return size(bl, h) }, Wire{PerMessage: 3})
	want := b.Build("m", v, 0).Total
	b.Reset()
	calls = 0
	if got := b.Build("m", v, 0).Total; got != want || calls != 3 {
		t.Errorf("after Reset: total %d with %d counts, want %d with 3", got, calls, want)
	}
}

// A Message made as a struct literal (no NewMessage) still hashes by
// content.
func TestMessageHash(t *testing.T) {
	a := msg(RoleUser, txt("x"))
	lit := Message{Role: RoleUser, Blocks: []traces.Block{txt("x")}}
	if a.Hash() != lit.Hash() {
		t.Errorf("literal message hash %x, NewMessage %x", lit.Hash(), a.Hash())
	}
	if b := msg(RoleAssistant, txt("x")); b.Hash() == a.Hash() {
		t.Errorf("user and assistant x share hash %x", a.Hash())
	}
}

// Clone copies the slices a policy may change and shares the messages.
func TestViewClone(t *testing.T) {
	v := &View{System: []traces.Block{txt("s")}, Messages: []Message{msg(RoleUser, txt("a"))}}
	c := v.Clone()
	c.System[0] = txt("t")
	c.Messages[0] = msg(RoleUser, txt("b"))
	c.Messages = append(c.Messages, msg(RoleUser, txt("c")))
	if v.System[0].Text != "s" || v.Messages[0].Blocks[0].Text != "a" || len(v.Messages) != 1 {
		t.Errorf("clone changed the original: %+v", v)
	}
}

// BenchmarkBuildAppend is the builder's part of one call of a long
// session: one message appended to a 2000-message view.
func BenchmarkBuildAppend(b *testing.B) {
	v := &View{System: []traces.Block{txt("sys")}}
	for i := range 2000 {
		v.Messages = append(v.Messages, msg(Role(1+i%3), txt(fmt.Sprintf("message %d", i))))
	}
	bl := NewBuilder(size, Wire{PerMessage: 3, Tail: 1, SplitScaffolds: true})
	bl.Build("m", v, 0)
	longer := *v
	longer.Messages = append(v.Messages[:len(v.Messages):len(v.Messages)], msg(RoleUser, txt("next")))
	views := [2]*View{v, &longer}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		bl.Build("m", views[i%2], 0)
	}
}

// A floor changed in place (same slice, new content) is seen as changed.
func TestBuilderFloorChangedInPlace(t *testing.T) {
	v := &View{System: []traces.Block{txt("first system prompt")}, Messages: []Message{msg(RoleUser, txt("a"))}}
	b := NewBuilder(size, Wire{})
	b.Build("m", v, 0)
	v.System[0] = txt("second")
	got := b.Build("m", v, 0)
	want := NewBuilder(size, Wire{}).Build("m", v, 0)
	if d := sameBlocks(got, want); d != "" {
		t.Errorf("after an in-place floor edit: %s", d)
	}
}

// A correction larger than its message leaves the block at zero tokens:
// block ends never decrease, so a cached prefix never ends past the prompt.
func TestNegativeExtraKeepsEndsMonotonic(t *testing.T) {
	b := NewBuilder(func(bl *traces.Block, _ uint64) int { return len(bl.Text) }, Wire{PerMessage: 2})
	b.Extra = func(m *Message) int {
		if m.Event == 1 {
			return -100
		}
		return 0
	}
	v := &View{System: []traces.Block{{Kind: traces.System, Text: "system prompt"}}, Messages: []Message{
		NewMessage(RoleUser, []traces.Block{{Kind: traces.Text, Text: "hello"}}, 0, Plain),
		NewMessage(RoleAssistant, []traces.Block{{Kind: traces.Text, Text: "hi"}}, 1, Plain),
		NewMessage(RoleUser, []traces.Block{{Kind: traces.Text, Text: "again"}}, 2, Plain),
	}}
	req := b.Build("m", v, 0)
	for i := 1; i < len(req.Blocks); i++ {
		if req.Blocks[i].End < req.Blocks[i-1].End || req.Blocks[i].Tokens < 0 {
			t.Fatalf("block %d: end %d after %d, tokens %d", i, req.Blocks[i].End, req.Blocks[i-1].End, req.Blocks[i].Tokens)
		}
	}
	if got := req.Blocks[2].Tokens; got != 0 {
		t.Errorf("the over-corrected block has %d tokens, want 0", got)
	}
	if want := 13 + (5 + 2) + 0 + (5 + 2); req.Total != want {
		t.Errorf("total %d, want %d", req.Total, want)
	}
}
