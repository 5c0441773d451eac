package capture

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/traces"
)

// A harEntry is one entry of a HAR 1.2 log (what browser devtools,
// mitmproxy's HAR export and Charles write): W3C's HTTP Archive format,
// log.entries[].{startedDateTime, request{method, url, headers[],
// postData{mimeType, text}}, response{status, headers[],
// content{mimeType, text, encoding}}}.
type harEntry struct {
	Started string `json:"startedDateTime"`
	Request struct {
		Method   string      `json:"method"`
		URL      string      `json:"url"`
		Headers  []harHeader `json:"headers"`
		PostData *struct {
			Text     string `json:"text"`
			Encoding string `json:"encoding"`
		} `json:"postData"`
	} `json:"request"`
	Response *struct {
		Status  int         `json:"status"`
		Headers []harHeader `json:"headers"`
		Content struct {
			MimeType string `json:"mimeType"`
			Text     string `json:"text"`
			Encoding string `json:"encoding"`
		} `json:"content"`
	} `json:"response"`
}

type harHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func harHeaders(hs []harHeader) map[string]string {
	out := make(map[string]string, len(hs))
	for _, h := range hs {
		out[h.Name] = h.Value
	}
	return out
}

// harText is a HAR body's text, decoded when the archive says base64.
func harText(text, encoding string) string {
	if encoding == "base64" {
		if b, err := base64.StdEncoding.DecodeString(text); err == nil {
			return string(b)
		}
	}
	return text
}

// harPairs reads the entries of a HAR log (raw is the log object, which
// starts at line base of the file).
func harPairs(raw json.RawMessage, base int, name string) ([]pair, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	fail := func(err error) ([]pair, error) {
		se := traces.JSONError(name, raw, err)
		se.Line += base - 1
		return nil, se
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, &traces.SyntaxError{File: name, Line: base, Msg: "log is not an object"}
	}
	var out []pair
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		if k != "entries" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(err)
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return nil, &traces.SyntaxError{File: name, Line: base + traces.LineAt(raw, dec.InputOffset()) - 1, Msg: "log.entries is not an array"}
		}
		for dec.More() {
			off := dec.InputOffset()
			var e harEntry
			if err := dec.Decode(&e); err != nil {
				return fail(err)
			}
			off += int64(len(raw[off:]) - len(bytes.TrimLeft(raw[off:], ", \t\r\n")))
			p := pair{line: base + traces.LineAt(raw, off) - 1, method: e.Request.Method, url: e.Request.URL,
				reqHeaders: harHeaders(e.Request.Headers)}
			if e.Started != "" {
				if t, err := time.Parse(time.RFC3339Nano, e.Started); err == nil {
					p.reqTime = t.UTC()
				} else {
					p.reqTimeBad = true
				}
			}
			if pd := e.Request.PostData; pd != nil {
				p.reqBody = json.RawMessage(harText(pd.Text, pd.Encoding))
			}
			if r := e.Response; r != nil {
				p.hasResp, p.status, p.respHeaders = true, r.Status, harHeaders(r.Headers)
				text := harText(r.Content.Text, r.Content.Encoding)
				if strings.HasPrefix(r.Content.MimeType, "text/event-stream") {
					p.respRaw = text
				} else if t := strings.TrimSpace(text); t != "" {
					p.respBody = json.RawMessage(t)
				}
			}
			out = append(out, p)
		}
		if _, err := dec.Token(); err != nil {
			return fail(err)
		}
	}
	return out, nil
}
