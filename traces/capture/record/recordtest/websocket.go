package recordtest

import (
	"bufio"
	"bytes"
	"compress/flate"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// The WebSocket side of Upstream: the Responses API over a WebSocket as
// Codex uses it (GET /v1/responses with an upgrade; each call a text
// message {"type":"response.create", ...the request body}, answered with
// the streamed reply's events, one text message each, ending with
// response.completed; the client's response.processed acknowledgements
// get no answer). A call may name a previous_response_id: its input
// then continues that response's input and output, as the API does. Any
// other message is echoed back as it came, so a test can check that
// frames pass both ways. permessage-deflate (RFC 7692, with context
// takeover) is accepted when the client offers it.

// Opcodes (RFC 6455 section 5.2).
const (
	OpText   = 1
	OpBinary = 2
	OpClose  = 8
	OpPing   = 9
	OpPong   = 10
)

const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

func wsAccept(key string) string {
	h := sha1.Sum([]byte(key + wsGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

// A WSConn is one side of a WebSocket: the test's client (Dial) or the
// upstream's end. Not safe for concurrent writes.
type WSConn struct {
	c       net.Conn
	br      *bufio.Reader
	client  bool // masks what it sends
	deflate bool
	// fw compresses what this side sends (one stream: context
	// takeover); fr and dict inflate what it receives.
	fw   *flate.Writer
	fbuf bytes.Buffer
	fr   io.ReadCloser
	dict []byte
}

// Dial opens a WebSocket to base (an http:// URL) at path with the
// headers given; deflate offers permessage-deflate. The upgrade's
// response is returned with the connection.
func Dial(base, path string, h http.Header, deflate bool) (*WSConn, *http.Response, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, nil, err
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		return nil, nil, err
	}
	var k [16]byte
	rand.Read(k[:])
	key := base64.StdEncoding.EncodeToString(k[:])
	req, _ := http.NewRequest("GET", base+path, nil)
	for n, vs := range h {
		req.Header[n] = vs
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", key)
	if deflate {
		req.Header.Set("Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits")
	}
	if err := req.Write(c); err != nil {
		c.Close()
		return nil, nil, err
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		c.Close()
		return nil, resp, fmt.Errorf("upgrade: status %d", resp.StatusCode)
	}
	if resp.Header.Get("Sec-WebSocket-Accept") != wsAccept(key) {
		c.Close()
		return nil, resp, errors.New("upgrade: wrong Sec-WebSocket-Accept")
	}
	ws := &WSConn{c: c, br: br, client: true, deflate: strings.Contains(resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate")}
	return ws, resp, nil
}

// Close closes the connection (no closing handshake).
func (w *WSConn) Close() error { return w.c.Close() }

// WriteMessage sends one message, compressed when deflate was agreed
// (data messages), in frames of at most frag bytes (0: one frame).
func (w *WSConn) WriteMessage(op byte, msg []byte, frag int) error {
	rsv1 := false
	if w.deflate && op < 8 {
		if w.fw == nil {
			w.fw, _ = flate.NewWriter(&w.fbuf, flate.BestSpeed)
		}
		w.fbuf.Reset()
		w.fw.Write(msg)
		w.fw.Flush()
		msg = bytes.TrimSuffix(w.fbuf.Bytes(), []byte{0, 0, 0xff, 0xff})
		rsv1 = true
	}
	if frag <= 0 || op >= 8 {
		frag = max(len(msg), 1)
	}
	for first := true; first || len(msg) > 0; first = false {
		n := min(frag, len(msg))
		fop := byte(0)
		if first {
			fop = op
		}
		if err := w.writeFrame(fop, msg[:n], n == len(msg), rsv1 && first); err != nil {
			return err
		}
		msg = msg[n:]
	}
	return nil
}

func (w *WSConn) writeFrame(op byte, p []byte, fin, rsv1 bool) error {
	var h []byte
	b0 := op
	if fin {
		b0 |= 0x80
	}
	if rsv1 {
		b0 |= 0x40
	}
	h = append(h, b0)
	m := byte(0)
	if w.client {
		m = 0x80
	}
	switch {
	case len(p) < 126:
		h = append(h, m|byte(len(p)))
	case len(p) < 1<<16:
		h = append(h, m|126)
		h = binary.BigEndian.AppendUint16(h, uint16(len(p)))
	default:
		h = append(h, m|127)
		h = binary.BigEndian.AppendUint64(h, uint64(len(p)))
	}
	body := p
	if w.client {
		var k [4]byte
		rand.Read(k[:])
		h = append(h, k[:]...)
		body = make([]byte, len(p))
		for i := range p {
			body[i] = p[i] ^ k[i&3]
		}
	}
	_, err := w.c.Write(append(h, body...))
	return err
}

// ReadMessage reads the next data or close message (pings answered,
// pongs passed over), inflated when compressed.
func (w *WSConn) ReadMessage() (op byte, msg []byte, err error) {
	compressed := false
	for {
		var h [2]byte
		if _, err := io.ReadFull(w.br, h[:]); err != nil {
			return 0, nil, err
		}
		fop, fin := h[0]&0x0f, h[0]&0x80 != 0
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(w.br, b[:]); err != nil {
				return 0, nil, err
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(w.br, b[:]); err != nil {
				return 0, nil, err
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		var k [4]byte
		if h[1]&0x80 != 0 {
			if _, err := io.ReadFull(w.br, k[:]); err != nil {
				return 0, nil, err
			}
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(w.br, p); err != nil {
			return 0, nil, err
		}
		if h[1]&0x80 != 0 {
			for i := range p {
				p[i] ^= k[i&3]
			}
		}
		switch {
		case fop == OpPing:
			if err := w.writeFrame(OpPong, p, true, false); err != nil {
				return 0, nil, err
			}
			continue
		case fop == OpPong:
			continue
		case fop == OpClose:
			return OpClose, p, nil
		case fop != 0:
			op, compressed = fop, h[0]&0x40 != 0
		}
		msg = append(msg, p...)
		if fin {
			break
		}
	}
	if compressed {
		src := io.MultiReader(bytes.NewReader(msg), bytes.NewReader([]byte{0, 0, 0xff, 0xff, 1, 0, 0, 0xff, 0xff}))
		if w.fr == nil {
			w.fr = flate.NewReaderDict(src, w.dict)
		} else {
			w.fr.(flate.Resetter).Reset(src, w.dict)
		}
		if msg, err = io.ReadAll(w.fr); err != nil {
			return 0, nil, err
		}
		w.dict = append(w.dict, msg...)
		if len(w.dict) > 32<<10 {
			w.dict = w.dict[len(w.dict)-32<<10:]
		}
	}
	return op, msg, nil
}

// Accept upgrades r to a WebSocket (the server's side), agreeing to
// permessage-deflate when the client offers it; the caller closes it.
func Accept(w http.ResponseWriter, r *http.Request) (*WSConn, error) {
	key := r.Header.Get("Sec-WebSocket-Key")
	if key == "" {
		http.Error(w, `{"error":{"message":"not a websocket request"}}`, http.StatusBadRequest)
		return nil, errors.New("no Sec-WebSocket-Key")
	}
	c, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, err
	}
	ws := &WSConn{c: c, br: brw.Reader, deflate: strings.Contains(r.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate")}
	ext := ""
	if ws.deflate {
		ext = "Sec-WebSocket-Extensions: permessage-deflate\r\n"
	}
	_, err = fmt.Fprintf(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n%s\r\n", wsAccept(key), ext)
	if err != nil {
		c.Close()
		return nil, err
	}
	return ws, nil
}

// serveWebSocket upgrades r and answers its messages until the client
// closes.
func (u *Upstream) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/v1/responses") {
		http.Error(w, `{"error":{"message":"not a websocket endpoint"}}`, http.StatusBadRequest)
		return
	}
	ws, err := Accept(w, r)
	if err != nil {
		return
	}
	defer ws.Close()
	for {
		op, msg, err := ws.ReadMessage()
		if err != nil {
			return
		}
		if op == OpClose {
			ws.writeFrame(OpClose, msg, true, false)
			return
		}
		var body map[string]json.RawMessage
		var typ string
		if op == OpText && json.Unmarshal(msg, &body) == nil {
			json.Unmarshal(body["type"], &typ)
		}
		if typ == "response.processed" {
			continue // an acknowledgement: no answer
		}
		if typ != "response.create" {
			if ws.WriteMessage(op, msg, 0) != nil {
				return
			}
			continue
		}
		for _, ev := range u.wsCall(body) {
			if ws.WriteMessage(OpText, ev, 0) != nil {
				return
			}
		}
	}
}

// wsCall bills one response.create and returns its events.
func (u *Upstream) wsCall(body map[string]json.RawMessage) [][]byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	var items []json.RawMessage
	json.Unmarshal(body["input"], &items)
	var prev string
	json.Unmarshal(body["previous_response_id"], &prev)
	if prev != "" {
		past, ok := u.responses[prev]
		if !ok {
			b, _ := json.Marshal(map[string]any{"type": "error", "status": 400,
				"error": map[string]string{"type": "invalid_request_error", "message": "previous response " + prev + " not found"}})
			return [][]byte{b}
		}
		items = append(append([]json.RawMessage{}, past...), items...)
	}
	full := map[string]json.RawMessage{}
	for k, v := range body {
		full[k] = v
	}
	full["input"], _ = json.Marshal(items)
	delete(full, "previous_response_id")
	delete(full, "type")
	u.n++
	u.Calls++
	total, cached := u.openaiBill(full, "input")
	id := fmt.Sprintf("resp_%04d", u.n)
	out := json.RawMessage(`{"content":[{"text":"` + Output + `","type":"output_text"}],"role":"assistant","type":"message"}`)
	if u.responses == nil {
		u.responses = map[string][]json.RawMessage{}
	}
	u.responses[id] = append(items, out)
	resp := map[string]any{"id": id, "object": "response", "status": "completed", "model": "gpt-5.5",
		"output": []any{out},
		"usage":  map[string]any{"input_tokens": total, "input_tokens_details": map[string]int{"cached_tokens": cached}, "output_tokens": OutputTokens, "total_tokens": total + OutputTokens}}
	var evs [][]byte
	for _, e := range []any{
		map[string]any{"type": "response.created", "response": map[string]any{"id": id, "status": "in_progress"}},
		map[string]any{"type": "response.output_text.delta", "delta": Output[:5]},
		map[string]any{"type": "response.output_text.delta", "delta": Output[5:]},
		map[string]any{"type": "response.completed", "response": resp},
	} {
		b, _ := json.Marshal(e)
		evs = append(evs, b)
	}
	return evs
}
