package provider

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/traces"
)

func newTestAnthropic(minCacheable int) *Anthropic {
	return NewAnthropic(AnthropicOptions{Common: Common{Prices: testCard(minCacheable, 200000), Latency: zeroLatency}})
}

// TestAnthropicRules walks one conversation per rule of reference/
// providers.md §7 and checks the billed usage of every call.
func TestAnthropicRules(t *testing.T) {
	type call struct {
		at   time.Duration // since t0
		grow func(c *convo)
		ttl  prompt.TTL
		bps  []int
		want [5]int64 // input, 5m write, 1h write, read, output
	}
	tests := []struct {
		name  string
		min   int
		calls []call
	}{
		{"write then read the previous prefix", 1024, []call{
			{0, func(c *convo) { c.add(prompt.RoleUser, 500) }, prompt.TTL5m, []int{-1}, [5]int64{1, 2500, 0, 0, 7}},
			{time.Minute, func(c *convo) { c.add(prompt.RoleAssistant, 100).add(prompt.RoleUser, 50) }, prompt.TTL5m, []int{-1}, [5]int64{1, 150, 0, 2500, 7}},
		}},
		{"lookback reaches 20 blocks back", 1024, []call{
			{0, nil, prompt.TTL5m, []int{-1}, [5]int64{1, 2000, 0, 0, 7}},
			{time.Minute, func(c *convo) { c.blocks(20, 10) }, prompt.TTL5m, []int{-1}, [5]int64{1, 200, 0, 2000, 7}},
		}},
		{"a 21-block turn misses the lookback", 1024, []call{
			{0, nil, prompt.TTL5m, []int{-1}, [5]int64{1, 2000, 0, 0, 7}},
			{time.Minute, func(c *convo) { c.blocks(21, 10) }, prompt.TTL5m, []int{-1}, [5]int64{1, 2210, 0, 0, 7}},
		}},
		{"a second breakpoint rescues a long turn", 1024, []call{
			{0, nil, prompt.TTL5m, []int{-1}, [5]int64{1, 2000, 0, 0, 7}},
			{time.Minute, func(c *convo) { c.blocks(30, 10) }, prompt.TTL5m, []int{0, -1}, [5]int64{1, 300, 0, 2000, 7}},
		}},
		{"an entry expires after 5m idle", 1024, []call{
			{0, nil, prompt.TTL5m, []int{-1}, [5]int64{1, 2000, 0, 0, 7}},
			{5*time.Minute + time.Second, nil, prompt.TTL5m, []int{-1}, [5]int64{1, 2000, 0, 0, 7}},
		}},
		{"an entry lives just under 5m", 1024, []call{
			{0, nil, prompt.TTL5m, []int{-1}, [5]int64{1, 2000, 0, 0, 7}},
			{5*time.Minute - time.Second, nil, prompt.TTL5m, []int{-1}, [5]int64{1, 0, 0, 2000, 7}},
		}},
		{"a hit refreshes the TTL", 1024, []call{
			{0, nil, prompt.TTL5m, []int{-1}, [5]int64{1, 2000, 0, 0, 7}},
			{4 * time.Minute, nil, prompt.TTL5m, []int{-1}, [5]int64{1, 0, 0, 2000, 7}},
			{8 * time.Minute, nil, prompt.TTL5m, []int{-1}, [5]int64{1, 0, 0, 2000, 7}},
		}},
		{"a prefix hit through the lookback refreshes it too", 1024, []call{
			{0, nil, prompt.TTL5m, []int{-1}, [5]int64{1, 2000, 0, 0, 7}},
			{4 * time.Minute, func(c *convo) { c.blocks(3, 100) }, prompt.TTL5m, []int{-1}, [5]int64{1, 300, 0, 2000, 7}},
			// 8m after the floor entry was written: the edit replaces
			// all three messages, so nothing of the 2300 entry (nor its
			// sub-prefixes) matches; the floor entry, 3 blocks back,
			// still serves because the lookback at 4m refreshed it.
			{8 * time.Minute, func(c *convo) { c.v.Messages = c.v.Messages[:0]; c.blocks(3, 5) }, prompt.TTL5m, []int{-1}, [5]int64{1, 15, 0, 2000, 7}},
		}},
		// Keeping two of the three messages: the prefix through them is a
		// sub-prefix of the 2300 entry written at 4m, read though no
		// breakpoint marked it.
		{"a sub-prefix of a written entry serves", 1024, []call{
			{0, nil, prompt.TTL5m, []int{-1}, [5]int64{1, 2000, 0, 0, 7}},
			{4 * time.Minute, func(c *convo) { c.blocks(3, 100) }, prompt.TTL5m, []int{-1}, [5]int64{1, 300, 0, 2000, 7}},
			{8 * time.Minute, func(c *convo) { c.v.Messages = c.v.Messages[:2]; c.blocks(1, 5) }, prompt.TTL5m, []int{-1}, [5]int64{1, 5, 0, 2200, 7}},
		}},
		{"1h entries survive a 30 minute gap", 1024, []call{
			{0, nil, prompt.TTL1h, []int{-1}, [5]int64{1, 0, 2000, 0, 7}},
			{30 * time.Minute, func(c *convo) { c.add(prompt.RoleUser, 40) }, prompt.TTL1h, []int{-1}, [5]int64{1, 0, 40, 2000, 7}},
			{91 * time.Minute, nil, prompt.TTL1h, []int{-1}, [5]int64{1, 0, 2040, 0, 7}},
		}},
		{"below the minimum nothing is cached", 4096, []call{
			{0, func(c *convo) { c.add(prompt.RoleUser, 500) }, prompt.TTL5m, []int{-1}, [5]int64{2501, 0, 0, 0, 7}},
			{time.Minute, func(c *convo) { c.add(prompt.RoleUser, 500) }, prompt.TTL5m, []int{-1}, [5]int64{3001, 0, 0, 0, 7}},
		}},
		{"only the breakpoints past the minimum count", 2048, []call{
			// system (2000) is below 2048: ignored; the last one is cached.
			{0, func(c *convo) { c.add(prompt.RoleUser, 500) }, prompt.TTL5m, []int{0, -1}, [5]int64{1, 2500, 0, 0, 7}},
		}},
		{"mixed TTLs bill the three positions", 1024, []call{
			// 1h at 2000 and 3000, 5m at 3600: A=0, B=3000, C=3600.
			{0, func(c *convo) { c.add(prompt.RoleUser, 1000).add(prompt.RoleUser, 600) }, prompt.TTL1h, nil, [5]int64{1, 600, 3000, 0, 7}},
			// 6 minutes later the 5m entry is gone, the 1h ones live:
			// A=3000 (read), B=3000, C=3700: 5m write 700.
			{6 * time.Minute, func(c *convo) { c.add(prompt.RoleUser, 100) }, prompt.TTL1h, nil, [5]int64{1, 700, 0, 3000, 7}},
		}},
		{"the prompt after the last breakpoint is input", 1024, []call{
			{0, func(c *convo) { c.add(prompt.RoleUser, 500).add(prompt.RoleUser, 300) }, prompt.TTL5m, []int{1}, [5]int64{301, 2500, 0, 0, 7}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestAnthropic(tt.min)
			c := newConvo(t, 2000)
			for i, cl := range tt.calls {
				if cl.grow != nil {
					cl.grow(c)
				}
				var r *prompt.Request
				if tt.name == "mixed TTLs bill the three positions" {
					r = c.req(prompt.TTL1h, 0, 1)
					r.Breakpoints = append(r.Breakpoints, prompt.Breakpoint{Block: len(r.Blocks) - 1, TTL: prompt.TTL5m})
				} else {
					r = c.req(cl.ttl, cl.bps...)
				}
				got := send(t, p, t0.Add(cl.at), r)
				want := usage(cl.want[0], cl.want[1], cl.want[2], cl.want[3], cl.want[4])
				if got != want {
					t.Errorf("call %d: usage %+v, want %+v", i, got, want)
				}
			}
		})
	}
}

func TestAnthropicRejects(t *testing.T) {
	c := newConvo(t, 2000).blocks(5, 100)
	c.add(prompt.RoleAssistant, 50)
	c.v.Messages[len(c.v.Messages)-1].Blocks[0].Kind = "thinking"
	c.v.Messages[len(c.v.Messages)-1] = prompt.NewMessage(prompt.RoleAssistant, c.v.Messages[len(c.v.Messages)-1].Blocks, -1, prompt.Plain)
	c.add(prompt.RoleUser, 10)
	tests := []struct {
		name string
		bps  []prompt.Breakpoint
		want error
	}{
		{"5 breakpoints", []prompt.Breakpoint{{Block: 0, TTL: prompt.TTL5m}, {Block: 1, TTL: prompt.TTL5m}, {Block: 2, TTL: prompt.TTL5m}, {Block: 3, TTL: prompt.TTL5m}, {Block: 4, TTL: prompt.TTL5m}}, ErrTooManyBreakpoints},
		{"1h after 5m", []prompt.Breakpoint{{Block: 1, TTL: prompt.TTL5m}, {Block: 3, TTL: prompt.TTL1h}}, ErrTTLOrder},
		{"1h after 5m, listed out of order", []prompt.Breakpoint{{Block: 3, TTL: prompt.TTL1h}, {Block: 1, TTL: prompt.TTL5m}}, ErrTTLOrder},
		{"thinking block", []prompt.Breakpoint{{Block: 6, TTL: prompt.TTL5m}}, ErrNotCacheable},
		{"out of range", []prompt.Breakpoint{{Block: 99, TTL: prompt.TTL5m}}, ErrNotCacheable},
		{"twice on one block", []prompt.Breakpoint{{Block: 2, TTL: prompt.TTL5m}, {Block: 2, TTL: prompt.TTL5m}}, ErrNotCacheable},
		{"no ttl", []prompt.Breakpoint{{Block: 2, TTL: prompt.NoCache}}, ErrInvalidTTL},
		{"1h before 5m is fine", []prompt.Breakpoint{{Block: 1, TTL: prompt.TTL1h}, {Block: 3, TTL: prompt.TTL5m}}, nil},
		{"4 breakpoints are fine", []prompt.Breakpoint{{Block: 0, TTL: prompt.TTL5m}, {Block: 1, TTL: prompt.TTL5m}, {Block: 2, TTL: prompt.TTL5m}, {Block: 3, TTL: prompt.TTL5m}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestAnthropic(1024)
			r := c.req(prompt.TTL5m)
			r.Breakpoints = tt.bps
			_, err := p.Send(t0, r)
			var ae *APIError
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Send: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.want) || !errors.As(err, &ae) || ae.Status != 400 {
				t.Fatalf("Send = %v, want a 400 %v", err, tt.want)
			}
			// A rejected request leaves no entry behind.
			r.Breakpoints = []prompt.Breakpoint{{Block: 5, TTL: prompt.TTL5m}}
			if u := send(t, p, t0, r); u.CacheRead != 0 {
				t.Errorf("after a rejected call, read %d, want 0", u.CacheRead)
			}
		})
	}
}

