package prompt

import (
	"errors"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/traces"
)

func planned() *Request {
	v := &View{System: []traces.Block{txt("system prompt")}, Messages: []Message{msg(RoleUser, txt("hello")), msg(RoleAssistant, txt("hi"))}}
	r := NewBuilder(size, Wire{PerMessage: 3, Tail: 1}).Build("m", v, 10)
	r.Mark(0, TTL1h)
	r.Mark(2, TTL5m)
	return r
}

// Any change after Freeze that a provider would see is caught.
func TestCheckFrozen(t *testing.T) {
	cases := []struct {
		name   string
		change func(r *Request)
		want   error
	}{
		{"unchanged", func(r *Request) {}, nil},
		{"output", func(r *Request) { r.Output++ }, ErrChanged},
		{"total", func(r *Request) { r.Total-- }, ErrChanged},
		{"model", func(r *Request) { r.Model = "other" }, ErrChanged},
		{"breakpoint added", func(r *Request) { r.Breakpoints = append(r.Breakpoints, Breakpoint{Block: 1, TTL: TTL5m}) }, ErrChanged},
		{"breakpoint moved", func(r *Request) { r.Breakpoints[1].Block = 1 }, ErrChanged},
		{"ttl changed", func(r *Request) { r.Breakpoints[0].TTL = TTL5m }, ErrChanged},
		{"breakpoints dropped", func(r *Request) { r.Breakpoints = nil }, ErrChanged},
		{"block dropped", func(r *Request) { r.Blocks = r.Blocks[:2] }, ErrChanged},
		{"last block edited", func(r *Request) { r.Blocks[2].Chain ^= 1 }, ErrChanged},
	}
	for _, c := range cases {
		r := planned()
		r.Freeze()
		c.change(r)
		if got := r.CheckFrozen(); !errors.Is(got, c.want) {
			t.Errorf("%s: CheckFrozen() = %v, want %v", c.name, got, c.want)
		}
	}
	if err := planned().CheckFrozen(); !errors.Is(err, ErrChanged) {
		t.Errorf("CheckFrozen on a request never frozen = %v, want ErrChanged", err)
	}
}

// Mark after Freeze is an engine bug and panics.
func TestMarkAfterFreezePanics(t *testing.T) {
	r := planned()
	r.Freeze()
	defer func() {
		if recover() == nil {
			t.Errorf("Mark after Freeze did not panic")
		}
		if len(r.Breakpoints) != 2 {
			t.Errorf("the refused Mark left %d breakpoints, want 2", len(r.Breakpoints))
		}
	}()
	r.Mark(1, TTL5m)
}

// The next Build starts a request afresh: no breakpoints, not frozen.
func TestBuildUnfreezes(t *testing.T) {
	b := NewBuilder(size, Wire{})
	v := &View{Messages: []Message{msg(RoleUser, txt("a"))}}
	r := b.Build("m", v, 0)
	r.Mark(0, TTL5m)
	r.Freeze()
	r = b.Build("m", v, 0)
	if len(r.Breakpoints) != 0 {
		t.Errorf("rebuilt request has %d breakpoints, want 0", len(r.Breakpoints))
	}
	r.Mark(0, TTL5m) // must not panic
}

func TestPrefix(t *testing.T) {
	v := &View{System: []traces.Block{txt("s")}}
	for _, s := range []string{"a", "b", "c", "d"} {
		v.Messages = append(v.Messages, msg(RoleUser, txt(s)))
	}
	full := NewBuilder(size, Wire{}).Build("m", v, 0)
	cases := []struct {
		name string
		msgs []Message
		want int
	}{
		{"same", v.Messages, 5},
		{"shorter", v.Messages[:2], 3},
		{"longer", append(v.Messages[:4:4], msg(RoleUser, txt("e"))), 5},
		{"edit at 2", []Message{v.Messages[0], v.Messages[1], msg(RoleUser, txt("x")), v.Messages[3]}, 3},
		{"edit at 0", []Message{msg(RoleAssistant, txt("a")), v.Messages[1]}, 1},
		{"empty", nil, 1},
	}
	for _, c := range cases {
		o := NewBuilder(size, Wire{}).Build("m", &View{System: v.System, Messages: c.msgs}, 0)
		if got := full.Prefix(o); got != c.want {
			t.Errorf("%s: Prefix = %d, want %d", c.name, got, c.want)
		}
		if got := o.Prefix(full); got != c.want {
			t.Errorf("%s: reversed Prefix = %d, want %d", c.name, got, c.want)
		}
	}
	other := NewBuilder(size, Wire{}).Build("m", &View{System: []traces.Block{txt("t")}, Messages: v.Messages}, 0)
	if got := full.Prefix(other); got != 0 {
		t.Errorf("another system prompt: Prefix = %d, want 0", got)
	}
}

func TestTTL(t *testing.T) {
	for _, c := range []struct {
		s string
		t TTL
		d time.Duration
	}{{"5m", TTL5m, 5 * time.Minute}, {"1h", TTL1h, time.Hour}} {
		got, err := ParseTTL(c.s)
		if err != nil || got != c.t {
			t.Errorf("ParseTTL(%q) = %v, %v; want %v", c.s, got, err, c.t)
		}
		if got.String() != c.s || got.Duration() != c.d {
			t.Errorf("%v: String %q Duration %v, want %q %v", got, got.String(), got.Duration(), c.s, c.d)
		}
	}
	if _, err := ParseTTL("30m"); err == nil {
		t.Errorf("ParseTTL(30m) succeeded, want an error")
	}
	if NoCache.String() != "none" || NoCache.Duration() != 0 {
		t.Errorf("NoCache = %q, %v", NoCache.String(), NoCache.Duration())
	}
}
