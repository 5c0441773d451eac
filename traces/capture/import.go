package capture

import (
	"bytes"
	"io"

	"github.com/ctxsim/ctxsim/traces"
)

// ReadSessions reads one capture file and groups its calls into sessions.
func ReadSessions(r io.Reader, name string, w *traces.Warnings) ([]*traces.Session, error) {
	calls, err := Read(r, name, w)
	if err != nil {
		return nil, err
	}
	return Sessions(calls, name, w), nil
}

// Sniff reports whether a file whose first line starts with head is a
// capture: a claude-tap trace (a document with packets) or a claude-trace
// RawPair line.
func Sniff(head []byte) bool {
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if !bytes.HasPrefix(t, []byte("{")) {
		return false
	}
	if isTap(t) {
		return true
	}
	t = bytes.TrimLeft(t[1:], " \t")
	return bytes.HasPrefix(t, []byte(`"request":`)) && bytes.Contains(t, []byte(`"url":`))
}

// isTap reports whether head starts a claude-tap trace.
func isTap(head []byte) bool {
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	return bytes.HasPrefix(t, []byte("{")) && bytes.Contains(t, []byte(`"packets":`)) &&
		(bytes.Contains(t, []byte(`"agent":`)) || bytes.Contains(t, []byte(`"session":`)))
}
