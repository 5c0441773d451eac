package synth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/estimate/tiktoken"
	"github.com/ctxsim/ctxsim/traces"
)

var o200k = sync.OnceValue(func() estimate.Tokenizer {
	tok, err := tiktoken.Get("o200k_base")
	if err != nil {
		panic(err)
	}
	return tok
})

// TestCharsPerToken pins the measured o200k ratio of each content kind:
// 50 samples of ~4,000 characters each, seed (1, 2).
func TestCharsPerToken(t *testing.T) {
	bands := map[Content][2]float64{
		Code: {3, 4}, Prose: {4, 5}, JSON: {3, 4}, Shell: {2.8, 4}, Diff: {3, 4},
		CJK: {1, 1.5}, Cyrillic: {3, 4.5}, ArabicT: {2.8, 4},
	}
	for _, k := range Contents() {
		r := rand.New(rand.NewPCG(1, 2))
		chars, toks := 0, 0
		for range 50 {
			s := Sample(r, k, 4000)
			chars += utf8.RuneCountInString(s)
			toks += o200k().Count(s)
		}
		got := float64(chars) / float64(toks)
		if want := charsPerToken[k]; got < want-0.02 || got > want+0.02 {
			t.Errorf("%s: %.3f chars/token, charsPerToken has %.2f", k, got, want)
		}
		if b := bands[k]; got < b[0] || got > b[1] {
			t.Errorf("%s: %.3f chars/token outside the plausible band %v", k, got, b)
		}
	}
}

func writeAll(t *testing.T, ss []*traces.Session) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, s := range ss {
		require.NoError(t, traces.WriteSession(&buf, s))
	}
	return buf.Bytes()
}

// TestProfileStats pins each profile's statistics for seed 1, 2 sessions.
func TestProfileStats(t *testing.T) {
	tests := []struct {
		profile                       string
		sessions, turns, calls, tools int
		floor, tokens, output         int
		p50, p90, dur                 string
	}{
		{"all-day", 2, 35, 344, 309, 35896, 351482, 62556, "2m39s", "2h33m12s", "33h44m34s"},
		{"coding-burst", 2, 16, 106, 90, 35896, 93538, 27779, "1m19s", "3m51s", "54m2s"},
		{"cron", 2, 2, 5, 3, 5598, 14312, 866, "0s", "0s", "21s"},
		{"multilingual", 2, 15, 283, 268, 35896, 320694, 89029, "56s", "5m21s", "1h36m40s"},
		{"review", 2, 27, 128, 101, 35896, 143215, 26939, "13m33s", "20m40s", "6h14m16s"},
		{"subagents", 9, 20, 259, 239, 161532, 265639, 48640, "1m57s", "6m27s", "1h37m54s"},
	}
	sec := func(d time.Duration) string { return d.Round(time.Second).String() }
	for _, tt := range tests {
		t.Run(tt.profile, func(t *testing.T) {
			ss, err := Generate(context.Background(), tt.profile, 2, 1, Options{})
			require.NoError(t, err)
			st := Measure(ss, o200k())
			got := fmt.Sprintf("{%q, %d, %d, %d, %d, %d, %d, %d, %q, %q, %q},", tt.profile, st.Sessions, st.Turns, st.Calls, st.ToolResults,
				st.FloorTokens, st.Tokens, st.OutputTokens, sec(st.GapP50), sec(st.GapP90), sec(st.Duration))
			want := fmt.Sprintf("{%q, %d, %d, %d, %d, %d, %d, %d, %q, %q, %q},", tt.profile, tt.sessions, tt.turns, tt.calls, tt.tools,
				tt.floor, tt.tokens, tt.output, tt.p50, tt.p90, tt.dur)
			if got != want {
				t.Errorf("stats\n got %s\nwant %s", got, want)
			}
		})
	}
}

