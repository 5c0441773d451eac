package synth

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctxsim/ctxsim/traces"
)

// charsPerToken is the measured o200k ratio of each content kind (see the
// package doc and TestCharsPerToken). The generator uses it to size content
// in tokens and to put the output token count of each call in its Meta.
var charsPerToken = map[Content]float64{
	Code: 3.61, Prose: 4.70, JSON: 3.26, Shell: 3.18, Diff: 3.53,
	CJK: 1.45, Cyrillic: 3.77, ArabicT: 3.35,
}

func proseContent(l Lang) Content {
	switch l {
	case Chinese, Japanese:
		return CJK
	case Russian:
		return Cyrillic
	case Arabic:
		return ArabicT
	}
	return Prose
}

type weighted[T any] struct {
	v T
	w int
}

func pickWeighted[T any](r *rand.Rand, xs []weighted[T]) T {
	total := 0
	for _, x := range xs {
		total += x.w
	}
	n := r.IntN(total)
	for _, x := range xs {
		if n < x.w {
			return x.v
		}
		n -= x.w
	}
	return xs[len(xs)-1].v
}

// codingTools is the tool mix of the shared Claude Code sessions (Bash 79,
// Read 49, Edit 32, Glob 13, Grep 12, Write 8, WebSearch 6, WebFetch 2 of
// 206 calls), with TodoWrite added at the low rate newer harness versions
// show.
var codingTools = []weighted[string]{
	{"Bash", 38}, {"Read", 24}, {"Edit", 15}, {"Glob", 6}, {"Grep", 6},
	{"Write", 4}, {"WebSearch", 3}, {"WebFetch", 2}, {"TodoWrite", 2},
}

// A style is how one kind of session talks: how many calls a turn makes,
// how long the person thinks, which tools run, in which language.
type style struct {
	calls lognormal
	think lognormal
	tools []weighted[string]
	// resultChars sizes content-bearing tool results.
	resultChars lognormal
	// lang is the person's language; foreign is the share of user messages
	// and assistant prose written in it (the rest is English).
	lang    Lang
	foreign float64
	// parallel is the chance a tool call comes with one or two siblings in
	// the same assistant message.
	parallel float64
	// reply sizes the final text of a turn, in characters.
	reply lognormal
}

var codingStyle = style{
	calls: callsPerTurn, think: thinkSeconds.with(thinkSeconds.mu, 600),
	tools: codingTools, resultChars: toolResultChars, lang: English,
	parallel: 0.15, reply: lognormal{mu: math.Log(700), sigma: 0.8, min: 40, max: 6000},
}

// A builder appends events to one session, keeping the virtual clock.
type builder struct {
	r   *rand.Rand
	g   *textGen
	s   *traces.Session
	st  style
	now time.Time
	ids int
	// meta is merged into the Meta of every user event (all-day sets the
	// source of the segment).
	meta map[string]string
}

func newBuilder(r *rand.Rand, s *traces.Session, st style, start time.Time) *builder {
	lang := pickWeighted(r, []weighted[Lang]{{Go, 40}, {Python, 25}, {TypeScript, 25}, {Elixir, 10}})
	return &builder{r: r, g: newTextGen(r, lang), s: s, st: st, now: start}
}

func (b *builder) add(e traces.Event) *traces.Event {
	e.Time = b.now
	b.s.Events = append(b.s.Events, e)
	return &b.s.Events[len(b.s.Events)-1]
}

// proseLang picks the language of one piece of prose.
func (b *builder) proseLang() Lang {
	if b.st.lang != English && b.r.Float64() < b.st.foreign {
		return b.st.lang
	}
	return English
}

func (b *builder) prose(chars int) (string, Content) {
	l := b.proseLang()
	return b.g.prose(l, chars), proseContent(l)
}

func estTokens(text string, k Content) int {
	return int(math.Ceil(float64(utf8.RuneCountInString(text)) / charsPerToken[k]))
}

