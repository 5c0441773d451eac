package record

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxsim/ctxsim/traces"
)

// DefaultMaxBody is how much of one body a pair keeps by default.
const DefaultMaxBody = 64 << 20

// Redacted replaces every secret the proxy writes.
const Redacted = "[REDACTED]"

// Options configure a Recorder.
type Options struct {
	// Anthropic and OpenAI are the upstreams: a request whose path is an
	// Anthropic one (/v1/messages...) goes to Anthropic, any other to
	// OpenAI. Defaults: https://api.anthropic.com, https://api.openai.com.
	Anthropic, OpenAI *url.URL
	// Out receives the lines, one Write each.
	Out io.Writer
	// MaxBody bounds what one body keeps (DefaultMaxBody when 0).
	MaxBody int64
	// Now stamps requests and responses; required (the command passes
	// time.Now, tests a fake clock).
	Now func() time.Time
	// Transport sends upstream (http.DefaultTransport when nil).
	Transport http.RoundTripper
}

// A Recorder is an http.Handler that forwards and records. A finished
// pair is queued to one writer goroutine, which encodes its line (the
// bodies compacted, the stream made a string) and writes it, in the order
// the pairs finished: the request waits for none of that (BenchmarkRecord).
type Recorder struct {
	o     Options
	proxy *httputil.ReverseProxy
	mu    sync.Mutex // guards Out, err, pairs and line
	err   error
	line  []byte         // the line buffer (write)
	wg    sync.WaitGroup // pairs not yet written
	pairs int
	// queue holds finished pairs for the writer (a few: a pair holds its
	// bodies); closed, once set, makes finish write on its own goroutine.
	queue   chan *pair
	closed  atomic.Bool
	stop    sync.Once
	stopped chan struct{}
	// held are the pairs whose connection has not yet sent the whole
	// response (ConnState), under heldMu with released (Close).
	heldMu   sync.Mutex
	held     map[net.Conn][]*pair
	released bool
	// heldN numbers the pairs as they are held: Close releases those
	// still held in that order, not in the map's.
	heldN uint64
	// taps are the WebSocket sessions being recorded, under heldMu.
	taps map[*wsTap]bool
	// warns counts what went through unrecorded; sessions numbers the
	// WebSocket sessions (the warnings' places). Under warnMu.
	warnMu   sync.Mutex
	warns    traces.Warnings
	sessions int
}

// queued is how many finished pairs wait for the writer before finish
// waits in turn.
const queued = 4

