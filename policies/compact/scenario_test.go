package compact_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/ctxsim/ctxsim/internal/storyargs"
	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestScenarios runs the stories under testdata. Commands (one handler each
// in (*scenario).run):
//
//	session window=N [max-output=N] [floor=N] [preset=NAME] [set=(key=value,...)]
//	user [size=N] [cjk=N]                  a user message (N rough tokens)
//	assistant [size=N] [cjk=N] [calls=K]   an assistant message with K tool calls
//	tool [size=N] [cjk=N] [same=LABEL]     results of the pending calls
//	call [billed=N|model] [estimates]      BeforeCall, then AfterResponse
//	overflow prompt=N                      AfterResponse of a rejected call
//	end-turn                               EndOfTurn
//	turn [n=N] [user=N] [assistant=N] [tool=N] [calls=K] [cjk] [billed=...] [quiet]
//	resume idle=DURATION [cold]            OnResume
//	advance d=DURATION                     move the virtual clock
//	model name=NAME [window=N]             SetModel (a model switch)
//	restart                                Restart
//	summarizer [fail=N]                    the next N summary calls fail
//	view | system | users | durable        print state
func TestScenarios(t *testing.T) {
	storyargs.Walk(t, "testdata", *update, func() func(*testing.T, *datadriven.TestData) string {
		return (&scenario{}).run
	})
}

type scenario struct {
	m       *compact.Manager
	model   compact.Model
	v       *prompt.View
	now     time.Time
	sum     *fakeSummarizer
	events  int
	calls   int
	pending []string
	users   []uint64 // hashes of every user text block ever sent
	out     strings.Builder
}

// The story arguments parse as the sim stories' do (internal/storyargs).
var args = storyargs.Joined

func intArg(t testing.TB, a map[string]string, k string, def int) int {
	return storyargs.Int(t, a, k, def)
}

func durArg(t testing.TB, a map[string]string, k string) time.Duration {
	return storyargs.Duration(t, a, k)
}

func (s *scenario) run(t *testing.T, d *datadriven.TestData) string {
	s.out.Reset()
	a := args(d)
	switch d.Cmd {
	case "session":
		s.session(t, d, a)
	case "user":
		s.add(prompt.RoleUser, []traces.Block{text(s.label("u"), a, intArg(t, a, "size", 20), intArg(t, a, "cjk", 0))})
	case "assistant":
		s.assistant(t, a, intArg(t, a, "size", 30), intArg(t, a, "cjk", 0), intArg(t, a, "calls", 0))
	case "tool":
		s.tool(t, a, intArg(t, a, "size", 200), intArg(t, a, "cjk", 0))
	case "call":
		s.call(t, a)
	case "overflow":
		// The provider rejected the last request: prompt=N is its size.
		for _, p := range s.m.AfterResponse(s.now, s.v, intArg(t, a, "prompt", 0), false) {
			s.out.WriteString(formatPass(&p))
		}
		s.out.WriteString("rejected\n")
	case "end-turn":
		s.endTurn(t)
	case "turn":
		s.turns(t, a)
	case "resume":
		idle := durArg(t, a, "idle")
		s.now = s.now.Add(idle)
		_, cold := a["cold"]
		defer s.unchanged(t, s.v)()
		nv, ps := s.m.OnResume(context.Background(), s.now, idle, cold, s.v)
		s.apply(nv, ps)
	case "advance":
		s.now = s.now.Add(durArg(t, a, "d"))
		fmt.Fprintf(&s.out, "t=%s\n", s.now.Format("15:04:05"))
	case "model":
		// A model switch (the engine's ModelSwitch event).
		s.model = compact.Model{Name: a["name"], Window: intArg(t, a, "window", s.model.Window), MaxOutput: s.model.MaxOutput}
		s.m.SetModel(s.model)
		fmt.Fprintf(&s.out, "threshold %d\n", s.m.Threshold())
	case "restart":
		s.m.Restart()
		s.out.WriteString("restarted\n")
	case "summarizer":
		s.sum.fail = intArg(t, a, "fail", 0)
		s.out.WriteString("ok\n")
	case "view":
		s.printView()
	case "system":
		notes := 0
		for _, b := range s.v.System {
			notes += strings.Count(b.Text, compact.SystemNote)
		}
		fmt.Fprintf(&s.out, "system blocks %d, notes %d\n", len(s.v.System), notes)
	case "users":
		s.printUsers()
	case "durable":
		dur := s.m.Durable()
		fmt.Fprintf(&s.out, "compactions %d, ineffective %d, fallback streak %d, cooldown until %s, micro passes %d, micro saved %d, prune rearm %d\n",
			dur.Compactions, dur.Ineffective, dur.FallbackStreak, clock(dur.CooldownUntil), dur.MicroPasses, dur.MicroSaved, dur.PruneRearm)
	default:
		t.Fatalf("unknown command %q", d.Cmd)
	}
	return s.out.String()
}

var epoch = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)