func TestAnthropicOverflow(t *testing.T) {
	p := NewAnthropic(AnthropicOptions{Common: Common{Prices: testCard(1024, 3000), Latency: zeroLatency}})
	c := newConvo(t, 2000).add(prompt.RoleUser, 999) // total 3000: fits
	if _, err := p.Send(t0, c.req(prompt.TTL5m, -1)); err != nil {
		t.Fatalf("3000 tokens in a 3000 window: %v", err)
	}
	c.add(prompt.RoleUser, 1)
	_, err := p.Send(t0, c.req(prompt.TTL5m, -1))
	if !errors.Is(err, ErrContextOverflow) {
		t.Fatalf("3001 tokens in a 3000 window: %v, want ErrContextOverflow", err)
	}
}

func TestAnthropicModelSwitchStartsCold(t *testing.T) {
	p := newTestAnthropic(1024)
	c := newConvo(t, 2000).add(prompt.RoleUser, 10)
	send(t, p, t0, c.req(prompt.TTL5m, -1))
	c.model = "m2"
	if u := send(t, p, t0.Add(time.Second), c.req(prompt.TTL5m, -1)); u.CacheRead != 0 || u.CacheWrite5m != 2010 {
		t.Errorf("after a model switch: %+v, want a cold write of 2010", u)
	}
	c.model = "m"
	if u := send(t, p, t0.Add(2*time.Second), c.req(prompt.TTL5m, -1)); u.CacheRead != 2010 {
		t.Errorf("back on the first model: read %d, want 2010", u.CacheRead)
	}
	c.model = "unknown"
	if _, err := p.Send(t0, c.req(prompt.TTL5m, -1)); err == nil {
		t.Error("an unpriced model was accepted")
	}
}