// user appends a user message.
func (b *builder) user(text string) *traces.Event {
	e := b.add(traces.Event{Kind: traces.User, Blocks: []traces.Block{{Kind: traces.Text, Text: text}}})
	if len(b.meta) > 0 {
		e.Meta = map[string]string{}
		for k, v := range b.meta {
			e.Meta[k] = v
		}
	}
	return e
}

// request is a user request of a few sentences, sometimes with pasted
// output, as people write them.
func (b *builder) request() string {
	n := 1 + b.r.IntN(3)
	l := b.proseLang()
	var parts []string
	for range n {
		parts = append(parts, b.g.sentence(l))
	}
	sep := " "
	if l == Chinese || l == Japanese {
		sep = ""
	}
	text := strings.Join(parts, sep)
	if b.r.IntN(6) == 0 {
		text += "\n\n```\n" + b.g.shell(300+b.r.IntN(1500)) + "```"
	}
	return text
}

// assistant appends one model call with the given blocks; out is the
// output token count the call produced. The clock moves by a nominal model
// time (1.2 s + 15 ms per output token): machine-paced timing is the
// engine's job, these times only keep the trace plausible.
func (b *builder) assistant(blocks []traces.Block, out int) {
	b.now = b.now.Add(time.Duration(1200+15*out) * time.Millisecond)
	b.add(traces.Event{Kind: traces.Assistant, Model: b.s.Model, Blocks: blocks,
		Meta: map[string]string{"output_tokens": strconv.Itoa(out)}})
}

// preamble is the optional thinking and text before a call's tool uses.
func (b *builder) preamble(thinkP, textP float64) ([]traces.Block, int) {
	var blocks []traces.Block
	out := 0
	if b.r.Float64() < thinkP {
		t, k := b.prose(150 + b.r.IntN(1200))
		blocks = append(blocks, traces.Block{Kind: traces.Thinking, Text: t})
		out += estTokens(t, k)
	}
	if b.r.Float64() < textP {
		t, k := b.prose(textChars.int(b.r))
		blocks = append(blocks, traces.Block{Kind: traces.Text, Text: strings.TrimSpace(t)})
		out += estTokens(t, k)
	}
	return blocks, out
}

// A toolRun is one tool call: the use and its result.
type toolRun struct {
	use    traces.Block
	result traces.Block
	ms     int64
}

func (b *builder) newID() string {
	b.ids++
	return fmt.Sprintf("toolu_%s_%04d", strconv.FormatUint(traces.HashString(b.s.ID)&0xffffff, 36), b.ids)
}

func mustJSON(v any) string {
	bs, err := json.Marshal(v) // map keys sorted: stable bytes
	if err != nil {
		panic("synth: marshal tool input: " + err.Error())
	}
	return string(bs)
}

