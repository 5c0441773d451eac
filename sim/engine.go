package sim

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/policies/cacheplan"
	"github.com/ctxsim/ctxsim/policies/claudecode"
	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/pricing"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
)

// Options are the per-run settings of the engine.
type Options struct {
	// Prices prices the calls (the provider's bill is in tokens).
	Prices *pricing.Card
	// Count sizes blocks (a memoized tokenizer, possibly calibrated).
	Count prompt.Counter
	// Window overrides the context window (0: the session's, else the rate
	// card's).
	Window int
	// FloorTokens, when > 0, sizes an unseen floor (a recorded session whose
	// log shows no system prompt or tools). 0 lets the engine infer it from
	// the first recorded call.
	FloorTokens int
	// Summarizer makes the fake summarizer model of one session replay (its
	// own seeded stream); nil gives compaction no summarizer, so every
	// summary falls back.
	Summarizer func(s *traces.Session) compact.Summarizer
	// SummarizerModel prices the summarizer's calls.
	SummarizerModel string
	// Calibrate, when set, makes the calibrator that sizes a recorded
	// session's blocks (replacing Count) and learns from its billed calls.
	Calibrate func(s *traces.Session) *Calibrator
	// Account returns the provider of another account of the same user, for
	// a model_switch event with meta "account" (a credential rotation): its
	// cache is that account's, cold for this session's prefix. nil keeps
	// every call on the run's provider.
	Account func(account string) provider.Provider
	// Hashes, when set, keeps each session's block hashes across replays
	// (nil: each replay hashes the blocks it projects).
	Hashes *BlockHashes
	// Memo, when set, is the compaction memo every compactor of the run
	// shares (a MemoSharer's): what it derives from a block (rough sizes,
	// cut arguments, one-line demotions) is computed once for every replay
	// that meets the block. nil leaves each compactor its own.
	Memo *compact.Memo
	// Prewarm starts a recorded session with the part of its floor that its
	// first call read from cache already cached: the log proves another
	// session of the account had written it. The warming request is not
	// recorded or billed.
	Prewarm bool
	// Finished, when set, hears each session's replay end (RunTenant
	// calls it on its own goroutine): a progress line's count.
	Finished func()
}

// Result is the outcome of one replay.
type Result struct {
	Records []Record
	// VerbatimUsers is the fraction of the session's plain user messages
	// still verbatim in the final view (1 when there are none).
	VerbatimUsers float64
	// slab is the array RunTenant gave every run's records a part of, at
	// off: Records joins the tenant's records in it without a copy.
	slab []Record
	off  int
}

// run is the state of one session's replay. Several runs can share one
// provider (a tenant) and be stepped in global time order.
type run struct {
	sess   *traces.Session
	pol    *Policy
	prov   provider.Provider
	opts   Options
	price  pricing.Price
	model  string
	window int
	ttl    prompt.TTL
	// callModel is the model of the last call sent, lastCall its event.
	callModel string
	lastCall  int
	cm        Compactor
	// plan is the policy's planner for this session (Policy.PlannerFor),
	// or nil for Policy.Planner.
	plan cacheplan.Planner
	// fork, for a policy with ForkSummary, is the summarizer whose calls
	// the engine sends through the session's provider (run.sendFork).
	fork *forkSummarizer
	// ctx is the context of the Run or RunTenant call stepping this run:
	// the hooks and summarizer calls of a step are cancelled with it.
	ctx  context.Context
	cal  *Calibrator
	b    *prompt.Builder
	view *prompt.View
	own  *prompt.View     // the view append grows in place, when it is view
	msgs []prompt.Message // backing array of view.Messages while the run made it

	// hidden is context the log does not show that Claude Code sent in
	// the first user message (see revealSystem); it is prepended to that
	// message when the run appends it.
	hidden *traces.Block
	// context is the size of that context (CLAUDE.md and the like), which
	// Claude Code sends again after each compaction (contextAfter), once
	// known; compactions counts the recorded compactions, which name each
	// re-sent copy.
	context, compactions int
	// cutAt is where cutFloor ended the floor (0: not cut), revealed that
	// revealSystem did it from the whole log (recorded-observed).
	cutAt    int
	revealed bool
	// ctxMoved is set once moveContext put the context in the messages.
	ctxMoved bool
	// cutBase and cutBlock are the floor's system blocks ahead of its
	// inferred block, and that block, as the first cut found them.
	cutBase  []traces.Block
	cutBlock traces.Block
	// sysRead is what the first call after the last compaction read,
	// when below the inferred floor's end and above its shared part
	// (shared: the first call's read): the end of the tools and system
	// prompt (contextAfter). compacted is set from a compaction to the
	// next call. A re-send's collapse inside the floor is not used: it
	// can end at either system block's breakpoint (corpus 1.0.89
	// d887688e and f5a50440 collapse to 12,536, and read 21,734 and
	// 22,965 after their compactions).
	sysRead, shared int
	compacted       bool
	// envFloors is the system text of each working directory the session
	// prompted in, by traces.MetaEnv (renameEnv). envChanged is set from
	// a working-directory change to the next call; envRead is the least
	// such a call's bill read inside the floor: where the text the change
	// leaves alone ends (Claude Code's tools and first system block), which
	// the recorded replay splits the floor at from the next change on.
	envFloors  map[string]traces.Block
	envChanged bool
	envRead    int
	// hashes are the session's block hashes by event (Options.Hashes), or nil.
	hashes [][]uint64
	meta   []eventMeta // by event, what its Meta says (Options.Hashes), or nil

	users    int // plain user messages in the transcript so far
	verbatim int // of which the view carries verbatim

	i       int       // next event
	now     time.Time // virtual clock
	lastAct time.Time // time of the last call's completion
	recEnd  time.Time // recorded completion of the last call
	// began is when the last call's response began: what it wrote became
	// readable then and its TTL runs from then (the provider's clock).
	began  time.Time
	turn   int
	seq    int
	inTurn bool
	recs   []Record
	warmed bool // the shared floor was prewarmed (Options.Prewarm)
	// floors hashes each floor of the view once, for the builder and the
	// compactor's estimators.
	floors *prompt.FloorHashes
	// cc is the Claude Code version that wrote the log (unknown for other
	// harnesses): the version rules' argument, parsed once.
	cc claudecode.Version
	// think is the recorded Claude Code version's rule for earlier
	// thinking blocks; while it is flagged, the bills weigh the two
	// hypotheses (weighThinking).
	think claudecode.Thinking
	// thinkFor and thinkAgainst count the bills that showed earlier
	// thinking kept, and stripped.
	thinkFor, thinkAgainst int
	// floor counts the session's bills that weigh the shared floor
	// (weighFloor), acct its account's: the same when the session is
	// replayed alone, all of them when RunTenant replays the account's
	// sessions together.
	floor, acct *floorBills
	// thinkParam is the thinking setting of the turn's requests, as the
	// recorded Claude Code version derived it from the turn's prompt;
	// turnBudget is its budget so far and budgetOpen whether the turn's
	// input (its consecutive user messages) is still being read.
	// midTurn that a tool result came since the last call: a user message
	// then (a skill the model invoked) does not start a turn.
	// lastThink is the setting the session's last call sent, thinkSent
	// whether it made one.
	thinkParam, lastThink string
	// effort is the level the session's last /effort command set
	// (claudecode.EffortCommand), part of thinkParam.
	effort              string
	turnBudget          int
	budgetOpen, midTurn bool
	thinkSent           bool
	// thinkSeen is when each setting was last sent (moveContext).
	thinkSeen map[string]sentAt
	// lastPrompt is the size of the last recorded call's request,
	// lastStripAt its StripAt, lastTotal its bill's input and final output
	// (kept for microcompact, in the versions that have it).
	lastPrompt, lastStripAt, lastTotal int
	// framing and framed sum the output tokens beyond their message's
	// content over the calls whose logged count is final (finalOutput).
	framing, framed int
	// cleared are the tool calls whose results Claude Code's microcompact
	// cleared (run.microcompact).
	cleared map[string]bool
	// begans are when the session's recorded calls began to answer, after
	// their requests (recordedTiming): how long its responses take to
	// start, which decides whether an interrupted prompt's request cached
	// anything (interrupted).
	begans []time.Duration
}

// MaxFirstBlock is how long after its request a recorded response's first
// content block is taken to arrive at most; see nextTime.
const MaxFirstBlock = time.Minute

// compactModel is the main model as the compaction ladder sees it; the
// ladder's rule decides how much of MaxOutput it reserves
// (compact.Reserve).
func (r *run) compactModel() compact.Model {
	return compact.Model{Name: r.model, Window: r.window, MaxOutput: r.price.MaxOutput}
}

// recordsFor is how many records a replay of s is given room for: one a
// call and a few passes, so that a long replay does not copy its records
// over and over.
func recordsFor(s *traces.Session) int {
	calls := 0
	for i := range s.Events {
		if s.Events[i].Kind == traces.Assistant {
			calls++
		}
	}
	return calls + calls/8 + 4
}