func TestAnthropicEntryReadableAfterTTFT(t *testing.T) {
	lat := Latency{Floor: 2 * time.Second}
	p := NewAnthropic(AnthropicOptions{Common: Common{Prices: testCard(1024, 200000), Latency: &lat}})
	c := newConvo(t, 2000).add(prompt.RoleUser, 10)
	resp, err := p.Send(t0, c.req(prompt.TTL5m, -1))
	if err != nil || resp.TTFT != 2*time.Second {
		t.Fatalf("Send: %v, TTFT %v", err, resp.TTFT)
	}
	// A parallel request sent before the first response starts misses.
	if u := send(t, p, t0.Add(time.Second), c.req(prompt.TTL5m, -1)); u.CacheRead != 0 {
		t.Errorf("1s in: read %d, want 0", u.CacheRead)
	}
	if u := send(t, p, t0.Add(2*time.Second), c.req(prompt.TTL5m, -1)); u.CacheRead != 2010 {
		t.Errorf("at TTFT: read %d, want 2010", u.CacheRead)
	}
}

// A written entry's TTL runs from when it becomes readable (the response
// start), not from the request's start as the docs are quoted: with a 10s
// TTFT, a 5m entry written at t0 still serves at 5m05s. The recorded logs
// side with this rule (see the Anthropic doc comment and DESIGN.md).
func TestAnthropicTTLFromResponseStart(t *testing.T) {
	lat := Latency{Floor: 10 * time.Second}
	p := NewAnthropic(AnthropicOptions{Common: Common{Prices: testCard(1024, 200000), Latency: &lat}})
	c := newConvo(t, 2000).add(prompt.RoleUser, 10)
	if _, err := p.Send(t0, c.req(prompt.TTL5m, -1)); err != nil {
		t.Fatal(err)
	}
	if u := send(t, p, t0.Add(5*time.Minute+5*time.Second), c.req(prompt.TTL5m, -1)); u.CacheRead != 2010 {
		t.Errorf("5m05s: read %d, want 2010 (alive until 5m10s)", u.CacheRead)
	}
	q := NewAnthropic(AnthropicOptions{Common: Common{Prices: testCard(1024, 200000), Latency: &lat}})
	if _, err := q.Send(t0, c.req(prompt.TTL5m, -1)); err != nil {
		t.Fatal(err)
	}
	if u := send(t, q, t0.Add(5*time.Minute+11*time.Second), c.req(prompt.TTL5m, -1)); u.CacheRead != 0 {
		t.Errorf("5m11s: read %d, want 0", u.CacheRead)
	}
}

