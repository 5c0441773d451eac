package sim

import (
	"math"
	"slices"
	"strconv"

	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/policies/estimate/fit"
	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/traces"
)

// CalMode is how a Calibrator learns.
type CalMode uint8

// Calibration modes.
const (
	// Anchored learns as a harness' own calibration loop would: the size of
	// call k may use what calls before k were billed. The fit is updated
	// after every billed call, and the difference between the billed and the
	// predicted prompt is charged to the next message, so the prediction of
	// call k is the billed size of call k-1 plus the calibrated size of what
	// was added since.
	Anchored CalMode = iota
	// OpenLoop sizes every block with a fixed calibration (fitted on a
	// prefix of the calls) and never looks at billed sizes again: the test
	// of whether a transcript the recording never saw is sized right.
	OpenLoop
	// Frozen replays the sizes an anchored run gave each block and each
	// message's correction, and sizes anything new (summaries, placeholders)
	// with the final fit: a counterfactual prompt is the recorded prompt
	// plus the calibrated size of what the policy changed.
	Frozen
)

// A Calibrator sizes a recorded session's blocks in the provider's tokens.
// Claude's tokenizer is not tiktoken and the system prompt and tools are
// not in the log, so sizes come from the local tokenizer through a
// Calibration fitted on the session's own billed calls.
type Calibrator struct {
	mode  CalMode
	memo  *estimate.Memo
	sess  *traces.Session
	ridge *fit.Ridge
	cal   fit.Calibration
	extra map[int]int
	// framing is what Extra charged each transcript message when an
	// anchored run first built it, so a frozen replay charges the same.
	framing map[int]int
	// sizes holds the size an anchored run gave each distinct block, by
	// content hash (floor blocks are copied into each run's view, so a
	// pointer would not find them again).
	sizes map[uint64]int

	lastCall int
	lastP    int64
	// robust screens fit samples (see robustFit).
	robust robustFit
	// carry is the part of a negative correction the message it belonged
	// to could not absorb (it was smaller than the correction): it goes to
	// the next transcript message, so no correction is ever lost.
	carry int

	// observe makes an anchored calibrator record observed re-sends;
	// resends holds them by call event, for the frozen calibrators of the
	// same session to replay.
	observe bool
	resends map[int]resendAt
	// kept holds the observed reads past the TTL (see KeepAlive), by call
	// event, like resends.
	kept map[int]resendAt
	// warm holds the call events before which the anchored run wrote the
	// shared floor again, its bills having said the account keeps it warm
	// (KeepFloorWarm): a frozen calibrator replays the same.
	warm map[int]bool
	// results holds, by call event, the observed size of the results of
	// the server-side tools a call ran (see ToolResults), like resends;
	// searchTokens is what the searches billed so far measured, over
	// searches actions.
	results                map[int]int
	searches, searchTokens int
}

// resendAt is where an observed re-send cut the served prefix, in terms
// that survive another policy's rewrite of the transcript: the start of the
// request, the end of the floor, or the end of a transcript message.
type resendAt struct {
	where uint8 // resendStart, resendFloor or resendMessage
	// event is the message's event for resendMessage, and the last
	// readable floor block for resendFloor (the floor is the same in every
	// policy's request).
	event int
	// tokens, when positive, is where the read ended inside the floor
	// block after that (see prompt.Request.ReadTokens): positions in the
	// floor are the same in every policy's request too, so a frozen
	// replay serves that much.
	tokens int
	// part is, for resendMessage, the last readable block of the event's
	// message, counted from its first, when the read ended inside the
	// message (after an assistant message's text, before its 30K-token
	// tool call): the rest of it is unread. -1 (a read through the whole
	// message) leaves every block of the message readable, however
	// another policy's request splits it.
	part int
}

const (
	resendStart uint8 = iota
	resendFloor
	resendMessage
)

// NewCalibrator returns an anchored calibrator for s.
func NewCalibrator(s *traces.Session, memo *estimate.Memo) *Calibrator {
	f := fit.NewRidgeFrom(fit.PriorFor(s.Model))
	return &Calibrator{mode: Anchored, memo: memo, sess: s, ridge: f, cal: f.Prior,
		extra: map[int]int{}, framing: map[int]int{}, sizes: map[uint64]int{}, lastCall: -1}
}

// NewOpenLoop returns a calibrator fixed at cal.
func NewOpenLoop(s *traces.Session, memo *estimate.Memo, cal fit.Calibration) *Calibrator {
	return &Calibrator{mode: OpenLoop, memo: memo, sess: s, cal: cal, lastCall: -1}
}