// newRun starts a replay of s that appends its records to recs (nil: a
// slice of its own).
func newRun(s *traces.Session, pol *Policy, prov provider.Provider, opts Options, recs []Record) (*run, error) {
	r := &run{sess: s, pol: pol, prov: prov, opts: opts, model: s.Model, floor: &floorBills{}}
	r.acct = r.floor
	if opts.Hashes != nil {
		sh := opts.Hashes.session(s)
		r.hashes, r.meta = sh.h, sh.meta
	}
	if r.model == "" {
		for i := range s.Events {
			if s.Events[i].Kind == traces.Assistant && s.Events[i].Model != "" {
				r.model = s.Events[i].Model
				break
			}
		}
	}
	var err error
	if r.price, err = opts.Prices.Lookup(r.model); err != nil {
		return nil, fmt.Errorf("session %s: %w", s.ID, err)
	}
	r.window = opts.Window
	if r.window == 0 {
		r.window = s.Window
	}
	if r.window == 0 {
		r.window = r.price.Window
	}
	if pol.PlannerFor != nil {
		r.plan = pol.PlannerFor(s)
	}
	r.ttl = prompt.TTL5m
	if pol.TTL != nil {
		r.ttl = pol.TTL(s)
	}
	blocks := len(s.Floor)
	for i := range s.Events {
		blocks += len(s.Events[i].Blocks)
	}
	// The records and the builder's blocks are sized once.
	r.recs = recs
	if r.recs == nil {
		r.recs = make([]Record, 0, recordsFor(s))
	}
	r.b = prompt.NewBuilder(opts.Count, pol.Wire)
	r.b.Grow(blocks + blocks/8 + 8) // a few more for a rewrite's blocks and split scaffolds
	r.cc = claudecode.VersionOf(s.Harness)
	if pol.Recorded && s.Format == claudecodeFormat {
		r.think = claudecode.ThinkingOf(r.cc)
		r.b.KeepThinking = r.think == claudecode.ThinkingKept
		// Turns before the first typed prompt whose setting the log shows
		// (skills, from 2.1.38) take the toggle's state: the first setting
		// the log states.
		for i := range s.Events {
			if set := s.Events[i].Meta[traces.MetaThinking]; set != "" && s.Events[i].Kind == traces.User {
				if b, ok := claudecode.PromptBudget(r.cc, set, "", false); ok {
					r.setThinking(b)
				}
				break
			}
		}
	}
	if opts.Calibrate != nil {
		r.cal = opts.Calibrate(s)
		opts.Count = r.cal.Count
		r.opts.Count = r.cal.Count
		r.b.Count, r.b.Extra = r.cal.Count, r.cal.Extra
		r.b.Wire.PerMessage = 0 // the calibration's per-message cost replaces it
	}
	r.view = &prompt.View{}
	floor := s.Floor
	var fh []uint64 // floor's block hashes, when kept by opts.Hashes
	switch {
	case len(floor) == 0:
		floor = inferFloor(s, opts, r.b)
		if pol.ObserveResends {
			floor, r.hidden = revealSystem(s, floor)
			if r.hidden != nil {
				r.context, r.revealed = r.hidden.Tokens, true
			}
		}
	case s.FloorPartial && opts.FloorTokens == 0:
		// What the log shows of the floor goes after what it does not,
		// ahead of the shown tool schemas too when there are some (a
		// Codex session's dynamic tools): the unseen part starts the
		// request, where a first call's read of another session's
		// prefix lands.
		unseen := inferFloor(s, opts, r.b, floor...)
		if slices.ContainsFunc(floor, func(b traces.Block) bool { return b.Kind == traces.ToolSchema }) {
			for i := range unseen {
				unseen[i].Kind = traces.ToolSchema
			}
		}
		floor = append(unseen, floor...)
	case opts.Hashes != nil:
		fh = opts.Hashes.session(s).floor
	}
	if fh == nil {
		fh = make([]uint64, len(floor))
		for i := range floor {
			fh[i] = floor[i].Hash()
		}
	}
	r.view.Tools, r.view.System = splitFloor(floor)
	if len(floor) > 0 && strings.HasPrefix(floor[0].Name, "shared-floor/") {
		r.shared = floor[0].Tokens
	}
	// The floor is hashed once a session, for the builder and the
	// compactor's estimators alike.
	r.floors = &prompt.FloorHashes{}
	r.floors.Keep(r.view, splitHashes(floor, fh))
	r.b.Floors = r.floors
	ft := 0
	for i := range floor {
		ft += opts.Count(&floor[i], fh[i])
	}
	if ft >= r.window {
		// No policy can run it, and compaction cannot help.
		return nil, fmt.Errorf("session %s: floor of %d tokens, window %d: %w", s.ID, ft, r.window, compact.ErrDoesNotFit)
	}
	if pol.NewCompactor != nil {
		var sum compact.Summarizer
		if opts.Summarizer != nil {
			sum = opts.Summarizer(s)
			if pol.ForkSummary {
				fb := prompt.NewBuilder(r.b.Count, r.b.Wire)
				fb.Extra, fb.Floors = r.b.Extra, r.floors
				r.fork = &forkSummarizer{r: r, inner: sum, b: fb}
				sum = r.fork
			}
		}
		if r.cm, err = pol.NewCompactor(s, r.compactModel(), sum); err != nil {
			return nil, fmt.Errorf("session %s: policy %s: %w", s.ID, pol.Name, err)
		}
		if ms, ok := r.cm.(MemoSharer); ok && opts.Memo != nil {
			ms.ShareMemo(opts.Memo)
		}
		if fs, ok := r.cm.(FloorSharer); ok {
			fs.ShareFloors(r.floors)
		}
	}
	if len(s.Events) > 0 {
		r.now = s.Events[0].Time
	}
	return r, nil
}

// prewarm writes the shared part of the floor (a "shared-floor/" block,
// see inferFloor) to the provider's cache as the session starts,
// with the session's TTL, as the session the log does not show did.
func (r *run) prewarm() {
	v := &prompt.View{System: r.view.System} // the request's first section
	if len(r.view.Tools) > 0 {
		v = &prompt.View{Tools: r.view.Tools}
	}
	first := append(v.Tools, v.System...)
	if r.ttl == prompt.NoCache || len(first) == 0 || !strings.HasPrefix(first[0].Name, "shared-floor/") {
		return
	}
	v.Tools, v.System = v.Tools[:min(1, len(v.Tools))], v.System[:min(1, len(v.System))]
	b := prompt.NewBuilder(r.b.Count, r.b.Wire)
	req := b.Build(r.model, v, 0)
	req.Mark(0, r.ttl)
	req.Freeze()
	// Sent a little before the session starts: an entry is readable only
	// once its writer's response has begun.
	_, _ = r.prov.Send(r.now.Add(-30*time.Second), req) // not recorded: another session's call
}

// inferFloor sizes the floor a recorded log does not show from its first
// billed call: the billed prompt minus what the transcript before the call
// and the logged part of the floor (shown) count. What the first call read from cache was cached by an earlier
// session of the same account, so it is the part of the floor sessions share
// (the tool schemas and the static system prompt); it becomes its own block,
// named by its size, so that sessions of one tenant share it.
func inferFloor(s *traces.Session, opts Options, b *prompt.Builder, shown ...traces.Block) []traces.Block {
	if opts.FloorTokens > 0 && len(shown) == 0 {
		return []traces.Block{{Kind: traces.System, Name: "floor", Tokens: opts.FloorTokens}}
	}
	seen := b.Wire.Tail
	for i := range shown {
		seen += b.Count(&shown[i], shown[i].Hash())
	}
	for i := range s.Events {
		e := &s.Events[i]
		// A copied history's calls (a Codex fork's, a resumed Claude Code
		// file's) are sent before the first call like any message.
		copied := e.Kind == traces.Assistant && e.Meta[traces.MetaCopied] == "true"
		if e.Kind == traces.Assistant && !copied {
			if e.Usage == nil {
				return nil
			}
			rest := int(e.Usage.Prompt()) - seen
			if rest <= 0 {
				return nil
			}
			shared := int(e.Usage.CacheRead)
			if shared <= 0 {
				return []traces.Block{{Kind: traces.System, Name: "floor", Tokens: rest}}
			}
			if shared >= rest {
				// The first call read the whole floor and more: an
				// earlier request the log does not show had sent it all
				// (corpus 10-box-os 1a16b56e reads its whole first
				// prompt). The floor is all shared.
				return []traces.Block{{Kind: traces.System, Name: fmt.Sprintf("shared-floor/%d", rest), Tokens: rest}}
			}
			return []traces.Block{
				{Kind: traces.System, Name: fmt.Sprintf("shared-floor/%d", shared), Tokens: shared},
				{Kind: traces.System, Name: "floor/" + s.ID, Tokens: rest - shared},
			}
		}
		if (e.Kind == traces.User || e.Kind == traces.ToolResult || copied) && len(e.Blocks) > 0 {
			m := prompt.NewMessage(prompt.RoleUser, e.Blocks, i, prompt.Plain)
			seen += b.Wire.PerMessage
			if b.Extra != nil {
				seen += b.Extra(&m)
			}
			for j := range e.Blocks {
				seen += b.Count(&e.Blocks[j], m.BlockHash(j))
			}
		}
	}
	return nil
}

// revealSystem moves the part of an inferred floor that is not the system
// prompt into the first user message. The first call's prompt less the
// visible transcript is more than the system prompt and tools: Claude Code
// also sends CLAUDE.md, SessionStart hook output and similar context, in
// the first user message, after the system prompt's breakpoint. A re-send
// reveals where that breakpoint is: its read collapses to exactly the
// system prompt (corpus chess-study-tool 94f6eed6: 46,713 written by the
// first call, later reads collapse to 37,976). The smallest positive read
// below the floor, by a call of the first call's model before any
// compaction or floor change, is taken as the system prompt's end. It
// reads billed usage of later calls, so only the policies that honour
// observed re-sends use it.
func revealSystem(s *traces.Session, floor []traces.Block) ([]traces.Block, *traces.Block) {
	total := 0
	for i := range floor {
		total += floor[i].Tokens
	}
	shared := 0
	if len(floor) == 2 {
		shared = floor[0].Tokens
	}
	sys, model, calls := total, "", 0
	for i := range s.Events {
		e := &s.Events[i]
		if e.Summary || e.Kind == traces.Compaction || e.Kind == traces.FloorChange {
			break
		}
		if e.Kind != traces.Assistant || e.Usage == nil {
			continue
		}
		if calls++; calls == 1 {
			model = e.Model
			continue
		}
		if e.Model == model && e.Usage.CacheRead > int64(shared) && int(e.Usage.CacheRead) < sys {
			sys = int(e.Usage.CacheRead)
		}
	}
	if sys >= total || len(floor) == 0 {
		return floor, nil
	}
	out := append([]traces.Block(nil), floor...)
	last := &out[len(out)-1]
	last.Tokens -= total - sys
	hidden := &traces.Block{Kind: traces.Text, Name: "hidden-context/" + s.ID, Tokens: total - sys}
	return out, hidden
}

// Run replays one session under pol against prov, which must be fresh (or
// hold only the tenant's earlier state). It is synchronous and deterministic;
// it stops with ctx's error when ctx is done.
func Run(ctx context.Context, s *traces.Session, pol *Policy, prov provider.Provider, opts Options) (*Result, error) {
	r, err := newRun(s, pol, prov, opts, nil)
	if err != nil {
		return nil, err
	}
	r.ctx = ctx
	for r.i < len(s.Events) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := r.step(); err != nil {
			return nil, err
		}
	}
	return r.result(), nil
}