// TestDeterministic: the same seed gives the same bytes, another seed other
// bytes, and session i does not depend on how many sessions were asked for.
func TestDeterministic(t *testing.T) {
	for _, p := range Profiles() {
		a, err := Generate(context.Background(), p.Name, 2, 7, Options{})
		require.NoError(t, err)
		b, err := Generate(context.Background(), p.Name, 2, 7, Options{})
		require.NoError(t, err)
		if !bytes.Equal(writeAll(t, a), writeAll(t, b)) {
			t.Errorf("%s: seed 7 twice gave different bytes", p.Name)
		}
		c, err := Generate(context.Background(), p.Name, 2, 8, Options{})
		require.NoError(t, err)
		if bytes.Equal(writeAll(t, a[1:]), writeAll(t, c[1:])) {
			t.Errorf("%s: seeds 7 and 8 gave the same bytes", p.Name)
		}
		one, err := Generate(context.Background(), p.Name, 1, 7, Options{})
		require.NoError(t, err)
		if !bytes.Equal(writeAll(t, one[:1]), writeAll(t, a[:1])) {
			t.Errorf("%s: session 0 differs between n=1 and n=2", p.Name)
		}
	}
}

// TestRoundTrip: generated traces survive WriteSession/ReadSession
// unchanged.
func TestRoundTrip(t *testing.T) {
	for _, p := range Profiles() {
		ss, err := Generate(context.Background(), p.Name, 2, 3, Options{})
		require.NoError(t, err)
		for _, s := range ss {
			var buf bytes.Buffer
			require.NoError(t, traces.WriteSession(&buf, s))
			first := bytes.Clone(buf.Bytes())
			back, err := traces.ReadSession(&buf, s.ID+".jsonl")
			require.NoError(t, err)
			if len(back.Events) != len(s.Events) || len(back.Floor) != len(s.Floor) {
				t.Errorf("%s: read back %d events, %d floor blocks; wrote %d, %d", s.ID, len(back.Events), len(back.Floor), len(s.Events), len(s.Floor))
			}
			var again bytes.Buffer
			require.NoError(t, traces.WriteSession(&again, back))
			if !bytes.Equal(first, again.Bytes()) {
				t.Errorf("%s: write-read-write changed the bytes", s.ID)
			}
		}
	}
}

// TestShape checks the invariants every consumer relies on: ids, notes,
// paired tool results, output token counts, time order, floor sizes.
func TestShape(t *testing.T) {
	for _, p := range Profiles() {
		ss, err := Generate(context.Background(), p.Name, 3, 11, Options{})
		require.NoError(t, err)
		for _, s := range ss {
			if !strings.HasPrefix(s.ID, p.Name+"-11-") {
				t.Errorf("%s: id %q, want prefix %s-11-", p.Name, s.ID, p.Name)
			}
			if len(s.Notes) == 0 || s.Notes[0] != "synthetic: profile "+p.Name+", seed 11" {
				t.Errorf("%s: notes %q", s.ID, s.Notes)
			}
			if s.Model != p.Model || s.Window != p.Window {
				t.Errorf("%s: model %s window %d, want %s %d", s.ID, s.Model, s.Window, p.Model, p.Window)
			}
			floor := 0
			for i := range s.Floor {
				floor += o200k().Count(s.Floor[i].TokenText())
			}
			lo, hi := 15_000, 25_000
			if p.Name == "cron" {
				lo, hi = 1_500, 5_000
			}
			if floor < lo || floor > hi {
				t.Errorf("%s: floor %d tokens, want [%d, %d]", s.ID, floor, lo, hi)
			}
			open := map[string]bool{}
			var estOut, realOut int
			for i, e := range s.Events {
				if i > 0 && e.Time.Before(s.Events[i-1].Time) {
					t.Errorf("%s: event %d goes back in time", s.ID, i)
				}
				switch e.Kind {
				case traces.Assistant:
					if len(open) > 0 {
						t.Errorf("%s: event %d: call while tool uses %v are unanswered", s.ID, i, open)
					}
					n, err := strconv.Atoi(e.Meta["output_tokens"])
					if err != nil || n <= 0 {
						t.Errorf("%s: event %d: output_tokens %q", s.ID, i, e.Meta["output_tokens"])
					}
					estOut += n
					for _, b := range e.Blocks {
						realOut += o200k().Count(b.TokenText())
						if b.Kind == traces.ToolUse {
							open[b.ID] = true
						}
					}
				case traces.ToolResult:
					for _, b := range e.Blocks {
						if !open[b.ID] {
							t.Errorf("%s: event %d: result %s answers no open tool use", s.ID, i, b.ID)
						}
						delete(open, b.ID)
					}
					if len(open) > 0 {
						t.Errorf("%s: event %d leaves %v unanswered", s.ID, i, open)
					}
				}
			}
			if r := float64(estOut) / float64(realOut); r < 0.85 || r > 1.15 {
				t.Errorf("%s: output_tokens sum %d vs o200k %d (ratio %.2f)", s.ID, estOut, realOut, r)
			}
		}
	}
}

