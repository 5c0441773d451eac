package claudecode

import (
	"context"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
)

const (
	testdata = "../../testdata/claude-code"
	bigID    = "4d5611e5-241a-462a-8d15-5122611a9569"
	bigFile  = testdata + "/" + bigID + ".jsonl"
)

func byID(t *testing.T, ss []*traces.Session) map[string]*traces.Session {
	t.Helper()
	m := map[string]*traces.Session{}
	for _, s := range ss {
		m[s.ID] = s
	}
	return m
}

func billed(s *traces.Session) (traces.Usage, int) {
	var u traces.Usage
	n := 0
	for i := range s.Events {
		if e := &s.Events[i]; e.Kind == traces.Assistant && e.Usage != nil {
			u = u.Add(*e.Usage)
			n++
		}
	}
	return u, n
}

func TestImportBigSession(t *testing.T) {
	ss, w, err := Import(context.Background(), bigFile)
	require.NoError(t, err)
	// The file brings its subagents (<session>/subagents/): the
	// compaction agent and one Task agent.
	require.Len(t, ss, 3)
	s := ss[0]
	require.Equal(t, []string{ss[1].ID, ss[2].ID}, s.Children)
	// Nothing to repair: the one line that looked like a timestamp going
	// backwards is a tool's result logged before a later block of the
	// response it answers (TestToolResultBetweenBlocks).
	if w.Total() != 0 {
		t.Errorf("warnings:\n%s", w)
	}
	// ccusage 20.0.24 on this file: the last line of each response counts.
	u, n := billed(s)
	want := traces.Usage{Input: 177, CacheWrite5m: 479537, CacheRead: 11618567, Output: 28755}
	if u != want || n != 139 {
		t.Errorf("billed %+v in %d calls, want %+v in 139", u, n, want)
	}
	if s.ID != bigID || s.Source != traces.SourceCLI || s.Model != "claude-opus-4-6" || s.Format != Format || len(s.Floor) != 0 {
		t.Errorf("session header = %+v", s)
	}
	var comp, summary, thinking int
	for i := range s.Events {
		e := &s.Events[i]
		switch {
		case e.Kind == traces.Compaction:
			comp++
			if e.Meta["trigger"] != "auto" || e.Meta["pre_tokens"] != "170251" {
				t.Errorf("compaction meta = %v, want trigger auto, pre_tokens 170251", e.Meta)
			}
			if n := s.Events[i+1]; n.Kind != traces.User || !n.Summary {
				t.Errorf("event after compaction = %s summary=%v, want the continuation summary", n.Kind, n.Summary)
			}
		case e.Summary:
			summary++
		}
		for _, b := range e.Blocks {
			if b.Kind == traces.Thinking && b.Text != "" {
				thinking++
			}
		}
	}
	if comp != 1 || summary != 1 || thinking == 0 {
		t.Errorf("compactions %d, summaries %d, thinking blocks with text %d; want 1, 1, >0", comp, summary, thinking)
	}
	// The first call answers the first user line (16:02:29.530Z); its last
	// line is at 16:02:34.093Z.
	first := s.Events[1]
	if first.Kind != traces.Assistant || first.LatencyMS <= 0 {
		t.Errorf("first call: kind %s latency %d ms, want an assistant call with a latency", first.Kind, first.LatencyMS)
	}
	if probs := traces.Validate(s); len(probs) != 0 {
		t.Errorf("Validate: %v", probs)
	}
}

func TestImportTree(t *testing.T) {
	ss, w, err := Import(context.Background(), testdata)
	require.NoError(t, err)
	m := byID(t, ss)
	if len(ss) != 6 {
		t.Fatalf("got %d sessions, want 6", len(ss))
	}
	parent := m[bigID]
	wantKids := []string{bigID + ".agent-a2898e3", bigID + ".agent-acompact-e1f845"}
	if strings.Join(parent.Children, ",") != strings.Join(wantKids, ",") {
		t.Errorf("children = %v, want %v", parent.Children, wantKids)
	}
	sub := m[wantKids[0]]
	if sub.Parent != bigID || sub.Source != traces.SourceSubagent || sub.Model != "claude-sonnet-4-5-20250929" || sub.Format != Format {
		t.Errorf("subagent header = %+v", sub)
	}
	if u, n := billed(sub); n != 12 || u.CacheRead != 604156 {
		t.Errorf("subagent billed %+v in %d calls, want 604156 read in 12", u, n)
	}
	if c := m[wantKids[1]]; c.Format != FormatCompaction {
		t.Errorf("acompact format = %q, want %q", c.Format, FormatCompaction)
	}
	// short.jsonl writes the 1h tier.
	short := m["55604662-cf2a-4331-851a-ec234028f8ca"]
	if u, _ := billed(short); u.CacheWrite1h != 13835 || u.CacheWrite5m != 0 {
		t.Errorf("short.jsonl usage = %+v, want 13835 1h writes", u)
	}
	// No repair: the subagent file's tool result logged between the blocks
	// of its response is no time going backwards (TestToolResultBetweenBlocks).
	if got := w.Total(); got != 0 {
		t.Errorf("warnings = %d, want 0:\n%s", got, w)
	}
	for _, s := range ss {
		if probs := traces.Validate(s); len(probs) != 0 {
			t.Errorf("%s: Validate: %v", s.ID, probs)
		}
	}
}

