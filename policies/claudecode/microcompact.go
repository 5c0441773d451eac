package claudecode

import "strings"

// MicrocompactMinSaving is the least a microcompact clears (1.0.89
// `TX5=20000`, in Claude Code's estimate).
const MicrocompactMinSaving = 20000

// ClearedResult is what Claude Code's microcompact puts in place of a tool
// result it clears; the tool call and its id stay.
const ClearedResult = "[Old tool result content cleared]"

// A ToolResult is one tool call of the conversation, in order, as
// Microcompact weighs it: the tool's name, its call's id, and its result's
// size as Claude Code estimates it (ResultTokens), 0 while it has none.
type ToolResult struct {
	ID, Tool string
	Tokens   int
}

// ResultTokens is Claude Code's estimate of a tool result's size: a
// quarter of its text's length, rounded (1.0.89 `YY(A)=Math.round(
// A.length/4)`), and 2,000 per image (`jX5=2000`). The length is
// JavaScript's, in UTF-16 code units, not bytes: a Read result's "→" after
// every line number is one unit and three bytes (corpus 1.0.90 a3258e5b
// line 294: by bytes the clearing would save 20K and run, by units 19,220
// and it does not, as the next bill shows).
func ResultTokens(text string, images int) int {
	return (utf16Len(text)+2)/4 + 2000*images
}

// utf16Len is the length of s in UTF-16 code units (JavaScript's
// String.length); invalid UTF-8 bytes count one unit each, as the
// replacement character they decode to.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// Microcompact is what Claude Code 1.0.60 to 1.0.x clears before a
// request (1.0.89 `$v`, called at the start of every query): the results
// of the oldest calls to its file and shell tools, oldest first, until at
// most 40,000 tokens of such results are left (`PX5=40000`), sparing the
// last three calls (`SX5=3`), and only when the last response's usage
// (input, cache reads and writes, output) was past the warning threshold
// and the clearing saves at least 20,000 tokens (`TX5=20000`). A cleared
// result stays cleared. calls are the conversation's tool calls in order,
// those already cleared left out; lastTotal the last response's usage.
// It returns the ids to clear, or none. From 2.0 the rule is not modelled:
// its constants moved, and 2.1.69 replaced it.
func Microcompact(v Version, model string, calls []ToolResult, lastTotal int) []string {
	if !Microcompacts(v) || lastTotal < WarningThreshold(model) {
		return nil
	}
	tools := microTools(v)
	var ids []int // indices into calls of the tools it clears
	total := 0
	for i, c := range calls {
		if tools[c.Tool] {
			ids = append(ids, i)
			total += c.Tokens
		}
	}
	keep := max(0, len(ids)-3)
	var out []string
	saved := 0
	for _, i := range ids[:keep] {
		if total-saved > 40000 {
			out = append(out, calls[i].ID)
			saved += calls[i].Tokens
		}
	}
	if saved < MicrocompactMinSaving {
		return nil
	}
	return out
}

// Microcompacts says whether version v clears old tool results itself
// (Microcompact): 1.0.60 to the last 1.0.x.
func Microcompacts(v Version) bool {
	return v.Known() && !v.Before("1.0.60") && !v.AtLeast("2.0.0")
}

// microTools are the tools whose results Microcompact clears: Edit and
// Write joined in 1.0.73 (1.0.72 `HH8=new Set(["Read","Bash","Grep",
// "Glob","LS","WebSearch","WebFetch"])`, 1.0.73 adds the two).
func microTools(v Version) map[string]bool {
	m := map[string]bool{"Read": true, "Bash": true, "Grep": true, "Glob": true, "LS": true, "WebSearch": true, "WebFetch": true}
	if v.AtLeast("1.0.73") {
		m["Edit"], m["Write"] = true, true
	}
	return m
}

// WarningThreshold is the context size from which Claude Code 1.0.x warns
// that its context is filling, with auto-compaction on (its default): the
// 200,000-token window less the response's reserve (32,000 tokens,
// CLAUDE_CODE_MAX_OUTPUT_TOKENS's default; 8,192 for Haiku and 3.5
// models), less 13,000 before auto-compaction, less 20,000 (1.0.89 `ZS`,
// `LX5=13000`, `MX5=20000`; a "[1m]" model's window is 1,000,000).
func WarningThreshold(model string) int {
	window, reserve := 200000, 32000
	if strings.Contains(model, "[1m]") {
		window = 1000000
	}
	if strings.Contains(model, "3-5") || strings.Contains(model, "haiku") {
		reserve = 8192
	}
	return window - reserve - 13000 - 20000
}