// New returns a Recorder.
func New(o Options) (*Recorder, error) {
	if o.Out == nil || o.Now == nil {
		return nil, errors.New("record: Options.Out and Options.Now are required")
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	var err error
	if o.Anthropic == nil {
		o.Anthropic, err = url.Parse("https://api.anthropic.com")
	}
	if o.OpenAI == nil && err == nil {
		o.OpenAI, err = url.Parse("https://api.openai.com")
	}
	if err != nil {
		return nil, err
	}
	r := &Recorder{o: o, queue: make(chan *pair, queued), stopped: make(chan struct{})}
	go func() {
		defer close(r.stopped)
		for p := range r.queue {
			r.write(p)
		}
	}()
	r.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			up := r.o.OpenAI
			if isAnthropic(pr.In.URL.Path) {
				up = r.o.Anthropic
			}
			pr.SetURL(up)
			pr.Out.Host = up.Host
		},
		Transport:     o.Transport,
		FlushInterval: -1, // stream SSE as it arrives
		ModifyResponse: func(resp *http.Response) error {
			p := pairOf(resp.Request.Context())
			if p == nil {
				return nil
			}
			p.resp = &response{Timestamp: stamp(r.o.Now()), StatusCode: resp.StatusCode, Headers: redact(resp.Header)}
			if resp.StatusCode == http.StatusSwitchingProtocols {
				// A WebSocket: its body is the upstream's side of the
				// connection, which httputil writes to as well.
				r.newTap(p, resp)
				return nil
			}
			sse := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
			resp.Body = &tee{r: resp.Body, p: p, rec: r, sse: sse}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			if p := pairOf(req.Context()); p != nil {
				p.resp = &response{Timestamp: stamp(r.o.Now()), StatusCode: http.StatusBadGateway, Error: err.Error()}
				p.failed, p.ws = true, false
			}
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	return r, nil
}

func isAnthropic(path string) bool {
	return strings.HasPrefix(path, "/v1/messages") || strings.HasPrefix(path, "/v1/complete")
}

type ctxKey struct{}

func pairOf(ctx context.Context) *pair {
	p, _ := ctx.Value(ctxKey{}).(*pair)
	return p
}

// ServeHTTP implements http.Handler. The request body goes upstream as the
// transport reads it, through a reqTee that keeps up to MaxBody of it: the
// upstream gets the first byte when the harness sends it, not after the
// proxy has read the whole body (BenchmarkRecord).
func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.wg.Add(1)
	p := &pair{req: request{Timestamp: stamp(r.o.Now()), Method: req.Method, URL: redactURL(req.URL), Headers: redact(req.Header)}}
	p.done = r.wg.Done
	if req.Body != nil && req.Body != http.NoBody {
		p.body = &reqTee{r: req.Body, max: r.o.MaxBody, buf: getBuf(min(max(req.ContentLength, 0), r.o.MaxBody))}
		req.Body = p.body
	}
	// The pair goes to the writer only when the proxy is done, the
	// response delivered (or abandoned: the client went away, or the
	// upstream's body failed and the proxy aborts the handler with a
	// panic), so that none of the line's work (the body's check, its copy
	// into the line, the write) competes with the request it records. The
	// body of a request that never went upstream is read to its bound
	// first: it is still recorded whole.
	defer func() {
		if p.tap != nil {
			p.tap.end("the WebSocket session ended before response.completed")
		}
		if p.ws {
			// An upgrade's own pair is no call: its calls are written.
			p.done()
			return
		}
		if p.failed && p.body != nil {
			p.body.drain()
		}
		r.hold(req, p)
	}()
	r.proxy.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), ctxKey{}, p)))
}

type connKey struct{}

// ConnContext and ConnState, set on the http.Server that serves r
// (Session.Serve sets them), keep each pair from the writer until its
// connection has sent the whole response: the server flushes the last
// bytes (and a chunked answer's terminator) after the handler returns, and
// the line's work would otherwise compete with them for the cores. A
// server without them hands each pair over when its handler returns.
func (r *Recorder) ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// ConnState hands the pairs held for c to the writer once c is idle (its
// response sent), closed or hijacked.
func (r *Recorder) ConnState(c net.Conn, s http.ConnState) {
	if s == http.StateNew || s == http.StateActive {
		return
	}
	r.heldMu.Lock()
	ps := r.held[c]
	delete(r.held, c)
	r.heldMu.Unlock()
	for _, p := range ps {
		r.finish(p)
	}
}

// hold keeps p until ConnState says its connection is done, or hands it
// to the writer now: when no ConnState hook can release it (no
// connection in the context, an upgrade, whose connection the proxy
// takes over, or a Recorder closing).
func (r *Recorder) hold(req *http.Request, p *pair) {
	c, ok := req.Context().Value(connKey{}).(net.Conn)
	if ok && req.Header.Get("Upgrade") == "" {
		r.heldMu.Lock()
		if !r.released {
			if r.held == nil {
				r.held = map[net.Conn][]*pair{}
			}
			r.heldN++
			p.heldAt = r.heldN
			r.held[c] = append(r.held[c], p)
			r.heldMu.Unlock()
			return
		}
		r.heldMu.Unlock()
	}
	r.finish(p)
}

// reqTee passes a request body to the transport and keeps up to max
// bytes of it. The transport may still be sending it when the response
// ends (an upstream that answered early), so the kept bytes are guarded
// and frozen when the pair is finished. Close leaves the client's body
// open: the server closes it when the handler returns, and a request the
// upstream never read (it could not be reached) is read to its bound then.
type reqTee struct {
	r      io.ReadCloser
	max    int64
	mu     sync.Mutex
	buf    []byte
	over   bool // more than max was sent
	eof    bool // the body was read to its end
	err    error
	frozen bool
}

