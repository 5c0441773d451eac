package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/internal/jsonl"
)

// Warnings of what a capture holds that is not a billed model call.
const (
	WarnNotACall   = "skipped request that is not a model call (model list, count_tokens, ...)"
	WarnBadBody    = "skipped pair whose request body is not a JSON object"
	WarnNoUsage    = "kept call whose response carries no usage (not billed: an error or a cut stream)"
	WarnBadPair    = "skipped pair without a request"
	WarnBadTime    = "kept pair with an unreadable timestamp (time of the pair before it)"
	WarnNoTime     = "kept call without a timestamp (the time of the first call that has one)"
	WarnNoPrevious = "kept call whose previous_response_id names no captured call (its input is all the request shows)"
	WarnCut        = "kept call whose request the capture tool cut short (claude-tap's \"…〔已截断\" marks): the cut text is not known, so the call is sized by its bill and a change inside the cut is not seen"
)

// A pair is one request/response of either input format.
type pair struct {
	line                int
	method, url         string
	status              int
	reqTime, respTime   time.Time
	reqHeaders          map[string]string
	respHeaders         map[string]string
	reqBody, respBody   json.RawMessage
	respRaw             string // SSE text (claude-trace body_raw)
	reqTimeBad, hasResp bool
}

// rawPair is claude-trace's RawPair line.
type rawPair struct {
	Request *struct {
		Timestamp json.RawMessage   `json:"timestamp"`
		Method    string            `json:"method"`
		URL       string            `json:"url"`
		Headers   map[string]string `json:"headers"`
		Body      json.RawMessage   `json:"body"`
	} `json:"request"`
	Response *struct {
		Timestamp  json.RawMessage   `json:"timestamp"`
		StatusCode int               `json:"status_code"`
		Headers    map[string]string `json:"headers"`
		Body       json.RawMessage   `json:"body"`
		BodyRaw    string            `json:"body_raw"`
	} `json:"response"`
}

// tapPacket is one packet of a claude-tap trace.
type tapPacket struct {
	Method     string `json:"method"`
	Path       string `json:"path"`
	HTTPStatus int    `json:"http_status"`
	Request    struct {
		Headers map[string]string `json:"headers"`
		Body    json.RawMessage   `json:"body"`
	} `json:"request"`
	Response struct {
		Status  int               `json:"status"`
		Headers map[string]string `json:"headers"`
		Body    json.RawMessage   `json:"body"`
	} `json:"response"`
}

