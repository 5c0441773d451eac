package chatlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/internal/jsonl"
)

// Format is the Session.Format of imported sessions.
const Format = "chatlog"

// Options tune an import.
type Options struct {
	// Pacing times sources that record no times. The zero value means
	// DefaultPacing.
	Pacing Pacing
}

func (o Options) pacing() Pacing {
	if o.Pacing.Step <= 0 {
		return DefaultPacing
	}
	return o.Pacing
}

// Warning reasons of the record level.
const (
	WarnUnknownRecord = "skipped record with neither messages nor trajectory"
	WarnNoUsage       = "kept call without usage (no prompt_tokens)"
	WarnNoResponse    = "kept call whose response is not logged (empty output)"
	WarnNoCreated     = "kept record without created time (timed as the previous one)"
	WarnBadCreated    = "kept record with a created time no call has (before 2000 or from 2100 on: the Unix epoch; timed as the previous one)"
	WarnBadTools      = "ignored tools that are not a valid array"
)

// maxUnix is 9999-12-31T23:59:59Z, the last time the native format writes.
const maxUnix = 253402300799

// Import reads a file, or every *.json and *.jsonl file under a directory in
// lexical path order, and returns the sessions in that order. Bad records
// are counted in the warnings; the error is for unreadable paths and files
// that are one malformed JSON document.
func Import(path string, opt Options) ([]*traces.Session, *traces.Warnings, error) {
	w := &traces.Warnings{}
	files, err := jsonl.Files(path, func(name string) bool {
		return strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".json")
	}, w)
	if err != nil {
		return nil, w, err
	}
	var out []*traces.Session
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, w, err
		}
		ss, err := Read(fh, f, opt, w)
		fh.Close()
		if err != nil {
			return nil, w, err
		}
		out = append(out, ss...)
	}
	return out, w, nil
}

// record is one line (or array element) of a log: a chat-completions
// request with its response, or a trajectory row.
type record struct {
	Messages []Message       `json:"messages"`
	Model    string          `json:"model"`
	Usage    *OpenAIUsage    `json:"usage"`
	Created  *float64        `json:"created"`
	Choices  []choice        `json:"choices"`
	Request  *record         `json:"request"`
	Response *record         `json:"response"`
	ID       string          `json:"id"`
	Traj     json.RawMessage `json:"trajectory"`
	TrajID   string          `json:"trajectory_id"`
	Instance string          `json:"instance_id"`
	Model2   string          `json:"model_name"`
	Tools    json.RawMessage `json:"tools"`
}

type choice struct {
	Message *Message `json:"message"`
}