func (t *reqTee) Read(b []byte) (int, error) {
	n, err := t.r.Read(b)
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.frozen {
		if n > 0 {
			room := t.max - int64(len(t.buf))
			if room > 0 {
				t.buf = append(t.buf, b[:min(int64(n), room)]...)
			}
			if int64(n) > room {
				t.over = true
			}
		}
		if errors.Is(err, io.EOF) {
			t.eof = true
		} else if err != nil && t.err == nil {
			t.err = err
		}
	}
	return n, err
}

func (t *reqTee) Close() error { return nil }

// drain reads what the transport left of the body, up to the bound: the
// body of a request that never went upstream is still recorded.
func (t *reqTee) drain() {
	t.mu.Lock()
	done := t.frozen || t.eof || t.over || t.err != nil
	t.mu.Unlock()
	if !done {
		_, _ = io.Copy(io.Discard, io.LimitReader(t, t.max+1))
	}
}

// kept freezes t and returns what it kept, whether that is less than the
// body (truncated: over the bound, or not sent to its end), and the error
// reading it.
func (t *reqTee) kept() (b []byte, truncated bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.frozen = true
	return t.buf, t.over || !t.eof, t.err
}

// bodyJSON is a body as the line holds it: the JSON itself when it is
// JSON (compacted when it spans lines: a newline in JSON is whitespace),
// else a JSON string.
func bodyJSON(b []byte, truncated bool) json.RawMessage {
	if !truncated && validJSON(b) {
		if bytes.IndexByte(b, '\n') < 0 && bytes.IndexByte(b, '\r') < 0 {
			return b
		}
		var buf bytes.Buffer
		buf.Grow(len(b))
		if json.Compact(&buf, b) == nil {
			return buf.Bytes()
		}
	}
	s, _ := json.Marshal(string(b))
	return s
}

// Close waits for the pairs in flight to be written, stops the writer,
// and returns the first write error. WebSocket sessions still open are
// closed, their calls in flight written with what they got. A pair that finishes after Close
// (a request served after it) is written by its own goroutine.
func (r *Recorder) Close() error {
	r.heldMu.Lock()
	r.released = true
	held := r.held
	r.held = nil
	taps := r.taps
	r.taps = nil
	r.heldMu.Unlock()
	var rest []*pair
	for _, ps := range held {
		rest = append(rest, ps...)
	}
	slices.SortFunc(rest, func(a, b *pair) int { return cmp.Compare(a.heldAt, b.heldAt) })
	for _, p := range rest {
		r.finish(p)
	}
	// A WebSocket session open still (a client that stays connected)
	// ends here, its call in flight written with what it got.
	open := make([]*wsTap, 0, len(taps))
	for t := range taps {
		open = append(open, t)
	}
	slices.SortFunc(open, func(a, b *wsTap) int { return a.n - b.n })
	for _, t := range open {
		t.end("the recording stopped before response.completed")
		t.conn.Close()
	}
	// The pairs released above went to the writer's queue, after those
	// already in it: the file keeps the order they finished in.
	r.closed.Store(true)
	r.wg.Wait()
	r.stop.Do(func() { close(r.queue) })
	<-r.stopped
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Warnings counts what the proxy passed through without recording it
// (WebSocket sessions or messages it could not read).
func (r *Recorder) Warnings() *traces.Warnings {
	r.warnMu.Lock()
	defer r.warnMu.Unlock()
	w := &traces.Warnings{}
	w.Merge(&r.warns)
	return w
}

func (r *Recorder) warn(place, reason string) {
	r.warnMu.Lock()
	r.warns.AddPlace(place, reason)
	r.warnMu.Unlock()
}

// Pairs is how many pairs were written.
func (r *Recorder) Pairs() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pairs
}

