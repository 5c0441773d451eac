package record_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/capture"
	"github.com/ctxsim/ctxsim/traces/capture/record"
	"github.com/ctxsim/ctxsim/traces/capture/record/recordtest"
)

// syncBuf is the file the recorder writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// clock is a fake clock: each reading one second later.
func clock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 6, 27, 10, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

func start(t *testing.T, up http.Handler, maxBody int64) (*record.Recorder, *httptest.Server, *syncBuf) {
	t.Helper()
	u := httptest.NewServer(up)
	t.Cleanup(u.Close)
	base, _ := url.Parse(u.URL)
	out := &syncBuf{}
	rec, err := record.New(record.Options{Anthropic: base, OpenAI: base, Out: out, Now: clock(), MaxBody: maxBody})
	if err != nil {
		t.Fatal(err)
	}
	p := httptest.NewUnstartedServer(rec)
	p.Config.ConnContext, p.Config.ConnState = rec.ConnContext, rec.ConnState
	p.Start()
	t.Cleanup(p.Close)
	return rec, p, out
}

const key = "sk-ant-api03-SECRETSECRETSECRET"

func post(t *testing.T, base, path, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func anthropicBody(stream bool, text string) string {
	b, _ := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": stream,
		"system":   []any{map[string]any{"type": "text", "text": strings.Repeat("You are careful. ", 400), "cache_control": map[string]string{"type": "ephemeral"}}},
		"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text, "cache_control": map[string]string{"type": "ephemeral"}}}}}})
	return string(b)
}

func readCalls(t *testing.T, file string) ([]*capture.Call, *traces.Warnings) {
	t.Helper()
	w := &traces.Warnings{}
	cs, err := capture.Read(strings.NewReader(file), "capture.jsonl", w)
	if err != nil {
		t.Fatal(err)
	}
	return cs, w
}

// Keys and auth headers never reach the file, whatever their case, in a
// header or a query parameter; the client still gets the upstream's
// answer, streamed or not, byte for byte.
func TestRecordRedactsAndPassesThrough(t *testing.T) {
	up := &recordtest.Upstream{}
	rec, p, out := start(t, up, 0)
	direct := httptest.NewServer(&recordtest.Upstream{})
	defer direct.Close()
	for _, stream := range []bool{false, true} {
		body := anthropicBody(stream, "Fix the failing test.")
		resp, got := post(t, p.URL, "/v1/messages?key="+key, body)
		_, want := post(t, direct.URL, "/v1/messages", body)
		if resp.StatusCode != 200 || !bytes.Equal(got, want) {
			t.Errorf("stream=%v: status %d, proxied body differs from the upstream's:\n%s\n%s", stream, resp.StatusCode, got, want)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	file := out.String()
	if strings.Contains(file, "SECRET") || !strings.Contains(file, record.Redacted) {
		t.Fatalf("the key reached the file:\n%.600s", file)
	}
	cs, w := readCalls(t, file)
	if len(cs) != 2 || w.Total() != 0 {
		t.Fatalf("%d calls, warnings %v", len(cs), w)
	}
	// The streamed response reassembles with its usage: the same prompt,
	// read from the entry the first call wrote.
	if cs[0].Usage == nil || cs[1].Usage == nil || cs[0].Usage.Prompt() != cs[1].Usage.Prompt() ||
		cs[1].Usage.CacheRead != cs[0].Usage.CacheWrite5m || cs[1].Usage.CacheRead == 0 || !cs[1].Stream {
		t.Errorf("usage JSON %+v, streamed %+v", cs[0].Usage, cs[1].Usage)
	}
	if len(cs[1].Output) != 1 || cs[1].Output[0].Text != recordtest.Output {
		t.Errorf("streamed output %+v", cs[1].Output)
	}
	if len(cs[0].Marks) != 2 || cs[0].Time.IsZero() {
		t.Errorf("marks %+v time %v", cs[0].Marks, cs[0].Time)
	}
}

// The upstream's errors go to the client and into the file; an upstream
// that cannot be reached is a 502 with its error recorded.
func TestRecordKeepsErrors(t *testing.T) {
	rec, p, out := start(t, &recordtest.Upstream{}, 0)
	resp, _ := post(t, p.URL, "/v1/messages", "{not json")
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status %d, want the upstream's 400", resp.StatusCode)
	}
	dead, _ := url.Parse("http://127.0.0.1:1")
	out2 := &syncBuf{}
	rec2, _ := record.New(record.Options{Anthropic: dead, OpenAI: dead, Out: out2, Now: clock()})
	p2 := httptest.NewServer(rec2)
	defer p2.Close()
	resp, _ = post(t, p2.URL, "/v1/messages", anthropicBody(false, "hi"))
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %d, want 502", resp.StatusCode)
	}
	rec.Close()
	rec2.Close()
	if !strings.Contains(out.String(), `"status_code":400`) {
		t.Errorf("the upstream's 400 is not recorded:\n%s", out.String())
	}
	if !strings.Contains(out2.String(), `"status_code":502`) || !strings.Contains(out2.String(), `"error":"`) {
		t.Errorf("the failed call is not recorded:\n%s", out2.String())
	}
	// The body of a request that never went upstream is still recorded
	// whole (read to its bound after the transport gave up).
	if !strings.Contains(out2.String(), `"text":"hi"`) || strings.Contains(out2.String(), "body_truncated") {
		t.Errorf("the failed call's request body is not recorded whole:\n%.900s", out2.String())
	}
	cs, w := readCalls(t, out2.String())
	if ss := capture.Sessions(cs, "capture.jsonl", w); len(ss) != 0 || !strings.Contains(w.String(), capture.WarnFailedCall) {
		t.Errorf("a failed call became a billed one: %d sessions, %v", len(ss), w)
	}
}

// A body over MaxBody is forwarded whole but kept only in part; a long
// stream keeps its usage events, so the bill survives.
func TestRecordBounded(t *testing.T) {
	got := make(chan int, 4)
	up := &recordtest.Upstream{}
	counting := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- len(b)
		r.Body = io.NopCloser(bytes.NewReader(b))
		up.ServeHTTP(w, r)
	})
	rec, p, out := start(t, counting, 400)
	body := anthropicBody(true, "Fix the failing test.")
	if resp, _ := post(t, p.URL, "/v1/messages", body); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if n := <-got; n != len(body) {
		t.Errorf("upstream got %d bytes of %d", n, len(body))
	}
	rec.Close()
	var line struct {
		Request struct {
			Truncated bool            `json:"body_truncated"`
			Body      json.RawMessage `json:"body"`
		} `json:"request"`
		Response struct {
			Truncated bool   `json:"body_truncated"`
			BodyRaw   string `json:"body_raw"`
		} `json:"response"`
	}
	if err := json.Unmarshal([]byte(out.String()), &line); err != nil {
		t.Fatal(err)
	}
	if !line.Request.Truncated || len(line.Request.Body) > 400+200 {
		t.Errorf("request: truncated %v, kept %d bytes", line.Request.Truncated, len(line.Request.Body))
	}
	if !line.Response.Truncated || !strings.Contains(line.Response.BodyRaw, "message_delta") {
		t.Errorf("response: truncated %v, usage events lost:\n%s", line.Response.Truncated, line.Response.BodyRaw)
	}
}

