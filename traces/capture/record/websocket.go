package record

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/ctxsim/ctxsim/traces/capture"
)

// Warnings of a WebSocket session the proxy passed through but could not
// record whole (Recorder.Warnings).
const (
	WarnWSNotRecorded = "passed a WebSocket session through without recording it (not a Responses API session, an extension other than permessage-deflate, or frames it could not read)"
	WarnWSOver        = "passed a WebSocket message over --max-body through without recording it"
	WarnWSCut         = "recorded a WebSocket call without its end (the session closed before response.completed)"
	WarnWSOrphan      = "passed a WebSocket event that answers no response.create through without recording it"
)

// A wsTap is the upstream's side of an upgraded connection (httputil's
// backend conn): it passes every byte through unchanged, and reads the
// frames of each direction on the way. OpenAI's Responses API over a
// WebSocket (what Codex uses) sends a call as one text message
// {"type":"response.create", ...the request body} and answers it with
// the events its SSE stream would carry, each a text message, the last
// response.completed (or response.incomplete, response.failed, error);
// each call is written as a line of its own, method WEBSOCKET, its
// request body the response.create message and its response the events
// as an SSE stream (body_raw), which package capture reads as any other
// streamed call.
type wsTap struct {
	conn    io.ReadWriteCloser
	rec     *Recorder
	up      *pair // the upgrade: its URL and headers, and the 101's
	place   string
	n       int // the session's number, in the order they opened
	deflate bool
	// client and server read the frames each side sends; a reader
	// touches only its own (httputil copies each direction on a
	// goroutine of its own), the calls are under mu.
	client, server wsReader
	mu             sync.Mutex
	ended, off     bool
	calls          []*wsCall // sent, not yet answered to their end, oldest first
}

type wsCall struct {
	p *pair
	// kept is the stream up to MaxBody, usage its usage events past that
	// (up to MaxBody too), each whole events.
	kept, usage bytes.Buffer
	over        bool
}

func (t *wsTap) Read(b []byte) (int, error) {
	n, err := t.conn.Read(b)
	if n > 0 {
		t.server.feed(b[:n], t.message)
	}
	return n, err
}

// Write reads the client's frames before they go upstream: a call is
// known before the upstream can answer it.
func (t *wsTap) Write(b []byte) (int, error) {
	t.client.feed(b, t.message)
	return t.conn.Write(b)
}

func (t *wsTap) Close() error { return t.conn.Close() }

// newTap taps the upgraded connection of p (the upstream's 101 in resp)
// when it is a WebSocket whose frames it can read; otherwise the session
// goes through untouched, counted.
func (r *Recorder) newTap(p *pair, resp *http.Response) {
	conn, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		return // httputil answers 502: nothing went through
	}
	r.warnMu.Lock()
	r.sessions++
	n := r.sessions
	r.warnMu.Unlock()
	place := fmt.Sprintf("WebSocket session %d (%s)", n, p.req.URL)
	p.ws = true
	deflate, ok := wsExtensions(resp.Header.Get("Sec-WebSocket-Extensions"))
	if !strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") || !ok || capture.APIOf(p.req.URL) != capture.OpenAIResponses {
		r.warn(place, WarnWSNotRecorded)
		return
	}
	t := &wsTap{conn: conn, rec: r, up: p, place: place, n: n, deflate: deflate}
	t.client = wsReader{tap: t, client: true}
	t.server = wsReader{tap: t}
	resp.Body = t
	r.heldMu.Lock()
	if r.taps == nil {
		r.taps = map[*wsTap]bool{}
	}
	r.taps[t] = true
	r.heldMu.Unlock()
	p.tap = t
}

// wsExtensions reads the extensions the upstream accepted: deflate when
// permessage-deflate is one, ok when no other is (another would change
// the frames in a way the tap cannot read).
func wsExtensions(h string) (deflate, ok bool) {
	for _, e := range strings.Split(h, ",") {
		name, _, _ := strings.Cut(e, ";")
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "":
		case "permessage-deflate":
			deflate = true
		default:
			return false, false
		}
	}
	return deflate, true
}

// end stops recording t (its handler is done): a call still in flight is
// written with what it got and an error.
func (t *wsTap) end(why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return
	}
	t.ended = true
	for _, c := range t.calls {
		t.rec.warn(t.place, WarnWSCut)
		t.close(c, why)
	}
	t.calls = nil
	r := t.rec
	r.heldMu.Lock()
	delete(r.taps, t)
	r.heldMu.Unlock()
}

// stop turns recording off for the rest of t's session (a frame it
// could not read: what follows may be misread too).
func (t *wsTap) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.off && !t.ended {
		t.off = true
		t.rec.warn(t.place, WarnWSNotRecorded)
	}
}