func TestAnthropicLatency(t *testing.T) {
	lat := Latency{Floor: time.Second, PrefillRate: 1000, CachedRate: 10000, DecodeRate: 7}
	p := NewAnthropic(AnthropicOptions{Common: Common{Prices: testCard(1024, 200000), Latency: &lat}})
	c := newConvo(t, 2000).add(prompt.RoleUser, 999)
	r, _ := p.Send(t0, c.req(prompt.TTL5m, -1))
	if r.TTFT != 4*time.Second || r.Decode != time.Second {
		t.Errorf("cold: TTFT %v decode %v, want 4s and 1s", r.TTFT, r.Decode)
	}
	r, _ = p.Send(t0.Add(time.Minute), c.req(prompt.TTL5m, -1))
	// 2999 cached at 10k/s + 1 uncached at 1k/s.
	if want := time.Second + 299900*time.Microsecond + time.Millisecond; r.TTFT != want {
		t.Errorf("warm: TTFT %v, want %v", r.TTFT, want)
	}
}

func TestAnthropicClearToolUses(t *testing.T) {
	// Floor 2000, then 5 tool results of 1000 tokens: 7001 tokens.
	mk := func() *convo {
		c := newConvo(t, 2000)
		for range 5 {
			c.add(prompt.RoleTool, 1000)
		}
		return c
	}
	tests := []struct {
		name        string
		opts        ClearToolUses
		wantCleared int64
	}{
		{"below the trigger", ClearToolUses{Trigger: 8000, Keep: 3, Placeholder: 10}, 0},
		{"keeps the last 3", ClearToolUses{Trigger: 7000, Keep: 3, Placeholder: 10}, 2 * 990},
		{"keeps the last 1", ClearToolUses{Trigger: 7000, Keep: 1, Placeholder: 10}, 4 * 990},
		{"clear_at_least not met", ClearToolUses{Trigger: 7000, Keep: 3, ClearAtLeast: 2000, Placeholder: 10}, 0},
		{"nothing old enough", ClearToolUses{Trigger: 7000, Keep: 5, Placeholder: 10}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			p := NewAnthropic(AnthropicOptions{Common: Common{Prices: testCard(1024, 200000), Latency: zeroLatency}, ClearToolUses: &o})
			r, err := p.Send(t0, mk().req(prompt.TTL5m, 0, -1))
			if err != nil {
				t.Fatal(err)
			}
			if r.Wire.ClearedInputTokens != tt.wantCleared {
				t.Errorf("cleared %d, want %d", r.Wire.ClearedInputTokens, tt.wantCleared)
			}
			if want := 7001 - tt.wantCleared; r.Usage.Prompt() != want {
				t.Errorf("billed prompt %d, want %d", r.Usage.Prompt(), want)
			}
		})
	}

	t.Run("the cache breaks at the first newly cleared result", func(t *testing.T) {
		o := ClearToolUses{Trigger: 7000, Keep: 3, Placeholder: 10}
		p := NewAnthropic(AnthropicOptions{Common: Common{Prices: testCard(1024, 200000), Latency: zeroLatency}, ClearToolUses: &o})
		c := mk()
		// Results 1-2 cleared: 2000 + 2×10 + 3×1000 + 1 = 5021. A
		// breakpoint sits on the second placeholder (2020).
		if u := send(t, p, t0, c.req(prompt.TTL5m, 2, -1)); u != usage(1, 5020, 0, 0, 7) {
			t.Errorf("first call %+v", u)
		}
		// One more result clears result 3 too: the server prompt is the
		// same through the placeholders (2020 read) and new from result 3
		// on (3×10 + 3×1000 written, less the 2020 read).
		c.add(prompt.RoleTool, 1000)
		if u := send(t, p, t0.Add(time.Minute), c.req(prompt.TTL5m, 2, -1)); u != usage(1, 3010, 0, 2020, 7) {
			t.Errorf("second call %+v, want a read of the placeholders' prefix", u)
		}
	})

	t.Run("exclude_tools keeps a tool's results", func(t *testing.T) {
		o := ClearToolUses{Trigger: 1000, Keep: 0, Placeholder: 10, ExcludeTools: []string{"Read"}}
		p := NewAnthropic(AnthropicOptions{Common: Common{Prices: testCard(1024, 200000), Latency: zeroLatency}, ClearToolUses: &o})
		c := newConvo(t, 2000)
		c.v.Messages = append(c.v.Messages,
			prompt.NewMessage(prompt.RoleAssistant, []traces.Block{{Kind: traces.ToolUse, ID: "r1", Name: "Read", Input: "{}"}, {Kind: traces.ToolUse, ID: "g1", Name: "Grep", Input: "{}"}}, -1, prompt.Plain),
			prompt.NewMessage(prompt.RoleTool, []traces.Block{{Kind: traces.ToolResultBlock, ID: "r1", Tokens: 500}, {Kind: traces.ToolResultBlock, ID: "g1", Tokens: 300}}, -1, prompt.Plain))
		r, err := p.Send(t0, c.req(prompt.TTL5m, -1))
		if err != nil {
			t.Fatal(err)
		}
		if r.Wire.ClearedInputTokens != 290 {
			t.Errorf("cleared %d, want 290 (Grep only)", r.Wire.ClearedInputTokens)
		}
	})
}