// Close waits for the pairs in flight: every line is whole.
func TestRecordConcurrentLinesWhole(t *testing.T) {
	rec, p, out := start(t, &recordtest.Upstream{}, 0)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			post(t, p.URL, "/v1/messages", anthropicBody(i%2 == 0, strings.Repeat("x", i)))
		}()
	}
	wg.Wait()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 16 || rec.Pairs() != 16 {
		t.Fatalf("%d lines, %d pairs", len(lines), rec.Pairs())
	}
	for i, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("line %d is not whole JSON", i+1)
		}
	}
}

// The request body streams upstream as the harness sends it: the
// upstream reads the first part while the rest is still unsent (a proxy
// that read the whole body first would wait forever here), and the line
// holds the whole body.
func TestRecordStreamsRequestBody(t *testing.T) {
	first := make(chan struct{})
	up := &recordtest.Upstream{}
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var head [64]byte
		if _, err := io.ReadFull(r.Body, head[:]); err != nil {
			t.Error(err)
		}
		close(first)
		rest, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(head[:]), bytes.NewReader(rest)))
		up.ServeHTTP(w, r)
	})
	rec, p, out := start(t, upstream, 0)
	body := anthropicBody(false, "Fix the failing test.")
	pr, pw := io.Pipe()
	go func() {
		io.WriteString(pw, body[:100])
		select {
		case <-first:
		case <-time.After(10 * time.Second):
			t.Error("the upstream saw nothing of a body the harness had started sending")
		}
		io.WriteString(pw, body[100:])
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", p.URL+"/v1/messages", pr)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var line struct {
		Request struct {
			Truncated bool            `json:"body_truncated"`
			Body      json.RawMessage `json:"body"`
		} `json:"request"`
	}
	if err := json.Unmarshal([]byte(out.String()), &line); err != nil {
		t.Fatal(err)
	}
	if line.Request.Truncated || string(line.Request.Body) != body {
		t.Errorf("request body kept %d bytes of %d (truncated %v)", len(line.Request.Body), len(body), line.Request.Truncated)
	}
}