// Read reads the calls of one capture file (a claude-tap document or
// RawPair JSONL), in file order. Bad input is a *traces.SyntaxError
// (file:line) or a counted warning in w.
func Read(r io.Reader, name string, w *traces.Warnings) ([]*Call, error) {
	rest, lines, err := jsonl.Sniff(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	br := bufio.NewReaderSize(rest, traces.HeadSize)
	head, _ := br.Peek(traces.HeadSize)
	if lines && isTap(head) {
		lines = false // a claude-tap trace on one line
	}
	rest = br
	var pairs []pair
	var otlp []*Call
	if !lines && isOTLP(head) {
		data, err := traces.ReadDocument(rest, MaxDocument)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		cs, err := otlpCalls(data, name, 1, w)
		if err != nil {
			return nil, err
		}
		return fillTimes(cs, name, w), nil
	}
	if lines {
		sc := jsonl.NewScanner(rest, name, w)
		for sc.Scan() {
			if isOTLP(sc.Bytes()) {
				// An OTLP file exporter's line: one request of spans.
				cs, err := otlpCalls(sc.Bytes(), name, sc.Line(), w)
				if err != nil {
					return nil, err
				}
				otlp = append(otlp, cs...)
				continue
			}
			var rp rawPair
			if !sc.Decode(&rp) {
				continue
			}
			if rp.Request == nil {
				if len(pairs) == 0 && sc.Line() == 1 {
					return nil, &NotCaptureError{traces.SyntaxError{File: name, Line: 1, Msg: "not a capture: want claude-trace JSONL ({request, response} lines) or a claude-tap trace"}}
				}
				sc.Warn(WarnBadPair)
				continue
			}
			p := pair{line: sc.Line(), method: rp.Request.Method, url: rp.Request.URL,
				reqHeaders: rp.Request.Headers, reqBody: rp.Request.Body}
			p.reqTime, p.reqTimeBad = stamp(rp.Request.Timestamp)
			if rp.Response != nil {
				p.hasResp = true
				p.status, p.respHeaders, p.respBody, p.respRaw = rp.Response.StatusCode, rp.Response.Headers, rp.Response.Body, rp.Response.BodyRaw
				p.respTime, _ = stamp(rp.Response.Timestamp)
			}
			pairs = append(pairs, p)
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	} else if pairs, err = tapDocument(rest, name); err != nil {
		return nil, err
	}
	return append(parsePairs(pairs, name, w), fillTimes(otlp, name, w)...), nil
}

// MaxDocument bounds a capture read whole (a claude-tap trace or a HAR
// archive; RawPair JSONL is read line by line): the shared captures are
// 0.1 to 2.3 MB.
const MaxDocument = 1 << 30

// tapDocument reads a claude-tap trace or a HAR archive, each packet or
// entry at the line it starts.
func tapDocument(r io.Reader, name string) ([]pair, error) {
	data, err := traces.ReadDocument(r, MaxDocument)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	fail := func(err error) ([]pair, error) { return nil, traces.JSONError(name, data, err) }
	if t, err := dec.Token(); err != nil {
		return fail(err)
	} else if t != json.Delim('{') {
		return nil, &NotCaptureError{traces.SyntaxError{File: name, Line: 1, Msg: "not a capture: want claude-trace JSONL, a claude-tap trace {session, packets} or a HAR archive {log: {entries}}"}}
	}
	var out []pair
	found := false
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		if k == "log" {
			// A HAR 1.2 archive: {"log":{..., "entries":[...]}}.
			off := dec.InputOffset()
			off += int64(len(data[off:]) - len(bytes.TrimLeft(data[off:], ": \t\r\n")))
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return fail(err)
			}
			ps, err := harPairs(raw, traces.LineAt(data, off), name)
			if err != nil {
				return nil, err
			}
			out, found = append(out, ps...), true
			continue
		}
		if k != "packets" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(err)
			}
			continue
		}
		found = true
		if t, err := dec.Token(); err != nil {
			return fail(err)
		} else if t != json.Delim('[') {
			return nil, &traces.SyntaxError{File: name, Line: traces.LineAt(data, dec.InputOffset()), Msg: "packets is not an array"}
		}
		for dec.More() {
			off := dec.InputOffset()
			var tp tapPacket
			if err := dec.Decode(&tp); err != nil {
				return fail(err)
			}
			// The offset is before the separator: the packet starts after it.
			line := traces.LineAt(data, off+int64(len(data[off:])-len(bytes.TrimLeft(data[off:], ", \t\r\n"))))
			st := tp.Response.Status
			if st == 0 {
				st = tp.HTTPStatus
			}
			p := pair{line: line, method: tp.Method, url: tp.Path, status: st, hasResp: true,
				reqHeaders: tp.Request.Headers, reqBody: tp.Request.Body,
				respHeaders: tp.Response.Headers, respBody: tp.Response.Body}
			if d := header(tp.Response.Headers, "Date"); d != "" {
				if t, err := http.ParseTime(d); err == nil {
					p.reqTime = t.UTC()
				} else {
					p.reqTimeBad = true
				}
			}
			out = append(out, p)
		}
		if _, err := dec.Token(); err != nil {
			return fail(err)
		}
	}
	if !found {
		return nil, &NotCaptureError{traces.SyntaxError{File: name, Line: 1, Msg: "not a capture: a JSON document without packets or log.entries"}}
	}
	return out, nil
}

// A NotCaptureError is a well-formed JSON document that is not a capture
// (a tree of captures may hold other JSON files: they are skipped).
type NotCaptureError struct{ traces.SyntaxError }

// WarnNotCapture is the warning for a file of a tree that is not a capture.
const WarnNotCapture = "skipped JSON file that is not a capture"

// stamp reads a timestamp: RFC 3339 text, or Unix milliseconds (what
// claude-trace writes).
func stamp(raw json.RawMessage) (time.Time, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}, false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		for _, l := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
			if t, err := time.Parse(l, s); err == nil {
				return t.UTC(), false
			}
		}
		return time.Time{}, true
	}
	var f float64
	if json.Unmarshal(raw, &f) == nil && f > 0 && f < 1e15 {
		if f < 1e11 { // seconds
			return time.UnixMilli(int64(f * 1000)).UTC(), false
		}
		return time.UnixMilli(int64(f)).UTC(), false
	}
	return time.Time{}, true
}

