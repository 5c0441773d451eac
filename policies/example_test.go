package policies_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/policies"
	"github.com/ctxsim/ctxsim/policies/cacheplan"
	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// shortSummarizer stands for the harness's auxiliary model call.
type shortSummarizer struct{}

func (shortSummarizer) Summarize(_ context.Context, now time.Time, in compact.SummaryInput) (compact.SummaryOutput, error) {
	return compact.SummaryOutput{Text: "the user asked for a refactor; it is half done"}, nil
}

// A Go agent uses the policy code directly: a config (a hermes config.yaml
// or a preset), the compaction manager around its own message list, and
// the cache planner on every request it renders. Nothing here imports the
// simulator.
func Example_harness() {
	cfg, _ := policies.Preset("hermes-prune")
	_ = cfg.Set("compression.proactive_prune_tokens", "2000")
	_ = cfg.Set("compression.proactive_prune_min_reclaim_tokens", "100")
	_ = cfg.Set("compression.proactive_prune_min_result_chars", "1000")
	_ = cfg.Set("compression.protect_last_n", "4")
	mgr, err := cfg.NewManager(compact.Model{Name: "claude-sonnet-4-5", Window: 200_000, MaxOutput: 20_000}, shortSummarizer{}, nil)
	if err != nil {
		panic(err)
	}
	planner, _ := cacheplan.ByName(cfg.Layout)
	ttl, _ := cacheplan.ChooseTTL(cfg.CacheTTL, traces.SourceCLI)
	// Sizes from the harness's own tokenizer; 4 bytes a token here.
	builder := prompt.NewBuilder(func(b *traces.Block, _ uint64) int { return (len(b.Text) + len(b.Input) + 3) / 4 }, prompt.Wire{})

	view := &prompt.View{System: []traces.Block{{Kind: traces.System, Text: "You are a coding agent."}}}
	add := func(role prompt.Role, b traces.Block) {
		v := *view
		v.Messages = append(append([]prompt.Message(nil), view.Messages...), prompt.NewMessage(role, []traces.Block{b}, len(view.Messages), prompt.Plain))
		view = &v
	}
	now := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	for i := range 6 {
		add(prompt.RoleUser, traces.Block{Kind: traces.Text, Text: fmt.Sprintf("step %d: read the next file", i)})
		add(prompt.RoleAssistant, traces.Block{Kind: traces.ToolUse, ID: fmt.Sprint("t", i), Name: "Read", Input: `{"path":"f.go"}`})
		add(prompt.RoleTool, traces.Block{Kind: traces.ToolResultBlock, ID: fmt.Sprint("t", i), Text: strings.Repeat("func f() {}\n", 300)})

		v, passes, err := mgr.BeforeCall(context.Background(), now, view)
		if err != nil {
			panic(err)
		}
		view = v
		for _, p := range passes {
			if p.Committed() {
				fmt.Printf("call %d: %s pass, %s: %d → %d tokens\n", i, p.Kind, p.Outcome, p.TokensBefore, p.TokensAfter)
			}
		}
		req := builder.Build("claude-sonnet-4-5", view, 50)
		planner.Plan(req, ttl)
		req.Freeze()
		fmt.Printf("call %d: %d messages, %d tokens, %d breakpoints\n", i, len(view.Messages), req.Total, len(req.Breakpoints))
		// ... send req to the API; then tell the manager what was billed:
		mgr.AfterResponse(now, view, req.Total, true)
		view, _ = mgr.EndOfTurn(context.Background(), now, view)
		now = now.Add(time.Minute)
	}
	// The prune fires at 2000 tokens, then waits for another 2000 tokens of
	// runway before it rearms: cache breaks stay episodic.

	// Output:
	// call 0: 3 messages, 917 tokens, 4 breakpoints
	// call 1: 6 messages, 1828 tokens, 4 breakpoints
	// call 2: prune pass, pruned: 2742 → 1858 tokens
	// call 2: 9 messages, 1855 tokens, 4 breakpoints
	// call 3: 12 messages, 2766 tokens, 4 breakpoints
	// call 4: 15 messages, 3677 tokens, 4 breakpoints
	// call 5: prune pass, pruned: 4594 → 1942 tokens
	// call 5: 18 messages, 1936 tokens, 4 breakpoints
}
