package claudecode

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/ctxsim/ctxsim/traces"
)

// SessionUsage is what one Claude Code log file billed: its calls, each
// counted once.
type SessionUsage struct {
	ID string
	// Parent is the parent session of a subagent file, else "".
	Parent string
	// Compaction marks an agent-acompact-* file: a compaction's summarizer
	// call.
	Compaction bool
	// File is the file the calls were read from (as displayed).
	File string
	// Model is the first call's model.
	Model string
	Start time.Time
	Calls []Call

	// lines read and lines used (a call, a record that bills nothing or a
	// blank line); every other line has a warning.
	lines, used int
	// FromProgress marks a subagent known only from the progress lines of
	// its parent's log (Claude Code 2.1 echoes each subagent response there;
	// its own agent-*.jsonl may be missing).
	FromProgress bool
}

// Call is one billed API response.
type Call struct {
	// Time is the timestamp of the line whose usage the call keeps (zero
	// when it has none), as ccusage dates a call into days, weeks, months
	// and 5-hour blocks.
	Time time.Time
	// BadTime marks a call whose line gave a timestamp no call has (not
	// RFC 3339, or outside traces.PlausibleTime): Time is zero, as for a
	// line without one, and the call is shown under "(bad time)".
	BadTime bool
	Model   string
	// MessageID and RequestID identify the response (the dedupe key).
	MessageID, RequestID string
	Usage                traces.Usage
	// Line is the call's first line in its file (of a subagent response
	// echoed by progress lines, the first of them), for warnings.
	Line int

	key   string    // callKey(MessageID, RequestID)
	first time.Time // the earliest time of its lines, for ordering
}

// billKey is what a call is billed once by across files: its request id
// (one API request is one bill; a resumed session's copy has the same),
// else its message and request ids (callKey: "" for neither).
func (c *Call) billKey() string {
	if c.RequestID != "" {
		return c.RequestID
	}
	return c.key
}

// Total is the sum of the calls' usage.
func (s *SessionUsage) Total() traces.Usage {
	var u traces.Usage
	for i := range s.Calls {
		u = u.Add(s.Calls[i].Usage)
	}
	return u
}

// ScanUsage is the fast path of `ctxsim cost`: it reads only the billed
// usage of the Claude Code logs under paths (files, or directories searched
// for .jsonl), without building transcripts. Each line is read in one pass
// (parseBillLine: the grammar is checked, only the few fields a bill needs
// are decoded), and files are read on all cores a chunk at a time: no
// more of a file is held than its longest line needs. Results
// are sorted by session id, whatever the read order.
//
// Every line is accounted for: it is a call, a record that bills nothing
// (any JSON object with a "type"), or a counted warning. Inside strings
// the scan looks only for the closing quote: bad escapes or invalid UTF-8
// in text that bills nothing are left to the full importer to report; a
// line that bills is checked as encoding/json checks it, so the scan
// bills what the importer bills. A file is read as traces.DecodeText
// reads it (UTF-16 with a byte-order mark decoded).
//
// A response spread over several lines is counted once, with its most
// complete usage (traces.MoreComplete: the largest output, whatever the
// line order), and a conflict on the prompt side is warned about. A
// request seen in more than one file (a resumed session copies its
// history) is billed by the file whose first call is earliest, as
// traces.MarkCopied bills it, with a warning for each copy. It stops,
// with ctx's error, when ctx is done.
func ScanUsage(ctx context.Context, paths ...string) ([]*SessionUsage, *traces.Warnings, error) {
	us, ws, _, err := ScanUsageIf(ctx, nil, paths...)
	return us, ws, err
}