// request and response are a line's halves but for their bodies, which
// the line adds already compacted (line): encoding/json would check and
// compact a json.RawMessage again.
type request struct {
	Timestamp float64           `json:"timestamp"`
	Method    string            `json:"method"`
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers"`
	Truncated bool              `json:"body_truncated,omitempty"`
}

type response struct {
	Timestamp  float64           `json:"timestamp"`
	StatusCode int               `json:"status_code"`
	Headers    map[string]string `json:"headers,omitempty"`
	BodyRaw    *string           `json:"body_raw,omitempty"`
	Truncated  bool              `json:"body_truncated,omitempty"`
	Error      string            `json:"error,omitempty"`
}

type pair struct {
	once sync.Once
	done func()
	req  request
	resp *response
	// body keeps the request body as it goes upstream.
	body *reqTee
	// reqBody and respBody are the bodies as kept; sse says respBody is
	// an event stream (body_raw).
	reqBody, respBody []byte
	sse               bool
	// failed says the upstream was not reached (ErrorHandler).
	failed bool
	// ws says p is a WebSocket upgrade, tap what records its calls.
	ws  bool
	tap *wsTap
	// heldAt is p's number among the pairs held (Recorder.heldN).
	heldAt uint64
}

// finish hands p, once, to the writer, with the request body as kept so
// far (frozen: a transport still sending it changes nothing the line
// holds).
func (r *Recorder) finish(p *pair) {
	p.once.Do(func() {
		if p.body != nil {
			var err error
			p.reqBody, p.req.Truncated, err = p.body.kept()
			if err != nil && p.resp != nil && p.resp.Error == "" {
				p.resp.Error = "reading the request: " + err.Error()
			}
		}
		if r.closed.Load() {
			r.write(p)
			return
		}
		r.queue <- p
	})
}

// write writes p as one line, built in the recorder's line buffer (one
// pair at a time: a line holds whole bodies, so a buffer per line would
// allocate and copy each again), then returns p's request body buffer.
func (r *Recorder) write(p *pair) {
	defer p.done()
	r.mu.Lock()
	defer r.mu.Unlock()
	line, err := p.appendLine(r.line[:0])
	if err == nil {
		_, err = r.o.Out.Write(line)
	}
	if cap(line) <= maxPooled {
		r.line = line
	} else {
		r.line = nil
	}
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("record: writing a pair: %w", err)
	}
	if err == nil {
		r.pairs++
	}
	if p.body != nil {
		putBuf(p.reqBody)
		p.reqBody = nil
	}
}

// appendLine appends p's line to dst:
// {"request":{...,"body":...},"response":{...}}.
func (p *pair) appendLine(dst []byte) ([]byte, error) {
	req, err := json.Marshal(p.req)
	if err != nil {
		return nil, err
	}
	line := append(dst, `{"request":`...)
	line = appendBody(line, req, p.reqBody, p.reqBody != nil, p.req.Truncated)
	if p.resp != nil {
		if p.sse {
			s := string(bytes.ToValidUTF8(p.respBody, []byte("\uFFFD")))
			p.resp.BodyRaw = &s
		}
		resp, err := json.Marshal(p.resp)
		if err != nil {
			return nil, err
		}
		line = append(line, `,"response":`...)
		line = appendBody(line, resp, p.respBody, !p.sse && len(p.respBody) > 0, p.resp.Truncated)
	}
	return append(line, "}\n"...), nil
}

// appendBody appends the encoded object obj to dst, with "body":body
// added when with is set.
func appendBody(dst, obj, body []byte, with, truncated bool) []byte {
	if !with {
		return append(dst, obj...)
	}
	dst = append(dst, obj[:len(obj)-1]...)
	dst = append(dst, `,"body":`...)
	return append(append(dst, bodyJSON(body, truncated)...), '}')
}

// Request body buffers are reused across requests (a request of a long
// session is a megabyte, which a fresh buffer would zero and the
// collector reclaim each time); one over maxPooled is left to the
// collector.
const maxPooled = 16 << 20

var bufs sync.Pool

func getBuf(n int64) []byte {
	if b, ok := bufs.Get().(*[]byte); ok && int64(cap(*b)) >= n {
		return (*b)[:0]
	}
	return make([]byte, 0, n)
}