// RunTenant replays sessions that share one provider account in global time
// order, so that a prefix one session cached is found by the next. Results
// are in the order of sessions. It stops with ctx's error when ctx is done.
func RunTenant(ctx context.Context, sessions []*traces.Session, pol *Policy, prov provider.Provider, opts Options) ([]*Result, error) {
	// The runs' records share one array, each its own part (capped, so
	// that one outgrowing it moves out rather than over the next): one
	// allocation, and Records joins them in place.
	offs := make([]int, len(sessions)+1)
	for i, s := range sessions {
		offs[i+1] = offs[i] + recordsFor(s)
	}
	slab := make([]Record, offs[len(sessions)])
	runs := make([]*run, len(sessions))
	acct := &floorBills{}
	for i, s := range sessions {
		r, err := newRun(s, pol, prov, opts, slab[offs[i]:offs[i]:offs[i+1]])
		if err != nil {
			return nil, err
		}
		r.ctx = ctx
		r.acct = acct
		runs[i] = r
	}
	// A heap of runs by the time of their next event; ties go to the run
	// given first, so the order is a pure function of the inputs.
	h := &runHeap{}
	for i, r := range runs {
		if len(r.sess.Events) > 0 {
			heap.Push(h, heapItem{r: r, i: i, t: r.nextTime()})
		} else if opts.Finished != nil {
			opts.Finished() // nothing to replay
		}
	}
	for h.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// The first run steps and goes back in its place by its new
		// time (Fix, which boxes nothing), or leaves when done.
		it := &(*h)[0]
		if err := it.r.step(); err != nil {
			return nil, err
		}
		if it.r.i < len(it.r.sess.Events) {
			it.t = it.r.nextTime()
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
			if opts.Finished != nil {
				opts.Finished()
			}
		}
	}
	out := make([]*Result, len(runs))
	for i, r := range runs {
		out[i] = r.result()
		out[i].slab, out[i].off = slab, offs[i]
	}
	return out, nil
}

// TakeRecords joins the records of results, in order, and hands them over:
// the results of one RunTenant call are joined in the array they share,
// without a copy, and their Records are nil afterwards. It is nil when
// there are no records.
func TakeRecords(results []*Result) []Record {
	n := 0
	var base []Record
	if len(results) > 0 {
		base = results[0].slab
	}
	inPlace := len(base) > 0
	for _, res := range results {
		n += len(res.Records)
		inPlace = inPlace && len(res.slab) > 0 && &res.slab[0] == &base[0] &&
			(len(res.Records) == 0 || &res.Records[0] == &res.slab[res.off])
	}
	var out []Record
	switch {
	case n == 0:
	case len(results) == 1:
		out = results[0].Records[:n:n]
	case inPlace:
		// Each run's records sit at its offset, past the earlier runs'
		// parts: moved down in order, a copy overwrites only records
		// already moved.
		dst := 0
		for _, res := range results {
			dst += copy(base[dst:], res.Records)
		}
		clear(base[n:]) // stale copies: let go of what they hold
		out = base[:n:n]
	default:
		out = make([]Record, 0, n) // a Record is large: copied once
		for _, res := range results {
			out = append(out, res.Records...)
		}
	}
	for _, res := range results {
		res.Records = nil
	}
	return out
}

type heapItem struct {
	r *run
	i int
	t time.Time
}

type runHeap []heapItem