func TestMultiLineResponse(t *testing.T) {
	// tool_heavy.jsonl: msg_019BN3… has a tool_use on line 34, its result on
	// line 36, a second tool_use on line 37 with the final usage.
	ss, _, err := Import(context.Background(), testdata+"/tool_heavy.jsonl")
	require.NoError(t, err)
	s := ss[0]
	for i := range s.Events {
		e := &s.Events[i]
		if e.RequestID != "req_011CY1DcMwHdEPXMf4hW4MxJ" {
			continue
		}
		if len(e.Blocks) != 2 || e.Usage.Output != 173 || e.Usage.CacheWrite1h != 1115 {
			t.Errorf("merged call: %d blocks, usage %+v; want 2 tool_use blocks and output 173", len(e.Blocks), *e.Usage)
		}
		next := s.Events[i+1]
		if next.Kind != traces.ToolResult || len(next.Blocks) != 2 {
			t.Errorf("after the merged call: %s with %d blocks, want one tool_result event with both results", next.Kind, len(next.Blocks))
		}
		return
	}
	t.Fatal("call req_011CY1DcMwHdEPXMf4hW4MxJ not found")
}

func TestScanUsageMatchesImport(t *testing.T) {
	ss, _, err := Import(context.Background(), testdata)
	require.NoError(t, err)
	us, _, err := ScanUsage(context.Background(), testdata)
	require.NoError(t, err)
	m := byID(t, ss)
	// Subagents known only from progress lines are the scan's alone: the
	// importer builds transcripts from the session's own lines.
	progress := 0
	for _, u := range us {
		if u.FromProgress {
			progress++
		}
	}
	require.Equal(t, 1, progress, "subagent.jsonl's haiku agent, from its progress lines")
	us = slices.DeleteFunc(us, func(u *SessionUsage) bool { return u.FromProgress })
	if len(us) != len(ss) {
		t.Fatalf("scan found %d sessions, import %d", len(us), len(ss))
	}
	for _, u := range us {
		s := m[u.ID]
		if s == nil {
			t.Errorf("scan session %s not imported", u.ID)
			continue
		}
		iu, n := billed(s)
		if u.Total() != iu || len(u.Calls) != n || u.Parent != s.Parent || u.Compaction != (s.Format == FormatCompaction) {
			t.Errorf("%s: scan %+v in %d calls, import %+v in %d", u.ID, u.Total(), len(u.Calls), iu, n)
		}
	}
	// The same file given twice: its calls count once.
	us2, w, err := ScanUsage(context.Background(), bigFile, bigFile)
	require.NoError(t, err)
	// Its progress lines echo 11 of subagent a2898e3's 12 calls; without
	// the subagent's own file they are all there is of it.
	if len(us2) != 2 || w.Total() != 139 || !us2[1].FromProgress || len(us2[1].Calls) != 11 {
		t.Errorf("duplicate file: %d sessions, %d warnings; want the file's and its progress agent's, and 139 skipped calls", len(us2), w.Total())
	}
}

const (
	goodUser = `{"type":"user","sessionId":"s1","timestamp":"2026-02-10T21:00:00.000Z","message":{"role":"user","content":"hi"}}`
	goodCall = `{"type":"assistant","sessionId":"s1","requestId":"r1","timestamp":"2026-02-10T21:00:02.000Z","message":{"id":"m1","model":"claude-opus-4-6","content":[{"type":"text","text":"hello"}],"usage":{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":100,"cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":0},"output_tokens":5}}}`
)

func TestBadInput(t *testing.T) {
	cases := []struct {
		name  string
		lines string
		calls int
		warn  string
	}{
		{"invalid JSON", goodUser + "\n{not json\n" + goodCall + "\n", 1, warnInvalidJSON},
		{"truncated last line", goodUser + "\n" + goodCall + "\n" + goodCall[:40], 1, warnTruncated},
		{"invalid UTF-8", strings.Replace(goodUser, "hi", "h\xffi", 1) + "\n" + goodCall + "\n", 1, warnInvalidUTF8},
		{"unknown type", goodUser + "\n{\"type\":\"hologram\"}\n" + goodCall + "\n", 1, warnUnknownType},
		{"backwards time", strings.Replace(goodUser, "21:00:00", "21:00:09", 1) + "\n" + goodCall + "\n", 1, warnBackwards},
		{"missing usage", goodUser + "\n" + strings.Replace(goodCall, `"usage"`, `"usagex"`, 1) + "\n", 1, warnNoUsage},
		{"missing split", goodUser + "\n" + strings.Replace(goodCall, `"cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":0},`, "", 1) + "\n", 1, traces.WarnNoSplit},
		{"orphan tool_result", goodUser + "\n" + `{"type":"user","sessionId":"s1","timestamp":"2026-02-10T21:00:01.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}}` + "\n" + goodCall + "\n", 1, warnOrphanResult},
		{"bad time", strings.Replace(goodUser, "2026-02-10T21:00:00.000Z", "yesterday", 1) + "\n" + goodCall + "\n", 1, warnBadTime},
		{"synthetic", goodUser + "\n" + strings.Replace(goodCall, "claude-opus-4-6", "<synthetic>", 1) + "\n", 0, warnSynthetic},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"s1.jsonl": {Data: []byte(tc.lines)}}
			ss, w, err := ImportFS(context.Background(), fsys, "s1.jsonl", "")
			require.NoError(t, err)
			require.Len(t, ss, 1)
			if _, n := billedOrNot(ss[0]); n != tc.calls {
				t.Errorf("calls = %d, want %d", n, tc.calls)
			}
			if got := w.List(); len(got) != 1 || got[0].Reason != tc.warn || !strings.HasPrefix(got[0].First, "s1.jsonl:") {
				t.Errorf("warnings = %+v, want one %q at s1.jsonl:N", got, tc.warn)
			}
			for _, p := range traces.Validate(ss[0]) {
				if !strings.Contains(p.Msg, "no earlier tool_use") {
					t.Errorf("Validate: %v", p)
				}
			}
		})
	}
}

