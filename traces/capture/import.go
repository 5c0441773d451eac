package capture

import (
	"bytes"
	"io"
	"strings"

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
	if isTap(t) || isOTLP(t) {
		return true
	}
	t = bytes.TrimLeft(t[1:], " \t")
	return bytes.HasPrefix(t, []byte(`"request":`)) && bytes.Contains(t, []byte(`"url":`))
}

// isTap reports whether head starts a claude-tap trace, or a HAR archive
// written on one line.
func isTap(head []byte) bool {
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if !bytes.HasPrefix(t, []byte("{")) {
		return false
	}
	if bytes.HasPrefix(bytes.TrimLeft(t[1:], " \t"), []byte(`"log":`)) && bytes.Contains(t, []byte(`"entries":`)) {
		return true
	}
	return bytes.Contains(t, []byte(`"packets":`)) && (bytes.Contains(t, []byte(`"agent":`)) || bytes.Contains(t, []byte(`"session":`)))
}

// IsHARName reports whether a file is named as a HAR archive (*.har):
// one written over many lines has no first line to sniff.
func IsHARName(name string) bool { return strings.HasSuffix(strings.ToLower(name), ".har") }

// isOTLP reports whether head starts an OTLP JSON trace export.
func isOTLP(head []byte) bool {
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	return bytes.HasPrefix(t, []byte("{")) && bytes.HasPrefix(bytes.TrimLeft(t[1:], " \t\r\n"), []byte(`"resourceSpans"`))
}