// header is h's value for name, whatever its case.
func header(h map[string]string, name string) string {
	if v, ok := h[name]; ok {
		return v
	}
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// APIOf is the API a request URL or path names (Anthropic,
// OpenAIResponses, OpenAIChat), "" for anything else.
func APIOf(url string) string {
	p := url
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	p = strings.TrimSuffix(p, "/")
	switch {
	case strings.HasSuffix(p, "/v1/messages") || p == "/messages":
		return Anthropic
	case strings.HasSuffix(p, "/responses"):
		return OpenAIResponses
	case strings.HasSuffix(p, "/chat/completions"):
		return OpenAIChat
	}
	return ""
}

// parsePairs turns pairs into calls, in order, and gives each call's time
// (a pair without one takes the time of the pair before it).
func parsePairs(pairs []pair, name string, w *traces.Warnings) []*Call {
	var out []*Call
	var last time.Time
	for i := range pairs {
		p := &pairs[i]
		if p.reqTimeBad {
			w.Add(name, p.line, WarnBadTime)
		}
		api := APIOf(p.url)
		if api == "" || (p.method != "" && p.method != "POST" && p.method != "WEBSOCKET") {
			w.Add(name, p.line, WarnNotACall)
			continue
		}
		body := bytes.TrimSpace(p.reqBody)
		if len(body) > 0 && body[0] == '"' {
			// A body kept as a JSON string.
			var s string
			if json.Unmarshal(body, &s) == nil {
				body = []byte(s)
			}
		}
		if len(body) == 0 || body[0] != '{' {
			w.Add(name, p.line, WarnBadBody)
			continue
		}
		c := &Call{File: name, Line: p.line, Time: p.reqTime, API: api, Status: p.status}
		if c.Key = header(p.reqHeaders, "X-Claude-Code-Session-Id"); c.Key == "" {
			c.Key = header(p.reqHeaders, "Session_id")
		}
		var err error
		switch api {
		case Anthropic:
			err = c.anthropicRequest(body)
		default:
			err = c.openAIRequest(body)
		}
		if err != nil {
			w.Add(name, p.line, WarnBadBody)
			continue
		}
		if c.Cut = cut(body); c.Cut {
			w.Add(name, p.line, WarnCut)
		}
		if p.hasResp {
			c.response(p, w)
		}
		if c.Time.IsZero() {
			c.Time = c.created
		}
		if c.Time.IsZero() {
			c.Time = last
		}
		last = c.Time
		if c.Usage == nil && c.Error == "" {
			w.Add(name, p.line, WarnNoUsage)
		}
		out = append(out, c)
	}
	return fillTimes(out, name, w)
}

// cutMark is claude-tap's mark at the end of a string it shortened
// ("…〔已截断,原长 1729 字符〕", "…[已截断, 原 1,973,608 字符(多为
// base64/大块)]": "cut, N characters originally"), as written or as JSON
// escapes.
var cutMark = regexp.MustCompile(`(?i)(…|\\u2026)(〔|\[|\\u3014)(已截断|\\u5df2\\u622a\\u65ad)`)

// cut reports whether a request body holds a string the capture tool
// shortened: the request as sent is not in the file.
func cut(body []byte) bool {
	if !bytes.Contains(body, []byte("已截断")) && !bytes.Contains(body, []byte(`\u5df2`)) && !bytes.Contains(body, []byte(`\u5DF2`)) {
		return false // the common case: no scan
	}
	return cutMark.Match(body)
}

// fillTimes gives the leading calls without a time the first known one.
func fillTimes(out []*Call, name string, w *traces.Warnings) []*Call {
	var first time.Time
	for _, c := range out {
		if !c.Time.IsZero() {
			first = c.Time
			break
		}
	}
	for _, c := range out {
		if !c.Time.IsZero() {
			break
		}
		w.Add(name, c.Line, WarnNoTime)
		c.Time = first
	}
	return out
}

// response reads the response of p into c: a JSON body, a JSON string
// holding SSE, or claude-trace's body_raw.
func (c *Call) response(p *pair, w *traces.Warnings) {
	body := bytes.TrimSpace(p.respBody)
	raw := p.respRaw
	if len(body) > 0 && body[0] == '"' {
		var s string
		if json.Unmarshal(body, &s) == nil {
			if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") {
				body = []byte(t)
			} else {
				body, raw = nil, s
			}
		}
	}
	warn := func(r string) { w.Add(c.File, c.Line, r) }
	switch {
	case len(body) > 0 && body[0] == '{':
		c.responseJSON(body, warn)
	case raw != "":
		c.responseSSE(raw, warn)
	}
}

func (c *Call) responseJSON(body []byte, warn func(string)) {
	switch c.API {
	case Anthropic:
		c.anthropicResponse(body, warn)
	case OpenAIResponses:
		c.responsesResponse(body, warn)
	default:
		c.chatResponse(body, warn)
	}
}

// responseSSE reassembles a streamed response from its events.
func (c *Call) responseSSE(raw string, warn func(string)) {
	switch c.API {
	case Anthropic:
		c.anthropicSSE(raw, warn)
	case OpenAIResponses:
		for _, ev := range sseEvents(raw) {
			var e struct {
				Type     string          `json:"type"`
				Response json.RawMessage `json:"response"`
			}
			if json.Unmarshal([]byte(ev), &e) == nil && (e.Type == "response.completed" || e.Type == "response.incomplete" || e.Type == "response.failed") {
				c.responsesResponse(e.Response, warn)
			}
		}
	default:
		c.chatSSE(raw, warn)
	}
}

// sseEvents are the data payloads of an SSE stream, in order (data lines
// of one event joined by newlines; "[DONE]" left out).
func sseEvents(raw string) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			if d := strings.Join(cur, "\n"); d != "[DONE]" {
				out = append(out, d)
			}
			cur = cur[:0]
		}
	}
	for _, l := range strings.Split(strings.ReplaceAll(raw, "\r\n", "\n"), "\n") {
		switch {
		case l == "":
			flush()
		case strings.HasPrefix(l, "data:"):
			cur = append(cur, strings.TrimPrefix(strings.TrimPrefix(l, "data:"), " "))
		}
	}
	flush()
	return out
}