// TestAnthropicInvalidation checks one case per row of the prompt-caching
// page's "What invalidates the cache" table (reference/providers.md §1.2):
// the second call adds a message and changes one setting; the read shows
// which cache levels survived. The prompt is tools (2000 tokens), system
// (1000) and messages, with a breakpoint at the end of each.
func TestAnthropicInvalidation(t *testing.T) {
	img := traces.Block{Kind: traces.Image, Name: "image", Tokens: 100}
	for _, tt := range []struct {
		name   string
		before prompt.Params
		after  prompt.Params
		// edit changes the second call's messages (nil: append a user
		// message of 50 tokens).
		edit func(ms []prompt.Message) []prompt.Message
		read int64
	}{
		{name: "nothing changes", read: 3500},
		{name: "tool_choice invalidates messages", after: prompt.Params{ToolChoice: "any"}, read: 3000},
		{name: "thinking on invalidates messages", after: prompt.Params{Thinking: "enabled:16000"}, read: 3000},
		{name: "thinking budget invalidates messages", before: prompt.Params{Thinking: "enabled:16000"}, after: prompt.Params{Thinking: "enabled:32000"}, read: 3000},
		{name: "same thinking keeps messages", before: prompt.Params{Thinking: "enabled:16000"}, after: prompt.Params{Thinking: "enabled:16000"}, read: 3500},
		{name: "web search toggle invalidates system and messages", after: prompt.Params{WebSearch: true}, read: 2000},
		{name: "citations toggle invalidates system and messages", before: prompt.Params{Citations: true}, read: 2000},
		// Adding an image changes the blocks from the image on; the log
		// evidence is that an image in a new message keeps the earlier
		// messages: in the corpus, 4 calls right after a new image read
		// the previous call's whole prefix (RaggioS/jcode 120ec635 line
		// 322, openshrooly 04c2be8b line 556, jekyll a0afb8f8 lines 86 and
		// 109), so the table's "anywhere" is not a salt on every message.
		{name: "an image appended keeps the messages", edit: func(ms []prompt.Message) []prompt.Message {
			return append(ms, prompt.NewMessage(prompt.RoleUser, []traces.Block{img, {Kind: traces.Text, Name: "look", Tokens: 50}}, -1, prompt.Plain))
		}, read: 3500},
		{name: "an image removed invalidates from where it was", edit: func(ms []prompt.Message) []prompt.Message {
			// The first message's image goes; the text block before it
			// is still a prefix of the written entry (sub-prefixes).
			return []prompt.Message{prompt.NewMessage(prompt.RoleUser, []traces.Block{{Kind: traces.Text, Name: "q", Tokens: 100}}, -1, prompt.Plain), ms[1]}
		}, read: 3100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestAnthropic(1024)
			b := prompt.NewBuilder(count, prompt.Wire{Tail: 1})
			v := prompt.View{
				Tools:  []traces.Block{{Kind: traces.ToolSchema, Name: "tools", Tokens: 2000}},
				System: []traces.Block{{Kind: traces.System, Name: "sys", Tokens: 1000}},
				Messages: []prompt.Message{
					prompt.NewMessage(prompt.RoleUser, []traces.Block{{Kind: traces.Text, Name: "q", Tokens: 100}, img}, -1, prompt.Plain),
					prompt.NewMessage(prompt.RoleAssistant, []traces.Block{{Kind: traces.Text, Name: "a", Tokens: 300}}, -1, prompt.Plain),
				},
			}
			mark := func(r *prompt.Request, ps prompt.Params) *prompt.Request {
				r.Params = ps
				r.Mark(0, prompt.TTL5m)
				r.Mark(1, prompt.TTL5m)
				r.Mark(len(r.Blocks)-1, prompt.TTL5m)
				r.Freeze()
				return r
			}
			r := mark(b.Build("m", &v, 7), tt.before)
			if u := send(t, p, t0, r); u.CacheRead != 0 || r.Blocks[len(r.Blocks)-1].End != 3500 {
				t.Fatalf("first call read %d, prompt end %d; want 0 and 3500", u.CacheRead, r.Blocks[len(r.Blocks)-1].End)
			}
			if tt.edit != nil {
				v.Messages = tt.edit(v.Messages)
			} else {
				v.Messages = append(v.Messages, prompt.NewMessage(prompt.RoleUser, []traces.Block{{Kind: traces.Text, Name: "next", Tokens: 50}}, -1, prompt.Plain))
			}
			if u := send(t, p, t0.Add(time.Minute), mark(b.Build("m", &v, 7), tt.after)); u.CacheRead != tt.read {
				t.Errorf("read %d, want %d", u.CacheRead, tt.read)
			}
		})
	}
}

