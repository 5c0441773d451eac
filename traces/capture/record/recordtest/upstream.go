// Package recordtest is a fake API upstream for tests of the recording
// proxy and of replays of what it records: it answers the Anthropic
// Messages API and the OpenAI Responses and Chat Completions APIs, JSON
// or streamed (SSE) as the request asks, and bills each request by the
// providers' documented cache rules over a toy tokenizer (a block's
// compact JSON, 4 bytes a token), so its bills are consistent the way the
// real APIs' are:
//
//   - Anthropic: the prompt renders tools, system, then messages; a
//     request reads the longest prefix ending at one of its cache_control
//     markers, or up to 20 blocks before one, that an earlier request
//     wrote, and writes the prefix through each marker past that (5m or
//     1h as marked), prefixes under 1024 tokens never cached; what
//     follows the last marker (and 2 tokens of framing) is input.
//   - OpenAI: every prompt of 1024 tokens or more is cached whole; a
//     request reads its longest common prefix (by item) with an earlier
//     one sent with the same prompt_cache_key (which routes it to a
//     machine, as the guide says), rounded down to 1024 + a multiple of
//     128 (for GPT-5.5 to a multiple of 512 less 128, as its bills show).
//
// Nothing expires: tests run in well under any TTL. The Responses API is
// served over a WebSocket too (websocket.go), with a minimal RFC 6455
// client (Dial) for the tests.
package recordtest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// Upstream is the fake API. The zero value is ready.
type Upstream struct {
	mu        sync.Mutex
	anthropic map[uint64]int // entry → prefix tokens
	openai    map[uint64]int
	responses map[string][]json.RawMessage // a WebSocket response's input and output
	n         int
	// Calls counts the billed requests.
	Calls int
}

// Tail is the framing after the last block that no marker covers.
const Tail = 2

func tokens(raw json.RawMessage) int {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		delete(m, "cache_control")
		raw, _ = json.Marshal(m)
	} else {
		var b bytes.Buffer
		if json.Compact(&b, raw) == nil {
			raw = b.Bytes()
		}
	}
	return (len(raw) + 3) / 4
}

func mix(a uint64, raw json.RawMessage) uint64 {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil {
		delete(m, "cache_control")
		raw, _ = json.Marshal(m)
	}
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], a)
	return xxhash.Sum64(append(buf[:], raw...))
}

type block struct {
	raw   json.RawMessage
	ttl   string // "" unmarked, "5m", "1h"
	chain uint64
	end   int
}

func blocksOf(raw json.RawMessage) []json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		json.Unmarshal(raw, &s)
		b, _ := json.Marshal(map[string]string{"type": "text", "text": s})
		return []json.RawMessage{b}
	}
	var out []json.RawMessage
	json.Unmarshal(raw, &out)
	return out
}

func (u *Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		u.serveWebSocket(w, r)
		return
	}
	var body map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	stream := string(body["stream"]) == "true"
	u.mu.Lock()
	u.n++
	n := u.n
	u.Calls++
	var write func()
	switch {
	case strings.HasPrefix(r.URL.Path, "/v1/messages"):
		usage := u.anthropicBill(body)
		write = func() { anthropicReply(w, n, usage, stream) }
	case strings.HasPrefix(r.URL.Path, "/v1/responses"):
		total, cached := u.openaiBill(body, "input")
		write = func() { responsesReply(w, n, total, cached, stream) }
	case strings.HasPrefix(r.URL.Path, "/v1/chat/completions"):
		total, cached := u.openaiBill(body, "messages")
		write = func() { chatReply(w, n, total, cached, stream) }
	default:
		u.mu.Unlock()
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	u.mu.Unlock()
	write()
}

type aUsage struct {
	Input, Read, W5m, W1h int
}

func (u *Upstream) anthropicBill(body map[string]json.RawMessage) aUsage {
	if u.anthropic == nil {
		u.anthropic = map[uint64]int{}
	}
	var bs []block
	add := func(raw json.RawMessage) {
		var cc struct {
			CacheControl *struct {
				TTL string `json:"ttl"`
			} `json:"cache_control"`
		}
		json.Unmarshal(raw, &cc)
		b := block{raw: raw}
		if cc.CacheControl != nil {
			b.ttl = "5m"
			if cc.CacheControl.TTL == "1h" {
				b.ttl = "1h"
			}
		}
		var prev uint64
		end := 0
		if len(bs) > 0 {
			prev, end = bs[len(bs)-1].chain, bs[len(bs)-1].end
		}
		b.chain, b.end = mix(prev, raw), end+tokens(raw)
		bs = append(bs, b)
	}
	var tools []json.RawMessage
	json.Unmarshal(body["tools"], &tools)
	for _, t := range tools {
		add(t)
	}
	for _, s := range blocksOf(body["system"]) {
		add(s)
	}
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	json.Unmarshal(body["messages"], &msgs)
	for _, m := range msgs {
		for _, b := range blocksOf(m.Content) {
			add(b)
		}
	}
	total := Tail
	if len(bs) > 0 {
		total += bs[len(bs)-1].end
	}
	read, last, last1h := 0, 0, 0
	for i, b := range bs {
		if b.ttl == "" {
			continue
		}
		for j := i; j >= 0 && j >= i-20; j-- {
			if e, ok := u.anthropic[bs[j].chain]; ok {
				read = max(read, e)
				break
			}
		}
	}
	for _, b := range bs {
		if b.ttl == "" || b.end < 1024 || b.end <= read {
			continue
		}
		u.anthropic[b.chain] = b.end
		last = max(last, b.end)
		if b.ttl == "1h" {
			last1h = max(last1h, b.end)
		}
	}
	last, last1h = max(last, read), max(last1h, read)
	return aUsage{Input: total - last, Read: read, W1h: last1h - read, W5m: last - last1h}
}