func billedOrNot(s *traces.Session) (traces.Usage, int) {
	n := 0
	for i := range s.Events {
		if s.Events[i].Kind == traces.Assistant {
			n++
		}
	}
	u, _ := billed(s)
	return u, n
}

func TestLongLine(t *testing.T) {
	long := `{"type":"user","sessionId":"s1","timestamp":"2026-02-10T21:00:01.000Z","message":{"role":"user","content":"` + strings.Repeat("x", traces.MaxLine) + `"}}`
	data := goodUser + "\n" + long + "\n" + goodCall + "\n"
	fsys := fstest.MapFS{"s1.jsonl": {Data: []byte(data)}}
	ss, w, err := ImportFS(context.Background(), fsys, "s1.jsonl", "")
	require.NoError(t, err)
	if _, n := billed(ss[0]); n != 1 {
		t.Errorf("calls = %d, want 1", n)
	}
	if got := w.List(); len(got) != 1 || got[0].Reason != warnTooLong || got[0].First != "s1.jsonl:2" {
		t.Errorf("warnings = %+v, want %q at s1.jsonl:2", got, warnTooLong)
	}
	// The cost scan too, which drops the line as it reads it.
	su, sw := scan(t, data)
	if len(su.Calls) != 1 {
		t.Errorf("scan: calls = %d, want 1", len(su.Calls))
	}
	if got := sw.List(); len(got) != 1 || got[0].Reason != warnTooLong || got[0].First != "s1.jsonl:2" {
		t.Errorf("scan: warnings = %+v, want %q at s1.jsonl:2", got, warnTooLong)
	}
}

// TestInlineSidechains: a 2025 log (Claude Code 1.0.x) writes each Task
// subagent's conversation into the main file with isSidechain; each becomes
// a child session linked to the Task tool_use whose prompt it repeats, and
// the main conversation keeps only its own calls.
func TestInlineSidechains(t *testing.T) {
	ss, _, err := Import(context.Background(), "testdata/inline-sidechains/5c0375b4.jsonl")
	require.NoError(t, err)
	require.Len(t, ss, 3)
	main := ss[0]
	require.Equal(t, "5c0375b4-57a5-4f26-b12d-d022ee4e51b7", main.ID)
	calls := func(s *traces.Session) (n int) {
		for i := range s.Events {
			if s.Events[i].Kind == traces.Assistant {
				n++
			}
		}
		return n
	}
	require.Equal(t, 4, calls(main), "main conversation's own calls")
	require.Equal(t, []string{ss[1].ID, ss[2].ID}, main.Children)
	// The first Task of the log was sent without a prompt and never ran; the
	// link follows the prompt, not the order.
	wantTask := []string{"toolu_014YF9TXhDRR7BnpasNJ7gjC", "toolu_01LKfUwrsnof18CpWZQcJH44"}
	wantCalls := []int{3, 7}
	for i, sub := range ss[1:] {
		require.Equal(t, main.ID, sub.Parent)
		require.Equal(t, traces.SourceSubagent, sub.Source)
		require.True(t, strings.HasPrefix(sub.ID, main.ID+".agent-side"), sub.ID)
		require.Equal(t, wantCalls[i], calls(sub), sub.ID)
		require.Equal(t, wantTask[i], sub.Events[0].Meta["task_tool_use"], sub.ID)
		require.Equal(t, traces.User, sub.Events[0].Kind, "a sidechain opens with its Task prompt")
	}
	// Nothing is lost or counted twice: the calls' bills add up to the
	// file's, as the fast usage scan reads it.
	var total traces.Usage
	for _, s := range ss {
		u, _ := billed(s)
		total = total.Add(u)
	}
	sc, _, err := ScanUsage(context.Background(), "testdata/inline-sidechains/5c0375b4.jsonl")
	require.NoError(t, err)
	var want traces.Usage
	for _, s := range sc {
		want = want.Add(s.Total())
	}
	require.Equal(t, want, total)
}

// After a compaction Claude Code re-attaches the five files its file state
// holds, most recent first, each as a Read call and its result, one over
// 5K tokens as a note (2.1.39, this fixture's version), then the todo list
// (none here);
// the log never shows them, so the importer appends them to the
// continuation summary (restore.go).
func TestCompactionRestoresFiles(t *testing.T) {
	ss, _, err := Import(context.Background(), bigFile)
	require.NoError(t, err)
	var sum *traces.Event
	for i := range ss[0].Events {
		if e := &ss[0].Events[i]; e.Summary {
			sum = e
		}
	}
	require.NotNil(t, sum)
	require.True(t, strings.HasPrefix(sum.Blocks[0].Text, summaryPrefix))
	require.Equal(t, "3", sum.Meta["restored_files"], "five files, two too large")
	var calls, results, notes []string
	for _, b := range sum.Blocks[1:] {
		switch {
		case strings.HasPrefix(b.Text, "Called the Read tool with the following input: "):
			calls = append(calls, b.Text)
		case strings.HasPrefix(b.Text, "Result of calling the Read tool: \""):
			results = append(results, b.Text)
		case strings.HasPrefix(b.Text, "Note: "):
			notes = append(notes, b.Text)
		}
	}
	require.Len(t, calls, 3)
	require.Len(t, results, 3)
	// The last file written before the compaction (transcript_components.ex,
	// by its Write) comes first, numbered as the Read tool numbers lines;
	// transcript_renderer.ex, written earlier at 17,758 characters (over 5K
	// tokens), is named in a note, and so is its test, of which the log
	// shows a part that says the whole file is larger.
	require.Contains(t, calls[0], "transcript_components.ex")
	require.True(t, strings.HasPrefix(results[0], `Result of calling the Read tool: "     1→defmodule SpotterWeb.TranscriptComponents do\n     2→`), results[0][:80])
	require.Len(t, notes, 2)
	require.Contains(t, notes[0], "transcript_renderer_test.exs was read before the last conversation was summarized")
	require.Contains(t, notes[1], "transcript_renderer.ex was read before the last conversation was summarized")
	for _, b := range sum.Blocks[1:] {
		require.NotContains(t, b.Text, "defmodule SpotterWeb.TranscriptRenderer do")
	}
}

