package claudecode

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Thinking budgets Claude Code 1.0.x gives a turn whose prompt asks for
// thinking (1.0.89 `bf1={HIGHEST:31999,MIDDLE:1e4,BASIC:4000,NONE:0}`).
const (
	budgetHighest = 31999
	budgetMiddle  = 10000
	budgetBasic   = 4000
)

// keywordTiers are 1.0.89's `Cq5`: per language, the phrases of each tier,
// a word-bounded regular expression where the shipped code asks for one
// (JavaScript's \b and Go's agree: both are ASCII word boundaries). Each
// tier is tried in every language before the next tier.
var keywordTiers = func() [3][]*regexp.Regexp {
	type phrase struct {
		text string
		word bool
	}
	w := func(ps ...string) []phrase {
		out := make([]phrase, len(ps))
		for i, p := range ps {
			out[i] = phrase{p, true}
		}
		return out
	}
	raw := func(ps ...string) []phrase {
		out := make([]phrase, len(ps))
		for i, p := range ps {
			out[i] = phrase{p, false}
		}
		return out
	}
	tiers := [3][][]phrase{
		{ // HIGHEST
			w("think harder", "think intensely", "think longer", "think really hard", "think super hard", "think very hard", "ultrathink"),
			raw("熟考", "深く考えて", "しっかり考えて"), raw("多想一会", "深思", "仔细思考"),
			w("piensa más", "piensa mucho", "piensa profundamente"), w("réfléchis plus", "réfléchis beaucoup", "réfléchis profondément"),
			w("denk mehr", "denk gründlich", "denk tief"), raw("더 오래 생각", "깊이 생각", "심사숙고", "곰곰이 생각"),
			w("pensa di più", "pensa a lungo", "pensa profondamente", "rifletti a fondo"),
		},
		{ // MIDDLE
			w("think about it", "think a lot", "think deeply", "think hard", "think more", "megathink"),
			raw("もっと考えて", "たくさん考えて", "よく考えて", "長考"), raw("多想想", "好好想"),
			w("piensa"), w("réfléchis"), w("denk nach", "denk"), raw("많이 생각", "더 생각", "잘 생각"),
			w("pensa", "pensa molto", "rifletti"),
		},
		{ // BASIC
			w("think"), raw("考えて"), raw("想", "思考"), w("pienso", "pensando"), w("pense", "réfléchir"),
			w("denke", "nachdenken"), raw("생각"), w("penso", "pensare", "pensando", "riflettere"),
		},
	}
	var out [3][]*regexp.Regexp
	for t, langs := range tiers {
		for _, ps := range langs {
			for _, p := range ps {
				expr := regexp.QuoteMeta(p.text)
				if p.word {
					expr = `\b` + expr + `\b`
				}
				out[t] = append(out[t], regexp.MustCompile(expr))
			}
		}
	}
	return out
}()

// ThinkingBudget is the thinking budget Claude Code 1.0.x sends for the
// requests of a turn whose prompt is text: the highest tier any of its
// phrases reaches, after "i think" and "we think" are taken out (1.0.89
// `Uq5`), else 0. The budget is set per turn from the turn's own new
// messages (`L2([...d0,...A2],A2,…)` passes the turn's messages to
// `maxThinkingTokens:pv(SQ,Z4)`), so a turn without the phrases after one
// with them sends thinking off again. MAX_THINKING_TOKENS, which the log
// does not show, overrides it. 0 for versions it is not read from (before
// 1.0.10, and 2.0 on, where PromptBudget reads the logged setting).
func ThinkingBudget(v Version, text string) int {
	if !v.Known() || v.Before("1.0.10") || v.AtLeast("2.0.0") {
		return 0
	}
	t := strings.ReplaceAll(strings.ReplaceAll(strings.ToLower(text), "i think", ""), "we think", "")
	for i, budget := range []int{budgetHighest, budgetMiddle, budgetBasic} {
		for _, re := range keywordTiers[i] {
			if re.MatchString(t) {
				return budget
			}
		}
	}
	return 0
}

// ultrathink is 2.0's one keyword (2.0.0–2.1.7 `/\bultrathink\b/i`).
var ultrathink = regexp.MustCompile(`(?i)\bultrathink\b`)

