package shard

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/synth"
)

func writeFleet(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range []string{"subagents", "cron"} {
		ss, err := synth.Generate(p, 3, 7, synth.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			f, err := os.Create(filepath.Join(dir, s.ID+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if err := traces.WriteSession(f, s); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
	return dir
}

// A shard reads headers, finds its tenants as the whole run does, and
// after Fill holds exactly the sessions traces.Open reads.
func TestOpenStubsThenFill(t *testing.T) {
	dir := writeFleet(t)
	ctx := context.Background()
	opts := traces.OpenOptions{Formats: []traces.Importer{traces.Native}}
	want, _, err := traces.Open(ctx, []string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, stubs, _, err := Open(ctx, []string{dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d sessions, want %d", len(got), len(want))
	}
	for i, s := range got {
		if len(s.Events) != 0 || len(s.Floor) != 0 || s.ID != want[i].ID {
			t.Fatalf("stub %d: id %s (want %s), %d events, %d floor blocks", i, s.ID, want[i].ID, len(s.Events), len(s.Floor))
		}
	}
	wt, gt := experiment.Tenants(want), experiment.Tenants(got)
	if len(wt) != len(gt) || len(wt) < 4 {
		t.Fatalf("%d tenants from stubs, %d from sessions", len(gt), len(wt))
	}
	for i := range wt {
		if wt[i].Key != gt[i].Key || len(wt[i].Sessions) != len(gt[i].Sessions) {
			t.Errorf("tenant %d: %s/%d from stubs, %s/%d from sessions", i, gt[i].Key, len(gt[i].Sessions), wt[i].Key, len(wt[i].Sessions))
		}
	}
	// Fill one shard's tenants: theirs become whole, the others stay stubs.
	sp := Spec{K: 1, N: 2}
	mine, at := sp.Tenants(gt)
	if len(mine) == 0 || len(mine) == len(gt) {
		t.Fatalf("shard 1/2 owns %d of %d tenants; pick a fleet that splits", len(mine), len(gt))
	}
	for j, tn := range mine {
		if tn.Key != wt[at[j]].Key {
			t.Errorf("owned tenant %s has index %d, which is %s", tn.Key, at[j], wt[at[j]].Key)
		}
		if err := stubs.Fill(ctx, tn.Sessions); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range got {
		if sp.Owns(tenantOf(gt, s)) != (len(s.Events) > 0) {
			t.Errorf("session %s: owned %v but %d events", s.ID, sp.Owns(tenantOf(gt, s)), len(s.Events))
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

func tenantOf(ts []experiment.Tenant, s *traces.Session) string {
	for _, t := range ts {
		for _, x := range t.Sessions {
			if x == s {
				return t.Key
			}
		}
	}
	return ""
}

// A stub whose full read fails validation is an error naming its line:
// one process would skip that session, but a shard has already placed it
// in a tenant, so it must not replay it.
func TestFillRefusesInvalid(t *testing.T) {
	dir := t.TempDir()
	ss, err := synth.Generate("cron", 1, 7, synth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := ss[0]
	s.Events[len(s.Events)-1].Time = s.Events[0].Time.Add(-time.Hour)
	f, err := os.Create(filepath.Join(dir, s.ID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := traces.WriteSession(f, s); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ctx := context.Background()
	got, stubs, _, err := Open(ctx, []string{dir}, traces.OpenOptions{Formats: []traces.Importer{traces.Native}})
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
	got, _, gw, err := Open(ctx, []string{dir, dir}, opts)
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
