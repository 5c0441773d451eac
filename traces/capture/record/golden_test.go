package record_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/traces/capture/record"
)

// chunky reads at most n bytes at a time: a body arriving in pieces.
type chunky struct {
	r io.Reader
	n int
}

func (c chunky) Read(b []byte) (int, error) { return c.r.Read(b[:min(len(b), c.n)]) }

// cannedTransport answers as cannedUpstream does, in-process and with no
// Date header, so that a line is the same bytes on every run; the answer
// arrives in 997-byte pieces.
type cannedTransport struct{}

func (cannedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	w := httptest.NewRecorder()
	cannedUpstream().ServeHTTP(w, req)
	resp := w.Result()
	resp.Body = io.NopCloser(chunky{resp.Body, 997})
	resp.Request = req
	return resp, nil
}

// The line of a long session's request (996 KB, as sent and
// pretty-printed over 1.3 MB) is whole and the same bytes as the
// recorder's before its capture work left the request's path (the hashes
// were taken from the recorder at that change's parent): its body is the
// request as sent, or compacted, and the streamed answer is kept whole.
func TestRecordLargeLineUnchanged(t *testing.T) {
	base, _ := url.Parse("http://upstream.test")
	compact := benchBody(true, 300)
	var pretty bytes.Buffer
	json.Indent(&pretty, []byte(benchBody(false, 300)), "", "  ")
	for _, c := range []struct {
		name, body, sum string
	}{
		{"sse-996KB", compact, "b9d793573ed2d1ee809286386be7f8bed2dd47ad822f16bda0e3659af109a02e"},
		{"json-pretty", pretty.String(), "9bc9bcb6498546d59043232b37c872a28e42d5e6d8aaf01bf84d8c7721a5bd60"},
	} {
		out := &syncBuf{}
		rec, err := record.New(record.Options{Anthropic: base, OpenAI: base, Out: out, Now: clock(), Transport: cannedTransport{}})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest("POST", "http://127.0.0.1:8082/v1/messages", chunky{strings.NewReader(c.body), 32 << 10})
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", key)
		w := httptest.NewRecorder()
		rec.ServeHTTP(w, req)
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		file := out.String()
		if w.Code != 200 || strings.Count(file, "\n") != 1 || !strings.HasSuffix(file, "}\n") || strings.Contains(file, "SECRET") {
			t.Fatalf("%s: status %d, %d lines, %d bytes", c.name, w.Code, strings.Count(file, "\n"), len(file))
		}
		var line struct {
			Request struct {
				Body json.RawMessage `json:"body"`
			} `json:"request"`
			Response struct {
				Body    json.RawMessage `json:"body"`
				BodyRaw string          `json:"body_raw"`
			} `json:"response"`
		}
		if err := json.Unmarshal([]byte(file), &line); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var want bytes.Buffer
		json.Compact(&want, []byte(c.body))
		if !bytes.Equal(line.Request.Body, want.Bytes()) || len(line.Response.Body)+len(line.Response.BodyRaw) < 2000 {
			t.Errorf("%s: request body %d bytes of %d, response %d+%d", c.name, len(line.Request.Body), want.Len(), len(line.Response.Body), len(line.Response.BodyRaw))
		}
		sum := sha256.Sum256([]byte(file))
		if got := hex.EncodeToString(sum[:]); got != c.sum {
			t.Errorf("%s: line of %d bytes, sha256 %s, want %s", c.name, len(file), got, c.sum)
		}
	}
}
