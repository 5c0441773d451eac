package hindcache

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/sim/hindsight"
	"github.com/ctxsim/ctxsim/traces"
)

func result(cost float64) *hindsight.Result {
	return &hindsight.Result{CostUSD: cost, BoundUSD: cost / 2, Exact: true, Source: "search", SearchUSD: cost,
		Schedule: [][]prompt.Breakpoint{{{Block: 3, TTL: prompt.TTL1h}}, nil},
		Usage:    []traces.Usage{{Input: 1, CacheWrite1h: 2}, {CacheRead: 3}}, Cost: []float64{0.1, 1.0 / 3},
		PolicyUSD: 2, PolicyUsage: []traces.Usage{{Input: 4}, {Output: 5}}, PolicyCost: []float64{0.7, 0.2}}
}

// A result put is got back equal by the same build; another build, a key
// never put or a removed file is a miss; a spoiled file is a warning and a
// miss, never a wrong result.
func TestGetPut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hindsight")
	c := Open(dir, Options{Build: "b1"})
	k1, k2 := hindsight.Key{1}, hindsight.Key{2}
	if _, ok := c.Get(k1); ok {
		t.Fatal("a hit in an empty cache")
	}
	c.Put(k1, result(1.5))
	c.Put(k2, result(2.5))
	got, ok := c.Get(k1)
	if !ok || !reflect.DeepEqual(got, result(1.5)) {
		t.Fatalf("get: %v %+v", ok, got)
	}
	if st := c.Stats(); st != (Stats{Hits: 1, Puts: 2}) {
		t.Errorf("stats %+v", st)
	}
	if _, ok := Open(dir, Options{Build: "b2"}).Get(k1); ok {
		t.Error("another build's entry served")
	}
	if _, ok := c.Get(hindsight.Key{3}); ok {
		t.Error("a key never put served")
	}
	// Another build's entry is a silent miss, its result not even read
	// (a later format is not an error).
	k4 := hindsight.Key{4}
	if err := os.WriteFile(c.path(k4), encode("b0", k4, []byte("a format to come")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(k4); ok || len(c.Warnings()) != 0 {
		t.Errorf("another build's entry: served %v, warnings %q", ok, c.Warnings())
	}
	// Spoiled: a flipped byte, a cut file, another key's entry renamed in.
	p1, p2 := c.path(k1), c.path(k2)
	b, err := os.ReadFile(p1)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := os.ReadFile(p2)
	if err != nil {
		t.Fatal(err)
	}
	for name, spoil := range map[string][]byte{
		"bad checksum":                append(append([]byte{}, b[:20]...), append([]byte{b[20] ^ 1}, b[21:]...)...),
		"not a hindsight cache entry": b[:5],
		"entry of another key":        b2,
	} {
		if err := os.WriteFile(p1, spoil, 0o644); err != nil {
			t.Fatal(err)
		}
		c := Open(dir, Options{Build: "b1"})
		if _, ok := c.Get(k1); ok {
			t.Errorf("%s: served", name)
		}
		if w := c.Warnings(); len(w) != 1 || !strings.Contains(w[0], name) || !strings.Contains(w[0], "solved again") {
			t.Errorf("%s: warnings %q", name, w)
		}
	}
}

// Flush keeps the entries under MaxBytes, the most recently used.
func TestFlushBound(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	c := Open(dir, Options{Build: "b", Now: clock})
	c.Put(hindsight.Key{1}, result(1))
	fi, err := os.Stat(c.path(hindsight.Key{1}))
	if err != nil {
		t.Fatal(err)
	}
	size := fi.Size()
	c = Open(dir, Options{Build: "b", Now: clock, MaxBytes: 2 * size})
	for i := range 4 {
		k := hindsight.Key{byte(i + 1)}
		c.Put(k, result(1))
		at := now.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(c.path(k), at, at); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(time.Hour)
	if _, ok := c.Get(hindsight.Key{1}); !ok { // the oldest, used now
		t.Fatal("miss")
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false, false, true} {
		_, err := os.Stat(c.path(hindsight.Key{byte(i + 1)}))
		if kept := err == nil; kept != want {
			t.Errorf("entry %d kept %v, want %v", i+1, kept, want)
		}
	}
}

// A directory that cannot be written is one warning for the run, however
// many results are put, and nothing is kept.
func TestPutFailsOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := Open(filepath.Join(file, "hindsight"), Options{Build: "b"})
	for i := range 3 {
		c.Put(hindsight.Key{byte(i)}, result(1))
	}
	if w := c.Warnings(); len(w) != 1 || !strings.Contains(w[0], "nothing more kept this run") {
		t.Errorf("warnings %q", w)
	}
	if st := c.Stats(); st != (Stats{}) {
		t.Errorf("stats %+v", st)
	}
}

// TestPlantedFIFO: a FIFO planted as an entry made whatif wait in open(2)
// for a writer forever; it is a miss, warned.
func TestPlantedFIFO(t *testing.T) {
	c := Open(t.TempDir(), Options{Build: "b1"})
	k := hindsight.Key{1}
	if err := os.MkdirAll(filepath.Dir(c.path(k)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(c.path(k), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan bool, 1)
	go func() { _, ok := c.Get(k); got <- ok }()
	select {
	case ok := <-got:
		if w := c.Warnings(); ok || len(w) != 1 || !strings.Contains(w[0], "is a FIFO") {
			t.Errorf("hit %v, warnings %q", ok, w)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Get still waiting after 5 s")
	}
}
