package shard

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ctxsim/ctxsim/experiment"
	"github.com/ctxsim/ctxsim/traces"
)

// Stubs are the sessions of a run read from native traces by header only,
// and where to read the rest: a shard finds its tenants from every
// session's id, parent and tenant, then reads in full only the sessions
// it owns, so its memory is its own tenants', not the fleet's.
type Stubs struct {
	at map[*traces.Session]stubRef
}

// Stub says whether s is a stub not yet read in full: its events are not
// known, so whether it has a model call is not either.
func (st *Stubs) Stub(s *traces.Session) bool {
	_, ok := st.at[s]
	return ok
}

type stubRef struct {
	src  traces.Input
	file string
}

// Open reads paths as traces.Open does, in the same order and with the
// same tenants, except that a native trace (a file, or the .jsonl files
// under a directory) is read only up to its header line: its session has
// no events and no floor until Fill reads it. Other formats are imported
// in full (convert them with ctxsim import to get the bound).
func Open(ctx context.Context, paths []string, opts traces.OpenOptions) ([]*traces.Session, *Stubs, *traces.Warnings, error) {
	stubs := &Stubs{at: map[*traces.Session]stubRef{}}
	var out []*traces.Session
	warn := &traces.Warnings{}
	for _, p := range paths {
		imp, src, err := pick(ctx, p, opts)
		if err != nil {
			return nil, nil, nil, err
		}
		if imp != traces.Native || src.Dir == "" {
			ss, w, err := traces.Open(ctx, []string{p}, opts)
			if err != nil {
				return nil, nil, nil, err
			}
			warn.Merge(w)
			out = append(out, ss...)
			continue
		}
		files, err := src.Files(ctx, func(n string) bool { return strings.HasSuffix(n, ".jsonl") }, warn)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, f := range files {
			s, err := readHeader(src, f)
			if err != nil {
				return nil, nil, nil, err
			}
			stubs.at[s] = stubRef{src, f}
			out = append(out, s)
		}
	}
	// One session per id, the first, as traces.Open keeps: one session
	// counted twice doubles every figure. (traces.Open's parent-cycle
	// breaking is not repeated on stubs: it would change the parents Fill
	// checks against the file.)
	seen := make(map[string]bool, len(out))
	kept := out[:0]
	for _, s := range out {
		if seen[s.ID] {
			warn.AddPlace(s.ID, traces.WarnDupSession)
			continue
		}
		seen[s.ID] = true
		kept = append(kept, s)
	}
	return kept, stubs, warn, nil
}

func pick(ctx context.Context, p string, opts traces.OpenOptions) (traces.Importer, traces.Input, error) {
	src, err := traces.PathInput(p, opts.Stdin)
	if err != nil {
		return nil, traces.Input{}, err
	}
	var imp traces.Importer
	if opts.From != "" {
		imp, err = traces.Lookup(opts.Formats, opts.From)
	} else {
		imp, err = traces.Detect(ctx, src, opts.Formats)
	}
	return imp, src, err
}

// readHeader reads file's header line only; the floor is dropped, as the
// tenant needs only ids.
func readHeader(src traces.Input, file string) (*traces.Session, error) {
	fh, err := src.FS.Open(file)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	r := traces.NewReader(fh, src.Display(file))
	if err := r.Err(); err != nil {
		return nil, err
	}
	s := r.Session()
	s.Floor = nil
	return s, nil
}

// Fill reads in full every stub among sessions, in place: the pointers
// stay, so tenants built from the stubs now hold whole sessions, and each
// keeps the Tenant its stub has (a caller may have set it). A trace whose
// id or parent changed since Open is an error.
func (st *Stubs) Fill(ctx context.Context, sessions []*traces.Session) error {
	for _, s := range sessions {
		ref, ok := st.at[s]
		if !ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		full, err := readFull(ref)
		if err != nil {
			return err
		}
		if full.ID != s.ID || full.Parent != s.Parent {
			return fmt.Errorf("%s: changed while the shard was reading it", ref.src.Display(ref.file))
		}
		// The tenant the caller gave the stub (fidelity makes every
		// session its own account) is the one it was grouped by.
		full.Tenant = s.Tenant
		*s = *full
		delete(st.at, s)
	}
	return nil
}

func readFull(ref stubRef) (*traces.Session, error) {
	fh, err := ref.src.FS.Open(ref.file)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	name := ref.src.Display(ref.file)
	s, err := traces.ReadSession(io.Reader(fh), name)
	if err != nil {
		return nil, err
	}
	// Validate before replay, as the native importer does; one process
	// skips such a session, but a shard has already placed it in a tenant
	// by its header, so the shard fails instead of replaying it.
	if ps := traces.Validate(s); len(ps) > 0 {
		return nil, fmt.Errorf("%s:%d: session fails validation (%s; see ctxsim validate): fix or remove it to shard this run", name, ps[0].Line(), ps[0].Msg)
	}
	return s, nil
}

// Tenants are the tenants of ts that s owns (by tenant key), and each
// one's index in ts: its place in the unsharded run.
func (s Spec) Tenants(ts []experiment.Tenant) ([]experiment.Tenant, []int) {
	var out []experiment.Tenant
	var at []int
	for i, t := range ts {
		if s.Owns(t.Key) {
			out = append(out, t)
			at = append(at, i)
		}
	}
	return out, at
}
