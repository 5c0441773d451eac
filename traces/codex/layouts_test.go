package codex

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/tracetest"
)

// importLayout imports one layout's rollouts, every one validated and
// round-tripped through the native format.
func importLayout(t *testing.T, name string) ([]*traces.Session, *traces.Warnings) {
	t.Helper()
	ss, w, err := Import(filepath.Join("testdata", "layouts", name))
	require.NoError(t, err)
	for _, s := range ss {
		require.Empty(t, traces.Validate(s), "%s: import must write what validate accepts", s.ID)
		tracetest.RoundTrip(t, s)
	}
	return ss, w
}

func billed(s *traces.Session) (n int, u traces.Usage) {
	for _, e := range s.Events {
		if e.Usage != nil {
			n++
			u = u.Add(*e.Usage)
		}
	}
	return n, u
}

// A forked rollout bills its own two calls, not the parent's five it
// copies; the copy is its starting context; its totals carry on from the
// parent's and add up. The same without the parent's file.
func TestLayoutFork(t *testing.T) {
	ss, w := importLayout(t, "fork")
	require.Len(t, ss, 2)
	require.Zero(t, w.Len(), w.String())
	parent, fork := ss[0], ss[1]
	require.Equal(t, parent.ID, fork.Parent, "a subagent spawned by its parent")
	pn, pu := billed(parent)
	fn, fu := billed(fork)
	require.Equal(t, 5, pn)
	require.Equal(t, 2, fn, "the copied token_counts are the parent's calls")
	// The copied history: the initial context, both user messages and
	// both final answers, as copied calls, before the fork's own turn.
	require.Equal(t, "user user user assistant user assistant user assistant tool_result assistant", tracetest.Kinds(fork))
	for _, i := range []int{3, 5} {
		e := fork.Events[i]
		require.Equal(t, "true", e.Meta[traces.MetaCopied], "event %d", i)
		require.Nil(t, e.Usage)
	}
	require.True(t, strings.HasPrefix(fork.Events[3].Blocks[0].Text, "Added -v"))
	// Every copied line has the fork's time; its own come later.
	require.True(t, fork.Events[0].Time.Equal(fork.Events[5].Time))
	require.True(t, fork.Events[6].Time.After(fork.Events[5].Time))
	require.NotEqual(t, pu, fu)
	// Without the parent's file, the fork reads the same.
	alone, w2, err := Import(filepath.Join("testdata", "layouts", "fork", "sessions", "2026", "07", "02",
		"rollout-2026-07-02T09-00-28-"+fork.ID+".jsonl"))
	require.NoError(t, err)
	require.Zero(t, w2.Len(), w2.String())
	n, u := billed(alone[0])
	require.Equal(t, 2, n)
	require.Equal(t, fu, u)
}

// A remote compaction replaces the context with its replacement history:
// the kept user messages, the developer message and the encrypted item,
// sized from its length (compactionTokens: 5,348 characters, 818 tokens).
func TestLayoutRemoteCompaction(t *testing.T) {
	ss, w := importLayout(t, "compaction-remote")
	require.Zero(t, w.Len(), w.String())
	s := ss[0]
	require.Equal(t, "user user user assistant tool_result assistant tool_result assistant user assistant compaction user assistant tool_result assistant",
		tracetest.Kinds(s))
	call, comp, sum := s.Events[9], s.Events[10], s.Events[11]
	require.NotNil(t, call.Usage, "the compacting call is billed")
	require.Equal(t, 818, call.Blocks[0].Tokens, "its output is the encrypted item")
	require.Equal(t, "remote", comp.Meta["compaction"])
	require.True(t, sum.Summary)
	require.Len(t, sum.Blocks, 4)
	require.Equal(t, "Port the config loader to the new TOML library.", sum.Blocks[0].Text)
	require.Equal(t, "Now do the same for the plugin manifest parser.", sum.Blocks[1].Text)
	require.True(t, strings.HasPrefix(sum.Blocks[2].Text, "<permissions instructions>"))
	require.Equal(t, 818, sum.Blocks[3].Tokens)
	require.Equal(t, compactionTokens(5348), 818)
}