// restoreRuleOf follows each version's cli.js: no limits up to 1.0.29,
// 10K tokens a file up to 1.0.84, then 5K and a note; the todo list until
// 2.1.63. An unknown version gets the newest rule.
func TestRestoreRuleOf(t *testing.T) {
	for _, c := range []struct {
		harness string
		want    restoreRule
	}{
		{"claude-code 1.0.17", restoreRule{todo: true}},
		{"claude-code 1.0.30", restoreRule{perFile: 10000, budget: 50000, todo: true}},
		{"claude-code 1.0.84", restoreRule{perFile: 10000, budget: 50000, todo: true}},
		{"claude-code 1.0.85", restoreRule{perFile: 5000, budget: 50000, note: true, todo: true}},
		{"claude-code 2.1.62", restoreRule{perFile: 5000, budget: 50000, note: true, todo: true}},
		{"claude-code 2.1.63", restoreRule{perFile: 5000, budget: 50000, note: true}},
		{"", restoreRule{perFile: 5000, budget: 50000, note: true}},
	} {
		require.Equal(t, c.want, restoreRuleOf(c.harness), c.harness)
	}
}

// A file's text in Claude Code's state follows the log: a Read's result
// without its numbering and reminder, then each Edit's replacement; the
// restore numbers it again.
func TestRestoreFollowsEdits(t *testing.T) {
	st := &fileState{}
	big := strings.Repeat("x", 13000) // over 5K tokens at 2.5 bytes a token: a note
	st.noteFileUses([]traces.Block{{Kind: traces.ToolUse, ID: "w", Name: "Write", Input: `{"file_path":"/p/big.txt","content":"` + big + `"}`}})
	st.noteFiles([]traces.Block{{Kind: traces.ToolResultBlock, ID: "w", Text: "ok"}})
	st.noteFileUses([]traces.Block{
		{Kind: traces.ToolUse, ID: "r", Name: "Read", Input: `{"file_path":"/p/a.go"}`},
		{Kind: traces.ToolUse, ID: "t", Name: "TodoWrite", Input: `{"todos": [{"content": "x", "status": "pending"}]}`},
	})
	st.noteFiles([]traces.Block{{Kind: traces.ToolResultBlock, ID: "r", Text: "     1→package a\n     2→var x = 1\n\n<system-reminder>\nmind\n</system-reminder>\n"}})
	st.noteFileUses([]traces.Block{{Kind: traces.ToolUse, ID: "e", Name: "Edit", Input: `{"file_path":"/p/a.go","old_string":"x = 1","new_string":"x = 2"}`}})
	st.noteFiles([]traces.Block{{Kind: traces.ToolResultBlock, ID: "e", Text: "ok"}})
	out, files := st.restore("claude-code 1.0.89")
	require.Equal(t, 1, files)
	require.Len(t, out, 4)
	require.Equal(t, `Called the Read tool with the following input: {"file_path":"/p/a.go"}`, out[0].Text)
	require.Equal(t, `Result of calling the Read tool: "     1→package a\n     2→var x = 2\n\n<system-reminder>\nmind\n</system-reminder>\n"`, out[1].Text)
	require.True(t, strings.HasPrefix(out[2].Text, "Note: /p/big.txt was read before the last conversation was summarized"), out[2].Text)
	require.Contains(t, out[3].Text, `[{"content":"x","status":"pending"}]. Continue on with the tasks at hand if applicable.`)
	// Claude Code clears its file state and reads the restored files
	// again: the one only named in a note is no longer in it.
	out, files = st.restore("claude-code 2.1.90")
	require.Equal(t, 1, files, "the restored file is the state again")
	require.Len(t, out, 2, "no note for the file left out, no todo list from 2.1.63")
}

// Claude Code 2.1 logs the context it attaches to the next user message
// (hook output, a queued prompt, CLAUDE.md) as attachment lines: their text
// goes out with that message; one after the last message was never sent.
func TestAttachments(t *testing.T) {
	att := `{"type":"attachment","sessionId":"s1","timestamp":"2026-02-10T21:00:00.000Z","attachment":{"type":"hook_additional_context","content":["CAVEMAN MODE ACTIVE"],"hookEvent":"UserPromptSubmit"}}`
	queued := `{"type":"attachment","sessionId":"s1","timestamp":"2026-02-10T21:00:03.000Z","attachment":{"type":"queued_command","prompt":"also run the tests"}}`
	fsys := fstest.MapFS{"s1.jsonl": {Data: []byte(att + "\n" + goodUser + "\n" + goodCall + "\n" + queued + "\n")}}
	ss, w, err := ImportFS(context.Background(), fsys, "s1.jsonl", "")
	require.NoError(t, err)
	require.Len(t, ss, 1)
	u := ss[0].Events[0]
	require.Equal(t, traces.User, u.Kind)
	require.Len(t, u.Blocks, 2)
	require.Equal(t, "hi", u.Blocks[0].Text)
	require.Equal(t, "CAVEMAN MODE ACTIVE", u.Blocks[1].Text)
	require.Equal(t, 1, w.Total(), w.String())
	require.Contains(t, w.String(), warnAttachment)
}