// An upstream that breaks off mid-stream: the client gets what was sent
// and a broken stream, the proxy aborts its handler (httputil's panic),
// and the line still records the response with the upstream's error; Close
// does not wait forever for it.
func TestRecordUpstreamBreaksOff(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n")
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	rec, p, out := start(t, upstream, 0)
	resp, _ := post(t, p.URL, "/v1/messages", anthropicBody(true, "hi"))
	if resp.StatusCode != 200 {
		t.Errorf("status %d, want the upstream's 200", resp.StatusCode)
	}
	closeWithin(t, rec, "Close waits for a pair the proxy aborted")
	file := out.String()
	if rec.Pairs() != 1 || !strings.Contains(file, `"error":"reading the response: `) || !strings.Contains(file, "message_start") || !strings.Contains(file, `"text":"hi"`) {
		t.Errorf("%d pairs:\n%.900s", rec.Pairs(), file)
	}
}

// A pair waits for its connection to have sent the whole response
// (ConnState) before the writer starts its line; a connection that stays
// busy does not keep it past Close.
func TestRecordHoldsUntilSent(t *testing.T) {
	up := httptest.NewServer(&recordtest.Upstream{})
	defer up.Close()
	base, _ := url.Parse(up.URL)
	out := &syncBuf{}
	rec, err := record.New(record.Options{Anthropic: base, OpenAI: base, Out: out, Now: clock()})
	if err != nil {
		t.Fatal(err)
	}
	serve := func(c net.Conn) {
		req := httptest.NewRequest("POST", "http://127.0.0.1:8082/v1/messages", strings.NewReader(anthropicBody(true, "hi")))
		req = req.WithContext(rec.ConnContext(req.Context(), c))
		w := httptest.NewRecorder()
		rec.ServeHTTP(w, req)
		if w.Code != 200 {
			t.Fatalf("status %d", w.Code)
		}
	}
	c1, c2 := &net.TCPConn{}, &net.UnixConn{}
	serve(c1)
	serve(c2)
	time.Sleep(50 * time.Millisecond)
	if n := rec.Pairs(); n != 0 {
		t.Fatalf("%d lines written while their connections were still sending", n)
	}
	rec.ConnState(c1, http.StateActive)
	rec.ConnState(c1, http.StateIdle)
	for deadline := time.Now().Add(10 * time.Second); rec.Pairs() < 1 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if n := rec.Pairs(); n != 1 {
		t.Fatalf("%d lines once the first connection was idle, want 1", n)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if n := rec.Pairs(); n != 2 || strings.Count(out.String(), "\n") != 2 {
		t.Fatalf("%d lines after Close, want 2", n)
	}
	// After Close a pair is not held: nothing would release it.
	serve(c1)
	if n := rec.Pairs(); n != 3 {
		t.Fatalf("%d lines: a pair served after Close was held", n)
	}
}

// The pairs Close releases from connections still busy are written in the
// order they were held, not in the order of the map that holds them: the
// capture is the same file run after run.
func TestRecordCloseReleasesInOrder(t *testing.T) {
	up := httptest.NewServer(&recordtest.Upstream{})
	defer up.Close()
	base, _ := url.Parse(up.URL)
	for round := range 10 {
		out := &syncBuf{}
		rec, err := record.New(record.Options{Anthropic: base, OpenAI: base, Out: out, Now: clock()})
		if err != nil {
			t.Fatal(err)
		}
		const n = 8
		for i := range n {
			// A connection of its own each, never idle: every pair is
			// still held at Close.
			c, _ := net.Pipe()
			req := httptest.NewRequest("POST", "http://127.0.0.1:8082/v1/messages", strings.NewReader(anthropicBody(false, fmt.Sprintf("prompt-%02d", i))))
			req = req.WithContext(rec.ConnContext(req.Context(), c))
			w := httptest.NewRecorder()
			rec.ServeHTTP(w, req)
			if w.Code != 200 {
				t.Fatalf("status %d", w.Code)
			}
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != n {
			t.Fatalf("round %d: %d lines, want %d", round, len(lines), n)
		}
		for i, l := range lines {
			if want := fmt.Sprintf("prompt-%02d", i); !strings.Contains(l, want) {
				t.Fatalf("round %d: line %d does not hold %s: the held pairs were released out of order", round, i, want)
			}
		}
	}
}

// closeWithin closes rec, failing with why if that takes over 10 s (a
// Close waiting on something that will not end).
func closeWithin(t *testing.T, rec *record.Recorder, why string) {
	t.Helper()
	closed := make(chan error, 1)
	go func() { closed <- rec.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal(why)
	}
}