func putBuf(b []byte) {
	if cap(b) > 0 && cap(b) <= maxPooled {
		bufs.Put(&b)
	}
}

// stamp is t as claude-trace writes timestamps: Unix seconds, to the
// millisecond.
func stamp(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

// secret reports whether a header or parameter name carries a credential.
func secret(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"key", "token", "secret", "auth", "cookie", "signature", "account"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// redact is h as claude-trace writes headers (one string each), secrets
// replaced.
func redact(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, vs := range h {
		if secret(k) {
			out[k] = Redacted
			continue
		}
		out[k] = strings.Join(vs, ", ")
	}
	return out
}

func redactURL(u *url.URL) string {
	c := *u
	q := c.Query()
	changed := false
	for k := range q {
		if secret(k) {
			q[k] = []string{Redacted}
			changed = true
		}
	}
	if changed {
		c.RawQuery = q.Encode()
	}
	c.User = nil
	return c.RequestURI()
}

// tee passes a response body to the client and keeps what the pair may
// keep of it; at its end (EOF, an error, or Close) the pair's response is
// complete, and ServeHTTP hands it to the writer once the client has it.
type tee struct {
	r    io.ReadCloser
	p    *pair
	rec  *Recorder
	sse  bool
	kept bytes.Buffer
	over bool
	// line and usage keep, past MaxBody, the stream's usage events.
	line  []byte
	usage bytes.Buffer
	ended bool
}

func (t *tee) Read(b []byte) (int, error) {
	n, err := t.r.Read(b)
	if n > 0 {
		t.keep(b[:n])
	}
	if err != nil {
		t.end(err)
	}
	return n, err
}

func (t *tee) Close() error {
	err := t.r.Close()
	t.end(nil)
	return err
}

func (t *tee) keep(b []byte) {
	room := t.rec.o.MaxBody - int64(t.kept.Len())
	if room > 0 && !t.over {
		t.kept.Write(b[:min(int64(len(b)), room)])
	}
	if int64(len(b)) > room {
		t.over = true
	}
	if t.over && t.sse {
		t.scan(b[max(0, room):])
	}
}

// scan keeps, from the part of a stream past MaxBody, the data lines that
// carry usage or an error (each bounded by MaxBody too).
func (t *tee) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if int64(len(t.line)+len(b)) <= t.rec.o.MaxBody {
				t.line = append(t.line, b...)
			}
			return
		}
		t.line = append(t.line, b[:i]...)
		b = b[i+1:]
		l := t.line
		t.line = t.line[:0]
		if bytes.HasPrefix(l, []byte("data:")) && usageEvent(l) && int64(t.usage.Len()+len(l)) <= t.rec.o.MaxBody {
			t.usage.Write(l)
			t.usage.WriteString("\n\n")
		}
	}
}

func usageEvent(l []byte) bool {
	for _, s := range []string{`"message_start"`, `"message_delta"`, `"response.completed"`, `"response.incomplete"`, `"response.failed"`, `"error"`, `"usage":{`} {
		if bytes.Contains(l, []byte(s)) {
			return true
		}
	}
	return false
}

func (t *tee) end(err error) {
	p := t.p
	if p.resp == nil || t.ended {
		return
	}
	t.ended = true
	if t.over && t.sse {
		// The kept start of the stream may end mid-event: cut it at the
		// last event boundary, then the usage events seen after.
		k := t.kept.Bytes()
		if i := bytes.LastIndex(k, []byte("\n\n")); i >= 0 {
			k = k[:i+2]
		} else {
			k = nil
		}
		t.kept.Reset()
		t.kept.Write(k)
		t.kept.Write(t.usage.Bytes())
	}
	p.respBody, p.sse = t.kept.Bytes(), t.sse
	p.resp.Truncated = t.over
	if err != nil && !errors.Is(err, io.EOF) && p.resp.Error == "" {
		p.resp.Error = "reading the response: " + err.Error()
	}
	p.resp.Timestamp = stamp(t.rec.o.Now())
}
