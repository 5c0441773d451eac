package storyargs

import (
	"flag"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// Joined maps each argument's key to its values joined by ",".
func Joined(d *datadriven.TestData) map[string]string {
	m := map[string]string{}
	for _, a := range d.CmdArgs {
		m[a.Key] = strings.Join(a.Vals, ",")
	}
	return m
}

// Lists maps each argument's key to its values.
func Lists(d *datadriven.TestData) map[string][]string {
	m := map[string][]string{}
	for _, a := range d.CmdArgs {
		m[a.Key] = a.Vals
	}
	return m
}

func value[V string | []string](v V) string {
	switch x := any(v).(type) {
	case []string:
		return strings.Join(x, ",")
	case string:
		return x
	}
	return ""
}

// Int is the integer value of k, def when k is absent; a value that is
// not an integer fails the test.
func Int[V string | []string](t testing.TB, a map[string]V, k string, def int) int {
	t.Helper()
	v, ok := a[k]
	if !ok {
		return def
	}
	n, err := strconv.Atoi(value(v))
	if err != nil {
		t.Fatalf("%s=%q: %v", k, value(v), err)
	}
	return n
}

// Duration is the duration value of k (time.ParseDuration); an absent or
// malformed value fails the test.
func Duration[V string | []string](t testing.TB, a map[string]V, k string) time.Duration {
	t.Helper()
	v, ok := a[k]
	if !ok {
		t.Fatalf("want %s=DURATION", k)
	}
	d, err := time.ParseDuration(value(v))
	if err != nil {
		t.Fatalf("%s=%q: %v", k, value(v), err)
	}
	return d
}

// Walk runs every story file under dir, each with a fresh handler from
// newStory; rewrite (a test's -update flag) rewrites the expected outputs
// through datadriven's own -rewrite.
func Walk(t *testing.T, dir string, rewrite bool, newStory func() func(*testing.T, *datadriven.TestData) string) {
	if rewrite {
		if err := flag.Set("rewrite", "true"); err != nil {
			t.Fatal(err)
		}
	}
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		datadriven.RunTest(t, path, newStory())
	})
}