// ScanUsageIf is ScanUsage that first hands each file's head (its first
// line, at most traces.HeadSize bytes) to ok (nil: every file is taken),
// in the worker that reads the file: the caller checks that every file is
// a Claude Code log without opening each once more. all is false, with no
// results, when ok refuses a file, a path holds no .jsonl file, or a
// first line is over traces.MaxLine; ok must be safe to call from several
// goroutines.
func ScanUsageIf(ctx context.Context, ok func(head []byte) bool, paths ...string) (us []*SessionUsage, ws *traces.Warnings, all bool, err error) {
	var files []string
	ws = &traces.Warnings{}
	for _, p := range paths {
		fs0, err := traces.WalkFiles(p, isLog, ws)
		if err != nil {
			return nil, nil, false, fmt.Errorf("claudecode: %w", err)
		}
		if len(fs0) == 0 && ok != nil {
			return nil, nil, false, nil
		}
		files = append(files, fs0...)
	}
	// The largest files first, so that no worker is left with a big one at
	// the end; results still come back in file order.
	size := make([]int64, len(files))
	order := make([]int, len(files))
	for i, f := range files {
		order[i] = i
		if fi, err := os.Stat(f); err == nil {
			size[i] = fi.Size()
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return size[order[a]] > size[order[b]] })
	// One set of buffers per worker, kept for the whole scan (a sync.Pool
	// is emptied by each GC, and a fresh buffer is cleared and faulted in).
	bufs := make(chan *scanBufs, runtime.GOMAXPROCS(0))
	// One refused file refuses the tree: the files after it go unscanned.
	var refused atomic.Bool
	read, rws, err := readFiles(ctx, len(files), order, func(i int) (io.ReadCloser, error) { return os.Open(files[i]) },
		func(i int, r io.Reader, w *traces.Warnings) (fileUsage, error) {
			if refused.Load() {
				return fileUsage{refused: true}, nil
			}
			var buf *scanBufs
			select {
			case buf = <-bufs:
			default:
				buf = new(scanBufs)
			}
			defer func() { bufs <- buf }()
			u, err := scanFileBuf(r, files[i], w, buf, ok)
			if u.refused {
				refused.Store(true)
			}
			return u, err
		})
	if err != nil {
		return nil, nil, false, err
	}
	for _, f := range read {
		if f.refused {
			return nil, nil, false, nil
		}
	}
	ws.Merge(rws)
	n := 0
	for _, f := range read {
		n += len(f.main.Calls)
		for _, a := range f.agents {
			n += len(a.Calls)
		}
	}
	// A request is billed once, by the file whose first call is earliest
	// (ties: the smaller session id, then path order), as
	// traces.MarkCopied bills it for every other command; a copy in
	// another file is skipped with its warning.
	byStart := make([]int, len(read))
	for i := range byStart {
		byStart[i] = i
	}
	sort.SliceStable(byStart, func(a, b int) bool {
		sa, sb := read[byStart[a]].main, read[byStart[b]].main
		return traces.CompareStart(sa.Start, sa.ID, sb.Start, sb.ID) < 0
	})
	owner := make(map[string]int, n)
	for _, i := range byStart {
		s := read[i].main
		kept := s.Calls[:0]
		for _, c := range s.Calls {
			if k := c.billKey(); k != "" {
				if o, ok := owner[k]; ok && o != i {
					ws.Add(s.File, c.Line, traces.WarnCopiedCall)
					continue
				}
				owner[k] = i
			}
			kept = append(kept, c)
		}
		s.Calls = kept
	}
	var out []*SessionUsage
	byID := map[string]*SessionUsage{}
	for _, f := range read {
		if s := f.main; len(s.Calls) > 0 {
			out = append(out, s)
			if byID[s.ID] == nil {
				byID[s.ID] = s
			}
		}
	}
	// Subagent responses echoed in progress lines count where no log file
	// holds the same response (its own agent-*.jsonl wins, silently).
	agent := -1 // each echoed agent session its own owner, below the files
	for _, f := range read {
		for _, s := range f.agents {
			agent--
			kept := s.Calls[:0]
			for _, c := range s.Calls {
				if k := c.billKey(); k != "" {
					if o, ok := owner[k]; ok && o != agent {
						continue
					}
					owner[k] = agent
				}
				kept = append(kept, c)
			}
			s.Calls = kept
			switch {
			case len(s.Calls) == 0:
			case byID[s.ID] != nil:
				byID[s.ID].Calls = append(byID[s.ID].Calls, s.Calls...)
			default:
				byID[s.ID] = s
				out = append(out, s)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, ws, true, nil
}

// fileUsage is what one file holds: its own calls, and the subagent
// responses its progress lines echo, by agent in order of first sight.
type fileUsage struct {
	main   *SessionUsage
	agents []*SessionUsage
	// refused: ScanUsageIf's check refused the file (read no further).
	refused bool
}

// progressLine is what a progress record echoing a subagent's response
// (Claude Code 2.1) bills from, as encoding/json decodes it: the reference
// progressAgents.scan reads the same from the one-pass reader's spans, and
// falls back to for the lines it cannot read exactly.
type progressLine struct {
	SessionID string `json:"sessionId"`
	Data      *struct {
		AgentID string `json:"agentId"`
		Message *struct {
			Type      string `json:"type"`
			Timestamp string `json:"timestamp"`
			RequestID string `json:"requestId"`
			Message   *struct {
				ID    string    `json:"id"`
				Model string    `json:"model"`
				Usage *rawUsage `json:"usage"`
			} `json:"message"`
		} `json:"message"`
	} `json:"data"`
}

// progressAgents collects the subagent calls of progress lines: Claude Code
// 2.1 echoes each subagent response in its parent's log, and ccusage
// 20.0.24 counts them, under the subagent's id (<session>.agent-<agent>).
type progressAgents struct {
	name   string
	w      *traces.Warnings
	agents []*SessionUsage
	byID   map[string]int
	byCall map[string][2]int
	// decoded counts the lines scan left to add (tests: no real log has one).
	decoded int
	line    int // of the progress line being read
	// plainKnown: the scan loop already knows plainJSON of the line
	// being read (plainLine), for lines that mention usage.
	plainKnown, plainLine bool
}

// scan bills the subagent response that progress line b (parsed into l)
// may echo, exactly as add would. When the keys add decodes are spelled
// exactly and once, their strings are plain ASCII and the line holds no
// control byte, escape or number that encoding/json could reject, it reads
// the values parseBillLine took (most lines end at a missing agentId);
// any other line goes to add itself.
func (pa *progressAgents) scan(b []byte, l *billLine, warn func(string)) {
	slow := func() {
		pa.decoded++
		if bytes.Contains(b, keyUsage) && bytes.Contains(b, keyAgentID) {
			pa.add(b, warn)
		}
	}
	e := &l.prog
	if l.odd || e.odd {
		slow()
		return
	}
	// bad: a value of a type progressLine cannot take (encoding/json then
	// fails and add bills nothing); hard: a string to unescape.
	var bad, hard bool
	str := func(v []byte) []byte {
		switch {
		case len(v) == 0 || v[0] == 'n': // absent or null: ""
			return nil
		case v[0] != '"':
			bad = true
			return nil
		}
		v = v[1 : len(v)-1]
		for _, c := range v {
			if c == '\\' || c >= utf8.RuneSelf {
				hard = true
				break
			}
		}
		return v
	}
	obj := func(kind byte) bool {
		if kind != 0 && kind != 'n' && kind != '{' {
			bad = true
		}
		return kind == '{'
	}
	sid, agent := str(l.sessionV), str(e.agentID)
	hasData, hasMsg, hasInner := obj(e.dataKind), obj(e.msgKind), obj(e.innerKind)
	typ, ts, reqID := str(e.typ), str(e.timestamp), str(e.requestID)
	msgID, model := str(e.msgID), str(e.model)
	var raw traces.RawAnthropic
	hasUsage := obj(e.usageKind)
	if hasUsage {
		raw = e.usage.raw
		obj(e.usage.split)
		hard = hard || e.usage.odd
	}
	switch {
	case bad || !hasData || !hasMsg || !hasInner || !hasUsage:
		return // add bills nothing, whatever the strings say
	case hard:
		slow()
		return
	case len(agent) == 0 || string(typ) != "assistant" || len(sid) == 0 || string(model) == syntheticModel:
		return
	case l.unusual || !pa.plain(b):
		slow() // encoding/json may reject the line
		return
	}
	pa.bill(string(sid), string(agent), string(ts), string(reqID), string(msgID), string(model), raw, warn)
}

// plain is plainJSON(b) of the line being read, computed once.
func (pa *progressAgents) plain(b []byte) bool {
	if pa.plainKnown {
		return pa.plainLine
	}
	return plainJSON(b)
}

// add decodes progress line b by encoding/json and bills the subagent
// response it echoes, if any.
func (pa *progressAgents) add(b []byte, warn func(string)) {
	var pl progressLine
	if json.Unmarshal(b, &pl) != nil {
		return
	}
	d := pl.Data
	if d == nil || d.AgentID == "" || d.Message == nil || d.Message.Type != "assistant" || pl.SessionID == "" {
		return
	}
	m := d.Message.Message
	if m == nil || m.Usage == nil || m.Model == syntheticModel {
		return
	}
	pa.bill(pl.SessionID, d.AgentID, d.Message.Timestamp, d.Message.RequestID, m.ID, m.Model, m.Usage.raw(), warn)
}

// bill counts one echoed response of agent in session sessionID.
func (pa *progressAgents) bill(sessionID, agent, timestamp, reqID, msgID, model string, raw traces.RawAnthropic, warn func(string)) {
	u := traces.CheckAnthropic(raw, warn)
	at, dated := parseTime(timestamp)
	bad := !dated && timestamp != ""
	if bad {
		pa.w.AddPlace(traces.TimePlace(pa.name, pa.line, timestamp), warnCallBadTime)
	}
	key := callKey(msgID, reqID)
	if ix, ok := pa.byCall[key]; ok && key != "" {
		mergeUsage(&pa.agents[ix[0]].Calls[ix[1]].Usage, u, warn)
		return
	}
	ai, ok := pa.byID[agent]
	if !ok {
		id, parent, compaction := identity(sessionID, agent)
		ai = len(pa.agents)
		pa.byID[agent] = ai
		pa.agents = append(pa.agents, &SessionUsage{ID: id, Parent: parent, Compaction: compaction, File: pa.name, FromProgress: true, Model: model, Start: at})
	}
	a := pa.agents[ai]
	if key != "" {
		pa.byCall[key] = [2]int{ai, len(a.Calls)}
	}
	a.Calls = append(a.Calls, Call{Time: at, BadTime: bad, Model: model, MessageID: msgID, RequestID: reqID, Usage: u, Line: pa.line, key: key})
}

// plainJSON reports whether b, a line parseBillLine accepted with no
// unusual number or nesting, is certainly valid JSON to encoding/json:
// the scan did not look inside its strings, which must hold no control
// byte (outside strings only tab and CR may be, as whitespace: such a
// line is left to encoding/json) and whose escapes must be valid.
func plainJSON(b []byte) bool {
	if hasControl(b) {
		return false
	}
	// Every backslash is in a string (the grammar has none outside), and
	// the first one in a line starts an escape: taking escapes in turn
	// from there meets each escape at its start.
	for i := 0; ; {
		k := bytes.IndexByte(b[i:], '\\')
		if k < 0 {
			return true
		}
		i += k + 1
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			if i+5 > len(b) {
				return false
			}
			for _, c := range b[i+1 : i+5] {
				if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
					return false
				}
			}
			i += 5
		default:
			return false
		}
	}
}

// The bytes of a word, all ones and all top bits, for hasControl.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// hasControl reports whether b holds a byte below 0x20, eight bytes at a
// time: x-0x20 borrows into a byte's top bit only from a byte below 0x20
// (exact as a yes or no, though not as to which byte).
func hasControl(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if (x-0x20*ones)&^x&highs != 0 {
			return true
		}
	}
	for ; i < len(b); i++ {
		if b[i] < 0x20 {
			return true
		}
	}
	return false
}