func TestCronScaffold(t *testing.T) {
	ss, err := Generate(context.Background(), "cron", 3, 5, Options{})
	require.NoError(t, err)
	var scaffold string
	for i, s := range ss {
		if s.Source != traces.SourceCron || s.Tenant != "cron-5" {
			t.Errorf("%s: source %s tenant %s", s.ID, s.Source, s.Tenant)
		}
		b := s.Events[0].Blocks[0]
		if b.ScaffoldEnd <= 0 || b.ScaffoldEnd >= len(b.Text) {
			t.Fatalf("%s: scaffold_end %d of %d bytes", s.ID, b.ScaffoldEnd, len(b.Text))
		}
		head, tail := b.Text[:b.ScaffoldEnd], b.Text[b.ScaffoldEnd:]
		if tail[0] == ' ' || tail[0] == '\n' {
			t.Errorf("%s: tail starts with whitespace", s.ID)
		}
		if i == 0 {
			scaffold = head
		} else if head != scaffold {
			t.Errorf("%s: scaffold differs from run 0's", s.ID)
		}
		if st, tt := o200k().Count(head), o200k().Count(tail); st < 5*tt {
			t.Errorf("%s: scaffold %d tokens, tail %d: want a large static part", s.ID, st, tt)
		}
	}
	if !ss[1].Start().After(ss[0].Start()) {
		t.Errorf("runs not spaced: %v, %v", ss[0].Start(), ss[1].Start())
	}
}

func TestSubagentLinks(t *testing.T) {
	ss, err := Generate(context.Background(), "subagents", 1, 2, Options{})
	require.NoError(t, err)
	parent, children := ss[0], ss[1:]
	if len(children) < 2 || len(parent.Children) != len(children) {
		t.Fatalf("parent lists %d children, got %d sessions after it", len(parent.Children), len(children))
	}
	for i, c := range children {
		if c.Source != traces.SourceSubagent || c.Parent != parent.ID || c.TenantID() != parent.TenantID() || parent.Children[i] != c.ID {
			t.Errorf("%s: source %s parent %s tenant %s", c.ID, c.Source, c.Parent, c.TenantID())
		}
		if len(c.Floor) != len(parent.Floor) || c.Floor[0].Hash() != parent.Floor[0].Hash() {
			t.Errorf("%s: floor not shared with the parent", c.ID)
		}
		if c.Start().Before(parent.Start()) {
			t.Errorf("%s starts before its parent", c.ID)
		}
	}
}

func TestAllDaySources(t *testing.T) {
	ss, err := Generate(context.Background(), "all-day", 1, 4, Options{})
	require.NoError(t, err)
	var order []string
	for _, e := range ss[0].Events {
		if e.Kind != traces.User {
			continue
		}
		if src := e.Meta["source"]; len(order) == 0 || order[len(order)-1] != src {
			order = append(order, src)
		}
	}
	if got, want := strings.Join(order, ","), "cli,messaging,cli,cron"; got != want {
		t.Errorf("sources %s, want %s", got, want)
	}
	if d := ss[0].Events[len(ss[0].Events)-1].Time.Sub(ss[0].Start()); d < 16*time.Hour {
		t.Errorf("all-day spans %v, want most of a day", d)
	}
}

