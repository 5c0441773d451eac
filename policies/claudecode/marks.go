package claudecode

// MessageMarks is how many of the last messages Claude Code marks with
// cache_control (on each one's last block that is not thinking), besides
// the two system-prompt blocks it always marks.
//
// Up to 2.1.68 the last two messages are marked:
// `A.map((B,Q)=>B.type==="user"?m88(B,Q>A.length-3):d88(B,Q>A.length-3))`
// (checked in 1.0.72, 2.1.41, 2.1.64, 2.1.67 and 2.1.68); from 2.1.69 only
// the last one: `let w=O?q.length-2:q.length-1,$=q.map((J,X)=>{let M=X===w;…`
// (2.1.69, 2.1.70, 2.1.112). The mark on the second-to-last message (the
// assistant message of a tool call) lets a call that adds more blocks than
// the API's lookback still read the previous call's entry: in the corpus,
// Claude Code 2.0.57 calls that add 21 and 23 blocks (10 and 11 parallel
// tool calls with their results: Smartagent-so e02dc529
// agent-95500236.jsonl lines 28 and 51) read the whole previous prompt.
func MessageMarks(v Version) int {
	if v.Before("2.1.69") {
		return 2
	}
	return 1
}

// EnvPerPrompt reports whether the version rebuilds its system prompt's
// environment section (which names the working directory) for every
// prompt, so that a cd in one turn changes the next prompt's system text
// and the cache breaks after the first, fixed system block.
//
// Up to 2.1.31 the section is rendered on each prompt (1.0.89 `kgB`:
// "<env>\nWorking directory: ${r0()}…", 2.0.57 `ZH9`); from 2.1.32 system
// prompt sections are computed once and kept until cleared
// (`{name,compute,cacheBreak:!1}` sections, "env_info_simple" among them,
// 2.1.32 to 2.1.112). The corpus agrees: the first call after a prompt
// whose working directory differs from the previous prompt's reads only
// the tools and the first system block in 29 of 30 such prompts on 1.0.72
// to 1.0.89 (getmany-software/llm-guard aa57d486 line 666: 44,636 of
// 73,728), and the whole previous prompt in 6 of 6 on 2.1.89 and 2.1.90
// (Johannes0501/openshrooly 04c2be8b, 5ecdf49b). A cd inside a turn never
// breaks the calls after it in the turn (51 of 51 on 1.0.x): the prompt is
// built when the turn starts.
func EnvPerPrompt(v Version) bool { return v.Before("2.1.32") }
