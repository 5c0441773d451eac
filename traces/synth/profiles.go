package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/traces"
)

func genCodingBurst(c *genCtx) []*traces.Session {
	s := c.session(codingHarness, traces.SourceCLI)
	b := newBuilder(c.r, s, codingStyle, c.day())
	for t := range c.turns(8) {
		if t > 0 {
			b.think()
		}
		b.turn(b.request())
	}
	return []*traces.Session{s}
}

func genMultilingual(c *genCtx) []*traces.Session {
	st := codingStyle
	st.lang = pickWeighted(c.r, []weighted[Lang]{{Chinese, 3}, {Japanese, 2}, {Russian, 3}, {Arabic, 2}})
	st.foreign = 0.75
	s := c.session(codingHarness, traces.SourceCLI)
	s.Notes = append(s.Notes, "language: "+string(st.lang))
	b := newBuilder(c.r, s, st, c.day())
	for t := range c.turns(8) {
		if t > 0 {
			b.think()
		}
		b.turn(b.request())
	}
	return []*traces.Session{s}
}

// genAllDay is one conversation through a day: a morning at the terminal,
// a few messages from the phone at lunch, an afternoon at the terminal and
// a scheduled run at 02:00 the next night. Each user event's
// Meta["source"] says where it came from; the session's Source is where it
// started (cli).
func genAllDay(c *genCtx) []*traces.Session {
	s := c.session(codingHarness, traces.SourceCLI)
	day := c.day().Truncate(24 * time.Hour)
	desk := codingStyle
	desk.think = thinkSeconds.with(thinkSeconds.mu, 45*60)
	phone := codingStyle
	phone.calls = lognormal{mu: 0.5, sigma: 0.8, min: 1, max: 6}
	phone.reply = lognormal{mu: math.Log(350), sigma: 0.6, min: 40, max: 2000}
	phone.think = lognormal{mu: math.Log(90), sigma: 1.0, min: 10, max: 1200}
	b := newBuilder(c.r, s, desk, day)
	segment := func(src traces.Source, at time.Time, st style, mean float64) {
		// Never go back in time: a long morning pushes lunch later.
		b.now = maxTime(at, b.now.Add(10*time.Minute))
		b.st = st
		b.meta = map[string]string{"source": string(src)}
		for t := range c.turns(mean) {
			if t > 0 {
				b.think()
			}
			req := b.request()
			if src == traces.SourceMessaging {
				req = b.g.sentence(b.proseLang())
			}
			b.turn(req)
		}
	}
	jitter := func(d time.Duration) time.Duration { return time.Duration(c.r.Float64() * float64(d)) }
	segment(traces.SourceCLI, day.Add(8*time.Hour+30*time.Minute+jitter(time.Hour)), desk, 6)
	segment(traces.SourceMessaging, day.Add(12*time.Hour+jitter(45*time.Minute)), phone, 3)
	segment(traces.SourceCLI, day.Add(14*time.Hour+jitter(time.Hour)), desk, 6)

	b.now = maxTime(day.Add(26*time.Hour), b.now.Add(10*time.Minute))
	b.meta = map[string]string{"source": string(traces.SourceCron)}
	b.st = cronStyle
	scaffold, _ := cronScaffold(c.r)
	b.cronRun(scaffold, 0)
	return []*traces.Session{s}
}

var cronStyle = style{
	calls:       lognormal{mu: 1.0, sigma: 0.5, min: 1, max: 8},
	think:       thinkSeconds,
	tools:       []weighted[string]{{"Bash", 6}, {"Read", 3}, {"WebFetch", 1}},
	resultChars: lognormal{mu: math.Log(900), sigma: 1.0, min: 40, max: 12000},
	lang:        English, parallel: 0.1,
	reply: lognormal{mu: math.Log(900), sigma: 0.5, min: 100, max: 4000},
}