// Freeze returns a calibrator for counterfactual runs of the same session:
// the sizes and corrections this (anchored) calibrator gave, and its final
// fit for new content.
func (c *Calibrator) Freeze() *Calibrator {
	return &Calibrator{mode: Frozen, memo: c.memo, sess: c.sess, cal: c.cal, extra: c.extra, framing: c.framing, sizes: c.sizes,
		resends: c.resends, kept: c.kept, results: c.results, warm: c.warm, lastCall: -1}
}

// KeepFloorWarm says whether the shared floor is written again before the
// call at event idx: for an anchored calibrator what the replay's bills
// decided (and it records it), for a frozen one what its anchored run
// did there, so a counterfactual meets the account as the baseline did.
func (c *Calibrator) KeepFloorWarm(idx int, decided bool) bool {
	if c.mode == Frozen {
		return c.warm[idx]
	}
	if decided {
		if c.warm == nil {
			c.warm = map[int]bool{}
		}
		c.warm[idx] = true
	}
	return decided
}

// Anchored reports whether c reads the session's bills (not a frozen
// calibrator replaying them for a counterfactual).
func (c *Calibrator) Anchored() bool { return c.mode != Frozen }

// ObserveResends makes an anchored calibrator honour and record observed
// re-sends (see ReadLimit). It returns c.
func (c *Calibrator) ObserveResends() *Calibrator {
	c.observe = true
	c.resends = map[int]resendAt{}
	c.kept = map[int]resendAt{}
	c.results = map[int]int{}
	return c
}

// Resends is the number of observed re-sends recorded or replayed.
func (c *Calibrator) Resends() int { return len(c.resends) }

// ReadLimit says how much of req's cached prefix the provider served the
// call at event idx, when the log shows it served less than was cached and
// alive: Claude Code sometimes re-sends everything after a breakpoint with
// no change the transcript shows (the billed read collapses to exactly the
// system prompt's breakpoint, or to zero, within seconds of a call that
// read it all: corpus chess-study-tool 94f6eed6 and 6b7ca74d after new
// user turns, RyanLisse/big3 e165f9ba mid tool loop; the large shared
// session at 21:03:30). No rule in the transcript predicts it, so it is an
// observation, like a floor change: an anchored observing calibrator reads
// it from the call's billed usage (a collapse is a read more than 5 % and
// 1,024 tokens below the previous call's billed prompt, inside the TTL)
// and maps it to the block boundary the read ended at; a frozen one
// replays the same boundary in another policy's request. Other modes never
// limit.
//
// It also returns the read in tokens (prompt.Request.ReadTokens): the
// bill's for an anchored calibrator, and for a frozen one where the read
// ended inside a floor block (an OpenAI request routed to a machine
// holding only part of the opaque floor: corpus kunalcode12 019db6d2
// reads 2,432 tokens of its first call's 25,839).
func (c *Calibrator) ReadLimit(idx int, e *traces.Event, req *prompt.Request, v *prompt.View, withinTTL bool) (block, tokens int, ok bool) {
	switch {
	case c.mode == Frozen:
		return replayed(c.resends, idx, req, v)
	case c.mode != Anchored || !c.observe || e.Usage == nil || c.lastCall < 0 || !withinTTL:
		return 0, 0, false
	}
	r := e.Usage.CacheRead
	if r+max(1024, c.lastP/20) >= c.lastP {
		return 0, 0, false
	}
	if _, _, boundary := c.features(c.lastCall, idx); boundary {
		// After a compaction or a floor change the prefix is new: a read
		// below the last prompt is expected, not a re-send.
		return 0, 0, false
	}
	at := position(int(r), req, v)
	c.resends[idx] = at
	return at.block(req, v), int(r), true
}

// KeepAlive is the mirror of ReadLimit: when the log shows the call at
// event idx reading a cached prefix after a gap longer than the TTL, some
// request the log does not show kept that prefix alive (another process
// on the same account, or the provider keeping an entry a little past its
// TTL: corpus attio-mcp-server 6706089d reads all 100,196 tokens of a
// prefix written 31 minutes earlier, with nothing logged in between;
// c7428042 reads 112,945 tokens 316 s after the call that wrote them,
// where 322 s and later gaps miss). An anchored observing calibrator maps
// the read to the block boundary it ended at, and the provider serves
// that prefix as if alive; a frozen one replays the same position. Other
// modes never keep anything alive.
// Like ReadLimit, it returns the read in tokens.
func (c *Calibrator) KeepAlive(idx int, e *traces.Event, req *prompt.Request, v *prompt.View, withinTTL bool) (block, tokens int, ok bool) {
	switch {
	case c.mode == Frozen:
		a, ok := c.kept[idx]
		if !ok {
			return 0, 0, false
		}
		if keep := a.keptBlock(req, v); keep >= 0 {
			return keep, a.tokens, true
		}
		return 0, 0, false
	case c.mode != Anchored || !c.observe || e.Usage == nil || withinTTL || e.Usage.CacheRead < 1024:
		// The first call counts too: a read past the shared floor on it
		// was cached by a request the log does not show (10-box-os
		// 1a16b56e reads all of its first prompt).
		return 0, 0, false
	}
	at := position(int(e.Usage.CacheRead), req, v)
	keep := at.keptBlock(req, v)
	if keep < 0 {
		return 0, 0, false
	}
	c.kept[idx] = at
	return keep, int(e.Usage.CacheRead), true
}

