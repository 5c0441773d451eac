package results

import (
	"errors"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/traces/tracetest"

	"github.com/ctxsim/ctxsim/traces"
)

// TestReadEndless: check --results /dev/zero read the file into memory
// without end (killed at 30 s); junk is refused at its first byte, naming
// line 1 (endless blanks are refused past MaxFile: traces.TestLimitDocument).
func TestReadEndless(t *testing.T) {
	for _, c := range []byte{0, 'y'} {
		e := &tracetest.Endless{C: c, Limit: 64 << 20}
		_, err := Read(e, "/dev/zero")
		var se *traces.SyntaxError
		if !errors.As(err, &se) || se.File != "/dev/zero" || se.Line != 1 || !strings.Contains(se.Msg, "invalid character") || e.N > 1<<20 {
			t.Errorf("%q without end: %v after %d bytes", c, err, e.N)
		}
	}
}
