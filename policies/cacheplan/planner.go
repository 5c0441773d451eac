package cacheplan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// A Planner marks at most prompt.MaxBreakpoints cache breakpoints on a
// request. It runs last, after every policy that shapes the request, and the
// engine freezes the request right after it. Plan with prompt.NoCache marks
// nothing. Planners are stateless: the same request gets the same marks.
type Planner interface {
	Name() string
	Plan(req *prompt.Request, ttl prompt.TTL)
}

var registry = map[string]func() Planner{
	"none":          func() Planner { return None{} },
	"auto":          func() Planner { return Auto{} },
	"system_and_3":  func() Planner { return SystemAnd3{} },
	"hermes":        func() Planner { return Hermes{ByRoute: true} },
	"hermes_prefix": func() Planner { return Hermes{} },
	"hermes_tools":  func() Planner { return Hermes{ToolCache: true} },
	"claude-code":   func() Planner { return ClaudeCode{} },
	"as-sent":       func() Planner { return AsSent{} },
}

// A RoutePlanner chooses its layout by the provider a session is served
// on, as hermes chooses by route; the engine asks it once per session.
type RoutePlanner interface {
	Planner
	OnRoute(provider string) Planner
}

// ForRoute is p as it plans on provider's route.
func ForRoute(p Planner, provider string) Planner {
	if rp, ok := p.(RoutePlanner); ok {
		return rp.OnRoute(provider)
	}
	return p
}

// ByName returns the planner registered under name (see Names).
func ByName(name string) (Planner, error) {
	if f, ok := registry[name]; ok {
		return f(), nil
	}
	return nil, fmt.Errorf("cacheplan: unknown planner %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Names lists the registered planners, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// ChooseTTL resolves a prompt_caching.cache_ttl setting for a session from
// src, as hermes-agent does (reference/hermes.md §1.5): "5m" and "1h" are
// fixed tiers; "auto" is 1h for human-paced sources and 5m for machine-paced
// ones; "" is hermes' default, 5m; "off", "none", "false", "disabled" and
// "no" turn caching off (prompt.NoCache). Any other value is an error, where
// hermes silently keeps 5m: a typo in a policy file should not pass for a
// measured result.
func ChooseTTL(setting string, src traces.Source) (prompt.TTL, error) {
	switch strings.ToLower(strings.TrimSpace(setting)) {
	case "", "5m":
		return prompt.TTL5m, nil
	case "1h":
		return prompt.TTL1h, nil
	case "auto":
		if src.HumanPaced() {
			return prompt.TTL1h, nil
		}
		return prompt.TTL5m, nil
	case "off", "none", "false", "disabled", "no":
		return prompt.NoCache, nil
	}
	return prompt.NoCache, fmt.Errorf("cacheplan: cache_ttl %q: want 5m, 1h, auto or off", setting)
}

// ChooseSessionTTL is the tier of a session from src under the main setting
// and the subagent setting (Claude Code's promptCacheTtl and
// subagentPromptCacheTtl): a subagent session takes subagent unless it is
// "inherit" or empty; every other session takes main.
func ChooseSessionTTL(main, subagent string, src traces.Source) (prompt.TTL, error) {
	if src == traces.SourceSubagent && subagent != "" && subagent != "inherit" {
		return ChooseTTL(subagent, src)
	}
	return ChooseTTL(main, src)
}

// None marks nothing.
type None struct{}

// Name implements Planner.
func (None) Name() string { return "none" }

// Plan implements Planner.
func (None) Plan(*prompt.Request, prompt.TTL) {}

// lastOf returns the index of the last cacheable block of section sec, or -1.
// Tools and system come first and are short, so a forward scan stops early.
func lastOf(req *prompt.Request, sec prompt.Section) int {
	at := -1
	for i := range req.Blocks {
		b := &req.Blocks[i]
		if b.Section > sec {
			break
		}
		if b.Section == sec && b.Cacheable {
			at = i
		}
	}
	return at
}

// systemBlocks returns the indexes of the cacheable system blocks.
func systemBlocks(req *prompt.Request) []int {
	var out []int
	for i := range req.Blocks {
		b := &req.Blocks[i]
		if b.Section > prompt.System {
			break
		}
		if b.Section == prompt.System && b.Cacheable {
			out = append(out, i)
		}
	}
	return out
}

// A span is the block range [lo, hi) of one message of the request.
type span struct{ msg, lo, hi int }

// backward calls f on the messages of the request from the newest back,
// until f returns false. Work is proportional to the blocks walked.
func backward(req *prompt.Request, f func(s span) bool) {
	hi := len(req.Blocks)
	for hi > 0 {
		b := &req.Blocks[hi-1]
		if b.Section != prompt.Messages {
			return
		}
		lo := hi - 1
		for lo > 0 && req.Blocks[lo-1].Section == prompt.Messages && req.Blocks[lo-1].Msg == b.Msg {
			lo--
		}
		if !f(span{msg: b.Msg, lo: lo, hi: hi}) {
			return
		}
		hi = lo
	}
}

// lastMessages returns up to n messages from the end of the request that
// can carry a marker, newest first, appended to out.
func lastMessages(req *prompt.Request, n int, out []span) []span {
	backward(req, func(s span) bool {
		if len(out) >= n {
			return false
		}
		if canCarry(req, s) {
			out = append(out, s)
		}
		return len(out) < n
	})
	return out
}

// markBlock is where a message's marker goes: its registered scaffold when
// it has one (the Builder split it there; the volatile tail stays unmarked,
// reference/hermes.md §1.2), else its last block that can carry
// cache_control. -1 when the message cannot carry a marker.
func markBlock(req *prompt.Request, s span) int {
	for i := s.hi - 1; i >= s.lo; i-- {
		if req.Blocks[i].Scaffold && req.Blocks[i].Cacheable {
			return i
		}
	}
	for i := s.hi - 1; i >= s.lo; i-- {
		if req.Blocks[i].Cacheable {
			return i
		}
	}
	return -1
}

func canCarry(req *prompt.Request, s span) bool { return markBlock(req, s) >= 0 }

// marker collects marks in block order and applies them once, so a planner
// never marks a block twice or goes past the limit.
type marker []int

func (m marker) add(i int) marker {
	if i >= 0 && !slices.Contains(m, i) {
		m = append(m, i)
	}
	return m
}

func (m marker) apply(req *prompt.Request, ttl prompt.TTL) {
	slices.Sort(m)
	if len(m) > prompt.MaxBreakpoints {
		// Keep the last ones: they cover the most.
		m = m[len(m)-prompt.MaxBreakpoints:]
	}
	for _, i := range m {
		req.Mark(i, ttl)
	}
}