// run makes one call of tool: its input, its output and its run time.
func (b *builder) run(tool string) toolRun {
	g, r := b.g, b.r
	id := b.newID()
	size := b.st.resultChars.int(r)
	var in map[string]any
	var out string
	isErr := false
	switch tool {
	case "Read":
		p := g.path(g.lang)
		in = map[string]any{"file_path": p}
		out = numbered(g.code(g.lang, size), 1)
	case "Bash":
		cmd := pick(r, []string{"go test ./...", "git status", "git log --oneline -n 20", "ls -la", "npm test", "pytest -q",
			"make build", "git diff", "gh issue list --json number,title,state,labels", "docker compose logs --tail 50 api"})
		in = map[string]any{"command": cmd, "description": g.sentence(English)}
		switch {
		case strings.HasPrefix(cmd, "gh "):
			out = g.json(size)
		case cmd == "git diff":
			out = g.diff(size)
		default:
			out = g.shell(size)
		}
		if r.IntN(12) == 0 {
			isErr = true
			out = "Exit code 1\n" + out
		}
	case "Grep":
		in = map[string]any{"pattern": pick(r, verbs) + title(pick(r, nouns)), "output_mode": "content", "-n": true}
		out = g.grep(size)
	case "Glob":
		in = map[string]any{"pattern": "**/*" + ext[g.lang]}
		out = g.paths(max(1, min(400, size/60)))
	case "Edit":
		p := g.path(g.lang)
		unit := pick(r, g.c.code[g.lang])
		old, new := g.fill(unit), g.fill(unit)
		in = map[string]any{"file_path": p, "old_string": old, "new_string": new}
		out = "The file " + p + " has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n" + numbered(new, 10+r.IntN(300))
	case "Write":
		p := g.path(g.lang)
		in = map[string]any{"file_path": p, "content": g.code(g.lang, min(size, 8000))}
		out = "File created successfully at: " + p
	case "TodoWrite":
		var todos []map[string]any
		for i := range 2 + r.IntN(5) {
			st := "pending"
			if i == 0 {
				st = "in_progress"
			}
			s := strings.TrimSuffix(g.sentence(English), ".")
			todos = append(todos, map[string]any{"content": s, "activeForm": s, "status": st})
		}
		in = map[string]any{"todos": todos}
		out = "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable"
	case "WebSearch":
		in = map[string]any{"query": pick(r, verbs) + " " + pick(r, nouns) + " " + string(g.lang)}
		out, _ = b.prose(min(size, 6000))
	default: // WebFetch
		in = map[string]any{"url": fmt.Sprintf("https://pkg.go.dev/github.com/acme/%s/%s", g.project, pick(r, pkgs)), "prompt": g.sentence(English)}
		out, _ = b.prose(size)
	}
	return toolRun{
		use:    traces.Block{Kind: traces.ToolUse, ID: id, Name: tool, Input: mustJSON(in)},
		result: traces.Block{Kind: traces.ToolResultBlock, ID: id, Text: out, IsError: isErr},
		ms:     int64(toolRunMS.int(r)),
	}
}

// toolCall appends one assistant call that uses tools and the tool_result
// message answering it.
func (b *builder) toolCall() {
	blocks, out := b.preamble(0.2, 0.35)
	k := 1
	if b.r.Float64() < b.st.parallel {
		k += 1 + b.r.IntN(2)
	}
	runs := make([]toolRun, k)
	for i := range runs {
		runs[i] = b.run(pickWeighted(b.r, b.st.tools))
		blocks = append(blocks, runs[i].use)
		out += estTokens(runs[i].use.Name+" "+runs[i].use.Input, JSON)
	}
	b.assistant(blocks, out)
	b.results(runs)
}

// results appends the tool_result message for runs, which ran in parallel.
func (b *builder) results(runs []toolRun) {
	var ms int64
	res := make([]traces.Block, len(runs))
	for i, tr := range runs {
		res[i] = tr.result
		ms = max(ms, tr.ms)
	}
	b.now = b.now.Add(time.Duration(ms) * time.Millisecond)
	b.add(traces.Event{Kind: traces.ToolResult, Blocks: res, LatencyMS: ms})
}

// reply appends the final call of a turn: prose, sometimes with code.
func (b *builder) reply() {
	blocks, out := b.preamble(0.3, 0)
	t, k := b.prose(b.st.reply.int(b.r))
	out += estTokens(t, k)
	if b.r.IntN(4) == 0 {
		c := "\n```" + string(b.g.lang) + "\n" + b.g.fill(pick(b.r, b.g.c.code[b.g.lang])) + "\n```\n"
		t += c
		out += estTokens(c, Code)
	}
	blocks = append(blocks, traces.Block{Kind: traces.Text, Text: t})
	b.assistant(blocks, out)
}

// turn appends one human turn: the request, the tool calls, the reply.
func (b *builder) turn(request string) {
	b.user(request)
	n := b.st.calls.int(b.r)
	for range n - 1 {
		b.toolCall()
	}
	b.reply()
}

// think moves the clock by a human gap.
func (b *builder) think() {
	b.now = b.now.Add(time.Duration(b.st.think.draw(b.r) * float64(time.Second)))
}
