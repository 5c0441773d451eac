package prompt

import (
	"strconv"
	"strings"
)

// StripsThinking reports whether the Anthropic API drops the thinking
// blocks of earlier assistant turns from model's prompt when a new user
// turn that is not only tool results arrives, which breaks the cached
// prefix from the first dropped block (the prompt-caching page's "Caching
// with thinking blocks", reference/providers.md §1.2).
//
// Which models do is the extended-thinking page's table of defaults
// ("Differences in thinking across model versions", as quoted in the Hacker
// News thread news.ycombinator.com/item?id=48632147): Opus 4.5 and later and
// Sonnet 4.6 and later keep all prior thinking; Opus 4.1 and earlier,
// Sonnet 4.5 and earlier, and every Haiku through Haiku 4.5 keep only the
// last assistant turn's. Claude Mythos and Fable keep everything. A model
// this does not recognise as a Claude model keeps its blocks: only the
// Anthropic API has the rule.
//
// The recorded Claude Code sessions agree: subagent.jsonl
// (claude-opus-4-6) reads its whole previous prefix, thinking included,
// after a new user message (docs/fidelity.md, on unexplained re-sends).
//
// OpenAI's reasoning models (o1, o3, o4, the gpt-5 family, codex-mini)
// drop the reasoning items of earlier turns too: the Responses API keeps
// a turn's reasoning while its tool calls go on and discards it at the
// next user message (the OpenAI cookbook "Better performance from
// reasoning models using the Responses API"; Codex counts those items
// out of the server's usage, codex-rs context_manager/history.rs,
// get_non_last_reasoning_items_tokens). Codex rollouts show it:
// corpus anmol0b/Trezo-Ai 1bf566ba's second turn grows by 34 tokens
// after a call of 57 reasoning tokens.
func StripsThinking(model string) bool {
	m := strings.ToLower(model)
	if i := strings.IndexByte(m, '['); i >= 0 {
		m = m[:i] // claude-opus-4-6[1m]
	}
	if openAIReasoning(strings.TrimPrefix(m, "openai/")) {
		return true
	}
	m = strings.TrimPrefix(m, "anthropic/")
	if !strings.HasPrefix(m, "claude-") {
		return false
	}
	var family string
	var ver []int
	for _, f := range strings.Split(strings.TrimPrefix(m, "claude-"), "-") {
		switch f {
		case "opus", "sonnet", "haiku":
			family = f
			continue
		case "mythos", "fable":
			return false
		}
		// Version parts are small numbers; a date suffix (20250514) ends
		// the version.
		n, err := strconv.Atoi(f)
		if err != nil || n > 99 {
			break
		}
		ver = append(ver, n)
	}
	if family == "" || len(ver) == 0 {
		return false
	}
	// claude-3-7-sonnet and claude-sonnet-4-5 both give major, minor.
	v := ver[0] * 100
	if len(ver) > 1 {
		v += ver[1]
	}
	switch family {
	case "opus":
		return v < 405
	case "sonnet":
		return v < 406
	default: // haiku: every Haiku through 4.5; later ones are not documented
		return v <= 405
	}
}

// openAIReasoning reports whether an OpenAI model name is a reasoning
// model's.
func openAIReasoning(m string) bool {
	for _, p := range []string{"gpt-5", "o1", "o3", "o4", "codex-mini"} {
		if m == p || strings.HasPrefix(m, p+"-") || strings.HasPrefix(m, p+".") {
			return true
		}
	}
	return false
}