func (u *Upstream) openaiBill(body map[string]json.RawMessage, field string) (total, cached int) {
	if u.openai == nil {
		u.openai = map[uint64]int{}
	}
	var items []json.RawMessage
	if in := bytes.TrimSpace(body[field]); len(in) > 0 && in[0] == '"' {
		items = blocksOf(in)
	} else {
		json.Unmarshal(in, &items)
	}
	var chain uint64
	if key, ok := body["prompt_cache_key"]; ok {
		chain = mix(chain, key) // the key's machine: its own entries
	}
	if ins, ok := body["instructions"]; ok {
		chain = mix(chain, ins)
		total += tokens(ins)
	}
	var tools []json.RawMessage
	json.Unmarshal(body["tools"], &tools)
	for _, t := range tools {
		chain = mix(chain, t)
		total += tokens(t)
	}
	hit := 0
	var ends []struct {
		chain uint64
		end   int
	}
	if total > 0 {
		ends = append(ends, struct {
			chain uint64
			end   int
		}{chain, total})
	}
	for _, it := range items {
		chain = mix(chain, it)
		total += tokens(it)
		ends = append(ends, struct {
			chain uint64
			end   int
		}{chain, total})
	}
	for _, e := range ends {
		if _, ok := u.openai[e.chain]; ok {
			hit = e.end
		}
	}
	if total >= 1024 {
		for _, e := range ends {
			u.openai[e.chain] = e.end
		}
	}
	switch {
	case hit >= 1024 && gpt55(body["model"]):
		// GPT-5.5 bills on a 512-token grid, 512·k − 128
		// (provider.CacheGrid).
		if c := (hit+128)/512*512 - 128; c >= 1024 {
			cached = c
		}
	case hit >= 1024:
		cached = 1024 + (hit-1024)/128*128
	}
	return total, cached
}

// gpt55 reports whether a request's model is a GPT-5.5.
func gpt55(model json.RawMessage) bool {
	var m string
	json.Unmarshal(model, &m)
	return m == "gpt-5.5" || strings.HasPrefix(m, "gpt-5.5-")
}

func sse(w http.ResponseWriter, event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// Output is the text every reply generates, and OutputTokens its size.
const (
	Output       = "Done: the change is in."
	OutputTokens = 7
)

func anthropicReply(w http.ResponseWriter, n int, u aUsage, stream bool) {
	usage := map[string]any{"input_tokens": u.Input, "cache_read_input_tokens": u.Read,
		"cache_creation_input_tokens": u.W5m + u.W1h,
		"cache_creation":              map[string]int{"ephemeral_5m_input_tokens": u.W5m, "ephemeral_1h_input_tokens": u.W1h},
		"output_tokens":               OutputTokens}
	id := fmt.Sprintf("msg_%04d", n)
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
			"content": []any{map[string]string{"type": "text", "text": Output}}, "stop_reason": "end_turn", "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	start := map[string]any{}
	for k, v := range usage {
		start[k] = v
	}
	start["output_tokens"] = 1
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message", "role": "assistant",
		"model": "claude-sonnet-4-5", "content": []any{}, "usage": start}})
	sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]string{"type": "text", "text": ""}})
	for _, part := range []string{Output[:5], Output[5:]} {
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]string{"type": "text_delta", "text": part}})
	}
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn"}, "usage": map[string]int{"output_tokens": OutputTokens}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

func responsesReply(w http.ResponseWriter, n, total, cached int, stream bool) {
	resp := map[string]any{"id": fmt.Sprintf("resp_%04d", n), "object": "response", "status": "completed", "model": "gpt-5.5",
		"output": []any{map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]string{"type": "output_text", "text": Output}}}},
		"usage":  map[string]any{"input_tokens": total, "input_tokens_details": map[string]int{"cached_tokens": cached}, "output_tokens": OutputTokens, "total_tokens": total + OutputTokens}}
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": resp["id"], "status": "in_progress"}})
	sse(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta", "delta": Output})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": resp})
}

func chatReply(w http.ResponseWriter, n, total, cached int, stream bool) {
	usage := map[string]any{"prompt_tokens": total, "completion_tokens": OutputTokens, "prompt_tokens_details": map[string]int{"cached_tokens": cached}}
	id := fmt.Sprintf("chatcmpl-%04d", n)
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "model": "gpt-4o",
			"choices": []any{map[string]any{"index": 0, "message": map[string]string{"role": "assistant", "content": Output}, "finish_reason": "stop"}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "", map[string]any{"id": id, "choices": []any{map[string]any{"index": 0, "delta": map[string]string{"role": "assistant", "content": Output}}}})
	sse(w, "", map[string]any{"id": id, "choices": []any{}, "usage": usage})
	fmt.Fprint(w, "data: [DONE]\n\n")
}