// /clear in the middle of a session empties the conversation: a
// compaction whose "summary" is the command, with nothing restored. At a
// file's start (where Claude Code writes it) it is just a message.
func TestClear(t *testing.T) {
	clear := `{"type":"user","sessionId":"s1","timestamp":"2026-02-10T21:00:05.000Z","message":{"role":"user","content":"<command-name>/clear</command-name>\n<command-message>clear</command-message>"}}`
	call2 := strings.NewReplacer(`"r1"`, `"r2"`, `"m1"`, `"m2"`, "21:00:02", "21:00:07").Replace(goodCall)
	fsys := fstest.MapFS{"s1.jsonl": {Data: []byte(clear + "\n" + goodUser + "\n" + goodCall + "\n" + clear + "\n" + call2 + "\n")}}
	ss, _, err := ImportFS(context.Background(), fsys, "s1.jsonl", "")
	require.NoError(t, err)
	require.Len(t, ss, 1)
	var kinds []traces.Kind
	var summaries int
	for _, e := range ss[0].Events {
		kinds = append(kinds, e.Kind)
		if e.Summary {
			summaries++
			require.Equal(t, 1, len(e.Blocks), "nothing restored after /clear")
		}
	}
	require.Equal(t, []traces.Kind{traces.User, traces.User, traces.Assistant, traces.Compaction, traces.User, traces.Assistant}, kinds)
	require.Equal(t, 1, summaries)
	require.Equal(t, "clear", ss[0].Events[3].Meta["trigger"])
}

// A resumed session's file opens with lines under the id of the session it
// continues; the file is the session its own calls are logged under.
func TestResumedSessionID(t *testing.T) {
	old := strings.Replace(goodUser, `"s1"`, `"s0"`, 1)
	fsys := fstest.MapFS{"s1.jsonl": {Data: []byte(old + "\n" + goodCall + "\n")}}
	ss, _, err := ImportFS(context.Background(), fsys, "s1.jsonl", "")
	require.NoError(t, err)
	require.Len(t, ss, 1)
	require.Equal(t, "s1", ss[0].ID)
	require.Equal(t, []string{"resumes session s0"}, ss[0].Notes)
}

// A rewound message (an edit after an interrupted call) follows its
// parentUuid: the event it continues is the assistant message before the
// abandoned one, and the abandoned message and its call stay in the
// session (they were sent and billed) but off the path.
func TestRewind(t *testing.T) {
	ss, _, err := Import(context.Background(), "testdata/rewind/aa57d486.jsonl")
	require.NoError(t, err)
	require.Len(t, ss, 1)
	evs := ss[0].Events
	var rewound []int
	for i := range evs {
		if _, ok := evs[i].Meta[traces.MetaRewindTo]; ok {
			rewound = append(rewound, i)
		}
	}
	require.Len(t, rewound, 1, "one rewind in the fixture")
	i := rewound[0]
	k, ok := evs[i].RewindTo(i)
	require.True(t, ok)
	require.Equal(t, traces.Assistant, evs[k].Kind)
	require.True(t, strings.HasPrefix(evs[k].Blocks[0].Text, "## ✅ LLM Guard API"), "rewound to the answer before the abandoned message: %q", evs[k].Blocks[0].Text)
	// Between them: the first version of the message and its call.
	require.Equal(t, traces.User, evs[k+1].Kind)
	require.True(t, strings.HasPrefix(evs[k+1].Blocks[0].Text, "Couple of things here"))
	require.Equal(t, traces.Assistant, evs[k+2].Kind)
	require.Equal(t, int64(85196), evs[k+2].Usage.CacheWrite5m, "the abandoned call is kept, with its bill")
	require.Equal(t, k+3, i)
	// No other user message is a rewind: a message whose parent is a hook
	// or system line after the last message is not one.
	for j := range evs {
		if j != i {
			_, ok := evs[j].RewindTo(j)
			require.False(t, ok, "event %d", j)
		}
	}
}

// Documents (Claude Code's Read of a PDF, a pasted text document) are sized
// by Anthropic's PDF rule, a page's text plus its image, never as base64
// text; a text document is its text.
func TestDocuments(t *testing.T) {
	pdf := "%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\n2 0 obj << /Type /Pages /Kids [3 0 R 4 0 R 5 0 R] >>\n" +
		"3 0 obj << /Type /Page >>\n4 0 obj << /Type/Page >>\n5 0 obj << /Type /Page /Parent 2 0 R >>\n%%EOF"
	data := base64.StdEncoding.EncodeToString([]byte(pdf))
	read := `{"type":"user","sessionId":"s1","timestamp":"2026-02-10T21:00:03.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"` + data + `"}}]}]}}`
	use := `{"type":"assistant","sessionId":"s1","requestId":"r0","timestamp":"2026-02-10T21:00:01.000Z","message":{"id":"m0","model":"claude-opus-4-6","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"a.pdf"}}],"usage":{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":100,"cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":0},"output_tokens":5}}}`
	text := `{"type":"user","sessionId":"s1","timestamp":"2026-02-10T21:00:04.000Z","message":{"role":"user","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"the notes"}}]}}`
	call := strings.ReplaceAll(goodCall, "21:00:02", "21:00:06")
	fsys := fstest.MapFS{"s1.jsonl": {Data: []byte(goodUser + "\n" + use + "\n" + read + "\n" + text + "\n" + call + "\n")}}
	ss, w, err := ImportFS(context.Background(), fsys, "s1.jsonl", "")
	require.NoError(t, err)
	require.Zero(t, w.Total(), w.String())
	evs := ss[0].Events
	require.Equal(t, traces.ToolResult, evs[2].Kind)
	require.Len(t, evs[2].Blocks, 2)
	doc := evs[2].Blocks[1]
	require.True(t, doc.Opaque())
	require.Equal(t, 3*pdfPageTokens, doc.Tokens, "three page objects, the /Pages tree not counted")
	require.Contains(t, doc.Name, "application/pdf")
	require.Equal(t, traces.User, evs[3].Kind)
	require.Equal(t, "the notes", evs[3].Blocks[0].Text)
}

