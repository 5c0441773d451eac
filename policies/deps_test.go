package policies_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The policy packages are what a Go agent imports: they must not drag in
// the tokenizer's tables, gonum or the simulator. The agent supplies its own
// estimate.Tokenizer; the simulator wires estimate/tiktoken and
// estimate/fit.
func TestLightDependencies(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to list dependencies with")
	}
	banned := []string{
		"github.com/pkoukk/",                                  // tokenizer tables
		"github.com/dlclark/regexp2",                          // its pre-tokenizer
		"github.com/ctxsim/ctxsim/policies/estimate/tiktoken", // ours
		"gonum.org/",
		"github.com/ctxsim/ctxsim/policies/estimate/fit",
		"github.com/ctxsim/ctxsim/sim",
	}
	pkgs := []string{"policies", "policies/compact", "policies/cacheplan", "policies/prompt", "policies/estimate"}
	for _, p := range pkgs {
		out, err := exec.Command(goTool, "list", "-deps", "github.com/ctxsim/ctxsim/"+p).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", p, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 5 {
			t.Fatalf("go list -deps %s listed only %v", p, deps)
		}
		for _, d := range deps {
			for _, b := range banned {
				if d == b || strings.HasPrefix(d, b+"/") || (strings.HasSuffix(b, "/") && strings.HasPrefix(d, b)) {
					t.Errorf("%s depends on %s", p, d)
				}
			}
		}
	}
}
