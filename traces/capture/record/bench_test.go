package record_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/traces/capture/record"
)

// benchBody is a Claude Code sized request: ~85 KB of system prompt and
// n messages of ~3 KB, with the harness's markers (40 messages: 204 KB;
// 300: 996 KB, a long session's).
func benchBody(stream bool, n int) string {
	var msgs []any
	for i := range n {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, map[string]any{"role": role, "content": []any{map[string]any{"type": "text", "text": strings.Repeat("line of a tool result, file contents or an answer. ", 60)}}})
	}
	last := msgs[len(msgs)-1].(map[string]any)["content"].([]any)[0].(map[string]any)
	last["cache_control"] = map[string]string{"type": "ephemeral"}
	b, _ := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": stream,
		"system":   []any{map[string]any{"type": "text", "text": strings.Repeat("You are careful. ", 5000), "cache_control": map[string]string{"type": "ephemeral", "ttl": "1h"}}},
		"messages": msgs})
	return string(b)
}

// cannedUpstream answers every request as the Messages API does, at no
// cost of its own (it reads the body and replies with a fixed answer of
// 100 text pieces), so that the difference of two timings is the proxy's:
// JSON in one write, or streamed with a flush per event.
func cannedUpstream() http.Handler {
	usage := `"usage":{"input_tokens":3,"cache_read_input_tokens":41000,"cache_creation_input_tokens":900,"output_tokens":%d}`
	piece := "word of the answer "
	var sse bytes.Buffer
	fmt.Fprintf(&sse, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],"+usage+"}}\n\n", 1)
	events := []string{sse.String(), "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"}
	for range 100 {
		events = append(events, `event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+piece+`"}}

`)
	}
	events = append(events, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
		fmt.Sprintf("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"+usage+"}\n\n", 400),
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	msg := fmt.Sprintf(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"%s"}],"stop_reason":"end_turn",`+usage+"}", strings.Repeat(piece, 100), 400)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		// The one flag the answer depends on, found without a parse.
		stream := bytes.Contains(b, []byte(`"stream":true`))
		if !stream {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, msg)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for _, e := range events {
			io.WriteString(w, e)
			f.Flush()
		}
	})
}

// BenchmarkRecord measures what ctxsim record adds to a request: the same
// Claude Code sized request (benchBody, 204 KB, answered as JSON or
// streamed in 100 events; 996 KB, streamed) by an upstream that costs nothing (cannedUpstream),
// sent directly and through the recording proxy writing its line to a
// file, and through a bare httputil.ReverseProxy, one after the other in
// each iteration. overhead-µs is the median over the iterations of the
// recorded time less the direct one: what a harness waits more per
// request (the issue asks < 1 ms; docs/performance.md);
// bare-proxy-overhead-µs the same for the bare proxy, the part any local
// hop costs. ns/op is the three requests'.
func BenchmarkRecord(b *testing.B) {
	up := httptest.NewServer(cannedUpstream())
	defer up.Close()
	base, _ := url.Parse(up.URL)
	f, err := os.Create(filepath.Join(b.TempDir(), "capture.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	rec, err := record.New(record.Options{Anthropic: base, OpenAI: base, Out: f, Now: time.Now})
	if err != nil {
		b.Fatal(err)
	}
	proxy := httptest.NewServer(rec)
	defer proxy.Close()
	bare := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(base) }, FlushInterval: -1})
	defer bare.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	send := func(b *testing.B, base, body string) time.Duration {
		t0 := time.Now()
		req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", key)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || n == 0 {
			b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
		}
		return time.Since(t0)
	}
	for _, c := range []struct {
		stream bool
		msgs   int
	}{{false, 40}, {true, 40}, {true, 300}} {
		body := benchBody(c.stream, c.msgs)
		mode := "json"
		if c.stream {
			mode = "sse"
		}
		mode += fmt.Sprintf("-%dKB", len(body)>>10)
		b.Run(mode, func(b *testing.B) {
			var direct, proxied, over, hop []float64
			for b.Loop() {
				d := send(b, up.URL, body)
				p := send(b, proxy.URL, body)
				h := send(b, bare.URL, body)
				direct = append(direct, float64(d.Microseconds()))
				proxied = append(proxied, float64(p.Microseconds()))
				over = append(over, float64((p - d).Microseconds()))
				hop = append(hop, float64((h - d).Microseconds()))
			}
			b.ReportMetric(median(direct), "direct-µs")
			b.ReportMetric(median(proxied), "recorded-µs")
			b.ReportMetric(median(over), "overhead-µs")
			b.ReportMetric(median(hop), "bare-proxy-overhead-µs")
		})
	}
	if err := rec.Close(); err != nil {
		b.Fatal(err)
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return xs[len(xs)/2]
}