// keyAgentID marks the progress lines that may echo a subagent response.
var keyAgentID = []byte(`"agentId"`)

// Warning reasons of the fast scan only.
const (
	warnNotRecord = "skipped line that is not a log record (a JSON object with a type)"
	// The scan keeps a call it cannot date under "(no time)" when its
	// line has no timestamp, "(bad time)" when the line's timestamp is no
	// time a call was made (it reads no other line's time to borrow, as
	// the importer does); the warning's place names the value.
	warnCallNoTime  = "kept call without a timestamp (counted under (no time); a since/until window skips it)"
	warnCallBadTime = "kept call with a bad timestamp (not RFC 3339, or before 2000 or after 2099: Go's zero time, the Unix epoch): counted under (bad time); a since/until window skips it"
)

// scanFile reads the calls of one file, sorted by their first time (then
// first line), so that a file's bill does not depend on its line order.
// The file is read a chunk at a time (lineSource) and split in place: no
// line is copied.
func scanFile(r io.Reader, name string, w *traces.Warnings) (fileUsage, error) {
	return scanFileBuf(r, name, w, new(scanBufs), nil)
}

// scanBufs are what a scan reuses from file to file: the line buffer, and
// the calls of a file being read (copied out once, at their final size,
// where appending to each file's own list allocated twice its size).
type scanBufs struct {
	line  []byte
	calls []Call
}