func TestMultilingualScripts(t *testing.T) {
	ss, err := Generate(context.Background(), "multilingual", 4, 1, Options{})
	require.NoError(t, err)
	for _, s := range ss {
		nonASCII := 0
		for _, e := range s.Events {
			if e.Kind == traces.User {
				for _, r := range e.Blocks[0].Text {
					if r > 0x7f {
						nonASCII++
					}
				}
			}
		}
		if nonASCII == 0 {
			t.Errorf("%s (%v): user messages are all ASCII", s.ID, s.Notes)
		}
	}
}

func TestReviewLength(t *testing.T) {
	one, err := Generate(context.Background(), "review", 1, 1, Options{})
	require.NoError(t, err)
	four, err := Generate(context.Background(), "review", 1, 1, Options{Length: 4})
	require.NoError(t, err)
	a, b := Measure(one, o200k()), Measure(four, o200k())
	if a.Tokens < 65_000 || a.Tokens > 90_000 {
		t.Errorf("review: %d transcript tokens, want ~75K", a.Tokens)
	}
	if r := float64(b.Tokens) / float64(a.Tokens); r < 3.6 || r > 4.4 {
		t.Errorf("review x4: %d tokens, %.2f times x1", b.Tokens, r)
	}
	if a.Duration < 2*time.Hour || a.Duration > 5*time.Hour {
		t.Errorf("review: %v long, want ~3.5 h", a.Duration)
	}
}

func TestGenerateErrors(t *testing.T) {
	if _, err := Generate(context.Background(), "nope", 1, 1, Options{}); err == nil || !strings.Contains(err.Error(), "have all-day") {
		t.Errorf("unknown profile: err = %v", err)
	}
	for _, n := range []int{-1, MaxSessions + 1} {
		if _, err := Generate(context.Background(), "cron", n, 1, Options{}); err == nil || !strings.Contains(err.Error(), "want 0 to 1000") {
			t.Errorf("n = %d: err = %v, want 0 to %d", n, err, MaxSessions)
		}
	}
	if _, err := Generate(context.Background(), "cron", 1, 1, Options{Length: -2}); err == nil {
		t.Error("length -2: no error")
	}
	ss, err := Generate(context.Background(), "cron", 1, 1, Options{Model: "claude-opus-4-6"})
	require.NoError(t, err)
	if ss[0].Model != "claude-opus-4-6" || ss[0].Events[1].Model != "claude-opus-4-6" {
		t.Errorf("model override: %s / %s", ss[0].Model, ss[0].Events[1].Model)
	}
}

func BenchmarkGenerate(b *testing.B) {
	for _, p := range Profiles() {
		b.Run(p.Name, func(b *testing.B) {
			calls := 0
			for i := 0; b.Loop(); i++ {
				ss, err := Generate(context.Background(), p.Name, 1, uint64(i), Options{})
				if err != nil {
					b.Fatal(err)
				}
				calls += Measure(ss, nil).Calls
			}
			b.ReportMetric(float64(calls)/float64(b.N), "calls/op")
		})
	}
	b.Run("review-x4", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := Generate(context.Background(), "review", 1, uint64(i), Options{Length: 4}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A profile marshals as ctxsim gen --list --json prints it: its name,
// description and session defaults, nothing of how it generates.
func TestProfileJSON(t *testing.T) {
	b, err := json.Marshal(Profiles()[0])
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got["name"] != Profiles()[0].Name || got["description"] == "" || got["model"] == "" || got["window"] == nil {
		t.Errorf("profile JSON %s: want exactly name, description, model and window", b)
	}
}