// A local compaction without replacement history leaves the initial
// context, the user messages and the summary.
func TestLayoutLocalCompaction(t *testing.T) {
	ss, w := importLayout(t, "compaction-local")
	require.Zero(t, w.Len(), w.String())
	s := ss[0]
	require.Equal(t, "local", s.Events[9].Meta["compaction"])
	sum := s.Events[10]
	require.True(t, sum.Summary)
	require.Len(t, sum.Blocks, 4)
	require.True(t, strings.HasPrefix(sum.Blocks[0].Text, "<permissions"))
	require.True(t, strings.HasPrefix(sum.Blocks[1].Text, "<environment_context>"))
	require.Equal(t, "Find why the cache test is flaky.", sum.Blocks[2].Text)
	require.True(t, strings.HasPrefix(sum.Blocks[3].Text, "Another language model"))
	// The next user message starts a turn of its own.
	require.Equal(t, "Inject the clock and rerun the test.", s.Events[11].Blocks[0].Text)
}

// A call that searched the web: its web_search_call items are tool uses
// with ids (import then validate must pass), the call counts its
// server-side tools, and its reasoning is not sent again.
func TestLayoutWebSearch(t *testing.T) {
	ss, w := importLayout(t, "web-search")
	require.Zero(t, w.Len(), w.String())
	call := ss[0].Events[3]
	require.Equal(t, "2", call.Meta[traces.MetaServerTools])
	var ids []string
	for _, b := range call.Blocks {
		require.NotEqual(t, traces.Thinking, b.Kind, "the searching call's reasoning is not sent again")
		if b.Kind == traces.ToolUse && b.Name == "web_search" {
			ids = append(ids, b.ID)
		}
	}
	require.Len(t, ids, 2)
	require.NotEqual(t, ids[0], ids[1])
	require.NotEmpty(t, ids[0])
}

// Reasoning is an opaque block sized from the call's
// reasoning_output_tokens, one per item.
func TestLayoutReasoning(t *testing.T) {
	ss, w := importLayout(t, "reasoning")
	require.Zero(t, w.Len(), w.String())
	var sizes []int
	for _, e := range ss[0].Events {
		for _, b := range e.Blocks {
			if b.Kind == traces.Thinking {
				require.True(t, b.Opaque())
				sizes = append(sizes, b.Tokens)
			}
		}
	}
	require.Equal(t, []int{400, 350, 300, 200, 60}, sizes)
}

// The newer items, each for what it is: the dynamic tools the requests
// carry in the floor (not the deferred one), the world state skipped, a
// tool search and its schemas, a message from another agent, a rollback
// as a rewind; only the item of an unknown type is warned about.
func TestLayoutItems(t *testing.T) {
	ss, w := importLayout(t, "items")
	require.Equal(t, 1, w.Len(), w.String())
	require.Equal(t, WarnUnknownItem, w.List()[0].Reason)
	s := ss[0]
	var tools []string
	for _, b := range s.Floor {
		if b.Kind == traces.ToolSchema {
			tools = append(tools, b.Name)
		}
	}
	require.Equal(t, []string{"lookup_ticket"}, tools)
	require.Contains(t, s.Notes, "floor holds the logged system prompt and dynamic tools: Codex does not log its built-in tool schemas")
	search, out := s.Events[3], s.Events[4]
	require.Equal(t, "tool_search", search.Blocks[0].Name)
	require.Equal(t, search.Blocks[0].ID, out.Blocks[0].ID)
	require.Contains(t, out.Blocks[0].Text, "deploy_preview")
	agent := s.Events[8]
	require.Equal(t, "agent", agent.Meta["role"])
	require.Equal(t, agentMessageTokens(1600), agent.Blocks[0].Tokens)
	// thread_rolled_back{num_turns:1} dropped "Also close it." (event 14):
	// the next message follows event 13.
	require.Equal(t, "Also close it.", s.Events[14].Blocks[0].Text)
	k, ok := s.Events[16].RewindTo(16)
	require.True(t, ok)
	require.Equal(t, 13, k)
}

// A turn with another context window: a model_switch event carries it.
func TestLayoutWindow(t *testing.T) {
	ss, w := importLayout(t, "window")
	require.Zero(t, w.Len(), w.String())
	s := ss[0]
	require.Equal(t, 121_600, s.Window)
	sw := s.Events[6]
	require.Equal(t, traces.ModelSwitch, sw.Kind)
	require.Equal(t, "353400", sw.Meta[traces.MetaWindow])
	require.Equal(t, s.Model, sw.Model)
}
