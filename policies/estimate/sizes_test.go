package estimate

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// RoughSizes gives what the rough rules give, block by block, message by
// message and floor by floor, whether it is meeting a block for the first
// time or has kept it, and for one block read by several rules (a long
// schema sized with RoughTool in the floor and with Rough by MsgBudget).
func TestRoughSizesSameAsRules(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 8))
	words := []string{"word ", "日本語", "é", "\n", "{\"k\": 1}"}
	text := func() string {
		var b strings.Builder
		for n := []int{0, 40, 255, 256, 3000}[r.IntN(5)]; b.Len() < n; {
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	kinds := []traces.BlockKind{traces.Text, traces.Thinking, traces.ToolUse, traces.ToolResultBlock, traces.ToolSchema, traces.Image, traces.System}
	block := func() traces.Block {
		b := traces.Block{Kind: kinds[r.IntN(len(kinds))], ID: "t1", Name: "Bash", Text: text(), Input: text()}
		if r.IntN(8) == 0 {
			b.Text, b.Input, b.Tokens = "", "", 1+r.IntN(900) // opaque
		}
		return b
	}
	var s RoughSizes
	var msgs []prompt.Message
	var floors []*prompt.View
	for range 300 {
		bs := []traces.Block{block(), block()}
		msgs = append(msgs, prompt.NewMessage(prompt.RoleUser, bs, -1, prompt.Plain))
		floors = append(floors, &prompt.View{Tools: []traces.Block{block()}, System: bs})
	}
	for round := range 2 { // the second finds every size kept
		for i := range msgs {
			m := &msgs[i]
			if got, want := s.Message(m), RoughMessage(m); got != want {
				t.Fatalf("round %d, message %d: Message %d, RoughMessage %d", round, i, got, want)
			}
			if got, want := s.Budget(m), MsgBudget(m); got != want {
				t.Fatalf("round %d, message %d: Budget %d, MsgBudget %d", round, i, got, want)
			}
			if got, want := s.Floor(floors[i]), RoughFloor(floors[i]); got != want {
				t.Fatalf("round %d, floor %d: Floor %d, RoughFloor %d", round, i, got, want)
			}
		}
	}
	if len(s.m) == 0 {
		t.Fatal("no size was kept")
	}
	// The rules themselves, by hand, on one long schema.
	long := traces.Block{Kind: traces.ToolSchema, Name: "Bash", Text: strings.Repeat("a", 400), Input: strings.Repeat("b", 400)}
	m := prompt.NewMessage(prompt.RoleUser, []traces.Block{long}, -1, prompt.Plain)
	if got := s.Block(&long, long.Hash()); got != (4+400+400+3)/4 {
		t.Errorf("schema by RoughTool: %d", got)
	}
	if got := s.Budget(&m); got != 10+100 {
		t.Errorf("schema in MsgBudget, by Rough of its text: %d", got)
	}
}

// Estimators sharing a FloorHashes (and rough sizes) size and fingerprint
// floors as estimators that hash each floor themselves, floor after floor,
// including a floor asked about again after another.
func TestSharedFloorHashes(t *testing.T) {
	memo := NewMemo(byteTok{})
	var sizes RoughSizes
	fh := &FloorHashes{}
	rough, exact := NewRough(), NewExact(memo, 3)
	rough.Sizes, rough.Floors, exact.Floors = &sizes, fh, fh
	cal := NewCalibrated(rough)
	big := strings.Repeat("schema text ", 100)
	var views []*prompt.View
	for i := range 6 {
		views = append(views, &prompt.View{
			Tools:    []traces.Block{{Kind: traces.ToolSchema, Name: "Bash", Text: big, Input: `{"type":"object"}`}},
			System:   []traces.Block{{Kind: traces.System, Text: big + strings.Repeat("x", i)}, {Kind: traces.System, Name: "floor", Tokens: 7}},
			Messages: []prompt.Message{prompt.NewMessage(prompt.RoleUser, []traces.Block{{Kind: traces.Text, Text: "hi"}}, 0, prompt.Plain)},
		})
	}
	for _, i := range []int{0, 1, 0, 2, 3, 3, 5, 4, 0} {
		v := views[i]
		fr, fe, fc := NewRough(), NewExact(memo, 3), NewCalibrated(NewRough())
		if got, want := rough.Floor(v), fr.Floor(v); got != want {
			t.Fatalf("view %d: rough floor %d, want %d", i, got, want)
		}
		if got, want := exact.Floor(v), fe.Floor(v); got != want {
			t.Fatalf("view %d: exact floor %d, want %d", i, got, want)
		}
		if got, want := exact.Estimate(v), fe.Estimate(v); got != want {
			t.Fatalf("view %d: exact estimate %d, want %d", i, got, want)
		}
		cal.Capture("m", v, 100)
		fc.Capture("m", v, 100)
		got, _ := cal.Anchor()
		if want, _ := fc.Anchor(); got != want {
			t.Fatalf("view %d: anchor %+v, want %+v", i, got, want)
		}
	}
}
