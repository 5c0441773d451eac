package record_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/sim/assent"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/capture"
	"github.com/ctxsim/ctxsim/traces/capture/record"
	"github.com/ctxsim/ctxsim/traces/capture/record/recordtest"
)

func authHeader() http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+key)
	h.Set("Chatgpt-Account-Id", "acct-SECRET")
	h.Set("Openai-Beta", "responses_websockets=2026-02-06")
	return h
}

// A WebSocket goes through the proxy both ways, fragmented, compressed
// or not, pings answered: the upstream echoes what is not a call. A
// session that is not the Responses API's (these messages are not JSON)
// is passed through unrecorded, and counted.
func TestRecordWebSocketEcho(t *testing.T) {
	for _, deflate := range []bool{false, true} {
		t.Run(fmt.Sprintf("deflate=%v", deflate), func(t *testing.T) {
			rec, p, out := start(t, &recordtest.Upstream{}, 0)
			ws, resp, err := recordtest.Dial(p.URL, "/v1/responses", authHeader(), deflate)
			if err != nil {
				t.Fatalf("upgrade through the proxy: %v (response %+v)", err, resp)
			}
			defer ws.Close()
			if got := strings.Contains(resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate"); got != deflate {
				t.Errorf("permessage-deflate agreed %v, offered %v", got, deflate)
			}
			msgs := []string{"hello", strings.Repeat("a long message that spans frames. ", 300), ""}
			for i, m := range msgs {
				if err := ws.WriteMessage(recordtest.OpPing, []byte("p"), 0); err != nil {
					t.Fatal(err)
				}
				if err := ws.WriteMessage(recordtest.OpText, []byte(m), 7*i); err != nil {
					t.Fatal(err)
				}
				op, got, err := ws.ReadMessage()
				if err != nil || op != recordtest.OpText || string(got) != m {
					t.Fatalf("message %d: op %d err %v: echoed %.40q, sent %.40q", i, op, err, got, m)
				}
			}
			if err := ws.WriteMessage(recordtest.OpClose, []byte{3, 232}, 0); err != nil {
				t.Fatal(err)
			}
			if op, _, err := ws.ReadMessage(); err != nil || op != recordtest.OpClose {
				t.Fatalf("close: op %d err %v", op, err)
			}
			ws.Close()
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			w := rec.Warnings()
			if rec.Pairs() != 0 || out.String() != "" || w.Total() != 1 || !strings.Contains(w.String(), record.WarnWSNotRecorded) {
				t.Errorf("%d pairs, warnings %q, file %q", rec.Pairs(), w, out.String())
			}
		})
	}
}

