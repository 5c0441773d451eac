package ctxsim_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/ctxsim/ctxsim"

// layers are the floors of the package graph, bottom up: readers, prices,
// policies, engine, results, rendering, runner, CLI (DESIGN.md, "Layout").
// A package imports only its own floor's packages and lower floors'; so
// following a policy from the command line into the engine never climbs
// back up. A package belongs to the first floor with a prefix of its path.
var layers = []struct {
	name     string
	prefixes []string
}{
	{"base: embedded data, build, internal helpers", []string{module, module + "/internal/"}},
	{"readers", []string{module + "/traces"}},
	{"shards (a leaf: units, manifests, merge)", []string{module + "/shard"}},
	{"prices", []string{module + "/pricing"}},
	{"billed calls", []string{module + "/usage"}},
	{"policies", []string{module + "/policies"}},
	{"engine", []string{module + "/sim"}},
	{"results", []string{module + "/results"}},
	{"rendering", []string{module + "/report"}},
	{"runner", []string{module + "/runner"}},
	{"CLI", []string{module + "/cmd/"}},
}

// floor is the index in layers of package p.
func floor(p string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, pre := range l.prefixes {
			// The module's own package is itself alone; others own
			// their subtrees.
			match := p == pre || pre != module && (strings.HasPrefix(p, pre+"/") || strings.HasSuffix(pre, "/") && strings.HasPrefix(p, pre))
			if match && len(pre) > bestLen {
				best, bestLen = i, len(pre)
			}
		}
	}
	return best
}

// TestImportGraph pins the layering: no package imports one from a floor
// above its own, the shard package is a leaf (beside the readers it imports only the
// atomic writer and the line sealer; no package of the
// runner, results, rendering, engine, policies or billed calls), and
// nothing imports the CLI. It reads the graph with go list, test imports
// left out (an external test may import what it tests from above).
func TestImportGraph(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to list the packages with")
	}
	out, err := exec.Command(goTool, "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		p, imports := f[0], f[1:]
		pkgs++
		own := floor(p)
		if own < 0 {
			t.Errorf("%s is on no floor: add it to layers (and DESIGN.md)", p)
			continue
		}
		for _, imp := range imports {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			switch to := floor(imp); {
			case to > own:
				t.Errorf("%s (%s) imports %s (%s): a floor up", p, layers[own].name, imp, layers[to].name)
			case p == module+"/shard" && !slices.Contains([]string{module, module + "/internal/atomicfile", module + "/internal/sumline", module + "/traces"}, imp):
				t.Errorf("shard imports %s: it is a leaf", imp)
			}
		}
	}
	if pkgs < 30 {
		t.Fatalf("go list listed only %d packages", pkgs)
	}
}

// floor places packages by their longest matching prefix: the test above
// is only as good as this.
func TestFloor(t *testing.T) {
	for p, want := range map[string]string{
		module:                          "base",
		module + "/internal/atomicfile": "base",
		module + "/traces/claudecode":   "readers",
		module + "/sim/provider":        "engine",
		module + "/simx":                "",
		module + "/report/columnar":     "rendering",
		module + "/cmd/ctxsim":          "CLI",
	} {
		got := ""
		if i := floor(p); i >= 0 {
			got = layers[i].name
		}
		if !strings.HasPrefix(got, want) || (want == "" && got != "") {
			t.Errorf("floor(%s) = %q, want %q", p, got, want)
		}
	}
}
