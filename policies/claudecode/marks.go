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