// For models before Opus 4.5 (and Sonnet 4.6) a new user turn that is not
// only tool results drops the earlier thinking blocks, so the cache breaks
// from the first of them (prompt-caching page, "Caching with thinking
// blocks"; prompt.StripsThinking): the third call below reads only the
// first call's entry on Sonnet 4.5, the whole tool loop on Opus 4.6.
func TestAnthropicStaleThinking(t *testing.T) {
	card := pricing.NewCard(
		pricing.Price{Model: "claude-sonnet-4-5", Provider: "anthropic", Input: 3, Output: 15, CacheWrite5m: 3.75, CacheWrite1h: 6, CacheRead: 0.3, Window: 200000, MinCacheable: 1024},
		pricing.Price{Model: "claude-opus-4-6", Provider: "anthropic", Input: 5, Output: 25, CacheWrite5m: 6.25, CacheWrite1h: 10, CacheRead: 0.5, Window: 200000, MinCacheable: 1024},
	)
	for _, tt := range []struct {
		model string
		read  int64
	}{
		{"claude-sonnet-4-5", 2100},
		{"claude-opus-4-6", 2470},
	} {
		p := NewAnthropic(AnthropicOptions{Common: Common{Prices: card, Latency: zeroLatency}})
		b := prompt.NewBuilder(count, prompt.Wire{Tail: 1, ThinkingByModel: true})
		v := prompt.View{System: []traces.Block{{Kind: traces.System, Name: "sys", Tokens: 2000}}}
		step := func(at time.Duration, role prompt.Role, bs ...traces.Block) traces.Usage {
			v.Messages = append(v.Messages, prompt.NewMessage(role, bs, -1, prompt.Plain))
			r := b.Build(tt.model, &v, 7)
			r.Mark(len(r.Blocks)-1, prompt.TTL5m)
			r.Freeze()
			return send(t, p, t0.Add(at), r)
		}
		step(0, prompt.RoleUser, traces.Block{Kind: traces.Text, Name: "u1", Tokens: 100})
		v.Messages = append(v.Messages, prompt.NewMessage(prompt.RoleAssistant, []traces.Block{
			{Kind: traces.Thinking, Name: "th", Tokens: 300}, {Kind: traces.ToolUse, ID: "t1", Name: "Read", Tokens: 50}}, -1, prompt.Plain))
		if u := step(time.Second, prompt.RoleTool, traces.Block{Kind: traces.ToolResultBlock, ID: "t1", Tokens: 20}); u.CacheRead != 2100 {
			t.Errorf("%s: the tool-result call read %d, want 2100 (thinking kept in the loop)", tt.model, u.CacheRead)
		}
		v.Messages = append(v.Messages, prompt.NewMessage(prompt.RoleAssistant, []traces.Block{{Kind: traces.Text, Name: "a2", Tokens: 30}}, -1, prompt.Plain))
		if u := step(2*time.Second, prompt.RoleUser, traces.Block{Kind: traces.Text, Name: "u3", Tokens: 10}); u.CacheRead != tt.read {
			t.Errorf("%s: the call after a new user turn read %d, want %d", tt.model, u.CacheRead, tt.read)
		}
	}
}