// scanFileBuf is scanFile reading into buf (grown as needed; nothing
// returned refers to it), first asking ok (if not nil) whether to read a
// file with this head (see ScanUsageIf).
func scanFileBuf(r io.Reader, name string, w *traces.Warnings, buf *scanBufs, ok func(head []byte) bool) (fileUsage, error) {
	src := lineSource{r: traces.DecodeText(r), buf: buf.line, max: traces.MaxLine}
	s := &SessionUsage{File: name, Calls: buf.calls[:0]}
	defer func() {
		buf.line = src.buf
		scratch := s.Calls
		s.Calls = nil
		if len(scratch) > 0 {
			s.Calls = slices.Clone(scratch)
		}
		clear(scratch) // keeps no strings alive
		buf.calls = scratch[:0]
	}()
	pa := &progressAgents{name: name, w: w, byID: map[string]int{}, byCall: map[string][2]int{}}
	idx := map[string]int{}
	models := map[string]string{} // the model's bytes as read → text of them
	var kb []byte                 // a call key being looked up
	var idTime time.Time          // time of the line s.ID was taken from
	var l billLine
	lineNo := 0
	records, blanks := 0, 0 // for traces.WarnUnreadFile
	warn := func(reason string) { w.Add(name, lineNo, reason) }
	for {
		b, eof, long, more, err := src.next()
		if err != nil {
			return fileUsage{}, fmt.Errorf("%s: %w", name, err)
		}
		if ok != nil {
			if long || !ok(b[:min(len(b), traces.HeadSize)]) {
				return fileUsage{refused: true}, nil
			}
			ok = nil
		}
		if !more {
			break
		}
		lineNo++
		s.lines++
		if long {
			warn(warnTooLong)
			continue
		}
		if err := parseBillLine(b, &l); err != nil {
			switch {
			case len(bytes.TrimSpace(b)) == 0:
				s.used++
				blanks++
			case eof:
				warn(warnTruncated)
			default:
				warn(warnInvalidJSON)
			}
			continue
		}
		raw, hasUsage, uodd := l.usage.raw, l.usage.ok, l.usage.odd
		if l.odd || uodd {
			var ok bool
			if raw, hasUsage, ok = decodeOdd(b, &l); !ok {
				warn(warnInvalidJSON)
				continue
			}
		}
		if l.typ == nil {
			warn(warnNotRecord)
			continue
		}
		s.used++
		records++
		if string(l.typ) == "progress" {
			pa.plainKnown = bytes.Contains(b, keyUsage)
			if pa.plainKnown {
				pa.plainLine = plainJSON(b)
				if !pa.plainLine && !json.Valid(b) {
					warn(warnInvalidJSON) // as below: what the importer skips
					continue
				}
			}
			pa.line = lineNo
			pa.scan(b, &l, warn)
			continue
		}
		if string(l.typ) != "assistant" {
			continue
		}
		if !l.messageObject {
			warn(warnNoMessage)
			continue
		}
		if hasUsage && !plainJSON(b) && !json.Valid(b) {
			// The scan did not look inside strings: a raw control byte
			// (a NUL) or a bad escape there makes the line invalid JSON,
			// which the importer and ccusage skip. So does the scan, with
			// the importer's warning, or cost bills what no other
			// command sees.
			warn(warnInvalidJSON)
			continue
		}
		if !utf8.Valid(b) {
			warn(warnInvalidUTF8)
		}
		if synthetic(l.model) {
			warn(warnSynthetic)
			continue
		}
		t, dated := parseTime(text(l.timestamp))
		if len(l.sessionID) > 0 && (s.ID == "" || before(t, idTime)) {
			s.ID, s.Parent, s.Compaction = identity(text(l.sessionID), text(l.agentID))
			idTime = t
		}
		if !hasUsage {
			warn(warnNoUsage)
			continue
		}
		bad := !dated && len(l.timestamp) > 0
		switch {
		case bad:
			w.AddPlace(traces.TimePlace(name, lineNo, text(l.timestamp)), warnCallBadTime)
		case !dated:
			warn(warnCallNoTime)
		}
		u := traces.CheckAnthropic(raw, warn)
		// A response's later lines are found by their ids' bytes, without
		// making strings of them (callKey of plain ids is these bytes).
		var key string
		i, seen := 0, false
		plainIDs := len(l.msgID) > 0 && len(l.requestID) > 0 && plain(l.msgID) && plain(l.requestID)
		if plainIDs {
			kb = append(append(append(kb[:0], l.msgID...), 0), l.requestID...)
			i, seen = idx[string(kb)] // the key made below if new
		} else {
			key = callKey(text(l.msgID), text(l.requestID))
			i, seen = idx[key]
			seen = seen && key != ""
		}
		if seen {
			c := &s.Calls[i]
			if traces.MoreComplete(c.Usage, u) {
				// ccusage dates a call by the line whose usage it keeps
				// (tool_heavy.jsonl's streamed output).
				c.Time, c.BadTime = t, bad
			}
			mergeUsage(&c.Usage, u, warn)
			if before(t, c.first) {
				c.first = t
			}
			continue
		}
		var msgID, reqID string
		if plainIDs {
			// The plain ids' key is kb: the ids are its two halves, one
			// string for all three (a call's strings were most of what
			// `cost` allocates).
			key = string(kb)
			msgID, reqID = key[:len(l.msgID)], key[len(l.msgID)+1:]
		} else {
			msgID, reqID = text(l.msgID), text(l.requestID)
		}
		if key != "" {
			idx[key] = len(s.Calls)
		}
		model, ok := models[string(l.model)] // a file has a few models
		if !ok {
			model = text(l.model)
			models[string(l.model)] = model
		}
		s.Calls = append(s.Calls, Call{Time: t, BadTime: bad, Model: model, MessageID: msgID, RequestID: reqID, Usage: u, Line: lineNo, key: key, first: t})
	}
	slices.SortStableFunc(s.Calls, func(a, b Call) int {
		switch {
		case !a.first.Equal(b.first):
			if before(a.first, b.first) {
				return -1
			}
			return 1
		case a.Line != b.Line:
			return cmp.Compare(a.Line, b.Line)
		}
		return 0
	})
	if len(s.Calls) > 0 {
		s.Model = s.Calls[0].Model
		s.Start = s.Calls[0].first
	}
	if s.ID == "" {
		s.ID = strings.TrimSuffix(filepath.Base(name), ".jsonl")
	}
	if records == 0 && s.lines > blanks {
		w.Fail(name, traces.WarnUnreadFile)
	}
	return fileUsage{main: s, agents: pa.agents}, nil
}