// A session whose bill shows a prompt past 200K ran with the 1M-context
// option: its window is LongWindow, so the replay does not reject its
// long calls (issue 14 item 12; corpus RaggioS/jcode 120ec635 bills up to
// 332,701 tokens on claude-opus-4-8, whose default is 200K). One under 200K is not.
func TestImportLongWindow(t *testing.T) {
	for _, tt := range []struct {
		read int
		want int
	}{{199_887, 0}, {250_000, LongWindow}} {
		call := strings.Replace(goodCall, `"cache_read_input_tokens":100`, `"cache_read_input_tokens":`+strconv.Itoa(tt.read), 1)
		fsys := fstest.MapFS{"s1.jsonl": {Data: []byte(goodUser + "\n" + call + "\n")}}
		ss, _, err := ImportFS(context.Background(), fsys, "s1.jsonl", "")
		require.NoError(t, err)
		if ss[0].Window != tt.want {
			t.Errorf("read %d: window %d, want %d", tt.read, ss[0].Window, tt.want)
		}
	}
}

// Claude Code runs a tool as soon as its block has streamed, so a tool's
// result can be logged before a later block of the same response is
// (testdata/claude-code/4d5611e5-.../subagents/agent-a2898e3.jsonl: the
// result at line 36, 16:02:59.857, answers the block logged at line 32,
// .659, and comes after the block logged at line 33, .913, in the file).
// The later block adds to the response's event, whose time is its first
// line's: the result keeps its own time, with no warning. A line that goes
// back past the event it follows is still clamped and warned about.
func TestToolResultBetweenBlocks(t *testing.T) {
	block := func(ts, id string) string {
		return `{"type":"assistant","sessionId":"s1","requestId":"r1","timestamp":"2026-02-10T21:00:` + ts + `Z","message":{"id":"m1","model":"claude-opus-4-6","content":[{"type":"tool_use","id":"` + id + `","name":"Read","input":{}}],"usage":{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":100,"cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":0},"output_tokens":5}}}`
	}
	result := func(ts string) string {
		return `{"type":"user","sessionId":"s1","timestamp":"2026-02-10T21:00:` + ts + `Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"ok"}]}}`
	}
	for _, c := range []struct {
		name, at string
		warn     int
	}{
		{"between the blocks", "02.857", 0},
		{"before the response", "01.000", 1},
	} {
		lines := goodUser + "\n" + block("02.659", "toolu_a") + "\n" + block("02.913", "toolu_b") + "\n" + result(c.at) + "\n"
		ss, w, err := ImportFS(context.Background(), fstest.MapFS{"s1.jsonl": {Data: []byte(lines)}}, "s1.jsonl", "")
		require.NoError(t, err)
		require.Len(t, ss, 1)
		ev := ss[0].Events
		require.Len(t, ev, 3, "the two blocks are one response")
		require.Len(t, ev[1].Blocks, 2)
		want := ev[1].Time
		if c.warn == 0 {
			want = want.Add(198 * time.Millisecond)
		}
		if !ev[2].Time.Equal(want) || w.Total() != c.warn || (c.warn > 0 && !strings.Contains(w.String(), warnBackwards)) {
			t.Errorf("%s: result at %v (want %v), warnings %q", c.name, ev[2].Time, want, w.String())
		}
	}
}

// A resumed file whose earlier session is not here: the 17 calls the resume
// copied in one burst (testdata/resume/SOURCE) are history, not calls, and
// each is warned about at its line; the first own call (line 49) is not.
func TestResumeCopies(t *testing.T) {
	ss, w, err := Import(context.Background(), "testdata/resume/77570c3a.jsonl")
	require.NoError(t, err)
	var main *traces.Session
	for _, s := range ss {
		if s.Parent == "" {
			main = s
		}
	}
	require.NotNil(t, main)
	require.Equal(t, "claude-code 1.0.89", main.Harness)
	copied, own := 0, 0
	var firstOwn *traces.Event
	for i := range main.Events {
		e := &main.Events[i]
		if e.Kind != traces.Assistant {
			continue
		}
		if e.Meta[traces.MetaCopied] == "true" {
			copied++
			require.Nil(t, firstOwn, "a copy after the first own call")
			continue
		}
		own++
		if firstOwn == nil {
			firstOwn = e
		}
	}
	require.Equal(t, 17, copied)
	require.Equal(t, 2, own)
	require.Equal(t, int64(11459), firstOwn.Usage.CacheRead)
	var found bool
	for _, x := range w.List() {
		if x.Reason == warnResumeCopy {
			found = true
			require.Equal(t, 17, x.Count)
			require.True(t, strings.HasSuffix(x.First, "77570c3a.jsonl:2"), "the first copied call's line: %s", x.First)
		}
	}
	require.True(t, found, "copies are warned about")
}