// A request that asks for the 1M-context option may exceed the 200K
// default window on a model that offers it; without asking, or on a model
// without it, the same prompt overflows (prompt.Request.Window).
func TestAnthropicLongWindow(t *testing.T) {
	card := pricing.NewCard(
		pricing.Price{Model: "long", Provider: "anthropic", Input: 5, Output: 25, CacheWrite5m: 6.25, CacheWrite1h: 10, CacheRead: 0.5, Window: 200000, MaxWindow: 1000000, MinCacheable: 1024},
		pricing.Price{Model: "short", Provider: "anthropic", Input: 15, Output: 75, CacheWrite5m: 18.75, CacheWrite1h: 30, CacheRead: 1.5, Window: 200000, MinCacheable: 1024},
	)
	for _, tt := range []struct {
		model    string
		window   int
		overflow bool
	}{
		{"long", 1000000, false},
		{"long", 0, true},
		{"long", 200000, true},
		{"short", 1000000, true},
	} {
		p := NewAnthropic(AnthropicOptions{Common: Common{Prices: card, Latency: zeroLatency}})
		c := newConvo(t, 300000).add(prompt.RoleUser, 10)
		c.model = tt.model
		r := c.b.Build(tt.model, &c.v, 7)
		r.Window = tt.window
		r.Freeze()
		_, err := p.Send(t0, r)
		var ae *APIError
		if got := errors.As(err, &ae) && ae.Kind == ErrContextOverflow; got != tt.overflow {
			t.Errorf("%s asking %d: overflow %v (%v), want %v", tt.model, tt.window, got, err, tt.overflow)
		}
	}
}