// chunkSize is how much of a file the scan reads at a time: small enough
// that a chunk is still in the cache when it is parsed.
const chunkSize = 256 << 10

// lineSource yields the lines of r, read a chunk at a time into buf and
// returned in place (no line is copied); the buffer grows for a longer
// line, up to max bytes, past which the line is dropped as it is read.
type lineSource struct {
	r       io.Reader
	buf     []byte
	max     int
	i, n    int // the unread bytes are buf[i:n]
	scanned int // buf[i:scanned] holds no '\n'
	eof     bool
}

// next returns the next line without its '\n', valid until the next call;
// eof marks a last line with no '\n', long a line over max bytes
// (returned empty); ok is false at the end.
func (ls *lineSource) next() (b []byte, eof, long, ok bool, err error) {
	skipping := false // in a line over the limit, dropping what is read
	for {
		if k := bytes.IndexByte(ls.buf[ls.scanned:ls.n], '\n'); k >= 0 {
			end := ls.scanned + k
			b, ls.i = ls.buf[ls.i:end], end+1
			ls.scanned = ls.i
			if skipping || len(b) > ls.max {
				return nil, false, true, true, nil
			}
			return b, false, false, true, nil
		}
		ls.scanned = ls.n
		if ls.eof {
			if ls.i == ls.n && !skipping {
				return nil, false, false, false, nil
			}
			b, ls.i = ls.buf[ls.i:ls.n], ls.n
			if skipping || len(b) > ls.max {
				return nil, true, true, true, nil
			}
			return b, true, false, true, nil
		}
		if ls.n-ls.i > ls.max {
			skipping, ls.i, ls.n, ls.scanned = true, 0, 0, 0
		}
		// Move the partial line to the front, and grow the buffer when
		// it is all one line.
		if ls.i > 0 {
			ls.n = copy(ls.buf, ls.buf[ls.i:ls.n])
			ls.scanned -= ls.i
			ls.i = 0
		}
		if ls.n == len(ls.buf) {
			grown := make([]byte, max(chunkSize, 2*len(ls.buf)))
			copy(grown, ls.buf[:ls.n])
			ls.buf = grown
		}
		m, err := ls.r.Read(ls.buf[ls.n:])
		ls.n += m
		switch {
		case err == io.EOF:
			ls.eof = true
		case err != nil:
			return nil, false, false, false, err
		}
	}
}