// cronScaffold is the static part of a scheduled job's prompt (a skill:
// instructions, an inventory, a report template) and the job's interval.
// It is drawn from its own stream of the seed, so every run of the job
// sends the same scaffold bytes.
func cronScaffold(r *rand.Rand) (string, time.Duration) {
	g := newTextGen(r, Go)
	job := pick(r, pkgs)
	var b strings.Builder
	fmt.Fprintf(&b, "# Scheduled task: %s health report for %s\n\nYou are running unattended as a scheduled job. Nobody will answer questions; finish the task and report.\n\n## Instructions\n", job, g.project)
	for range 12 {
		fmt.Fprintf(&b, "- %s\n", pick(r, g.c.rules))
	}
	b.WriteString("\n## Background\n")
	b.WriteString(g.prose(English, 3000))
	b.WriteString("\n## Inventory\n```json\n")
	b.WriteString(g.json(14000))
	b.WriteString("```\n\n## Report template\n")
	for _, h := range []string{"Summary", "New alerts", "Regressions", "Actions taken", "Needs a human"} {
		fmt.Fprintf(&b, "### %s\n%s\n\n", h, g.sentence(English))
	}
	interval := pick(r, []time.Duration{15 * time.Minute, 30 * time.Minute, time.Hour})
	return b.String(), interval
}

// cronRun appends one run of a scheduled job: the scaffold with its
// boundary registered, a volatile tail, a few tool calls and the report.
func (b *builder) cronRun(scaffold string, run int) {
	var tail strings.Builder
	fmt.Fprintf(&tail, "Run %d at %s. New alerts since the last run:\n", run, b.now.UTC().Format(time.RFC3339))
	tail.WriteString(b.g.json(200 + b.r.IntN(1200)))
	tail.WriteString("Write the report now.")
	e := b.user(scaffold + tail.String())
	e.Blocks[0].ScaffoldEnd = len(scaffold)
	n := b.st.calls.int(b.r)
	for range n - 1 {
		b.toolCall()
	}
	b.reply()
}

func genCron(c *genCtx) []*traces.Session {
	// The scaffold and interval come from the seed alone, shared by runs.
	scaffold, interval := cronScaffold(rand.New(rand.NewPCG(c.seed, Stream("cron/scaffold", 0))))
	s := c.session(cronHarness, traces.SourceCron)
	s.Tenant = fmt.Sprintf("cron-%d", c.seed)
	s.Notes = append(s.Notes, "job interval: "+interval.String())
	b := newBuilder(c.r, s, cronStyle, c.start.Add(time.Duration(c.i)*interval))
	b.cronRun(scaffold, c.i)
	return []*traces.Session{s}
}

var reviewStyle = style{
	calls: lognormal{mu: math.Log(3), sigma: 0.5, min: 2, max: 30},
	// A reviewer reads the findings before asking for the next area.
	think:       lognormal{mu: math.Log(12 * 60), sigma: 0.35, min: 60, max: 40 * 60},
	tools:       []weighted[string]{{"Read", 55}, {"Grep", 15}, {"Glob", 8}, {"Bash", 17}, {"TodoWrite", 5}},
	resultChars: lognormal{mu: math.Log(1800), sigma: 0.8, min: 200, max: 30000},
	lang:        English, parallel: 0.1,
	reply: lognormal{mu: math.Log(2200), sigma: 0.4, min: 400, max: 8000},
}

// reviewTokens is the transcript size a review aims at, in o200k tokens
// (hermes.md §5's example: ~75K tokens of transcript in 3.5 h).
const reviewTokens = 75_000

func genReview(c *genCtx) []*traces.Session {
	s := c.session(codingHarness, traces.SourceCLI)
	b := newBuilder(c.r, s, reviewStyle, c.day())
	budget := int(reviewTokens * c.length)
	b.turn("Review the whole project: architecture, correctness, concurrency, error handling and tests. Go package by package and report findings with severity as you go.")
	est, seen := 0, 0
	for {
		// Count only the events the last turn added: linear in length.
		est += estEvents(s.Events[seen:])
		seen = len(s.Events)
		if est >= budget {
			break
		}
		b.think()
		b.turn(b.g.sentence(English) + " " + pick(b.r, []string{"Continue with the next package.", "Now look at the tests.",
			"What about error handling there?", "Go on.", "Check the concurrency in that part too."}))
	}
	return []*traces.Session{s}
}