// message takes one whole message of either side (over: it was over
// MaxBody and is not kept).
func (t *wsTap) message(client bool, msg []byte, over bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended || t.off {
		return
	}
	if over {
		t.rec.warn(t.place, WarnWSOver)
		return
	}
	var m struct {
		Type   string `json:"type"`
		Status int    `json:"status"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(msg, &m) != nil {
		t.off = true
		t.rec.warn(t.place, WarnWSNotRecorded)
		return
	}
	r := t.rec
	if client {
		if m.Type != "response.create" {
			return // response.processed and the like: no call
		}
		p := &pair{req: request{Timestamp: stamp(r.o.Now()), Method: "WEBSOCKET", URL: t.up.req.URL, Headers: t.up.req.Headers},
			reqBody: bytes.Clone(msg), sse: true}
		p.resp = &response{StatusCode: http.StatusSwitchingProtocols, Headers: t.up.resp.Headers}
		r.wg.Add(1) // the upgrade's handler holds its own: the count is not 0
		p.done = r.wg.Done
		t.calls = append(t.calls, &wsCall{p: p})
		return
	}
	if len(t.calls) == 0 {
		if m.Type != "codex.rate_limits" {
			r.warn(t.place, WarnWSOrphan)
		}
		return
	}
	c := t.calls[0]
	c.event(m.Type, msg, r.o.MaxBody)
	switch m.Type {
	case "response.completed", "response.incomplete", "response.failed", "error":
		if m.Type == "error" {
			if m.Status != 0 {
				c.p.resp.StatusCode = m.Status
			}
			if m.Error != nil {
				c.p.resp.Error = m.Error.Message
			}
			if c.p.resp.Error == "" {
				c.p.resp.Error = "error event"
			}
		}
		t.calls = t.calls[1:]
		t.close(c, "")
	}
}

// event adds one event to c's stream as SSE, up to max bytes; past that
// only the events that carry usage or an error, as tee keeps a stream.
func (c *wsCall) event(typ string, msg []byte, max int64) {
	if bytes.ContainsAny(msg, "\r\n") {
		var b bytes.Buffer
		if json.Compact(&b, msg) == nil {
			msg = b.Bytes()
		}
	}
	n := int64(len("event: \ndata: \n\n") + len(typ) + len(msg))
	b := &c.kept
	if c.over || int64(b.Len())+n > max {
		c.over, b = true, &c.usage
		if !usageEvent(msg) || int64(b.Len())+n > max {
			return
		}
	}
	fmt.Fprintf(b, "event: %s\ndata: %s\n\n", typ, msg)
}

// close hands c's pair to the writer.
func (t *wsTap) close(c *wsCall, why string) {
	p := c.p
	p.resp.Timestamp = stamp(t.rec.o.Now())
	c.kept.Write(c.usage.Bytes())
	p.respBody, p.resp.Truncated = c.kept.Bytes(), c.over
	if why != "" && p.resp.Error == "" {
		p.resp.Error = why
	}
	t.rec.finish(p)
}

// A wsReader reads the frames of one direction (RFC 6455 section 5) as
// they pass, whatever the chunks: it keeps a frame's header until whole,
// then the payload of data frames (unmasked) up to MaxBody, and hands
// each whole message, inflated when compressed (RFC 7692), to the tap.
// Control frames (ping, pong, close) are passed over.
type wsReader struct {
	tap    *wsTap
	client bool
	broken bool
	hdr    [14]byte
	nhdr   int
	left   uint64 // payload bytes of the frame still to come
	mask   [4]byte
	masked bool
	mpos   int
	ctl    bool
	fin    bool
	// the message being read
	inMsg, compressed, binary, over bool
	msg                             []byte
	// the inflater and its window (the last 32 KB inflated: a compressed
	// message may refer back into the messages before it)
	fr   io.ReadCloser
	dict []byte
}

func (w *wsReader) feed(b []byte, deliver func(client bool, msg []byte, over bool)) {
	for len(b) > 0 && !w.broken {
		if w.nhdr < 2 || w.nhdr < w.hdrLen() {
			w.hdr[w.nhdr] = b[0]
			w.nhdr++
			b = b[1:]
			if w.nhdr >= 2 && w.nhdr == w.hdrLen() && !w.header() {
				w.fail()
				return
			}
			if w.nhdr >= 2 && w.nhdr == w.hdrLen() && w.left == 0 {
				w.frameEnd(deliver)
			}
			continue
		}
		n := min(uint64(len(b)), w.left)
		if !w.ctl && !w.over {
			room := w.tap.rec.o.MaxBody - int64(len(w.msg))
			k := min(int64(n), room)
			start := len(w.msg)
			w.msg = append(w.msg, b[:k]...)
			if w.masked {
				for i := start; i < len(w.msg); i++ {
					w.msg[i] ^= w.mask[(w.mpos+i-start)&3]
				}
			}
			if int64(n) > room {
				w.over, w.msg = true, w.msg[:0]
			}
		}
		w.mpos = (w.mpos + int(n&3)) & 3
		w.left -= n
		b = b[n:]
		if w.left == 0 {
			w.frameEnd(deliver)
		}
	}
}

// hdrLen is the length of the frame header whose first two bytes are in.
func (w *wsReader) hdrLen() int {
	n := 2
	switch w.hdr[1] & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if w.hdr[1]&0x80 != 0 {
		n += 4
	}
	return n
}

// header reads a whole frame header; false for one the tap cannot read.
func (w *wsReader) header() bool {
	h := w.hdr[:w.nhdr]
	w.fin, w.ctl = h[0]&0x80 != 0, h[0]&0x08 != 0
	op := h[0] & 0x0f
	rsv1 := h[0]&0x40 != 0
	if h[0]&0x30 != 0 || (rsv1 && (!w.tap.deflate || w.ctl || op == 0)) {
		return false
	}
	i := 2
	switch l := h[1] & 0x7f; l {
	case 126:
		w.left, i = uint64(h[2])<<8|uint64(h[3]), 4
	case 127:
		w.left, i = 0, 10
		for _, c := range h[2:10] {
			w.left = w.left<<8 | uint64(c)
		}
	default:
		w.left = uint64(l)
	}
	w.masked, w.mpos = h[1]&0x80 != 0, 0
	if w.masked {
		copy(w.mask[:], h[i:i+4])
	}
	switch {
	case w.ctl:
		return op >= 8 && op <= 10 && w.fin && w.left <= 125
	case op == 0:
		return w.inMsg
	case op == 1 || op == 2:
		if w.inMsg {
			return false
		}
		w.inMsg, w.compressed, w.binary, w.over, w.msg = true, rsv1, op == 2, false, w.msg[:0]
		return true
	}
	return false
}

func (w *wsReader) frameEnd(deliver func(client bool, msg []byte, over bool)) {
	w.nhdr = 0
	if w.ctl || !w.fin {
		return
	}
	w.inMsg = false
	msg, over := w.msg, w.over
	if w.compressed && over {
		// Its window is lost, and with it every later message.
		w.fail()
		return
	}
	if w.compressed {
		var err error
		if msg, over, err = w.inflate(msg); err != nil {
			w.fail()
			return
		}
	}
	if w.binary {
		w.fail() // the Responses API sends text
		return
	}
	deliver(w.client, msg, over)
	if cap(w.msg) > 1<<20 {
		w.msg = nil // a large message's buffer is not kept for the session
	}
}

func (w *wsReader) fail() {
	w.broken = true
	w.msg = nil
	w.tap.stop()
}

// deflateEnd ends a message's compressed data: the sync flush RFC 7692
// strips, then an empty final block, so the inflater stops cleanly.
var deflateEnd = []byte{0, 0, 0xff, 0xff, 1, 0, 0, 0xff, 0xff}

// inflate inflates one message, its window the messages before it (the
// context takeover; a window of a peer that takes none is never referred
// to). It keeps up to MaxBody of it (over: the rest was not kept), and
// the last 32 KB inflated, the next message's window.
func (w *wsReader) inflate(msg []byte) ([]byte, bool, error) {
	src := io.MultiReader(bytes.NewReader(msg), bytes.NewReader(deflateEnd))
	if w.fr == nil {
		w.fr = flate.NewReaderDict(src, w.dict)
	} else if err := w.fr.(flate.Resetter).Reset(src, w.dict); err != nil {
		return nil, false, err
	}
	k := &inflated{max: w.tap.rec.o.MaxBody, win: w.dict}
	if _, err := io.Copy(k, w.fr); err != nil {
		return nil, false, err
	}
	w.dict = k.win
	return k.out, k.over, nil
}

// inflated keeps what an inflater writes up to max, and its last 32 KB.
type inflated struct {
	max  int64
	out  []byte
	over bool
	win  []byte
}

func (k *inflated) Write(b []byte) (int, error) {
	if room := k.max - int64(len(k.out)); !k.over && int64(len(b)) <= room {
		k.out = append(k.out, b...)
	} else {
		k.over, k.out = true, nil
	}
	const window = 32 << 10
	if len(b) >= window {
		k.win = append(k.win[:0], b[len(b)-window:]...)
	} else {
		drop := max(0, len(k.win)+len(b)-window)
		k.win = append(k.win[:copy(k.win, k.win[drop:])], b...)
	}
	return len(b), nil
}