// before orders times with the zero time (no valid timestamp) last.
func before(a, b time.Time) bool {
	switch {
	case a.IsZero():
		return false
	case b.IsZero():
		return true
	}
	return a.Before(b)
}

// readFiles opens and reads files 0..n-1 on at most GOMAXPROCS goroutines,
// taking them in order (nil: 0..n-1). Results and warnings come back in
// file order, so output never depends on scheduling; the first error in
// file order wins.
func readFiles[T any](ctx context.Context, n int, order []int, open func(i int) (io.ReadCloser, error),
	read func(i int, r io.Reader, w *traces.Warnings) (T, error)) ([]T, *traces.Warnings, error) {
	out := make([]T, n)
	ws := make([]traces.Warnings, n)
	errs := make([]error, n)
	one := func(i int) {
		if err := ctx.Err(); err != nil {
			errs[i] = err // Ctrl-C stops a scan of thousands of files promptly
			return
		}
		f, err := open(i)
		if err != nil {
			errs[i] = fmt.Errorf("claudecode: %w", err)
			return
		}
		defer f.Close()
		out[i], errs[i] = read(i, f, &ws[i])
	}
	if order == nil {
		order = make([]int, n)
		for i := range order {
			order[i] = i
		}
	}
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for _, i := range order {
			one(i)
		}
	} else {
		var wg sync.WaitGroup
		next := make(chan int)
		for range workers {
			wg.Go(func() {
				for i := range next {
					one(i)
				}
			})
		}
		for _, i := range order {
			next <- i
		}
		close(next)
		wg.Wait()
	}
	var all traces.Warnings
	for i := range n {
		if errs[i] != nil {
			return nil, nil, errs[i]
		}
		all.Merge(&ws[i])
	}
	return out, &all, nil
}

// synthetic reports whether a model's raw value names Claude Code's own
// messages (syntheticModel), without making a string of it.
func synthetic(raw []byte) bool {
	if plain(raw) {
		return string(raw) == syntheticModel
	}
	return text(raw) == syntheticModel
}
