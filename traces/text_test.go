package traces_test

import (
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/tracetest"
)

// TestLimitDocument: a whole document read at once is refused past its
// bound, and read whole up to it.
func TestLimitDocument(t *testing.T) {
	if b, err := traces.ReadDocument(strings.NewReader("12345"), 5); err != nil || string(b) != "12345" {
		t.Errorf("at the bound: %q, %v", b, err)
	}
	if _, err := traces.ReadDocument(strings.NewReader("123456"), 5); err == nil || !strings.Contains(err.Error(), "over 0 MiB: not read") {
		t.Errorf("past the bound: %v", err)
	}
	e := &tracetest.Endless{C: ' ', Limit: 4 << 20}
	if _, err := traces.ReadDocument(e, 1<<20); err == nil || !strings.Contains(err.Error(), "over 1 MiB: not read") || e.N > 2<<20 {
		t.Errorf("endless: %v after %d bytes", err, e.N)
	}
}
