package assent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/sim/assent"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/capture"
	"github.com/ctxsim/ctxsim/traces/capture/record"
	"github.com/ctxsim/ctxsim/traces/capture/record/recordtest"
)

type buf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// A scripted harness drives ctxsim record against an upstream that bills
// by the APIs' cache rules: Anthropic with a moving last-message marker
// (5m) and a 1h system marker, OpenAI Responses and Chat Completions
// growing their input; streamed and not; a side request (a title) on the
// same account. The capture, replayed as sent, reproduces every call's
// bill exactly.
func TestRecordReplayExact(t *testing.T) {
	up := httptest.NewServer(&recordtest.Upstream{})
	defer up.Close()
	base, _ := url.Parse(up.URL)
	out := &buf{}
	tick := time.Date(2026, 6, 27, 10, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		tick = tick.Add(1500 * time.Millisecond)
		return tick
	}
	rec, err := record.New(record.Options{Anthropic: base, OpenAI: base, Out: out, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(rec)
	defer proxy.Close()
	send := func(path string, body map[string]any) map[string]any {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", proxy.URL+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer sk-SECRET")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, raw)
		}
		var m map[string]any
		json.Unmarshal(raw, &m)
		return m
	}
	text := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
	marked := func(s, ttl string) map[string]any {
		cc := map[string]string{"type": "ephemeral"}
		if ttl != "" {
			cc["ttl"] = ttl
		}
		return map[string]any{"type": "text", "text": s, "cache_control": cc}
	}
	system := []any{marked(strings.Repeat("You are a careful coding agent. ", 300), "1h")}
	tools := []any{map[string]any{"name": "Read", "description": "Read a file", "input_schema": map[string]any{"type": "object"}}}
	var msgs []any
	for turn := range 5 {
		ask := strings.Repeat("Please look at module "+string(rune('A'+turn))+" and fix it. ", 20*(turn+1))
		for i, m := range msgs { // the marker moves to the new last message
			mm := m.(map[string]any)
			if mm["role"] == "user" {
				msgs[i] = map[string]any{"role": "user", "content": []any{text(mm["content"].([]any)[0].(map[string]any)["text"].(string))}}
			}
		}
		msgs = append(msgs, map[string]any{"role": "user", "content": []any{marked(ask, "")}})
		send("/v1/messages", map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 1000, "stream": turn%2 == 1,
			"system": system, "tools": tools, "messages": msgs, "thinking": map[string]any{"type": "enabled", "budget_tokens": 2000}})
		msgs = append(msgs, map[string]any{"role": "assistant", "content": []any{text(recordtest.Output)}})
		if turn == 1 {
			// A side request: a title, on the same account.
			send("/v1/messages", map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 50,
				"messages": []any{map[string]any{"role": "user", "content": "Title this: " + ask}}})
		}
	}
	instr := strings.Repeat("You are Codex, a coding agent. ", 300)
	var items, chat []any
	chat = append(chat, map[string]any{"role": "system", "content": instr})
	for turn := range 4 {
		ask := strings.Repeat("Run the tests of package "+string(rune('a'+turn))+". ", 30*(turn+1))
		items = append(items, map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": ask}}})
		send("/v1/responses", map[string]any{"model": "gpt-5.5", "instructions": instr, "input": items, "stream": turn%2 == 0, "prompt_cache_key": "conv-1"})
		items = append(items, map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": recordtest.Output}}})
		chat = append(chat, map[string]any{"role": "user", "content": ask})
		send("/v1/chat/completions", map[string]any{"model": "gpt-4o", "messages": chat, "stream": turn%2 == 1, "stream_options": map[string]bool{"include_usage": true}})
		chat = append(chat, map[string]any{"role": "assistant", "content": recordtest.Output})
	}
	// conv-1's first request again under another prompt_cache_key (a
	// subagent's), which routes it elsewhere: it reads nothing of the
	// prompt conv-1 sent whole.
	send("/v1/responses", map[string]any{"model": "gpt-5.5", "instructions": instr, "input": items[:1], "prompt_cache_key": "conv-2"})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	file := out.b.String()
	if strings.Contains(file, "SECRET") {
		t.Fatal("a key reached the capture")
	}
	w := &traces.Warnings{}
	ss, err := capture.ReadSessions(strings.NewReader(file), "capture.jsonl", w)
	if err != nil || w.Total() != 0 {
		t.Fatalf("read: %v; warnings %v", err, w)
	}
	if len(ss) != 5 {
		t.Errorf("%d sessions, want the conversation, its title request, the Responses and the chat conversations, the subagent", len(ss))
	}
	rep, err := assent.Replay(context.Background(), ss, assent.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Calls) != 5+1+4+4+1 {
		t.Fatalf("%d calls replayed", len(rep.Calls))
	}
	reads := 0
	for _, c := range rep.Calls {
		if !c.Exact() || c.Outside {
			t.Errorf("%s event %d (%s): recorded %+v, replayed %+v (outside %v) %s", c.Session, c.Event, c.API, c.Recorded, c.Replayed, c.Outside, c.Error)
		}
		if c.Recorded.CacheRead > 0 {
			reads++
		}
		if c.API == capture.OpenAIResponses && c.Event == 1 && c.Recorded.CacheRead != 0 {
			t.Errorf("%s: a first call read another key's entries", c.String())
		}
	}
	if reads < 8 || rep.Conflicts != 0 {
		t.Errorf("%d calls read the cache (the script makes 10 that do); %d size conflicts", reads, rep.Conflicts)
	}
}