// PromptBudget is what one user message of a turn adds to the turn's
// thinking budget, which is the largest over the turn's new non-meta
// messages (every version's `OU`/`$_`: `Math.max(...A.filter(z=>
// z.type==="user"&&!z.isMeta).map(…))`); budget 0 sends no thinking
// parameter, so a turn whose budget differs from the last one's breaks the
// cached messages. setting is the message's logged thinkingMetadata as
// traces.MetaThinking writes it ("" when the line has none). ok is false
// where the log cannot tell: unknown versions, and 2.1.47 on, where
// thinking is one setting for the session (`thinkingConfig`, adaptive or
// disabled), not a per-prompt budget. By version:
//   - 1.0.10–1.0.x: the keyword tiers of the prompt (ThinkingBudget).
//   - 2.0.0–2.1.18: {level, disabled}; disabled is 0, level "high" is
//     31999 (`A==="high"?…ULTRATHINK:0`), any other level 0. A message
//     without it (a slash command's, a bash-mode prompt's) is 31999 if it
//     says "ultrathink" up to 2.1.7, and 0 from 2.1.8.
//   - 2.1.19–2.1.46: {maxThinkingTokens: N} is N. Without it, 0 up to
//     2.1.37: a skill's turn (`/name`) is `OU([r6({content:…})])`, a
//     message without the setting, so it sends no thinking whatever the
//     toggle says. From 2.1.38 a skill leaves the budget unset (`J=void
//     0`) and the toggle decides (`p===!0?rz1(X4):…`, 31999 when on), which
//     the log shows only with typed prompts: not ok.
func PromptBudget(v Version, setting, text string, meta bool) (budget int, ok bool) {
	switch {
	case !v.Known() || v.Before("1.0.10") || v.AtLeast("2.1.47"):
		return 0, false
	case meta:
		return 0, false // never counted: OU filters !isMeta
	case v.Before("2.0.0"):
		return ThinkingBudget(v, text), true
	}
	key, val, _ := strings.Cut(setting, "=")
	switch {
	case v.AtLeast("2.1.19"):
		if key == "max" {
			n, err := strconv.Atoi(val)
			if err == nil && n > 0 {
				return n, true
			}
		}
		return 0, setting != "" || v.Before("2.1.38")
	case setting == "":
		if v.Before("2.1.8") && ultrathink.MatchString(text) {
			return budgetHighest, true
		}
		return 0, true
	case key == "level" && val == "high":
		return budgetHighest, true
	}
	return 0, true
}

// ThinkingParam is the request's thinking setting for a budget, as
// prompt.Params.Thinking writes it: a change of it invalidates the cached
// messages (the API keys them on the thinking parameters), not the system
// prompt and tools.
func ThinkingParam(budget int) string {
	if budget <= 0 {
		return ""
	}
	return fmt.Sprintf("enabled:%d", budget)
}

// EffortCommand reports the level an `/effort` command sets, from the
// command's user message as Claude Code logs it
// ("<command-name>/effort</command-name> ... <command-args>high</command-args>").
// Claude Code sends the level as the request's output_config.effort, and
// its documentation lists an effort change among the actions that
// invalidate the cache (code.claude.com/docs/en/prompt-caching, "Actions
// that invalidate the cache"); corpus pookNast+loopkit da0d9633 line 126:
// after "/effort high" the next call read 11,473 tokens, its first call's
// shared floor, of a 79,800-token prompt whose previous call had read 78,671.
func EffortCommand(text string) (string, bool) {
	const name, args, end = "<command-name>/effort</command-name>", "<command-args>", "</command-args>"
	if !strings.Contains(text, name) {
		return "", false
	}
	i := strings.Index(text, args)
	if i < 0 {
		return "", false
	}
	rest := text[i+len(args):]
	j := strings.Index(rest, end)
	if j < 0 {
		return "", false
	}
	lvl := strings.TrimSpace(rest[:j])
	if lvl == "" {
		// A bare /effort opens a picker whose choice the log does not show.
		return "", false
	}
	return lvl, true
}