func clock(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format("15:04:05")
}

func (s *scenario) session(t *testing.T, d *datadriven.TestData, a map[string]string) {
	c := policies.Default()
	if p, ok := a["preset"]; ok {
		var err error
		if c, err = policies.Preset(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, arg := range d.CmdArgs {
		if arg.Key != "set" {
			continue
		}
		for _, kv := range arg.Vals {
			k, v, _ := strings.Cut(kv, ":")
			if err := c.Set(k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.model = compact.Model{Name: "claude-sonnet-4-5", Window: intArg(t, a, "window", 200_000), MaxOutput: intArg(t, a, "max-output", 0)}
	s.sum = &fakeSummarizer{}
	m, err := c.NewManager(s.model, s.sum, nil)
	if err != nil {
		t.Fatal(err)
	}
	*s = scenario{m: m, model: s.model, sum: s.sum, now: epoch}
	s.v = &prompt.View{
		Tools:  []traces.Block{{Kind: traces.ToolSchema, Name: "terminal", Text: "Run a shell command.", Input: `{"type":"object","properties":{"command":{"type":"string"}}}`}},
		System: []traces.Block{{Kind: traces.System, Text: filler("system", intArg(t, a, "floor", 500))}},
	}
	fmt.Fprintf(&s.out, "threshold %d, floor %d tokens\n", m.Threshold(), estimate.RoughFloor(s.v))
}

func (s *scenario) label(p string) string {
	s.events++
	return fmt.Sprintf("%s%d", p, s.events)
}

func (s *scenario) add(role prompt.Role, blocks []traces.Block) {
	nv := s.v.Clone()
	nv.Messages = append(nv.Messages, prompt.NewMessage(role, blocks, s.events, prompt.Plain))
	s.v = nv
	if role == prompt.RoleUser {
		for i := range blocks {
			s.users = append(s.users, blocks[i].Hash())
		}
	}
}

func (s *scenario) assistant(t testing.TB, a map[string]string, size, cjk, calls int) {
	blocks := []traces.Block{text(s.label("a"), a, size, cjk)}
	for i := 0; i < calls; i++ {
		id := fmt.Sprintf("call_%d_%d", s.events, i)
		blocks = append(blocks, traces.Block{Kind: traces.ToolUse, ID: id, Name: "terminal", Input: fmt.Sprintf(`{"command":"make test-%d"}`, s.events)})
		s.pending = append(s.pending, id)
	}
	s.add(prompt.RoleAssistant, blocks)
}

func (s *scenario) tool(t testing.TB, a map[string]string, size, cjk int) {
	if len(s.pending) == 0 {
		t.Fatal("tool: no pending calls")
	}
	var blocks []traces.Block
	for _, id := range s.pending {
		b := text(s.label("r"), a, size, cjk)
		if l, ok := a["same"]; ok {
			b.Text = filler(l, size)
		}
		b.Kind, b.ID = traces.ToolResultBlock, id
		blocks = append(blocks, b)
	}
	s.pending = nil
	s.add(prompt.RoleTool, blocks)
}

func (s *scenario) apply(nv *prompt.View, ps []compact.Pass) {
	s.v = nv
	for i := range ps {
		s.out.WriteString(formatPass(&ps[i]))
	}
}

func (s *scenario) call(t testing.TB, a map[string]string) {
	s.now = s.now.Add(2 * time.Second)
	s.calls++
	check := s.unchanged(t, s.v)
	nv, ps, err := s.m.BeforeCall(context.Background(), s.now, s.v)
	check()
	if err != nil {
		fmt.Fprintf(&s.out, "error: %v\n", err)
		return
	}
	same := nv == s.v
	s.apply(nv, ps)
	if _, ok := a["same"]; ok {
		fmt.Fprintf(&s.out, "view unchanged: %v\n", same)
	}
	if _, ok := a["estimates"]; ok {
		for _, e := range s.m.Estimates(s.v) {
			fmt.Fprintf(&s.out, "estimate %s %d\n", e.Name, e.Tokens)
		}
	}
	billed := providerCount(s.v)
	if b, ok := a["billed"]; ok && b != "model" {
		billed = intArg(t, a, "billed", 0)
	}
	fmt.Fprintf(&s.out, "call %d: billed %d\n", s.calls, billed)
	for _, p := range s.m.AfterResponse(s.now, s.v, billed, true) {
		s.out.WriteString(formatPass(&p))
	}
}

func (s *scenario) endTurn(t testing.TB) {
	defer s.unchanged(t, s.v)()
	nv, ps := s.m.EndOfTurn(context.Background(), s.now, s.v)
	s.apply(nv, ps)
}

// unchanged returns a check that v still holds what it held: hooks never
// modify the views they are given. It re-hashes every block rather than
// trusting the messages' cached hashes, which a write into a block's text
// in place would leave stale.
func (s *scenario) unchanged(t testing.TB, v *prompt.View) func() {
	n, fp := len(v.Messages), deepHashes(v)
	return func() {
		t.Helper()
		if len(v.Messages) != n || !slices.Equal(deepHashes(v), fp) {
			t.Fatal("a hook modified the view it was given")
		}
	}
}

// deepHashes is the content hash of every block of v, in order, with each
// message's role.
func deepHashes(v *prompt.View) []uint64 {
	var hs []uint64
	for _, bs := range [][]traces.Block{v.Tools, v.System} {
		for i := range bs {
			hs = append(hs, bs[i].Hash())
		}
	}
	for i := range v.Messages {
		m := &v.Messages[i]
		hs = append(hs, traces.HashString(string(m.Role)))
		for j := range m.Blocks {
			hs = append(hs, m.Blocks[j].Hash())
		}
	}
	return hs
}

// turns plays n turns of user → call → assistant with calls → tool results
// → call → end-turn. With quiet it prints one line per pass outcome kind.
func (s *scenario) turns(t testing.TB, a map[string]string) {
	n := intArg(t, a, "n", 1)
	_, quiet := a["quiet"]
	cjk := intArg(t, a, "cjk", 0)
	counts, first := map[string]int{}, map[string]int{}
	var order []string
	billedAt := 0
	for i := 0; i < n; i++ {
		s.now = s.now.Add(30 * time.Second)
		s.add(prompt.RoleUser, []traces.Block{text(s.label("u"), a, intArg(t, a, "user", 20), cjk)})
		s.call(t, a)
		s.assistant(t, a, intArg(t, a, "assistant", 40), cjk, intArg(t, a, "calls", 1))
		if len(s.pending) > 0 {
			s.tool(t, a, intArg(t, a, "tool", 300), cjk)
			s.call(t, a)
			s.assistant(t, a, intArg(t, a, "assistant", 40), cjk, 0)
		}
		s.endTurn(t)
		if quiet {
			for _, line := range strings.Split(strings.TrimSpace(s.out.String()), "\n") {
				if strings.HasPrefix(line, "call ") {
					var c, b int
					if _, err := fmt.Sscanf(line, "call %d: billed %d", &c, &b); err == nil && b >= s.m.Threshold() && billedAt == 0 {
						billedAt = c
					}
					continue
				}
				if strings.HasPrefix(line, " ") {
					continue
				}
				key := strings.SplitN(line, " ", 3)
				k := strings.Join(key[:min(2, len(key))], " ")
				if counts[k] == 0 {
					order = append(order, k)
					first[k] = s.calls
				}
				counts[k]++
			}
			s.out.Reset()
		}
	}
	if quiet {
		for _, k := range order {
			fmt.Fprintf(&s.out, "%s ×%d (first at call %d)\n", k, counts[k], first[k])
		}
		if billedAt > 0 {
			fmt.Fprintf(&s.out, "billed prompt ≥ threshold first at call %d\n", billedAt)
		}
		fmt.Fprintf(&s.out, "messages %d, rough %d tokens, billed %d\n", len(s.v.Messages), estimate.NewRough().Estimate(s.v), providerCount(s.v))
	}
}

func formatPass(p *compact.Pass) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s: %s", p.Kind, p.Trigger, p.Outcome)
	if p.TokensBefore != 0 || p.TokensAfter != 0 {
		fmt.Fprintf(&b, " %d -> %d", p.TokensBefore, p.TokensAfter)
	}
	if p.Summary != nil {
		fmt.Fprintf(&b, " summary(in=%d out=%d)", p.Summary.Usage.Input, p.Summary.Usage.Output)
	}
	if p.Err != "" {
		fmt.Fprintf(&b, " err=%q", p.Err)
	}
	b.WriteString("\n")
	if len(p.Detail) > 0 {
		b.WriteString("  ")
		for i, kv := range p.Detail {
			if i > 0 {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "%s=%s", kv.Key, strconv.FormatFloat(kv.Value, 'f', -1, 64))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (s *scenario) printView() {
	for i := range s.v.Messages {
		m := &s.v.Messages[i]
		tag := [...]string{"", " batch-summary", " micro-summary", " edited", " merged"}[m.Tag]
		first := ""
		for _, b := range m.Blocks {
			t := b.Text
			if b.Kind == traces.ToolUse {
				t = b.Name + " " + b.Input
			}
			if t != "" {
				first = t
				break
			}
		}
		if len(first) > 48 {
			first = first[:48]
		}
		first = strings.ReplaceAll(first, "\n", " ")
		fmt.Fprintf(&s.out, "%2d %-9s ev=%-3d %5d tok%s %s\n", i, m.Role, m.Event, estimate.RoughMessage(m), tag, first)
	}
}

func (s *scenario) printUsers() {
	have := map[uint64]bool{}
	for i := range s.v.Messages {
		for _, b := range s.v.Messages[i].Blocks {
			have[b.Hash()] = true
		}
	}
	n := 0
	for _, h := range s.users {
		if have[h] {
			n++
		}
	}
	// The engine's user_messages_verbatim counts messages: a plain user
	// message is one, a merged one one per turn it joined, an edited one
	// none.
	plain, merged, edited := 0, 0, 0
	for i := range s.v.Messages {
		m := &s.v.Messages[i]
		if m.Role != prompt.RoleUser || m.Event < 0 {
			continue
		}
		switch m.Tag {
		case prompt.Plain:
			plain++
		case prompt.Merged:
			merged += len(m.Blocks)
		case prompt.Edited:
			edited++
		}
	}
	fmt.Fprintf(&s.out, "user messages sent %d, verbatim in view %d\n", len(s.users), n)
	fmt.Fprintf(&s.out, "counted verbatim %d (plain %d, merged turns %d), edited %d\n", plain+merged, plain, merged, edited)
}

// filler is deterministic ASCII text of exactly n rough tokens, opening with
// label so equal sizes do not make equal texts.
func filler(label string, n int) string {
	const words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
	var b strings.Builder
	b.WriteString(label)
	b.WriteString(" ")
	for b.Len() < 4*n {
		b.WriteString(words)
	}
	return b.String()[:max(4*n, len(label))]
}

const hanzi = "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生"

// text is a text block of size rough tokens of ASCII, or of cjk CJK
// characters (one rough token each) after a short ASCII label.
func text(label string, a map[string]string, size, cjk int) traces.Block {
	if cjk > 0 {
		r := []rune(hanzi)
		var b strings.Builder
		b.WriteString(label + " ")
		for i := 0; i < cjk; i++ {
			b.WriteRune(r[(i*7+len(label))%len(r)])
		}
		return traces.Block{Kind: traces.Text, Text: b.String()}
	}
	return traces.Block{Kind: traces.Text, Text: filler(label, size)}
}

// providerCount stands in for the provider's tokenizer: ASCII at 4.2 bytes
// a token, CJK at 0.6 tokens a character (a BPE tokenizer merges common
// ideograph pairs, which the rough estimator's one-per-codepoint rule does
// not see), 4 tokens of framing per message.
func providerCount(v *prompt.View) int {
	count := func(s string) int {
		ascii, cjk, other := 0, 0, 0
		for _, r := range s {
			switch {
			case r < 0x80:
				ascii++
			case r >= 0x2E80 && r <= 0x9FFF:
				cjk++
			default:
				other += len(string(r))
			}
		}
		return int(float64(ascii)/4.2+0.5) + cjk*6/10 + (other+3)/4
	}
	n := 0
	for _, b := range v.Tools {
		n += count(b.Name + b.Text + b.Input)
	}
	for _, b := range v.System {
		n += count(b.Text)
	}
	for i := range v.Messages {
		n += 4
		for _, b := range v.Messages[i].Blocks {
			n += count(b.Name + b.Input + b.Text)
		}
	}
	return n
}

// fakeSummarizer is a deterministic summarizer model. Batch summaries are
// filler of the requested size; a micro pass appends one line per exchange
// to the running summary; a defrag keeps its newer half.
type fakeSummarizer struct {
	fail  int
	calls int
}

func (f *fakeSummarizer) Summarize(_ context.Context, now time.Time, in compact.SummaryInput) (compact.SummaryOutput, error) {
	f.calls++
	usage := traces.Usage{Input: int64(in.PromptTokens())}
	if f.fail > 0 {
		f.fail--
		return compact.SummaryOutput{Usage: usage, Latency: 30 * time.Second}, errors.New("summarizer: 504 gateway timeout")
	}
	var out string
	switch in.Kind {
	case compact.KindMicro:
		line := strings.SplitN(in.Transcript, "\n", 2)[0]
		if len(line) > 60 {
			line = line[:60]
		}
		out = strings.TrimPrefix(in.Previous+"\n- "+line, "\n")
	case compact.KindDefrag:
		lines := strings.Split(in.Previous, "\n")
		out = "- (defragmented " + strconv.Itoa(len(lines)) + " lines)\n" + strings.Join(lines[len(lines)/2:], "\n")
	default:
		out = filler(fmt.Sprintf("summary-%d", f.calls), in.TargetTokens)
	}
	usage.Output = int64(estimate.Rough(out))
	return compact.SummaryOutput{Text: out, Usage: usage, Latency: time.Duration(500+5*usage.Output) * time.Millisecond}, nil
}