// keptBlock is the block an observed read past the TTL keeps alive: the
// last one it read whole, or the first floor block when the read ended
// inside it (an inferred floor the replay holds whole, of which the
// account kept only the shared part warm: Smartagent-so eca51c57 reads
// 12,598 of a 98,780-token first prompt after each idle gap; the provider
// serves that much of it, prompt.Request.ReadTokens). -1: nothing.
func (at resendAt) keptBlock(req *prompt.Request, v *prompt.View) int {
	if at.where != resendStart {
		return at.block(req, v)
	}
	if at.tokens > 0 && len(req.Blocks) > 0 && req.Blocks[0].Section != prompt.Messages {
		return 0
	}
	return -1
}

// ToolResults is how many tokens of server-side tool results (a web
// search's pages: traces.MetaServerTools) the call at event idx read,
// which no log shows and only the call's own bill measures. An anchored
// observing calibrator reads it from the bill, the billed prompt less base
// (the request without them), and records it; a frozen one replays it. A
// calibrator that may not read the call's bill estimates it as a harness
// could: SearchResultTokens per search, moved towards what the session's
// earlier searches measured. The results stay in the
// conversation: Observe's correction carries them to the next request.
func (c *Calibrator) ToolResults(idx int, e *traces.Event, base int) int {
	n, _ := strconv.Atoi(e.Meta[traces.MetaServerTools])
	if n <= 0 {
		return 0
	}
	switch {
	case c.mode == Frozen:
		return c.results[idx]
	case c.mode == Anchored && c.observe && e.Usage != nil:
		r := max(0, int(e.Usage.Prompt())-base)
		c.results[idx] = r
		return r
	}
	// The prior counts as searchPrior actions, so one search's results
	// (4,138 tokens for one page in corpus 5a2c36ba) do not set the next
	// five's alone.
	return n * (searchPrior*SearchResultTokens + c.searchTokens) / (searchPrior + c.searches)
}

const searchPrior = 4

// SearchResultTokens is what one server-side search action (a search, an
// opened page) adds to its call's prompt before a session has measured
// any: 28,758 tokens over the 13 actions of the four searching calls the
// captures and the corpus bill (trace_node_codex: 3 actions, 10,333;
// corpus ff1815ba: 4, 5,986; 5a2c36ba: 1, 4,138, then 5, 8,301).
const SearchResultTokens = 2_200

// replayed is the block a frozen calibrator's observation at event idx
// leaves readable in another policy's request, if the anchored run
// observed one there.
func replayed(at map[int]resendAt, idx int, req *prompt.Request, v *prompt.View) (int, int, bool) {
	a, ok := at[idx]
	if !ok {
		return 0, 0, false
	}
	return a.block(req, v), a.tokens, true
}

// position is where in req a billed read of r tokens ended, in terms that
// survive another policy's rewrite of the transcript.
func position(r int, req *prompt.Request, v *prompt.View) resendAt {
	tol := max(256, r/50)
	j := -1
	for k := range req.Blocks {
		if req.Blocks[k].End > r+tol {
			break
		}
		j = k
	}
	inside := 0 // where the read ended inside the next block, if a floor block
	if k := j + 1; k < len(req.Blocks) && req.Blocks[k].Section != prompt.Messages {
		start := 0
		if j >= 0 {
			start = req.Blocks[j].End
		}
		if r > start+tol {
			inside = r
		}
	}
	switch {
	case j < 0:
		return resendAt{where: resendStart, tokens: inside}
	case req.Blocks[j].Section != prompt.Messages:
		return resendAt{where: resendFloor, event: j, tokens: inside}
	default:
		// A read that ended inside a message block ends at the block's
		// nearer boundary: the replay's blocks are not the request's
		// (e6e50e7a line 21: 17 tokens past the previous prompt, before
		// a 30K-token tool call of the same message; 91c1aab5 line 97:
		// 1.4K before the end of a first message's 10K hidden context).
		if k := j + 1; k < len(req.Blocks) && req.Blocks[k].End-r < r-req.Blocks[j].End {
			j = k
		}
		part := -1
		if k := j + 1; k < len(req.Blocks) && req.Blocks[k].Msg == req.Blocks[j].Msg {
			part = 0
			for k := j - 1; k >= 0 && req.Blocks[k].Msg == req.Blocks[j].Msg; k-- {
				part++
			}
		}
		return resendAt{where: resendMessage, event: v.Messages[req.Blocks[j].Msg].Event, part: part}
	}
}

