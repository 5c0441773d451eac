package claudecode

// Thinking is whether a Claude Code version asks the API to keep the
// thinking blocks of earlier assistant turns.
type Thinking int

const (
	// ThinkingDefault: the version never sends the edit, so the API's
	// default for the model holds (prompt.StripsThinking: Sonnet 4.5,
	// Opus 4.1 and earlier, Haiku 4.5 and earlier drop earlier turns'
	// thinking at a new user turn).
	ThinkingDefault Thinking = iota
	// ThinkingFlagged: the version sends it behind a server-side flag
	// the log does not show, off by default: the session's own bills
	// decide (see the engine's thinking hypothesis).
	ThinkingFlagged
	// ThinkingKept: the version sends it whenever thinking is on.
	ThinkingKept
)

// ThinkingOf is the version's rule for earlier thinking blocks, as its
// shipped cli.js sends `context_management: {edits: [{type:
// "clear_thinking_20251015", keep: "all"}]}`, the only edit any version
// sends, which stops the API from clearing them:
//
//   - up to 2.0.35 the string is absent: the API default;
//   - 2.0.36 to 2.1.18 behind the Statsig config preserve_thinking.enabled
//     (default false): `Q=y3("preserve_thinking","enabled",!1);if(!Q)return`;
//   - 2.1.19 and 2.1.20 the code is gone: the API default;
//   - 2.1.21 to 2.1.83 behind the GrowthBook gate tengu_marble_anvil
//     (default false): `if(q&&NA("tengu_marble_anvil",!1))K.push({type:
//     "clear_thinking_20251015",keep:"all"})` (2.1.41);
//   - from 2.1.84 with no gate, whenever thinking is on:
//     `if(q)K.push({type:"clear_thinking_20251015",keep:"all"})`.
//
// An unknown version is flagged: the bill decides.
func ThinkingOf(v Version) Thinking {
	switch {
	case !v.Known():
		return ThinkingFlagged
	case v.Before("2.0.36"):
		return ThinkingDefault
	case v.Before("2.1.19"):
		return ThinkingFlagged
	case v.Before("2.1.21"):
		return ThinkingDefault
	case v.Before("2.1.84"):
		return ThinkingFlagged
	}
	return ThinkingKept
}

func (t Thinking) String() string {
	switch t {
	case ThinkingDefault:
		return "the API's default"
	case ThinkingFlagged:
		return "behind a flag"
	}
	return "kept"
}
