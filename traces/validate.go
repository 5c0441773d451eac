package traces

import (
	"fmt"
)

// A Problem is one thing wrong with a session. Event is the index of the
// event it is about, or -1 for the session header.
type Problem struct {
	Event int
	Msg   string
}

// Line is the line of the problem in the session's native file as
// WriteSession writes it: the header is line 1, event i is line i+2.
func (p Problem) Line() int { return p.Event + 2 }

// Validate lints a session: header fields, event kinds and times (set,
// never decreasing), tool_result ↔ tool_use pairing, usage sanity and
// parent/children links. It returns the problems in event order; none
// means the session replays as written.
func Validate(s *Session) []Problem {
	var ps []Problem
	add := func(ev int, format string, args ...any) {
		ps = append(ps, Problem{Event: ev, Msg: fmt.Sprintf(format, args...)})
	}
	if s.ID == "" {
		add(-1, "session id is empty")
	}
	if s.Parent != "" && s.Parent == s.ID {
		add(-1, "session %s is its own parent", s.ID)
	}
	if s.Window < 0 {
		add(-1, "window %d is negative", s.Window)
	}
	seenChild := map[string]bool{}
	for _, c := range s.Children {
		switch {
		case c == "" || c == s.ID:
			add(-1, "child %q is empty or the session itself", c)
		case seenChild[c]:
			add(-1, "child %s listed twice", c)
		}
		seenChild[c] = true
	}
	for i := range s.Floor {
		if p := blockProblem(&s.Floor[i]); p != "" {
			add(-1, "floor block %d: %s", i, p)
		}
	}
	toolUses := map[string]bool{}
	answered := map[string]bool{}
	var prev Event
	for i := range s.Events {
		e := &s.Events[i]
		if !e.Kind.Valid() {
			add(i, "unknown kind %q", e.Kind)
		}
		switch {
		case e.Time.IsZero():
			add(i, "time is missing")
		case i > 0 && e.Time.Before(prev.Time):
			add(i, "time %s is before the previous event's %s", e.Time.Format("2006-01-02T15:04:05.000Z07:00"), prev.Time.Format("2006-01-02T15:04:05.000Z07:00"))
		}
		if e.Usage != nil {
			if e.Kind != Assistant {
				add(i, "%s event carries usage (only assistant calls are billed)", e.Kind)
			}
			u := e.Usage
			if u.Input < 0 || u.CacheWrite5m < 0 || u.CacheWrite1h < 0 || u.CacheRead < 0 || u.Output < 0 {
				add(i, "usage has a negative token count: %+v", *u)
			} else if u.Prompt() == 0 {
				add(i, "usage has an empty prompt (input, writes and reads all 0)")
			}
		}
		if e.LatencyMS < 0 {
			add(i, "latency_ms %d is negative", e.LatencyMS)
		}
		if e.Summary && e.Kind != User {
			add(i, "summary is set on a %s event (only user events carry a continuation summary)", e.Kind)
		}
		if e.Kind == ModelSwitch && e.Model == "" {
			add(i, "model_switch without a model")
		}
		for j := range e.Blocks {
			b := &e.Blocks[j]
			if p := blockProblem(b); p != "" {
				add(i, "block %d: %s", j, p)
			}
			switch b.Kind {
			case ToolUse:
				if e.Kind != Assistant {
					add(i, "block %d: tool_use in a %s event", j, e.Kind)
				}
				if b.ID != "" && toolUses[b.ID] {
					add(i, "block %d: tool_use id %s used twice", j, b.ID)
				}
				toolUses[b.ID] = true
			case ToolResultBlock:
				switch {
				case !toolUses[b.ID]:
					add(i, "block %d: tool_result for %s has no earlier tool_use", j, b.ID)
				case answered[b.ID]:
					add(i, "block %d: tool_use %s answered twice", j, b.ID)
				}
				answered[b.ID] = true
			}
		}
		prev = *e
	}
	return ps
}

func blockProblem(b *Block) string {
	switch b.Kind {
	case Text, Thinking, Image, System, ToolSchema:
	case ToolUse:
		if b.ID == "" || b.Name == "" {
			return "tool_use without id or name"
		}
	case ToolResultBlock:
		if b.ID == "" {
			return "tool_result without tool_use id"
		}
	default:
		return fmt.Sprintf("unknown block type %q", b.Kind)
	}
	if b.Tokens < 0 {
		return fmt.Sprintf("tokens %d is negative", b.Tokens)
	}
	if b.ScaffoldEnd < 0 || b.ScaffoldEnd > len(b.Text) {
		return fmt.Sprintf("scaffold_end %d is outside the text (%d bytes)", b.ScaffoldEnd, len(b.Text))
	}
	return ""
}