// A prompt whose working directory differs from the previous prompt's is
// preceded by a floor change (the replay asks the version whether that
// changed the system text); a cd inside a turn (a tool result's cwd) and
// the interrupt notice are not prompts.
func TestWorkingDirectoryChange(t *testing.T) {
	line := func(typ, cwd, ts, content string) string {
		return `{"type":"` + typ + `","sessionId":"s1","version":"1.0.89","cwd":"` + cwd + `","timestamp":"2025-08-23T18:` + ts + `Z","message":{"role":"user","content":` + content + `}}`
	}
	call := func(id, ts string) string {
		return `{"type":"assistant","sessionId":"s1","version":"1.0.89","cwd":"/a","timestamp":"2025-08-23T18:` + ts + `Z","message":{"id":"` + id + `","role":"assistant","model":"claude-opus-4-1-20250805","content":[{"type":"tool_use","id":"t` + id + `","name":"Bash","input":{}}],"usage":{"input_tokens":1,"cache_creation_input_tokens":10,"cache_read_input_tokens":0,"output_tokens":1}}}`
	}
	data := strings.Join([]string{
		line("user", "/a", "00:00.000", `"first"`),
		call("m1", "00:05.000"),
		line("user", "/a/b", "00:06.000", `[{"type":"tool_result","tool_use_id":"tm1","content":"cd b"}]`),
		call("m2", "00:09.000"),
		line("user", "/a/b", "00:10.000", `[{"type":"tool_result","tool_use_id":"tm2","content":"ok"}]`),
		line("user", "/a/b", "00:11.000", `[{"type":"text","text":"[Request interrupted by user]"}]`),
		line("user", "/a/b", "01:00.000", `"second"`),
		call("m3", "01:05.000"),
		line("user", "/a/b", "01:06.000", `[{"type":"tool_result","tool_use_id":"tm3","content":"ok"}]`),
		line("user", "/a/b", "02:00.000", `"third, same directory"`),
	}, "\n") + "\n"
	ss, _, err := ImportFS(context.Background(), fstest.MapFS{"s1.jsonl": {Data: []byte(data)}}, "s1.jsonl", "")
	require.NoError(t, err)
	var changes []int
	for i, e := range ss[0].Events {
		if e.Kind == traces.FloorChange {
			require.Equal(t, traces.CauseWorkingDir, e.Meta[traces.MetaCause])
			changes = append(changes, i)
		}
	}
	require.Len(t, changes, 1, "one prompt in a new directory")
	// The session's project is where its first prompt ran, by key.
	require.Equal(t, envKey("/a"), ss[0].Project)
	// The directories' keys, never their paths (traces.MetaEnv).
	ch := ss[0].Events[changes[0]].Meta
	require.Equal(t, envKey("/a/b"), ch[traces.MetaEnv])
	require.Equal(t, envKey("/a"), ch[traces.MetaEnvWas])
	require.NotEqual(t, ch[traces.MetaEnv], ch[traces.MetaEnvWas])
	for _, v := range ch {
		require.NotContains(t, v, "/")
	}
	next := ss[0].Events[changes[0]+1]
	require.Equal(t, traces.User, next.Kind)
	require.Equal(t, "second", next.Blocks[0].Text)
}

// A log under CONFIG/projects/PROJECT/ is CONFIG's account's; a path
// without that layout names none.
func TestAccountOf(t *testing.T) {
	for name, want := range map[string]string{
		"home/u/.claude/projects/-home-u-x/1.jsonl":                   "claude-code:home/u/.claude",
		"home/u/.claude/projects/-home-u-x/1/subagents/agent-a.jsonl": "claude-code:home/u/.claude",
		"corpus/r/_history/6a/config/projects/-p/2.jsonl":             "claude-code:corpus/r/_history/6a/config",
		"projects/-p/3.jsonl":                                         "projects",
		"logs/chat.json.sessions/4.jsonl":                             "",
		"projects/5.jsonl":                                            "",
	} {
		if got := accountOf(name); got != want {
			t.Errorf("accountOf(%q) = %q, want %q", name, got, want)
		}
	}
}

// The thinking setting Claude Code logs with a typed prompt is kept, in
// both of its shapes; a line without it gets none.
func TestThinkingMetadata(t *testing.T) {
	line := func(version, extra, content string) string {
		return `{"type":"user","sessionId":"s1","version":"` + version + `","timestamp":"2026-01-26T14:55:00.000Z"` + extra + `,"message":{"role":"user","content":` + content + `}}`
	}
	data := strings.Join([]string{
		line("2.1.29", `,"thinkingMetadata":{"maxThinkingTokens":31999}`, `"first"`),
		line("2.1.29", ``, `"<command-message>review</command-message>"`),
		line("2.0.57", `,"thinkingMetadata":{"level":"high","disabled":false,"triggers":[]}`, `"third"`),
		line("2.0.57", `,"thinkingMetadata":{"level":"none","disabled":true,"triggers":[]}`, `"fourth"`),
	}, "\n") + "\n"
	ss, _, err := ImportFS(context.Background(), fstest.MapFS{"s1.jsonl": {Data: []byte(data)}}, "s1.jsonl", "")
	require.NoError(t, err)
	var got []string
	for _, e := range ss[0].Events {
		if e.Kind == traces.User {
			got = append(got, e.Meta[traces.MetaThinking])
		}
	}
	require.Equal(t, []string{"max=31999", "", "level=high", "disabled"}, got)
}

// Parallel results reach the API in tool_use order, whatever order they
// finished in; those that finished before the last one and now follow it
// are marked Early (its cache mark sits on the one received last).
func TestResultsInToolUseOrder(t *testing.T) {
	call := `{"type":"assistant","sessionId":"s1","requestId":"r1","timestamp":"2026-02-10T21:00:02.000Z","message":{"id":"m1","model":"claude-opus-4-6","content":[` +
		`{"type":"tool_use","id":"toolu_a","name":"Glob","input":{}},{"type":"tool_use","id":"toolu_b","name":"Glob","input":{}},{"type":"tool_use","id":"toolu_c","name":"Read","input":{}}],` +
		`"usage":{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":100,"cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":0},"output_tokens":5}}}`
	result := func(ts, id string) string {
		return `{"type":"user","sessionId":"s1","timestamp":"2026-02-10T21:00:` + ts + `Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id + `","content":"` + id + `"}]}}`
	}
	lines := strings.Join([]string{goodUser, call, result("03.000", "toolu_c"), result("03.100", "toolu_a"), result("03.200", "toolu_b")}, "\n") + "\n"
	ss, _, err := ImportFS(context.Background(), fstest.MapFS{"s1.jsonl": {Data: []byte(lines)}}, "s1.jsonl", "")
	require.NoError(t, err)
	ev := ss[0].Events
	require.Len(t, ev, 3)
	var order []string
	var early []bool
	for _, b := range ev[2].Blocks {
		order, early = append(order, b.ID), append(early, b.Early)
	}
	require.Equal(t, []string{"toolu_a", "toolu_b", "toolu_c"}, order, "tool_use order")
	require.Equal(t, []bool{false, false, true}, early, "the Read finished first and follows the last-received Glob")
}