// block is the last block of req the re-send leaves readable.
func (at resendAt) block(req *prompt.Request, v *prompt.View) int {
	last, part := -1, 0
	for k := range req.Blocks {
		b := &req.Blocks[k]
		switch at.where {
		case resendFloor:
			if b.Section == prompt.Messages || k > at.event {
				return last
			}
		case resendMessage:
			if b.Section == prompt.Messages && v.Messages[b.Msg].Event > at.event {
				return last
			}
			if b.Section == prompt.Messages && v.Messages[b.Msg].Event == at.event {
				if at.part >= 0 && part > at.part {
					return last
				}
				part++
			}
		default:
			return -1
		}
		last = k
	}
	return last
}

// Calibration is the current fit.
func (c *Calibrator) Calibration() fit.Calibration { return c.cal }

// Count sizes a block: opaque blocks keep their size, others are the
// calibrated local count.
func (c *Calibrator) Count(b *traces.Block, h uint64) int {
	if b.Opaque() {
		return b.Tokens
	}
	if c.sizes == nil {
		return c.cal.Size(fit.KindOf(b), c.memo.CountHash(b, h))
	}
	if n, ok := c.sizes[h]; ok {
		return n
	}
	n := c.cal.Size(fit.KindOf(b), c.memo.CountHash(b, h))
	if c.mode == Anchored {
		c.sizes[h] = n
	}
	return n
}

// Extra is the message's framing plus, for a transcript message, the
// correction charged to it.
func (c *Calibrator) Extra(m *prompt.Message) int {
	if m.Event >= 0 {
		if n, ok := c.framing[m.Event]; ok {
			return n
		}
	}
	n := int(math.Round(c.cal.Message))
	if m.Event >= 0 && c.extra != nil {
		n += c.extra[m.Event]
	}
	if c.mode == Anchored && m.Event >= 0 {
		// A correction larger than the message (a prompt billed smaller
		// than predicted by more than the message holds) is carried to the
		// next one, not dropped: one real session lost 12.6K tokens a call
		// for 80 calls that way (corpus kesslerio 6706089d).
		// The carry drains at most half of each later message, so
		// messages keep growing the prompt (a block of zero tokens would
		// leave a breakpoint with nothing to write).
		size := 0
		for i := range m.Blocks {
			size += c.Count(&m.Blocks[i], m.BlockHash(i))
		}
		if n < -size {
			c.carry, n = c.carry+n+size, -size
		} else if c.carry < 0 {
			take := max(c.carry, -(size+n)/2)
			n, c.carry = n+take, c.carry-take
		}
		c.framing[m.Event] = n
	}
	return n
}

// features are the local counts of the events [from, to) of the session,
// and the exact (opaque) tokens among them, which need no calibration.
func (c *Calibrator) features(from, to int) (f fit.Features, exact float64, boundary bool) {
	for i := from; i < to; i++ {
		e := &c.sess.Events[i]
		// A pair of calls across a compaction, a floor change, a model
		// switch or a rewind measures the rewrite, not the content added:
		// never fit.
		if _, rewound := e.RewindTo(i); rewound || e.Summary || e.Kind == traces.Compaction || e.Kind == traces.FloorChange || e.Kind == traces.ModelSwitch {
			boundary = true
		}
		if len(e.Blocks) == 0 {
			continue
		}
		f.AddMessage()
		for j := range e.Blocks {
			b := &e.Blocks[j]
			if b.Opaque() {
				exact += float64(b.Tokens)
				continue
			}
			f.AddBlock(fit.KindOf(b), c.memo.Count(b))
		}
	}
	return f, exact, boundary
}

