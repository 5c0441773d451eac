package pricing

import (
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/traces/tracetest"
)

// TestLoadLiteLLMEndless: cost --prices /dev/zero read the file into
// memory without end; it is refused past MaxLiteLLMFile, the card left
// as it was.
func TestLoadLiteLLMEndless(t *testing.T) {
	c := Default()
	e := &tracetest.Endless{C: 0, Limit: MaxLiteLLMFile + 8<<20}
	err := c.LoadLiteLLM(e, "/dev/zero")
	if err == nil || !strings.Contains(err.Error(), "/dev/zero: over 64 MiB: not read") || e.N > MaxLiteLLMFile+1<<20 {
		t.Errorf("endless: %v after %d bytes", err, e.N)
	}
}
