package traces_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/synth"
)

func writeFleet(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range []string{"subagents", "cron"} {
		ss, err := synth.Generate(context.Background(), p, 3, 7, synth.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			writeTrace(t, dir, s)
		}
	}
	return dir
}

// writeTrace writes s to dir as a native trace named by its id.
func writeTrace(t *testing.T, dir string, s *traces.Session) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, s.ID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := traces.WriteSession(f, s); err != nil {
		t.Fatal(err)
	}
}

// Stubs hold every session's header, and after Fill of some the filled
// ones are exactly what traces.Open reads; after Fill of all, all are.
func TestOpenStubsThenFill(t *testing.T) {
	dir := writeFleet(t)
	ctx := context.Background()
	opts := traces.OpenOptions{Formats: []traces.Importer{traces.Native}}
	want, _, err := traces.Open(ctx, []string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	stubs := traces.NewStubs()
	opts.Stubs = stubs
	got, _, err := traces.Open(ctx, []string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(got) < 6 {
		t.Fatalf("%d sessions, want %d", len(got), len(want))
	}
	for i, s := range got {
		if len(s.Events) != 0 || len(s.Floor) != 0 || s.ID != want[i].ID || s.Parent != want[i].Parent || s.Tenant != want[i].Tenant || !stubs.Stub(s) {
			t.Fatalf("stub %d: id %s parent %q (want %s, %q), %d events, %d floor blocks", i, s.ID, s.Parent, want[i].ID, want[i].Parent, len(s.Events), len(s.Floor))
		}
	}
	// Fill every other session: those become whole, the others stay stubs.
	var some []*traces.Session
	for i := 0; i < len(got); i += 2 {
		some = append(some, got[i])
	}
	if err := stubs.Fill(ctx, some); err != nil {
		t.Fatal(err)
	}
	for i, s := range got {
		if filled := i%2 == 0; filled == stubs.Stub(s) || filled != (len(s.Events) > 0) {
			t.Errorf("session %s: filled %v, stub %v, %d events", s.ID, filled, stubs.Stub(s), len(s.Events))
		}
		if len(s.Events) > 0 && !reflect.DeepEqual(s, want[i]) {
			t.Errorf("session %s filled differs from traces.Open's", s.ID)
		}
	}
	if err := stubs.Fill(ctx, got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("after Fill of everything, sessions differ from traces.Open's")
	}
}

// A stub whose full read fails validation is an error naming its line:
// one process would skip that session, but a shard has already placed it
// in a tenant, so it must not replay it.
func TestFillRefusesInvalid(t *testing.T) {
	dir := t.TempDir()
	ss, err := synth.Generate(context.Background(), "cron", 1, 7, synth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := ss[0]
	s.Events[len(s.Events)-1].Time = s.Events[0].Time.Add(-time.Hour)
	writeTrace(t, dir, s)
	ctx := context.Background()
	stubs := traces.NewStubs()
	got, _, err := traces.Open(ctx, []string{dir}, traces.OpenOptions{Formats: []traces.Importer{traces.Native}, Stubs: stubs})
	if err != nil || len(got) != 1 {
		t.Fatalf("Open: %d sessions, %v", len(got), err)
	}
	err = stubs.Fill(ctx, got)
	if err == nil || !strings.Contains(err.Error(), s.ID+".jsonl:") || !strings.Contains(err.Error(), "session fails validation (time ") {
		t.Fatalf("Fill: %v, want a validation error at the file's line", err)
	}
	if !stubs.Stub(got[0]) {
		t.Error("the refused session is no longer a stub")
	}
}

// A directory given twice loads each session once, with traces.Open's
// warning, as one process does.
func TestOpenDedupes(t *testing.T) {
	dir := writeFleet(t)
	ctx := context.Background()
	opts := traces.OpenOptions{Formats: []traces.Importer{traces.Native}}
	want, ww, err := traces.Open(ctx, []string{dir, dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Stubs = traces.NewStubs()
	got, gw, err := traces.Open(ctx, []string{dir, dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d sessions, want %d", len(got), len(want))
	}
	if !reflect.DeepEqual(gw.List(), ww.List()) || gw.Len() != 1 {
		t.Errorf("warnings %+v, want %+v (one reason)", gw.List(), ww.List())
	}
}