// Read reads one log from r (name is used in messages): JSON Lines of
// records, or one JSON document holding a record or an array of records.
func Read(r io.Reader, name string, opt Options, w *traces.Warnings) ([]*traces.Session, error) {
	rest, lines, err := jsonl.Sniff(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	im := &importer{file: name, w: w, pacing: opt.pacing(), byKey: map[prefixKey]*reqSession{}, ids: map[string]int{}}
	if lines {
		sc := jsonl.NewScanner(rest, name, w)
		for sc.Scan() {
			var rec record
			if sc.Decode(&rec) {
				im.add(sc.Line(), &rec)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		sc.FailUnread()
	} else if err := im.document(rest); err != nil {
		return nil, err
	}
	return im.finish(), nil
}

// document reads a single JSON value: a record or an array of records.
func (im *importer) document(r io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(r, 4<<30))
	if err != nil {
		return fmt.Errorf("%s: %w", im.file, err)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil
	}
	if data[0] == '[' {
		var recs []json.RawMessage
		if err := json.Unmarshal(data, &recs); err != nil {
			return jsonl.SyntaxError(im.file, data, err)
		}
		for i, raw := range recs {
			var rec record
			if err := json.Unmarshal(raw, &rec); err != nil {
				im.w.Add(im.file, 1, jsonl.WarnInvalidJSON)
				continue
			}
			im.add(i+1, &rec)
		}
		return nil
	}
	var rec record
	if err := json.Unmarshal(data, &rec); err != nil {
		return jsonl.SyntaxError(im.file, data, err)
	}
	im.add(1, &rec)
	return nil
}

type importer struct {
	file     string
	w        *traces.Warnings
	pacing   Pacing
	sessions []*traces.Session
	byKey    map[prefixKey]*reqSession
	ids      map[string]int
	open     []*reqSession // request-log sessions, in order of creation
}

func (im *importer) add(line int, rec *record) {
	if rec.Request != nil {
		req := *rec.Request
		if rec.Response != nil {
			req.Usage, req.Choices = rec.Response.Usage, rec.Response.Choices
			if req.Created == nil {
				req.Created = rec.Response.Created
			}
		}
		rec = &req
	}
	switch {
	case len(rec.Traj) > 0 && string(rec.Traj) != "null":
		im.trajectory(line, rec)
	case rec.Messages != nil:
		im.request(line, rec)
	default:
		im.w.Add(im.file, line, WarnUnknownRecord)
	}
}

// id makes ids unique within one import: the public sets hold many runs of
// one instance.
func (im *importer) id(base string) string {
	im.ids[base]++
	if n := im.ids[base]; n > 1 {
		return base + "#" + strconv.Itoa(n)
	}
	return base
}

func (im *importer) newSession(id, model string) *traces.Session {
	s := &traces.Session{ID: im.id(id), Model: model, Format: Format}
	im.sessions = append(im.sessions, s)
	return s
}

func (im *importer) trajectory(line int, rec *record) {
	var msgs []Message
	if err := json.Unmarshal(unwrapString(rec.Traj), &msgs); err != nil {
		im.w.Add(im.file, line, "skipped trajectory that is not an array of messages")
		return
	}
	id := firstNonEmpty(rec.TrajID, rec.Instance, rec.ID, fmt.Sprintf("%s:%d", filepath.Base(im.file), line))
	s := im.newSession(id, firstNonEmpty(rec.Model2, rec.Model))
	s.Source = traces.SourceBatch
	clk := im.pacing.clock(s.ID)
	t := NewTranscript(s, im.file, im.w)
	for i := range msgs {
		m := &msgs[i]
		if m.Role == "system" && isNull(m.Content) && m.Text == "" {
			continue
		}
		if t.Add(line, clk.cur(), m) >= 0 {
			clk.advance()
		}
	}
	t.Finish()
	s.Floor = append(im.tools(line, rec.Tools), s.Floor...)
	s.Notes = append(s.Notes, im.pacing.Note(), "no recorded usage: the source logs messages only")
}

// tools turns an OpenAI tools array into tool-schema blocks.
func (im *importer) tools(line int, raw json.RawMessage) []traces.Block {
	raw = unwrapString(raw)
	if isNull(raw) {
		return nil
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(raw, &tools); err != nil {
		im.w.Add(im.file, line, WarnBadTools)
		return nil
	}
	out := make([]traces.Block, 0, len(tools))
	for _, tl := range tools {
		var named struct {
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		_ = json.Unmarshal(tl, &named)
		var b bytes.Buffer
		if json.Compact(&b, tl) != nil {
			continue
		}
		out = append(out, traces.Block{Kind: traces.ToolSchema, Name: firstNonEmpty(named.Function.Name, named.Name), Input: b.String()})
	}
	return out
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// Request logs: every record is one model call whose messages repeat the
// conversation so far. A record continues the session whose known messages
// (its last request plus that request's response) are a prefix of its own;
// the messages beyond that prefix are what was new. Records that extend no
// open session start a new one, so a log of interleaved conversations is
// split correctly, and so is a harness that rewrote its history (a
// compaction): that shows as a new session.

type prefixKey struct {
	n int
	h uint64
}

type reqSession struct {
	s    *traces.Session
	t    *Transcript
	keys []prefixKey
	clk  *clock
	last time.Time
	// pending is the index of the last call's assistant event when its
	// response was not logged, to be filled from the next request.
	pending, pendingLine int
}

func msgHash(prev uint64, m *Message) uint64 {
	var b bytes.Buffer
	b.WriteString(strconv.FormatUint(prev, 16))
	b.WriteByte(0)
	b.WriteString(m.Role)
	b.WriteByte(0)
	compactInto(&b, m.Content)
	b.WriteString(m.Text)
	b.WriteByte(0)
	compactInto(&b, unwrapString(m.ToolCalls))
	b.WriteByte(0)
	b.WriteString(m.ToolCallID)
	return traces.HashString(b.String())
}

func compactInto(b *bytes.Buffer, raw json.RawMessage) {
	if isNull(raw) {
		return
	}
	if json.Compact(b, raw) != nil {
		b.Write(raw)
	}
}

func (im *importer) request(line int, rec *record) {
	chain := make([]uint64, len(rec.Messages))
	var h uint64
	for i := range rec.Messages {
		h = msgHash(h, &rec.Messages[i])
		chain[i] = h
	}
	var rs *reqSession
	start := 0
	for n := len(chain); n >= 1 && rs == nil; n-- {
		if c, ok := im.byKey[prefixKey{n, chain[n-1]}]; ok {
			rs, start = c, n
		}
	}
	if rs == nil {
		base := strings.TrimSuffix(filepath.Base(im.file), filepath.Ext(im.file))
		s := im.newSession(fmt.Sprintf("%s-%d", base, len(im.sessions)+1), rec.Model)
		s.Source = traces.SourceAPI
		rs = &reqSession{s: s, t: NewTranscript(s, im.file, im.w), pending: -1}
		im.open = append(im.open, rs)
		if rec.Created == nil {
			rs.clk = im.pacing.clock(s.ID)
			s.Notes = append(s.Notes, im.pacing.Note())
		}
	}
	for _, k := range rs.keys {
		delete(im.byKey, k)
	}
	rs.keys = rs.keys[:0]

	at := rs.last
	switch {
	case rs.clk != nil:
		at = rs.clk.cur()
		rs.clk.advance()
	case rec.Created != nil && *rec.Created >= 0 && *rec.Created <= maxUnix:
		whole, frac := math.Modf(*rec.Created)
		t := time.Unix(int64(whole), int64(frac*1e9)).UTC().Round(time.Millisecond)
		if !traces.PlausibleTime(t) {
			// The epoch (created 0) and the like date no call.
			im.w.AddPlace(traces.TimePlace(im.file, line, strconv.FormatFloat(*rec.Created, 'f', -1, 64)), WarnBadCreated)
			break
		}
		at = t
	default:
		im.w.Add(im.file, line, WarnNoCreated)
	}
	rs.last = at

	newMsgs := rec.Messages[start:]
	if rs.pending >= 0 && len(newMsgs) > 0 && isAssistant(newMsgs[0].Role) {
		// The previous call's response, seen in this request's history.
		rs.s.Events[rs.pending].Blocks = rs.t.AssistantBlocks(line, &newMsgs[0])
		newMsgs = newMsgs[1:]
		rs.pending = -1
	}
	if rs.pending >= 0 {
		im.w.Add(im.file, rs.pendingLine, WarnNoResponse)
		rs.pending = -1
	}
	for i := range newMsgs {
		rs.t.Add(line, at, &newMsgs[i])
	}

	model := firstNonEmpty(rec.Model, rs.s.Model)
	if rs.s.Model == "" {
		rs.s.Model = model
	}
	var resp *Message
	if len(rec.Choices) > 0 {
		resp = rec.Choices[0].Message
	}
	idx := -1
	if resp != nil {
		r := *resp
		if r.Role == "" {
			r.Role = "assistant"
		}
		idx = rs.t.Add(line, at, &r)
	} else {
		idx = len(rs.s.Events)
		rs.s.Events = append(rs.s.Events, traces.Event{Time: rs.t.Clamp(line, at), Kind: traces.Assistant})
		rs.pending, rs.pendingLine = idx, line
	}
	ev := &rs.s.Events[idx]
	ev.Model = model
	if rec.ID != "" {
		ev.RequestID, ev.Line = rec.ID, int32(line)
	}
	if u, ok := rec.Usage.Usage(func(r string) { im.w.Add(im.file, line, r) }); ok {
		ev.Usage = &u
	} else {
		im.w.Add(im.file, line, WarnNoUsage)
	}

	// Register the prefixes the next request may extend.
	n, hh := len(chain), uint64(0)
	if n > 0 {
		hh = chain[n-1]
	}
	if resp != nil {
		r := *resp
		if r.Role == "" {
			r.Role = "assistant"
		}
		rs.keys = append(rs.keys, prefixKey{n + 1, msgHash(hh, &r)})
	}
	if n > 0 {
		rs.keys = append(rs.keys, prefixKey{n, hh})
	}
	for _, k := range rs.keys {
		im.byKey[k] = rs
	}
}

func isAssistant(role string) bool { return role == "assistant" || role == "ai" || role == "model" }

func (im *importer) finish() []*traces.Session {
	for _, rs := range im.open {
		rs.t.Finish()
		if rs.pending >= 0 {
			im.w.Add(im.file, rs.pendingLine, WarnNoResponse)
		}
	}
	return im.sessions
}