// The automatic mode (a top-level cache_control) puts a breakpoint on the
// last cacheable block and takes one of the four slots (reference/
// providers.md §8): with four explicit marks elsewhere it is a 400; with
// three it bills as a fourth mark there; on a block already marked the two
// are one.
func TestAnthropicAutomaticTakesASlot(t *testing.T) {
	for _, tt := range []struct {
		name  string
		marks []int
		err   error
		want  [5]int64
	}{
		{"alone", nil, nil, [5]int64{1, 2040, 0, 0, 7}},
		{"with three explicit marks", []int{0, 1, 2}, nil, [5]int64{1, 2040, 0, 0, 7}},
		{"with four explicit marks", []int{0, 1, 2, 3}, ErrTooManyBreakpoints, [5]int64{}},
		{"on a marked last block", []int{0, 1, 2, -1}, nil, [5]int64{1, 2040, 0, 0, 7}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestAnthropic(1024)
			c := newConvo(t, 2000).blocks(4, 10)
			r := c.b.Build(c.model, &c.v, 7)
			for _, i := range tt.marks {
				if i < 0 {
					i += len(r.Blocks)
				}
				r.Mark(i, prompt.TTL5m)
			}
			r.Automatic = prompt.TTL5m
			r.Freeze()
			resp, err := p.Send(t0, r)
			var ae *APIError
			if tt.err != nil {
				if !errors.As(err, &ae) || ae.Kind != tt.err {
					t.Fatalf("err %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Usage; got != usage(tt.want[0], tt.want[1], tt.want[2], tt.want[3], tt.want[4]) {
				t.Errorf("usage %+v, want %v", got, tt.want)
			}
			// The next call reads the automatic breakpoint's entry.
			c.add(prompt.RoleUser, 5)
			r2 := c.b.Build(c.model, &c.v, 7)
			r2.Automatic = prompt.TTL5m
			r2.Freeze()
			if u := send(t, p, t0.Add(time.Minute), r2); u.CacheRead != 2040 {
				t.Errorf("next call read %d, want 2040", u.CacheRead)
			}
		})
	}
}

// A provider made after another was released (and may reuse its cache
// maps) bills a conversation exactly as a fresh one: nothing of the
// released provider's entries survives. Released twice, or through a
// Router, it is still safe.
func TestReleaseLeavesNothing(t *testing.T) {
	play := func(p Provider) []traces.Usage {
		c := newConvo(t, 2000).blocks(3, 500)
		var out []traces.Usage
		for i := range 6 {
			out = append(out, send(t, p, t0.Add(time.Duration(i)*time.Minute), c.req(prompt.TTL5m, -1)))
			c.blocks(1, 300)
		}
		return out
	}
	fresh := play(newTestAnthropic(1024))
	for range 3 {
		old := newTestAnthropic(1024)
		if got := play(old); !reflect.DeepEqual(got, fresh) {
			t.Fatalf("two fresh providers differ:\n%v\n%v", got, fresh)
		}
		Release(old)
		Release(old)
		if got := play(newTestAnthropic(1024)); !reflect.DeepEqual(got, fresh) {
			t.Fatalf("after a release: %v, fresh %v", got, fresh)
		}
	}
	var reads int64
	for _, u := range fresh {
		reads += u.CacheRead
	}
	if reads == 0 {
		t.Fatal("the conversation reads nothing: the test would not see a stale entry")
	}
	r := &Router{For: func(string) string { return "anthropic" }, New: func(string) (Provider, error) { return newTestAnthropic(1024), nil }}
	play(r)
	Release(r)
	if got := play(newTestAnthropic(1024)); !reflect.DeepEqual(got, fresh) {
		t.Fatalf("after a router's release: %v, fresh %v", got, fresh)
	}
}