// A 1.0.x compaction has no compact_boundary line (Claude Code wrote one
// from 2.0.0): its summary's isCompactSummary is the compaction, and the
// files re-attached follow it. A resumed file's own process starts with an
// empty file state: what the lines it copied read is not re-attached.
func TestRestoreOldLogsAndResumes(t *testing.T) {
	line := func(sid, typ, ts, extra, content string) string {
		return `{"type":"` + typ + `","sessionId":"` + sid + `","version":"1.0.89","timestamp":"2025-08-23T18:` + ts + `Z"` + extra + `,"message":{"role":"` + typ + `","content":` + content + `}}`
	}
	read := func(sid, ts, id string) []string {
		return []string{
			line(sid, "assistant", ts+".000", `,"requestId":"r`+id+`"`, `[{"type":"tool_use","id":"t`+id+`","name":"Read","input":{"file_path":"/p/a.go"}}],"id":"m`+id+`","model":"claude-opus-4-1-20250805","usage":{"input_tokens":1,"cache_creation_input_tokens":10,"cache_read_input_tokens":0,"output_tokens":1}`),
			line(sid, "user", ts+".500", "", `[{"type":"tool_result","tool_use_id":"t`+id+`","content":"     1→package a"}]`),
		}
	}
	summary := func(sid, ts string) string {
		return line(sid, "user", ts, `,"isCompactSummary":true`, `"This session is being continued from a previous conversation that ran out of context."`)
	}
	restored := func(lines []string) string {
		ss, _, err := ImportFS(context.Background(), fstest.MapFS{"s.jsonl": {Data: []byte(strings.Join(lines, "\n") + "\n")}}, "s.jsonl", "")
		require.NoError(t, err)
		for _, e := range ss[0].Events {
			if e.Summary {
				return e.Meta["restored_files"]
			}
		}
		return "no summary"
	}
	own := append([]string{line("b", "user", "00:00.000", "", `"go"`)}, read("b", "00:01", "1")...)
	require.Equal(t, "1", restored(append(own, summary("b", "01:00.000"))), "1.0.x: the summary is the compaction")
	copied := append([]string{line("a", "user", "00:00.000", "", `"go"`)}, read("a", "00:01", "1")...)
	require.Equal(t, "", restored(append(copied, line("b", "user", "00:30.000", "", `"resumed"`), summary("b", "01:00.000"))), "a new process re-attaches nothing it did not read")
}

// unnumber takes the Read tool's numbering off every line, keeps a line
// without it (and a trailing empty line) as it is, and returns the last
// number and the reminder after the text.
func TestUnnumber(t *testing.T) {
	for _, c := range []struct {
		in, text, suffix string
		last             int
	}{
		{"     1→a\n     2→b", "a\nb", "", 2},
		{"    10→x\n    11→\n", "x\n\n", "", 11},
		{"     1→a\n\n<system-reminder>\nmind\n</system-reminder>\n", "a", "\n\n<system-reminder>\nmind\n</system-reminder>\n", 1},
		{"no numbers\n 3 → not one", "no numbers\n 3 → not one", "", 0},
		{"1234567→wide", "wide", "", 1234567},
		{"", "", "", 0},
	} {
		text, suffix, last := unnumber(c.in)
		require.Equal(t, c.text, text, c.in)
		require.Equal(t, c.suffix, suffix, c.in)
		require.Equal(t, c.last, last, c.in)
	}
}

// The interrupt notice right after a prompt (no answer logged between)
// says the prompt's request was sent and stopped (traces.MetaInterrupted);
// a notice after an answer, or one for a tool use, does not.
func TestInterruptedPrompt(t *testing.T) {
	line := func(ts, content string) string {
		return `{"type":"user","sessionId":"s1","version":"1.0.80","cwd":"/a","timestamp":"2025-08-14T12:` + ts + `Z","message":{"role":"user","content":` + content + `}}`
	}
	call := func(id, ts string) string {
		return `{"type":"assistant","sessionId":"s1","version":"1.0.80","cwd":"/a","timestamp":"2025-08-14T12:` + ts + `Z","message":{"id":"` + id + `","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":1,"cache_creation_input_tokens":10,"cache_read_input_tokens":0,"output_tokens":1}}}`
	}
	notice := `[{"type":"text","text":"[Request interrupted by user]"}]`
	data := strings.Join([]string{
		line("00:00.000", `"first"`),
		call("m1", "00:05.000"),
		line("01:00.000", `"analyze certs.txt"`),
		line("01:04.000", notice), // after a prompt: marked
		line("01:10.000", `"deploy the agent"`),
		call("m2", "01:13.000"),
		line("02:00.000", notice), // after an answer: not marked
		line("02:05.000", `"go on"`),
		call("m3", "02:08.000"),
	}, "\n") + "\n"
	ss, _, err := ImportFS(context.Background(), fstest.MapFS{"s1.jsonl": {Data: []byte(data)}}, "s1.jsonl", "")
	require.NoError(t, err)
	var marked []string
	for _, e := range ss[0].Events {
		if e.Meta[traces.MetaInterrupted] != "" {
			marked = append(marked, e.Time.Format("04:05"))
		}
	}
	require.Equal(t, []string{"01:04"}, marked)
}