// codexSession drives a Codex-like client over one WebSocket through the
// proxy: a warm-up call with the whole prompt, then calls that each send
// the new input and the previous response's id, a response.processed
// after each; it returns the usage each response.completed carried.
func codexSession(t *testing.T, base string, deflate bool, turns int) []map[string]any {
	t.Helper()
	ws, _, err := recordtest.Dial(base, "/v1/responses", authHeader(), deflate)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	instr := strings.Repeat("You are Codex, a coding agent. ", 300)
	tools := []any{map[string]any{"type": "function", "name": "exec_command", "parameters": map[string]any{"type": "object"}}}
	var usages []map[string]any
	prev := ""
	for turn := range turns {
		ask := strings.Repeat("Run the tests of package "+string(rune('a'+turn))+". ", 30*(turn+1))
		body := map[string]any{"type": "response.create", "model": "gpt-5.5", "instructions": instr, "tools": tools,
			"input":  []any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": ask}}}},
			"stream": true, "store": false, "prompt_cache_key": "conv-ws"}
		if prev != "" {
			body["previous_response_id"] = prev
		}
		b, _ := json.MarshalIndent(body, "", " ") // a newline in a message is JSON whitespace
		if err := ws.WriteMessage(recordtest.OpText, b, 4096); err != nil {
			t.Fatal(err)
		}
		for {
			op, msg, err := ws.ReadMessage()
			if err != nil || op != recordtest.OpText {
				t.Fatalf("turn %d: op %d err %v", turn, op, err)
			}
			var ev struct {
				Type     string `json:"type"`
				Response struct {
					ID    string         `json:"id"`
					Usage map[string]any `json:"usage"`
				} `json:"response"`
			}
			if err := json.Unmarshal(msg, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Type == "error" {
				t.Fatalf("turn %d: %s", turn, msg)
			}
			if ev.Type == "response.completed" {
				prev = ev.Response.ID
				usages = append(usages, ev.Response.Usage)
				break
			}
		}
		b, _ = json.Marshal(map[string]string{"type": "response.processed", "response_id": prev})
		if err := ws.WriteMessage(recordtest.OpText, b, 0); err != nil {
			t.Fatal(err)
		}
	}
	return usages
}

// A Codex session over the Responses API WebSocket, through the proxy:
// each call is a line (method WEBSOCKET, the response.create message its
// request body, its events an SSE stream), no key in it; the capture
// imports as one session that continues by previous_response_id, with
// the upstream's usage exactly, and replays as sent to the same bills.
func TestRecordWebSocketReplayExact(t *testing.T) {
	for _, deflate := range []bool{false, true} {
		t.Run(fmt.Sprintf("deflate=%v", deflate), func(t *testing.T) {
			rec, p, out := start(t, &recordtest.Upstream{}, 0)
			usages := codexSession(t, p.URL, deflate, 5)
			deadline := time.Now().Add(10 * time.Second)
			for rec.Pairs() < len(usages) && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			file := out.String()
			if strings.Contains(file, "SECRET") || strings.Count(file, `"method":"WEBSOCKET"`) != 5 || strings.Count(file, "\n") != 5 {
				t.Fatalf("want 5 WEBSOCKET lines and no key:\n%.1500s", file)
			}
			if w := rec.Warnings(); w.Total() != 0 {
				t.Errorf("recorder warnings: %v", w)
			}
			w := &traces.Warnings{}
			cs, err := capture.Read(strings.NewReader(file), "capture.jsonl", w)
			if err != nil || w.Total() != 0 || len(cs) != 5 {
				t.Fatalf("%d calls, err %v, warnings %v", len(cs), err, w)
			}
			for i, c := range cs {
				u := usages[i]
				cached := int64(u["input_tokens_details"].(map[string]any)["cached_tokens"].(float64))
				if c.Usage == nil || c.Usage.Prompt() != int64(u["input_tokens"].(float64)) || c.Usage.CacheRead != cached || (i > 0 && c.Previous == "") {
					t.Errorf("call %d: imported usage %+v previous %q, the upstream billed %v", i, c.Usage, c.Previous, u)
				}
			}
			ss, err := capture.ReadSessions(strings.NewReader(file), "capture.jsonl", w)
			if err != nil || w.Total() != 0 || len(ss) != 1 {
				t.Fatalf("%d sessions, err %v, warnings %v", len(ss), err, w)
			}
			rep, err := assent.Replay(context.Background(), ss, assent.Options{})
			if err != nil {
				t.Fatal(err)
			}
			reads := 0
			for _, c := range rep.Calls {
				if !c.Exact() || c.Outside {
					t.Errorf("%s event %d: recorded %+v, replayed %+v (outside %v) %s", c.Session, c.Event, c.Recorded, c.Replayed, c.Outside, c.Error)
				}
				if c.Recorded.CacheRead > 0 {
					reads++
				}
			}
			if len(rep.Calls) != 5 || reads != 4 {
				t.Errorf("%d calls replayed, %d read the cache; want 5 and 4", len(rep.Calls), reads)
			}
		})
	}
}

// A call in flight when the recording stops (a client that stays
// connected) is written with what it got and an error, counted; Close
// does not wait for the client to hang up. A message over MaxBody goes
// through unrecorded, counted, and so do the events that answer it.
func TestRecordWebSocketCutAndBounded(t *testing.T) {
	got := make(chan []byte, 4)
	hang := make(chan struct{})
	defer close(hang)
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := recordtest.Accept(w, r)
		if err != nil {
			return
		}
		defer ws.Close()
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			got <- msg
			if bytes.Contains(msg, []byte("answer")) {
				ws.WriteMessage(recordtest.OpText, []byte(`{"type":"response.created","response":{"id":"resp_1"}}`), 0)
				ws.WriteMessage(recordtest.OpText, []byte(`{"type":"response.completed","response":{"id":"resp_1","usage":{"input_tokens":9,"output_tokens":1}}}`), 0)
			}
			if bytes.Contains(msg, []byte("long")) {
				for range 30 {
					ws.WriteMessage(recordtest.OpText, []byte(`{"type":"response.output_text.delta","delta":"`+strings.Repeat("d", 100)+`"}`), 0)
				}
				ws.WriteMessage(recordtest.OpText, []byte(`{"type":"response.completed","response":{"id":"resp_2","usage":{"input_tokens":2000,"input_tokens_details":{"cached_tokens":1024},"output_tokens":1}}}`), 0)
			}
		}
	})
	rec, p, out := start(t, upstream, 1024)
	ws, _, err := recordtest.Dial(p.URL, "/v1/responses", authHeader(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	big := `{"type":"response.create","model":"gpt-5.5","input":"answer ` + strings.Repeat("x", 2000) + `"}`
	long := `{"type":"response.create","model":"gpt-5.5","input":"long"}`
	small := `{"type":"response.create","model":"gpt-5.5","input":"hold on"}`
	for _, m := range []string{big, long, small} {
		if err := ws.WriteMessage(recordtest.OpText, []byte(m), 0); err != nil {
			t.Fatal(err)
		}
		if b := <-got; string(b) != m {
			t.Fatalf("the upstream got %.60q, sent %.60q", b, m)
		}
		n := map[string]int{big: 2, long: 31}[m]
		for range n { // the answer reaches the client
			if _, _, err := ws.ReadMessage(); err != nil {
				t.Fatal(err)
			}
		}
	}
	closeWithin(t, rec, "Close waits for a WebSocket the client keeps open")
	file := out.String()
	if rec.Pairs() != 2 || !strings.Contains(file, `"input":"hold on"`) || !strings.Contains(file, `"error":"the recording stopped before response.completed"`) || strings.Contains(file, "SECRET") {
		t.Errorf("%d pairs:\n%s", rec.Pairs(), file)
	}
	w := rec.Warnings()
	for reason, n := range map[string]int{record.WarnWSOver: 1, record.WarnWSCut: 1, record.WarnWSOrphan: 2} {
		if !strings.Contains(w.String(), reason+": "+fmt.Sprint(n)+" line") {
			t.Errorf("want %q %d times: %v", reason, n, w)
		}
	}
	if w.Total() != 4 {
		t.Errorf("warnings: %v", w)
	}
	// The long stream is kept up to MaxBody, then its usage event.
	cs, _ := readCalls(t, file)
	if len(cs) != 2 || cs[0].Usage == nil || cs[0].Usage.Prompt() != 2000 || cs[0].Usage.CacheRead != 1024 || !strings.Contains(file, `"body_truncated":true`) {
		t.Errorf("%d calls; the long one's usage %+v", len(cs), cs[0].Usage)
	}
}