// estEvents is the size of events from the measured ratios, taking each
// block at the densest ratio (shell), which lands close to o200k.
func estEvents(evs []traces.Event) int {
	n := 0
	for i := range evs {
		for j := range evs[i].Blocks {
			bl := &evs[i].Blocks[j]
			n += estTokens(bl.Text+bl.Name+bl.Input, Shell)
		}
	}
	return n
}

var subagentStyle = style{
	calls:       lognormal{mu: math.Log(10), sigma: 0.6, min: 2, max: 60},
	think:       thinkSeconds,
	tools:       []weighted[string]{{"Read", 40}, {"Grep", 20}, {"Glob", 12}, {"Bash", 28}},
	resultChars: toolResultChars,
	lang:        English, parallel: 0.2,
	reply: lognormal{mu: math.Log(2000), sigma: 0.5, min: 300, max: 8000},
}

// genSubagents is a coding session whose middle turn fans out to 2-6
// parallel subagents. Children share the parent's floor and tenant and are
// returned after the parent.
func genSubagents(c *genCtx) []*traces.Session {
	parent := c.session(codingHarness, traces.SourceCLI)
	parent.Tenant = parent.ID
	b := newBuilder(c.r, parent, codingStyle, c.day())
	turns := c.turns(4)
	fan := turns / 2
	var children []*traces.Session
	for t := range turns {
		if t > 0 {
			b.think()
		}
		if t != fan {
			b.turn(b.request())
			continue
		}
		b.user(b.request())
		k := min(6, 2+poisson(c.r, 1.5))
		blocks, out := b.preamble(0.5, 1)
		runs := make([]toolRun, k)
		prompts := make([]string, k)
		for j := range runs {
			id := b.newID()
			desc := title(pick(c.r, verbs)) + " the " + pick(c.r, pkgs) + " " + plural(pick(c.r, nouns))
			prompt := strings.Join([]string{b.g.sentence(English), b.g.sentence(English), b.g.sentence(English),
				"Report what you found with file paths and line numbers."}, " ")
			prompts[j] = prompt
			in := mustJSON(map[string]any{"description": desc, "prompt": prompt, "subagent_type": "general-purpose"})
			runs[j].use = traces.Block{Kind: traces.ToolUse, ID: id, Name: "Task", Input: in}
			blocks = append(blocks, runs[j].use)
			out += estTokens("Task "+in, JSON)
		}
		b.assistant(blocks, out)
		for j := range runs {
			child := &traces.Session{
				ID: fmt.Sprintf("%s-c%d", parent.ID, j), Source: traces.SourceSubagent, Model: parent.Model,
				Window: parent.Window, Format: parent.Format, Tenant: parent.ID, Parent: parent.ID,
				Floor: slices.Clone(parent.Floor), Notes: []string{parent.Notes[0], "subagent of " + parent.ID},
			}
			cr := rand.New(rand.NewPCG(c.seed, traces.HashString(child.ID)))
			cb := newBuilder(cr, child, subagentStyle, b.now)
			cb.g.lang, cb.g.project = b.g.lang, b.g.project
			cb.turn(prompts[j])
			last := child.Events[len(child.Events)-1]
			report := last.Blocks[len(last.Blocks)-1].Text
			runs[j].result = traces.Block{Kind: traces.ToolResultBlock, ID: runs[j].use.ID, Text: report}
			runs[j].ms = cb.now.Sub(b.now).Milliseconds()
			parent.Children = append(parent.Children, child.ID)
			children = append(children, child)
		}
		b.results(runs)
		for range b.st.calls.int(c.r) - 1 {
			b.toolCall()
		}
		b.reply()
	}
	return append([]*traces.Session{parent}, children...)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