// Observe learns from the call at event idx after it was billed: predicted
// is what the simulation sized its prompt at, without the server-side tool
// results it added (see ToolResults), rec what was really billed.
//
// A call that ran server-side tools measures no growth (its bill holds
// results the transcript does not show), so it is not fitted; its
// correction, which holds them, carries them on as the API does (corpus
// anmol0b/Trezo-Ai ff1815ba: a call reads 5,986 tokens of search results
// and the next one sends them again).
func (c *Calibrator) Observe(idx, predicted int, rec traces.Usage) {
	if c.mode != Anchored {
		return
	}
	p := rec.Prompt()
	server := c.sess.Events[idx].Meta[traces.MetaServerTools] != ""
	if n, _ := strconv.Atoi(c.sess.Events[idx].Meta[traces.MetaServerTools]); n > 0 && p > int64(predicted) {
		c.searches += n
		c.searchTokens += int(p) - predicted
	}
	if c.lastCall >= 0 && !server && c.sess.Events[c.lastCall].Meta[traces.MetaServerTools] == "" && c.sess.Events[c.lastCall].Model == c.sess.Events[idx].Model {
		if f, exact, boundary := c.features(c.lastCall, idx); !boundary && c.robust.accept(&c.cal, &f, float64(p-c.lastP)-exact) {
			c.ridge.Add(f, float64(p-c.lastP)-exact)
			c.cal = bounded(c.ridge.Solve())
		}
	}
	c.extra[idx] = int(p) - predicted
	// The new correction measures all that is still off, the carry not
	// yet absorbed included.
	c.carry = 0
	c.lastCall, c.lastP = idx, p
}

// FitPrefix fits a calibration on the first frac of s's recorded calls:
// each sample is the growth of the billed prompt between two consecutive
// calls against the content added in between (pairs across a compaction
// are skipped). It returns the fit and the number of calls it used.
func FitPrefix(s *traces.Session, memo *estimate.Memo, frac float64) (fit.Calibration, int) {
	var calls []int
	for i := range s.Events {
		if s.Events[i].Kind == traces.Assistant && s.Events[i].Usage != nil {
			calls = append(calls, i)
		}
	}
	n := int(math.Ceil(frac * float64(len(calls))))
	c := NewCalibrator(s, memo)
	for k := 1; k < n && k < len(calls); k++ {
		f, exact, boundary := c.features(calls[k-1], calls[k])
		if boundary {
			continue
		}
		if s.Events[calls[k]].Model != s.Events[calls[k-1]].Model ||
			s.Events[calls[k]].Meta[traces.MetaServerTools] != "" || s.Events[calls[k-1]].Meta[traces.MetaServerTools] != "" {
			continue // a server tool's results are in one bill only
		}
		dp := s.Events[calls[k]].Usage.Prompt() - s.Events[calls[k-1]].Usage.Prompt()
		if c.robust.accept(&c.cal, &f, float64(dp)-exact) {
			c.ridge.Add(f, float64(dp)-exact)
			c.cal = bounded(c.ridge.Solve())
		}
	}
	return c.cal, n
}

// robustFit keeps one sample from poisoning a calibration. A pair of calls
// whose billed growth differs from what the current calibration predicts
// by more than 4 median absolute deviations of the residuals seen so far
// (and by more than 512 tokens) carries content the transcript does not
// show (hook output, thinking billed longer than logged, a re-send): its
// excess is unseen content, which the anchored correction absorbs, not a
// tokenizer ratio, which would then size every later block wrong (a 5–9×
// ratio on the continuation summary, corpus kesslerio and templar). The
// first samples only screen by that absolute bound.
type robustFit struct {
	resid []float64 // |residual| of accepted samples
}

func (r *robustFit) accept(cal *fit.Calibration, f *fit.Features, y float64) bool {
	res := math.Abs(y - cal.Predict(f))
	limit := 512.0
	if n := len(r.resid); n >= 5 {
		sorted := slices.Clone(r.resid)
		slices.Sort(sorted)
		limit = max(limit, 4*1.4826*sorted[n/2])
	} else {
		limit = max(limit, 0.25*math.Abs(y))
	}
	if res > limit {
		return false
	}
	r.resid = append(r.resid, res)
	return true
}

// Plausible per-kind ratios of Claude tokens to o200k tokens: Claude's
// tokenizer counts 0.9–1.4× o200k on English, code and JSON and up to ~1.6×
// on CJK (the shared sessions and the training corpus). A fit outside the
// band is a fit to something other than the tokenizer.
const (
	minRatio = 0.8
	maxRatio = 1.7
)

func bounded(c fit.Calibration) fit.Calibration {
	for k := range c.Ratio {
		c.Ratio[k] = min(max(c.Ratio[k], minRatio), maxRatio)
	}
	return c
}