func (h runHeap) Len() int { return len(h) }
func (h runHeap) Less(a, b int) bool {
	if !h[a].t.Equal(h[b].t) {
		return h[a].t.Before(h[b].t)
	}
	return h[a].i < h[b].i
}
func (h runHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *runHeap) Push(x any)   { *h = append(*h, x.(heapItem)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// nextTime is the virtual time of the next event: human-paced events keep
// their recorded time; machine-paced ones keep their recorded distance from
// the event before, measured from where the simulation is now.
func (r *run) nextTime() time.Time {
	e := &r.sess.Events[r.i]
	if r.i == 0 {
		return e.Time
	}
	prev := r.sess.Events[r.i-1].Time
	if r.sess.Events[r.i-1].Kind == traces.Assistant && !r.recEnd.IsZero() {
		// The simulation already spent the call's latency: what follows a
		// call is measured from when the recorded call completed.
		prev = r.recEnd
	}
	switch e.Kind {
	case traces.User, traces.Resume:
		if e.Time.After(r.now) {
			return e.Time
		}
		return r.now
	case traces.Assistant:
		// A response's first line is written when its first content
		// block completes, within about a minute of the request; a call
		// logged later than that after the event it answers waited to be
		// sent (a permission prompt, a slow hook), and the cache aged
		// meanwhile (corpus RyanLisse/big3 e165f9ba: a 15.6-minute gap
		// before a call that read nothing, like an idle gap).
		if w := e.Time.Sub(prev) - MaxFirstBlock; w > 0 {
			return r.now.Add(w)
		}
		return r.now
	}
	if r.cal != nil {
		// A recorded session's machine-paced events (tool results) happened
		// when the log says, or later if the simulation runs behind it:
		// measuring each from the simulated call's end would carry every
		// call's latency difference forward, and a long tool loop would
		// drift past a TTL that had not expired (corpus getmany-software
		// aa57d486).
		if e.Time.After(r.now) {
			return e.Time
		}
		return r.now
	}
	d := e.Time.Sub(prev)
	if d < 0 {
		d = 0
	}
	return r.now.Add(d)
}

// advanceTo moves the virtual clock to t. It is the only place the clock
// moves, and it never moves back.
func (r *run) advanceTo(t time.Time) {
	if t.After(r.now) {
		r.now = t
	}
}

// step replays the next event. An error stops the run.
func (r *run) step() error {
	e := &r.sess.Events[r.i]
	if e.Kind == traces.User && r.inTurn && (!e.Summary || r.pol.Recorded) {
		// The turn closed with its last call: hermes runs micro-compaction
		// from finalize_turn, after the reply and before the next user
		// message (agent/micro_compaction.py), so its summary call's stall
		// ends the turn, on the clock from the last call's end; the next
		// message waits only if it comes sooner.
		if err := r.endTurn(); err != nil {
			return err
		}
	}
	r.advanceTo(r.nextTime())
	idx := r.i
	r.i++
	switch e.Kind {
	case traces.User:
		if e.Summary && !r.pol.Recorded {
			return nil // another policy's compaction, not ours
		}
		if e.Meta[traces.MetaInterrupted] != "" {
			r.interrupted(e, idx)
		}
		if k, ok := e.RewindTo(idx); ok {
			r.rewind(k)
		}
		if rs, ok := r.cm.(Resumer); ok && !r.lastAct.IsZero() {
			idle := r.now.Sub(r.lastAct)
			cold := r.ttl == prompt.NoCache || idle >= r.ttl.Duration()
			var v *prompt.View
			var passes []compact.Pass
			if err := r.hook(func(ctx context.Context) { v, passes = rs.OnResume(ctx, r.now, idle, cold, r.view) }); err != nil {
				return err
			}
			r.setView(v)
			// Simplification: an idle pass's summarizer call is billed
			// but does not delay the user's message (biases latency down
			// for idle compaction).
			if _, err := r.addPasses(idx, passes, cold); err != nil {
				return err
			}
		}
		if e.Summary {
			// The recorded compaction: the continuation summary replaces
			// the history. It is a batch pass like any other, so reports
			// count it and price its cache damage.
			before := r.b.Build(r.model, r.view, 0).Total
			r.contextAfter()
			r.setView(&prompt.View{Tools: r.view.Tools, System: r.view.System})
			after := r.b.Build(r.model, &prompt.View{Tools: r.view.Tools, System: r.view.System,
				Messages: []prompt.Message{prompt.NewMessage(prompt.RoleUser, e.Blocks, idx, prompt.BatchSummary)}}, 0).Total
			if _, err := r.addPasses(idx, []compact.Pass{{Kind: compact.KindBatch, Trigger: "recorded", Outcome: compact.OutcomeCompacted,
				TokensBefore: before, TokensAfter: after}}, false); err != nil {
				return err
			}
		}
		r.turn++
		r.inTurn = true
		if !e.Summary && r.pol.Recorded && r.sess.Format == claudecodeFormat && r.sess.Source != traces.SourceSubagent {
			// The turn's thinking budget, the largest its new messages
			// give (claudecode.PromptBudget): a change of it breaks the
			// cached messages (prompt.Params.Thinking).
			// A command's messages after a tool result are a skill the
			// model called, inside the turn (the corpus 2.0.57 703e4528
			// call after "Launching skill" read the whole prompt: its
			// thinking did not change); a prompt typed after an
			// interruption starts a turn.
			meta := e.Meta["meta"] == "true"
			text := promptText(e)
			if r.midTurn && !meta && !strings.HasPrefix(text, "<command-message>") {
				r.midTurn, r.budgetOpen = false, false
			}
			if !r.midTurn {
				b, ok := claudecode.PromptBudget(r.cc, e.Meta[traces.MetaThinking], text, meta)
				if !r.budgetOpen {
					r.turnBudget, r.budgetOpen = 0, true
				}
				if ok {
					r.turnBudget = max(r.turnBudget, b)
					r.setThinking(r.turnBudget)
				}
				if lvl, ok := claudecode.EffortCommand(text); ok && lvl != r.effort {
					r.effort = lvl
					r.setThinking(r.turnBudget)
				}
			}
		}
		r.append(prompt.RoleUser, e, idx)
	case traces.ToolResult:
		r.midTurn = true
		r.append(prompt.RoleTool, e, idx)
	case traces.Assistant:
		r.budgetOpen, r.midTurn = false, false
		if !r.metaOf(idx, e).copied {
			// The call's model first: the floor is written again on it.
			if err := r.switchModel(e.Model, idx); err != nil {
				return err
			}
			if r.opts.Prewarm && (!r.warmed || r.cal != nil && r.cal.KeepFloorWarm(idx, r.floorWarm(e))) {
				// Just before the first call, not at the first event: a
				// resumed file opens with history copied long before
				// (testdata/resume of traces/claudecode). Later, only
				// while the bills say the account keeps the floor warm.
				r.warmed = true
				r.prewarm()
			}
			if err := r.call(e, idx); err != nil {
				return err
			}
		}
		r.append(prompt.RoleAssistant, e, idx)
		// An importer that knows the call's duration gives it as LatencyMS,
		// counted from the event the call answers.
		r.recEnd = e.Time
		if e.LatencyMS > 0 && idx > 0 {
			if end := r.sess.Events[idx-1].Time.Add(time.Duration(e.LatencyMS) * time.Millisecond); end.After(r.recEnd) {
				r.recEnd = end
			}
		}
	case traces.ModelSwitch:
		if err := r.switchModel(e.Model, idx); err != nil {
			return err
		}
		if w, err := strconv.Atoi(e.Meta[traces.MetaWindow]); err == nil && w > 0 && r.opts.Window == 0 {
			r.window = w
		}
		if acct := e.Meta["account"]; acct != "" && r.opts.Account != nil {
			r.prov = r.opts.Account(acct)
		}
	case traces.Restart:
		if rs, ok := r.cm.(Restarter); ok {
			rs.Restart()
		}
	case traces.FloorChange:
		if e.Meta[traces.MetaCause] == traces.CauseWorkingDir && !claudecode.EnvPerPrompt(r.cc) {
			break // this version built its system text once
		}
		r.changeFloor(e, idx)
	case traces.Compaction, traces.Resume:
		// A recorded compaction takes effect at its continuation summary.
	}
	if r.i == len(r.sess.Events) && r.inTurn {
		return r.endTurn()
	}
	return nil
}

// planner is the policy's planner on the provider this run sends to: a
// planner may choose its layout by route, as hermes does
// (cacheplan.RoutePlanner).
func (r *run) planner() cacheplan.Planner {
	if r.plan != nil {
		return r.plan
	}
	rp, ok := r.pol.Planner.(cacheplan.RoutePlanner)
	if !ok {
		return r.pol.Planner
	}
	name := r.prov.Name()
	if rt, ok := r.prov.(*provider.Router); ok && rt.For != nil {
		name = rt.For(r.model) // the provider this model's requests go to
	}
	return rp.OnRoute(name)
}

// hook runs a compactor hook under the run's context. A policy that forks
// its summaries has the engine send each summary call (run.sendFork); a fork that
// must stop the run cancels the hook's context with its error, which the
// compactor treats as cancellation (no pass, no state change) and hook
// returns.
func (r *run) hook(f func(ctx context.Context)) error {
	if r.fork == nil {
		f(r.ctx)
		return nil
	}
	ctx, cancel := context.WithCancelCause(r.ctx)
	r.fork.abort = cancel
	f(ctx)
	r.fork.abort = nil
	err := context.Cause(ctx)
	cancel(nil)
	if err != nil && r.ctx.Err() == nil {
		return err
	}
	return nil
}

// setView adopts a view a policy returned, recounting the verbatim user
// messages only when the view really changed.
// rewind takes the conversation back to the path it had after event k
// (traces.MetaRewindTo): the messages of later events are off the path.
// Messages are in event order, so the path is a prefix.
func (r *run) rewind(k int) {
	v := r.view
	n := 0
	for n < len(v.Messages) && v.Messages[n].Event <= k {
		n++
	}
	if n == len(v.Messages) {
		return
	}
	r.setView(&prompt.View{Tools: v.Tools, System: v.System, Messages: append([]prompt.Message(nil), v.Messages[:n]...)})
}

func (r *run) setView(v *prompt.View) {
	if v == r.view {
		return
	}
	r.view = v
	r.verbatim = 0
	for i := range v.Messages {
		m := &v.Messages[i]
		if m.Role != prompt.RoleUser || m.Event < 0 || r.sess.Events[m.Event].Summary {
			continue
		}
		switch m.Tag {
		case prompt.Plain:
			r.verbatim++
		case prompt.Merged: // one verbatim text block per merged turn
			r.verbatim += len(m.Blocks)
		}
	}
}

// splitFloor sorts a floor's blocks into tool schemas and system blocks,
// each in order.
func splitFloor(floor []traces.Block) (tools, system []traces.Block) {
	for i := range floor {
		if floor[i].Kind == traces.ToolSchema {
			tools = append(tools, floor[i])
		} else {
			system = append(system, floor[i])
		}
	}
	return tools, system
}

// metaOf is what event idx, e, says in its Meta, kept by Options.Hashes.
func (r *run) metaOf(idx int, e *traces.Event) eventMeta {
	if idx >= 0 && idx < len(r.meta) && &r.sess.Events[idx] == e {
		return r.meta[idx]
	}
	return metaOf(e)
}

// splitHashes is the hashes fh of floor's blocks in splitFloor's order:
// the tool schemas', then the system blocks'.
func splitHashes(floor []traces.Block, fh []uint64) []uint64 {
	out := make([]uint64, 0, len(fh))
	for i := range floor {
		if floor[i].Kind == traces.ToolSchema {
			out = append(out, fh[i])
		}
	}
	for i := range floor {
		if floor[i].Kind != traces.ToolSchema {
			out = append(out, fh[i])
		}
	}
	return out
}

// changeFloor applies a floor change: the new floor when the event carries
// it, else a new identity for the session's own (last) system block.
func (r *run) changeFloor(e *traces.Event, idx int) {
	v := &prompt.View{Tools: r.view.Tools, Messages: r.view.Messages}
	if len(e.Blocks) > 0 {
		v.Tools, v.System = splitFloor(e.Blocks)
		r.setView(v)
		return
	}
	if e.Meta[traces.MetaCause] == traces.CauseWorkingDir {
		// The change re-sends every message: the context can move now
		// (corpus 1.0.89 5f2d5220 line 393: back in a directory, the bill
		// reads the tools and that directory's system prompt, 15,904
		// tokens, not the 27,920 of a floor that holds the context too).
		if r.contextOut() != nil {
			v.Messages = r.view.Messages
		}
	}
	sys := append([]traces.Block(nil), r.view.System...)
	if n := len(sys); n > 0 {
		if sys = r.splitChanged(sys, idx); len(sys) != n {
			r.envFloors = nil // it kept blocks whole; the floor is split now
			r.keepFloor(sys, 2)
		}
		r.envChanged = e.Meta[traces.MetaCause] == traces.CauseWorkingDir
		r.renameEnv(sys, e, idx)
	}
	v.System = sys
	r.setView(v)
}

// renameEnv gives the last block of sys, the system text a floor change at
// event idx rewrote, its identity after the change. Claude Code's system
// prompt names the working directory (claudecode.EnvPerPrompt): a prompt
// back in a directory an earlier prompt used sends that directory's text
// again, and reads its entry while alive (corpus 1.0.81 0c45b0a6 line 187:
// back in a directory left three minutes before, the bill reads the tools
// and that directory's system prompt, 16,567 tokens; line 304, back in one
// left 18 minutes before, only the 11,704 before it). Each directory's
// text keeps one identity (traces.MetaEnv); any other change gets a new
// one.
func (r *run) renameEnv(sys []traces.Block, e *traces.Event, idx int) {
	n := len(sys)
	env, was := e.Meta[traces.MetaEnv], e.Meta[traces.MetaEnvWas]
	if env != "" && was != "" {
		if r.envFloors == nil {
			r.envFloors = map[string]traces.Block{}
		}
		if _, ok := r.envFloors[was]; !ok {
			r.envFloors[was] = sys[n-1]
		}
		// A kept block of another size was kept before the floor moved
		// or shrank (a compaction's cut, a split): not this text.
		if b, ok := r.envFloors[env]; ok && b.Tokens == sys[n-1].Tokens {
			sys[n-1] = b
			return
		}
	}
	sys[n-1].Name += fmt.Sprintf("#%d", idx)
	if !sys[n-1].Opaque() {
		sys[n-1].Text += "\u200b" // a known floor changed in an unknown way
	}
	if env != "" && r.envFloors != nil {
		r.envFloors[env] = sys[n-1]
	}
}

// keepFloor writes, unbilled, the entries the session's calls kept alive at
// boundaries of the floor a bill just revealed (the tools and sys, marked at
// its last marks blocks), as the last call sent them, while that call is
// within its TTL: the inferred floor had no boundary there until the bill
// said where it is. At a cut (cutFloor), the end of the system prompt; at a
// split (splitChanged), also Claude Code's first system block, which it
// marks in every request, and the whole floor as the last call sent it,
// which a prompt back in its working directory sends again (renameEnv).
func (r *run) keepFloor(sys []traces.Block, marks int) {
	if r.began.IsZero() || r.now.Sub(r.began) >= r.ttl.Duration() || r.ttl == prompt.NoCache {
		return
	}
	b := prompt.NewBuilder(r.b.Count, r.b.Wire)
	req := b.Build(r.model, &prompt.View{Tools: r.view.Tools, System: sys}, 0)
	for i := max(0, len(req.Blocks)-marks); i < len(req.Blocks); i++ {
		req.Mark(i, r.ttl)
	}
	req.Freeze()
	_, _ = r.prov.Send(r.began, req) // not recorded: the entries the session's calls kept
}

// splitChanged splits the last block of an inferred (opaque) system
// prompt where a floor change at event idx leaves it readable, so that
// only what changed gets a new identity. The log shows where: the next
// call's billed read ends at the part of the floor that did not change
// (Claude Code's tools and first system block, when the working directory
// in the second block changed: 1.0.x sends its system prompt as two
// blocks, the first line and the rest joined, cli.js GD0). A replay that
// honours observed events reads that bill; the recorded replay, which never
// reads the bill of the call it predicts, splits where an earlier change's
// bill read (envRead), so a session's first change is priced on the whole
// floor and its later ones on what the first showed. The split then stays
// in the view, so a session whose first call read that part already has
// it.
func (r *run) splitChanged(sys []traces.Block, idx int) []traces.Block {
	n := len(sys)
	if n == 0 || !sys[n-1].Opaque() || r.cal == nil || r.cal.mode != Anchored {
		return sys
	}
	read := r.envRead // an earlier change's bill: the recorded replay's
	if r.pol.ObserveResends && r.cal.observe {
		read = 0
		for i := idx + 1; i < len(r.sess.Events); i++ {
			if e := &r.sess.Events[i]; e.Kind == traces.Assistant {
				if e.Usage != nil && !r.metaOf(i, e).copied {
					read = int(e.Usage.CacheRead)
				}
				break
			}
		}
	}
	if read == 0 {
		return sys
	}
	before := 0 // tokens of the floor before the last system block
	for i := range r.view.Tools {
		before += r.view.Tools[i].Tokens
	}
	for i := range sys[:n-1] {
		before += sys[i].Tokens
	}
	keep := read - before
	if keep <= 0 || keep >= sys[n-1].Tokens {
		return sys
	}
	last := sys[n-1]
	head, tail := last, last
	head.Tokens, tail.Tokens = keep, last.Tokens-keep
	head.Name += "/kept"
	return append(sys[:n-1], head, tail)
}

func (r *run) append(role prompt.Role, e *traces.Event, idx int) {
	if len(e.Blocks) == 0 {
		return
	}
	tag := prompt.Plain
	if e.Summary {
		tag = prompt.BatchSummary
	}
	// Views handed out are capped at their length, so nobody else can write
	// past it; the run alone appends into r.msgs, in place while the view is
	// still the one it made (amortized O(1) instead of a copy of the whole
	// list per event).
	n := len(r.view.Messages)
	if n == 0 || len(r.msgs) != n || &r.msgs[0] != &r.view.Messages[0] {
		// The first list has room for every event, each at most one
		// message: it is not copied once per doubling.
		size := 2*n + 8
		if n == 0 {
			size = len(r.sess.Events) - max(idx, 0) + 8
		}
		r.msgs = append(make([]prompt.Message, 0, size), r.view.Messages...)
	}
	var m prompt.Message
	switch {
	case r.hidden != nil && role == prompt.RoleUser:
		m = prompt.NewMessage(role, append([]traces.Block{*r.hidden}, e.Blocks...), idx, tag)
		r.hidden = nil
	case r.hashesOf(idx, e) != nil:
		m = prompt.NewMessageHashed(role, e.Blocks, r.hashes[idx], idx, tag)
	default:
		m = prompt.NewMessage(role, e.Blocks, idx, tag)
	}
	r.msgs = append(r.msgs, m)
	if r.view != r.own {
		// A view a hook returned, or the first: the run makes its own,
		// which it then grows in place. Nobody keeps a view (the
		// estimators and the builder know a list by its array, and
		// their hooks return new views rather than change one).
		v := *r.view
		r.own = &v
		r.view = r.own
	}
	r.view.Messages = r.msgs[: n+1 : n+1]
	if role == prompt.RoleUser && !e.Summary {
		r.users++
		r.verbatim++
	}
}

// endTurn closes a turn: the compactor's end-of-turn pass, whose
// summarizer call delays the turn's close (not the next call's record).
func (r *run) endTurn() error {
	r.inTurn = false
	te, ok := r.cm.(TurnEnder)
	if !ok {
		return nil
	}
	var v *prompt.View
	var passes []compact.Pass
	if err := r.hook(func(ctx context.Context) { v, passes = te.EndOfTurn(ctx, r.now, r.view) }); err != nil {
		return err
	}
	r.setView(v)
	stall, err := r.addPasses(-1, passes, false)
	if err != nil {
		return err
	}
	r.advanceTo(r.now.Add(stall))
	return nil
}

// addPasses records passes and returns how long their summarizer calls
// took: the stall they cause.
func (r *run) addPasses(idx int, passes []compact.Pass, cold bool) (time.Duration, error) {
	var stall time.Duration
	for _, p := range passes {
		kind := RecordKind(p.Kind)
		if p.Kind == compact.KindDefrag {
			kind = KindMicro
		}
		rec := Record{
			Trace: r.sess.ID, Policy: r.pol.Name, Seq: r.seq, Kind: kind, Time: r.now,
			Event: idx, Turn: r.turn, Trigger: p.Trigger, Outcome: p.Outcome,
			TokensBefore: p.TokensBefore, TokensAfter: p.TokensAfter, Error: p.Err,
		}
		rec.Detail = append(rec.Detail, p.Detail...)
		if cold {
			rec.SetDetail(DetailPrefixCold, 1)
		}
		if p.Summary != nil {
			// No auxiliary model configured, or a fork: the main model
			// summarizes (hermes' auxiliary.compression default), at its
			// price.
			rec.Model = cmp.Or(r.opts.SummarizerModel, r.model)
			if r.pol.ForkSummary {
				rec.Model = r.model
			}
			rec.Usage = p.Summary.Usage
			rec.LatencyMS = p.Summary.Latency.Milliseconds()
			pr, err := r.opts.Prices.Lookup(rec.Model)
			if err != nil {
				return 0, fmt.Errorf("session %s: summarizer: %w", r.sess.ID, err)
			}
			rec.CostUSD = pr.Cost(p.Summary.Usage)
			stall += p.Summary.Latency
		}
		r.seq++
		r.recs = append(r.recs, rec)
	}
	return stall, nil
}

// outputTokens is what the call produced: the recorded count, else what a
// generator said, else the size of the message.
func (r *run) outputTokens(idx int, e *traces.Event) int {
	if e.Usage != nil {
		return int(e.Usage.Output)
	}
	if m := r.metaOf(idx, e); m.outOK {
		return m.out
	}
	return r.contentTokens(idx, e)
}

// finalOutput is the output tokens Claude Code counted for the call of
// event idx, e, once its response ended: it sizes its context as the last
// call's usage with them (cli.js 1.0.89 XF, a2B), and microcompacts from a
// threshold of that size. A 1.0.x log writes a message line by line, each
// with the count as it stood then: the stream's starting count (a few
// tokens) until the final one arrives, which some messages' lines never
// show (corpus SWORDIntel 77570c3a: 54 of 169 messages; line 197 logs 1
// output token for a Bash call, and the next bill shows the clearing of a
// context that count puts 60 tokens short of the threshold). A logged
// count below the message's own content cannot be final. Such a call's
// output is its content and the tokens beyond content that the session's
// calls with final counts averaged (their framing: the corpus's 1.0.x
// Bash-only messages bill a median 84 output tokens for 126 characters of
// input).
func (r *run) finalOutput(idx int, e *traces.Event) int {
	out, content := int(e.Usage.Output), r.contentTokens(idx, e)
	if out >= content {
		r.framing += out - content
		r.framed++
		return out
	}
	if r.framed == 0 {
		return content
	}
	return content + r.framing/r.framed
}

// contentTokens counts the blocks of event idx, e.
func (r *run) contentTokens(idx int, e *traces.Event) int {
	hs := r.hashesOf(idx, e)
	n := 0
	for j := range e.Blocks {
		h := uint64(0)
		if hs != nil {
			h = hs[j]
		} else {
			h = e.Blocks[j].Hash()
		}
		n += r.opts.Count(&e.Blocks[j], h)
	}
	return n
}

// hashesOf is the block hashes of event idx, e, kept by Options.Hashes, or
// nil.
func (r *run) hashesOf(idx int, e *traces.Event) []uint64 {
	if idx >= 0 && idx < len(r.hashes) && &r.sess.Events[idx] == e {
		return r.hashes[idx]
	}
	return nil
}

// Retry policy of the engine's harness: transient provider errors are
// retried with exponential backoff; a context overflow gets one retry after
// the context manager had its chance to compact (a provider-proven overflow
// skips the cooldowns, hermes §3.4).
const (
	MaxTransientRetries = 3
	RetryBackoff        = 2 * time.Second
)

// switchModel makes later calls go to model (the provider's cache for it
// starts cold; the context manager re-derives its threshold). An unpriced
// model stops the run.
func (r *run) switchModel(model string, idx int) error {
	if model == "" || model == r.model {
		return nil
	}
	p, err := r.opts.Prices.Lookup(model)
	if err != nil {
		return fmt.Errorf("session %s: event %d: %w", r.sess.ID, idx, err)
	}
	r.model, r.price = model, p
	if ms, ok := r.cm.(ModelSetter); ok {
		ms.SetModel(r.compactModel())
	}
	return nil
}

// call makes the model call of event e: the compactor's pass before it,
// the attempt, and the retries (transient errors with backoff, one retry
// after an overflow).
func (r *run) call(e *traces.Event, idx int) error {
	if err := r.switchModel(e.Model, idx); err != nil {
		return err
	}
	r.microcompact(e)
	transient, overflowed := 0, false
	for {
		stall, err := r.beforeCall(idx)
		if err != nil {
			return err
		}
		r.advanceTo(r.now.Add(stall))
		apiErr, err := r.attempt(e, idx, stall)
		if err != nil || apiErr == nil {
			return err
		}
		switch {
		case errors.Is(apiErr, provider.ErrTransient) && transient < MaxTransientRetries:
			r.advanceTo(r.now.Add(RetryBackoff << transient))
			transient++
		case errors.Is(apiErr, provider.ErrContextOverflow) && r.cm != nil && !overflowed:
			overflowed = true
		default:
			return nil
		}
	}
}

// beforeCall lets the compactor act before a call and returns the stall its
// summarizer calls cause.
func (r *run) beforeCall(idx int) (time.Duration, error) {
	if r.cm == nil {
		return 0, nil
	}
	var v *prompt.View
	var passes []compact.Pass
	var err error
	if herr := r.hook(func(ctx context.Context) { v, passes, err = r.cm.BeforeCall(ctx, r.now, r.view) }); herr != nil {
		return 0, fmt.Errorf("session %s: event %d: %w", r.sess.ID, idx, herr)
	}
	if err != nil {
		return 0, fmt.Errorf("session %s: event %d: %w", r.sess.ID, idx, err)
	}
	r.setView(v)
	return r.addPasses(idx, passes, false)
}

// attempt sends the call once and records it, stall being the time the
// call waited on context management. apiErr is the provider's answer when
// it rejected the call; err stops the run.
func (r *run) attempt(e *traces.Event, idx int, stall time.Duration) (apiErr, err error) {
	out := r.outputTokens(idx, e)
	rec := Record{
		Trace: r.sess.ID, Policy: r.pol.Name, Seq: r.seq, Kind: KindCall, Time: r.now,
		Event: idx, Turn: r.turn, Model: r.model, Window: r.window,
		StallMS: stall.Milliseconds(),
		Detail:  []compact.KV{{Key: string(DetailUserMsgs), Value: float64(r.users)}, {Key: string(DetailUserVerbatim), Value: float64(r.verbatim)}},
	}
	if g, ok := r.cm.(Gauge); ok {
		rec.Threshold = g.Threshold()
		rec.Estimates = g.Estimates(r.view)
	}
	// A new thinking setting breaks the cached messages, Claude Code's
	// context message among them: that is where its bill reads up to.
	rethought := r.thinkSent && r.thinkParam != r.lastThink
	if rethought {
		r.moveContext()
	}
	r.lastThink, r.thinkSent = r.thinkParam, true
	req := r.b.Build(r.model, r.view, out)
	if r.pol.Recorded && r.sess.Format == claudecodeFormat {
		if r.thinkSeen == nil {
			r.thinkSeen = map[string]sentAt{}
		}
		r.thinkSeen[r.thinkParam] = sentAt{r.now, len(req.Blocks), len(r.view.Messages)}
	}
	results := 0
	if r.cal != nil {
		req, results = r.withToolResults(req, idx, e, out)
	}
	req.Key = r.sess.ID
	req.Window = r.window
	req.Params.Thinking = r.thinkParam
	req.Generated = r.generated(req)
	if pl := r.planner(); pl != nil && r.ttl != prompt.NoCache {
		pl.Plan(req, r.ttl)
	}
	// The recorded policy and its variants replay the log's own timing;
	// other policies' calls take the time the latency model gives their
	// prompts (a cache hit answers sooner).
	timed := r.pol.Recorded && r.cal != nil && e.Usage != nil
	var took time.Duration
	if timed {
		req.Started, took = r.recordedTiming(e, idx)
		if req.Started > 0 {
			r.begans = append(r.begans, req.Started)
		}
	}
	// After a model switch the last call's prefix was cached for another
	// model: a read is the bill saying the switch kept it (two GPT-5.6
	// variants share one), never a re-send inside a TTL. Whether the entry
	// the last call wrote was still alive when this one was sent, on the
	// provider's own clock: its TTL runs from when that call's response
	// began.
	within := !r.began.IsZero() && r.now.Sub(r.began) < r.ttl.Duration() && r.model == r.callModel
	if r.pol.ObserveResends && r.cal != nil {
		var limitTokens, keptTokens int
		req.ReadLimit, limitTokens, req.Limited = r.cal.ReadLimit(idx, e, req, r.view, within)
		req.KeepAlive, keptTokens, req.KeptAlive = r.cal.KeepAlive(idx, e, req, r.view, within)
		req.ReadTokens = max(limitTokens, keptTokens)
		req.ReadInside = req.InsideFloor()
		if req.Limited {
			rec.Detail = append(rec.Detail, compact.KV{Key: string(DetailObservedResend), Value: 1})
		}
	}
	req.Freeze()
	rec.Breakpoints = len(req.Breakpoints)
	resp, sendErr := r.prov.Send(r.now, req)
	if ferr := req.CheckFrozen(); ferr != nil {
		return nil, fmt.Errorf("session %s: event %d: %w", r.sess.ID, idx, ferr)
	}
	if sendErr != nil {
		var ae *provider.APIError
		if !errors.As(sendErr, &ae) {
			return nil, fmt.Errorf("session %s: event %d: %w", r.sess.ID, idx, sendErr)
		}
		rec.Error = ae.Error()
		rec.Prompt = req.Total
	} else {
		// The recorded usage belongs to the call that went through.
		rec.Recorded = e.Usage
		if e.Usage != nil {
			rec.RecordedCostUSD = r.price.Cost(*e.Usage)
			if r.cal != nil {
				r.cal.Observe(idx, req.Total-results, *e.Usage)
			}
			if r.think == claudecode.ThinkingFlagged && req.StripAt > 0 && within {
				r.weighThinking(req.StripAt, e.Usage.CacheRead, &rec)
			}
			if r.warmed && r.shared > 0 && r.cal != nil && r.cal.Anchored() && !within && r.seq > 0 {
				r.weighFloor(e.Usage.CacheRead, &rec, r.floorGap())
			}
			if rd := int(e.Usage.CacheRead); r.envChanged && rd > 0 && rd < floorTokens(r.view) && (r.envRead == 0 || rd < r.envRead) {
				r.envRead = rd
			}
			r.lastPrompt, r.lastStripAt = req.Total, req.StripAt
			if claudecode.Microcompacts(r.cc) {
				r.lastTotal = int(e.Usage.Prompt()) + r.finalOutput(idx, e)
			}
			if rd := int(e.Usage.CacheRead); (r.compacted || rethought) && rd > r.shared && rd < floorTokens(r.view)+r.context-minContext {
				r.sysRead = rd
				if r.acct.sysRead == nil {
					r.acct.sysRead = map[string]int{}
				}
				r.acct.sysRead[r.project()] = rd
			}
			r.compacted = false
		}
		r.envChanged = false
		if u := resp.Usage; u.Input < 0 || u.CacheWrite5m < 0 || u.CacheWrite1h < 0 || u.CacheRead < 0 || u.Output < 0 {
			return nil, fmt.Errorf("session %s: event %d: %s billed negative usage %+v (an engine bug)", r.sess.ID, idx, r.prov.Name(), u)
		}
		rec.Usage = resp.Usage
		rec.CostUSD = r.price.Cost(resp.Usage)
		if resp.KeptAlive {
			rec.Detail = append(rec.Detail, compact.KV{Key: string(DetailObservedKept), Value: 1})
		}
		rec.Prompt = int(resp.Usage.Prompt())
		rec.TTFTMS = resp.TTFT.Milliseconds()
		rec.LatencyMS = resp.Latency().Milliseconds()
		rec.MissReason, rec.MissTokens = resp.Miss.Reason, resp.Miss.Tokens
		if req.StripAt > 0 && rec.MissReason == provider.MissRewrite {
			// The prefix changed where the API dropped an earlier turn's
			// thinking: its own miss, not the harness's rewrite.
			rec.MissReason = provider.MissThinking
		}
	}
	r.seq++
	r.callModel, r.lastCall = r.model, idx
	r.recs = append(r.recs, rec)
	if r.cm != nil {
		// A pass after the response has no summarizer call to wait for.
		if _, err := r.addPasses(idx, r.cm.AfterResponse(r.now, r.view, rec.Prompt, sendErr == nil), false); err != nil {
			return nil, err
		}
	}
	if sendErr == nil {
		r.began = r.now.Add(resp.TTFT)
		if timed {
			// A recorded call takes as long as it took: the simulated
			// latency would move the clock, and with it every later
			// TTL test, by the model's error.
			r.advanceTo(r.now.Add(max(took, resp.TTFT)))
		} else {
			r.advanceTo(r.now.Add(resp.Latency()))
		}
	}
	r.lastAct = r.now
	return sendErr, nil
}

// microcompact is Claude Code's own clearing of old tool results before a
// request (claudecode.Microcompact), in the recorded replay of a version
// that has it: past the warning threshold, as the last bill measured the
// context, the oldest results of its file and shell tools become
// claudecode.ClearedResult, which breaks the cache from the first of them
// (corpus SWORDIntel 5f2d5220 line 251: a 143,851-token context whose
// next call is billed 120,908, reading 15,898; a2d06622 77570c3a at event
// 157: 135K to 103K). The transcript keeps the results whole: only the
// bill shows the clearing.
func (r *run) microcompact(e *traces.Event) {
	if !r.pol.Recorded || r.sess.Format != claudecodeFormat || r.lastTotal < claudecode.WarningThreshold(r.model) {
		return
	}
	if r.pol.ObserveResends && (e.Usage == nil || int(e.Usage.Prompt()) > r.lastPrompt-claudecode.MicrocompactMinSaving/2) {
		// The observed replay clears where the bill shows it: the
		// prompt shrank by about what a clearing saves.
		return
	}
	var calls []claudecode.ToolResult
	at := map[string]int{}
	for _, m := range r.view.Messages {
		for j := range m.Blocks {
			b := &m.Blocks[j]
			switch {
			case b.Kind == traces.ToolUse && !r.cleared[b.ID]:
				at[b.ID] = len(calls)
				calls = append(calls, claudecode.ToolResult{ID: b.ID, Tool: b.Name})
			case b.Kind == traces.ToolResultBlock:
				if i, ok := at[b.ID]; ok {
					images := 0
					if b.Opaque() {
						images = 1
					}
					calls[i].Tokens += claudecode.ResultTokens(b.Text, images)
				}
			}
		}
	}
	ids := claudecode.Microcompact(r.cc, r.model, calls, r.lastTotal)
	if len(ids) == 0 {
		return
	}
	if r.cleared == nil {
		r.cleared = map[string]bool{}
	}
	for _, id := range ids {
		r.cleared[id] = true
	}
	msgs := slices.Clone(r.view.Messages)
	for i := range msgs {
		m := &msgs[i]
		var blocks []traces.Block
		for j := range m.Blocks {
			if b := &m.Blocks[j]; b.Kind == traces.ToolResultBlock && r.cleared[b.ID] && b.Text != claudecode.ClearedResult {
				if blocks == nil {
					blocks = slices.Clone(m.Blocks)
				}
				blocks[j] = traces.Block{Kind: traces.ToolResultBlock, ID: b.ID, Text: claudecode.ClearedResult, IsError: b.IsError}
			}
		}
		if blocks != nil {
			*m = prompt.NewMessage(m.Role, blocks, m.Event, m.Tag)
		}
	}
	v2 := *r.view
	v2.Messages = msgs
	r.setView(&v2)

}

// minContext is the least context worth splitting off an inferred floor:
// below it, a read that short of the floor's end is the calibration's
// error, not a breakpoint.
const minContext = 256

// floorTokens is the size of v's floor.
func floorTokens(v *prompt.View) int {
	n := 0
	for i := range v.Tools {
		n += v.Tools[i].Tokens
	}
	for i := range v.System {
		n += v.System[i].Tokens
	}
	return n
}

// contextAfter is what a recorded Claude Code compaction does to the part
// of the inferred floor that is not the system prompt. Claude Code
// prepends its user context (CLAUDE.md, and in 1.0.x its instruction
// reminders) to the message list of every request, as a first user
// message no cache mark ends (every version from 1.0.0 to 2.1.112:
// 1.0.72 `iZ1(A,B)` returns `[userMsg({content:"<system-reminder>\nAs
// you answer the user's questions, you can use the following
// context:\n# claudeMd…",isMeta:!0}),...A]`). After a compaction that
// message is followed by the summary instead of the first prompt, so the
// first call reads the tools and the system prompt and writes the context
// again: corpus 1.0.80-1.0.90 sessions read 14.4K-16.6K (the tools and
// system) after an auto-compaction where their first call had sent 20-51K
// before its prompt (cae923a8 0c45b0a6: 16,567, 16,563 and 16,565 after
// three compactions of a 20,598-token floor).
//
// The inferred floor holds both; where the system prompt ends is what the
// first call after an earlier compaction read (sysRead), else, on 1.0.x,
// the shared floor the first call read (see cutFloor), else unknown and
// the floor stays whole until a compaction's bill says. The rest becomes
// the context, re-sent after every compaction under a new identity. The entry at the
// system prompt's end was written by the first call and refreshed by every
// call since, so while the last call is within the TTL the cut floor is
// written to the cache as it stands, unbilled: the replay's floor had no
// block boundary there.
func (r *run) contextAfter() {
	if !r.pol.Recorded || r.sess.Format != claudecodeFormat || len(r.sess.Floor) > 0 {
		return
	}
	if !r.revealed {
		r.cutFloor()
	}
	r.compacted = true
	if r.context == 0 {
		return
	}
	r.compactions++
	r.hidden = &traces.Block{Kind: traces.Text, Name: fmt.Sprintf("context/%s/%d", r.sess.ID, r.compactions), Tokens: r.context}
}

// cutFloor puts the end of the inferred floor's system prompt where the
// bills so far say it is (contextAfter), moving what follows into the
// context; a later compaction moves it again when a later bill (the first
// call after a compaction reads exactly the tools and system prompt) says
// otherwise.
func (r *run) cutFloor() {
	if r.cutAt == 0 {
		sys := r.view.System
		n := len(sys)
		if n == 0 || !sys[n-1].Opaque() || !strings.HasPrefix(sys[n-1].Name, "floor") { // inferFloor's
			return
		}
		r.cutBase, r.cutBlock = sys[:n-1:n-1], sys[n-1]
	}
	before := floorTokens(&prompt.View{Tools: r.view.Tools, System: r.cutBase}) // the floor ahead of the cut block
	total := before + r.cutBlock.Tokens
	cut := r.sysEnd()
	if cut == 0 && r.cutAt == 0 && len(r.cutBase) > 0 && strings.HasPrefix(r.cutBase[0].Name, "shared-floor/") &&
		r.cc.Before("2.0.0") {
		// No bill says yet. Claude Code 1.0.x marks two system blocks:
		// a one-line prefix, which with the tools is what its sessions
		// share (the first call's read), and its main prompt with the
		// environment and git status, a few thousand tokens; cutting at
		// the shared part re-sends those with the context. From 2.0 the
		// system prompt after the shared part is larger and varies
		// (corpus 2.0.57 sessions: 30.4K read after compaction against
		// 13.0K shared), so there the bills decide alone.
		cut = before
	}
	if cut <= 0 || cut == r.cutAt || cut > total-minContext || cut < before || (cut == before && before < minContext) {
		return
	}
	v := &prompt.View{Tools: r.view.Tools, System: r.cutBase}
	if cut > before {
		head := r.cutBlock
		head.Tokens = cut - before
		head.Name += "/system"
		v.System = append(v.System, head)
	}
	r.setView(v)
	r.context, r.cutAt = total-cut, cut
	r.keepFloor(v.System, 1)
}

// moveContext puts the inferred floor's context part, once a bill has
// said where the system prompt ends (sysRead), at the head of the first
// message, where Claude Code sends it: a new thinking setting invalidates
// it with the messages (corpus 2.1.29 6b7ca74d: each call that changed
// the setting read 35,891 tokens, the tools and system prompt, of a floor
// the first bill put at 49K). Called at such a call, whose messages are
// re-sent anyway; before a bill says, the floor stays whole. After a
// compaction the context is a message already (contextAfter).
func (r *run) moveContext() {
	if at, ok := r.thinkSeen[r.thinkParam]; ok && r.ttl != prompt.NoCache && r.now.Sub(at.t) < r.ttl.Duration() &&
		r.viewBlocks()-at.blocks <= provider.Lookback {
		// A call under this setting wrote an entry the bill can still
		// reach (corpus 1.0.89 d9f70b92: back from "ultrathink" after
		// two calls, the bill read 98,429 of 100,083): moving the
		// context now would orphan it.
		return
	}
	moved := r.contextOut()
	if moved == nil {
		return
	}
	// The entries the session's calls wrote under the other settings are
	// still there for a call that goes back to one (corpus 1.0.89
	// 5b16cde2: after an "ultrathink" prompt, the next turn read 107,360
	// of 108,301): each setting's last request is written again as it
	// stands now, unbilled, when it was sent.
	params := make([]string, 0, len(r.thinkSeen))
	for p := range r.thinkSeen {
		params = append(params, p)
	}
	slices.Sort(params)
	b := prompt.NewBuilder(r.b.Count, r.b.Wire)
	b.Extra, b.KeepThinking = r.b.Extra, r.b.KeepThinking
	for _, p := range params {
		at := r.thinkSeen[p]
		if p == r.thinkParam || at.msgs == 0 || at.msgs > len(moved) || r.now.Sub(at.t) >= r.ttl.Duration() {
			continue
		}
		req := b.Build(r.model, &prompt.View{Tools: r.view.Tools, System: r.view.System, Messages: moved[:at.msgs]}, 0)
		req.Key, req.Window = r.sess.ID, r.window
		req.Params.Thinking = p
		req.Mark(len(req.Blocks)-1, r.ttl)
		req.Freeze()
		_, _ = r.prov.Send(at.t, req) // not recorded: entries the session's calls kept
	}
}

// contextOut moves the inferred floor's context part into the first
// message (moveContext), once a bill has said where the system prompt ends,
// and returns the moved messages (nil when it did not move: no bill yet,
// a floor the log shows, or moved already). The caller re-sends the
// messages anyway: a new thinking setting, or a new working directory,
// whose system text breaks every message after it.
func (r *run) contextOut() []prompt.Message {
	if !r.pol.Recorded || r.sess.Format != claudecodeFormat || len(r.sess.Floor) > 0 ||
		r.revealed || r.compactions > 0 || r.ctxMoved || r.sysEnd() == 0 {
		return nil
	}
	msgs := r.view.Messages
	if len(msgs) == 0 || msgs[0].Role != prompt.RoleUser {
		return nil
	}
	r.cutFloor()
	if r.context == 0 || r.cutAt == 0 {
		return nil
	}
	r.ctxMoved = true
	m0 := msgs[0]
	ctx := traces.Block{Kind: traces.Text, Name: fmt.Sprintf("context/%s/0", r.sess.ID), Tokens: r.context}
	moved := make([]prompt.Message, 0, len(msgs))
	moved = append(moved, prompt.NewMessage(m0.Role, append([]traces.Block{ctx}, m0.Blocks...), m0.Event, m0.Tag))
	moved = append(moved, msgs[1:]...)
	r.setView(&prompt.View{Tools: r.view.Tools, System: r.view.System, Messages: moved})
	return moved
}

// sentAt is when a call sent a thinking setting, and how many blocks its
// view held.
type sentAt struct {
	t            time.Time
	blocks, msgs int
}

// viewBlocks counts the view's blocks.
func (r *run) viewBlocks() int {
	n := len(r.view.Tools) + len(r.view.System)
	for i := range r.view.Messages {
		n += len(r.view.Messages[i].Blocks)
	}
	return n
}

// promptText is the text of a user event's blocks.
func promptText(e *traces.Event) string {
	var b strings.Builder
	for i := range e.Blocks {
		if e.Blocks[i].Kind == traces.Text {
			b.WriteString(e.Blocks[i].Text)
		}
	}
	return b.String()
}

// claudecodeFormat is the log format whose version decides the thinking
// rule (claudecode.ThinkingOf).
const claudecodeFormat = "claude-code"

// setThinking sets the thinking setting of the turn's requests from its
// budget and the effort level: a change of either invalidates the cached
// messages (prompt.Params.Thinking salts them).
func (r *run) setThinking(budget int) {
	r.thinkParam = claudecode.ThinkingParam(budget)
	if r.effort != "" {
		r.thinkParam += " effort:" + r.effort
	}
}

// weighThinking is the thinking hypothesis of a Claude Code version that
// keeps earlier thinking behind a server-side flag the log does not show:
// the bills decide. A call that dropped a thinking block (at stripAt) and
// was sent within the TTL of the call that last sent it (corpus
// applab-nl+dmux a9185eb7 event 23: the call before it had dropped the
// block too, so its 50,013-token read says nothing) reads past stripAt only
// if the harness kept it (the API reads no further than the first changed
// block), and no further than about stripAt if it did not. The replay
// keeps thinking from the call after the bills for keeping outnumber
// those against (the call that decides is priced on the earlier
// hypothesis: the recorded replay never reads the bill of the call it
// predicts). The call's record says what its bill showed
// (DetailThinkingKept). The margin takes the calibrated position's error.
func (r *run) weighThinking(stripAt int, read int64, rec *Record) {
	margin := max(512, stripAt/50)
	if r.lastPrompt <= stripAt+2*margin || (r.lastStripAt > 0 && r.lastStripAt <= stripAt) {
		// The last call's cached prefix ends about where the dropped
		// block begins, or the last call dropped it too (what it cached
		// has no thinking there): either way the bill cannot tell.
		return
	}
	v := 0.0
	if read > int64(stripAt+margin) {
		r.thinkFor++
		v = 1
	} else {
		r.thinkAgainst++
	}
	r.b.KeepThinking = r.thinkFor > r.thinkAgainst
	rec.Detail = append(rec.Detail, compact.KV{Key: string(DetailThinkingKept), Value: v})
}

// weighFloor is the hypothesis that the account keeps the shared floor
// warm: the floor a session's first call read from cache was written by
// sessions the log does not show, and whether they go on sending it while
// this one idles past its TTL the log cannot say. The bills can: a call
// sent after the session's own entries expired either reads the shared
// floor (corpus SWORDIntel claude-backups 5b16cde2: seven expiries, each
// read the 11,459-token floor its first call read) or reads nothing
// (RyanLisse big3 b566e56e: seven expiries, none read its 12,992). The
// replay keeps the floor warm from the call after the bills for it
// outnumber those against, by writing it again before each call as the
// first call's prewarm did (the call that decides is priced on the earlier
// hypothesis). A read of part of the floor says neither. The call's record
// says what its bill showed (DetailFloorKept).
//
// A call sent on another model than the call before it is weighed apart
// (modelSwitch): the account's other sessions send the shared
// floor, the tools and Claude Code's model-independent first system block,
// on the models they use, and a session whose first call read it finds it
// on the model it switches to (corpus 1.0.89: eight of the nine such
// switches read exactly their first call's shared read, SWORDIntel
// 1b2c0332 line 808 and beee53d0 among them; every switch of a session
// whose first call read nothing read nothing). Whether the account sends
// it on the model switched to is the account's habit, as for an idle gap:
// the replay writes the floor again before a switch once earlier
// switches' bills, the session's or its account's, say so (SWORDIntel's
// config directory: 1b2c0332's switch after others had read it), and not
// on the first call's evidence alone (daniifrim 10-box-os fafb1fb2's one
// switch read nothing).
func (r *run) weighFloor(read int64, rec *Record, gap floorGap) {
	v := 0
	switch {
	case read >= int64(r.shared-r.shared/50):
		v = 1
	case read < int64(r.shared)/2:
	default:
		return
	}
	r.floor.bills[gap][1-v]++
	if r.acct != r.floor {
		r.acct.bills[gap][1-v]++
	}
	rec.Detail = append(rec.Detail, compact.KV{Key: string(DetailFloorKept), Value: float64(v)})
}

// floorBills counts, by kind of gap, the bills that showed the shared
// floor read or written after it.
type floorBills struct {
	bills [2]tally
	// sysRead is where the system prompt ends, by project (run.project),
	// as the last bill that showed it said (run.sysRead).
	sysRead map[string]int
}

// sysEnd is where the system prompt ends: what the session's own bills
// showed (sysRead), else what its account's showed for the same Claude
// Code version in the same project, when RunTenant replays them together.
func (r *run) sysEnd() int {
	if r.sysRead > 0 {
		return r.sysRead
	}
	return r.acct.sysRead[r.project()]
}

// project keys what an account's sessions of one Claude Code version in
// one project share: the tools (the project's MCP servers among them) and
// the system prompt but for its environment lines. A Claude Code log's
// directory under projects/ is its project.
func (r *run) project() string {
	return r.sess.Harness + "\x00" + filepath.Dir(r.sess.File)
}

// A floorGap is what may have let the session's own entries of the shared
// floor go: an idle gap past their TTL, or a switch to another model.
type floorGap int

const (
	idleGap floorGap = iota
	modelSwitch
)

// floorGap is the gap before the call about to be sent, or the one just
// sent: a switch when its model is not the last call's.
func (r *run) floorGap() floorGap {
	if r.model != r.callModel {
		return modelSwitch
	}
	return idleGap
}

// A tally counts bills for a hypothesis and against it.
type tally [2]int

// warm says whether the bills for outnumber those against.
func (t *tally) warm() bool { return t[0] > t[1] }

// floorWarm says whether the replay writes the shared floor again before
// the call of e (weighFloor): after an idle gap, or on a switch to another
// model, while the bills of such calls for it outnumber those against.
// The session's own bills decide once it has any; before,
// its account's, when RunTenant replays the account's sessions together
// (whether the account kept sending the floor is the account's habit:
// SWORDIntel c9a2494a's one idle gap read it, as 5b16cde2's seven, from
// the same config directory, had). A replay that honours observed events
// takes a switch's own bill, as it takes a re-send's
// (Calibrator.ReadLimit).
func (r *run) floorWarm(e *traces.Event) bool {
	gap := r.floorGap()
	if gap == modelSwitch && r.seq > 0 && r.shared > 0 && r.pol.ObserveResends && r.cal.observe && e.Usage != nil {
		return e.Usage.CacheRead >= int64(r.shared)/2
	}
	if own := &r.floor.bills[gap]; own[0]+own[1] > 0 {
		return own.warm()
	}
	return r.acct.bills[gap].warm()
}

// generated is the first block of req that the last call generated, its
// assistant message, when req sends it back whole right after the
// messages that call was sent (prompt.Request.Generated); 0 otherwise (a
// stripped thinking block, a rewrite, another call in between).
func (r *run) generated(req *prompt.Request) int {
	msgs := r.view.Messages
	m := len(msgs) - 1
	for m >= 0 && msgs[m].Event > r.lastCall {
		m--
	}
	if r.seq == 0 || m < 0 || msgs[m].Event != r.lastCall || msgs[m].Role != prompt.RoleAssistant {
		return 0
	}
	first, n := -1, 0
	for i := len(req.Blocks) - 1; i >= 0 && req.Blocks[i].Msg >= m; i-- {
		if req.Blocks[i].Msg == m {
			first, n = i, n+1
		}
	}
	if first <= 0 || n != len(msgs[m].Blocks) {
		return 0
	}
	return first
}

// withToolResults is req with the results of the server-side tools the
// call at event idx ran appended (Calibrator.ToolResults: a web search's
// pages, which no log shows), and their size; req itself when there are
// none. The view does not change: the calibrator's correction carries
// them into the next request.
func (r *run) withToolResults(req *prompt.Request, idx int, e *traces.Event, out int) (*prompt.Request, int) {
	n := r.cal.ToolResults(idx, e, req.Total)
	if n <= 0 {
		return req, 0
	}
	base := req.Total
	v := *r.view
	msg := func(tokens int) {
		v.Messages = append(r.view.Messages[:len(r.view.Messages):len(r.view.Messages)],
			prompt.NewMessage(prompt.RoleTool, []traces.Block{{Kind: traces.ToolResultBlock, Name: fmt.Sprintf("server-tool-results/%d", idx), Tokens: tokens}}, -1, prompt.Plain))
	}
	msg(n)
	req = r.b.Build(r.model, &v, out)
	if over := req.Total - base - n; over > 0 && n > over {
		// The message's framing is part of what the bill measured.
		msg(n - over)
		req = r.b.Build(r.model, &v, out)
	}
	return req, req.Total - base
}

// interrupted sends, unbilled, the request of the prompt the person
// interrupted at event idx (traces.MetaInterrupted) when the interruption
// came after the session's responses typically begin (the median of its
// calls' recordedTiming): Claude Code had sent the prompt, and a request
// that ran that long cached it, which the next call reads (corpus
// SWORDIntel fb4f7a6e line 440, interrupted after 4.0 s: the next call
// reads 57,721 tokens, the prompt included; beee53d0 line 527 after 13.2
// s and 595c4b49 line 139 after 20.2 s read past the last billed prompt
// too; 0c45b0a6 line 1012, interrupted after 2.4 s where that session's
// calls begin after a median of more, reads exactly the last billed
// prompt). The log shows no bill for it: it is sent as another session's
// request is (no key, unrecorded), with the prompt's settings, marked at
// its end. Only the recorded policy and its variants replay the log's
// timing.
func (r *run) interrupted(e *traces.Event, idx int) {
	if !r.pol.Recorded || r.sess.Format != claudecodeFormat || r.ttl == prompt.NoCache || len(r.begans) == 0 || idx == 0 {
		return
	}
	sent := r.sess.Events[idx-1].Time
	starts := slices.Clone(r.begans)
	slices.Sort(starts)
	began := starts[len(starts)/2]
	if e.Time.Sub(sent) < began {
		return
	}
	req := r.b.Build(r.model, r.view, 0)
	n := len(req.Blocks)
	if n == 0 || !req.Blocks[n-1].Cacheable {
		return
	}
	req.Window = r.window
	req.Params.Thinking = r.thinkParam
	req.Mark(n-1, r.ttl)
	req.Started = began
	req.Freeze()
	_, _ = r.prov.Send(sent, req) // not recorded: the log shows no bill
}

// recordedTiming is when the recorded call e (event idx) really began to
// answer and how long it took, both from when it was sent. Claude Code
// writes a response's first line when its first content block has
// streamed, so the response began that block's decoding earlier; the TTL of
// what the call wrote runs from then: in the training corpus a 5-minute
// entry is read up to ~305 s after the writing call's first logged block
// and missed from ~315 s (SWORDIntel 6a405df9 -Downloads- 2025-08-25T03:56:15,
// applab-nl/dmux a9185eb7 14:10:04 hit; chess-study-tool 196bccc8 13:22:06,
// Smartagent-so e02dc529 13:43:46 miss), where ctxsim's model TTFT (~1 s)
// had started it up to 30 s too early. The request was sent when the event
// it answers was logged, or a minute before the first block when the log
// shows a longer wait (MaxFirstBlock). The duration runs to the recorded
// completion (LatencyMS).
func (r *run) recordedTiming(e *traces.Event, idx int) (began, took time.Duration) {
	if idx == 0 || len(e.Blocks) == 0 {
		return 0, 0
	}
	sent := r.sess.Events[idx-1].Time
	if w := e.Time.Sub(sent) - MaxFirstBlock; w > 0 {
		sent = sent.Add(w)
	}
	rate := provider.DefaultLatency(r.prov.Name(), r.model).DecodeRate
	first := 0
	if h := r.hashesOf(idx, e); h != nil {
		first = r.opts.Count(&e.Blocks[0], h[0])
	} else {
		first = r.opts.Count(&e.Blocks[0], e.Blocks[0].Hash())
	}
	start := e.Time
	if rate > 0 {
		start = start.Add(-time.Duration(float64(first) / rate * float64(time.Second)))
	}
	began = max(start.Sub(sent), time.Millisecond)
	end := e.Time
	if e.LatencyMS > 0 {
		if done := r.sess.Events[idx-1].Time.Add(time.Duration(e.LatencyMS) * time.Millisecond); done.After(end) {
			end = done
		}
	}
	return began, max(end.Sub(sent), began)
}

func (r *run) result() *Result {
	res := &Result{Records: r.recs, VerbatimUsers: 1}
	if r.users > 0 {
		res.VerbatimUsers = float64(r.verbatim) / float64(r.users)
	}
	return res
}
