package traces

import (
	"context"
	"fmt"
	"strings"
)

// Stubs are sessions read from native traces by header only (Open with
// OpenOptions.Stubs), and where to read the rest: a shard of a run finds
// its tenants from every session's id, parent and tenant, then reads in
// full only the sessions it owns (Fill), so its memory is its own
// tenants', not the fleet's.
type Stubs struct {
	at map[*Session]stubRef
}

type stubRef struct {
	src  Input
	file string
	// parent is the header's: Open may clear a stub's Parent to break a
	// cycle, as it does a whole session's.
	parent string
}

// NewStubs is an empty set of stubs for Open to fill.
func NewStubs() *Stubs { return &Stubs{at: map[*Session]stubRef{}} }

// Stub says whether s is a stub not yet read in full: its events are not
// known, so whether it has a model call is not either.
func (st *Stubs) Stub(s *Session) bool {
	_, ok := st.at[s]
	return ok
}

// readHeaders reads the header line of every native trace under src, one
// stub each.
func (st *Stubs) readHeaders(ctx context.Context, src Input, w *Warnings) ([]*Session, error) {
	files, err := src.Files(ctx, func(n string) bool { return strings.HasSuffix(n, ".jsonl") }, w)
	if err != nil {
		return nil, err
	}
	var out []*Session
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s, err := readHeader(src, f)
		if err != nil {
			return nil, err
		}
		st.at[s] = stubRef{src, f, s.Parent}
		out = append(out, s)
	}
	return out, nil
}

// readHeader reads file's header line only; the floor is dropped, as the
// tenant needs only ids.
func readHeader(src Input, file string) (*Session, error) {
	fh, err := src.FS.Open(file)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	r := NewReader(fh, src.Display(file))
	if err := r.Err(); err != nil {
		return nil, err
	}
	s := r.Session()
	s.Floor = nil
	return s, nil
}

// Fill reads in full every stub among sessions, in place: the pointers
// stay, so tenants built from the stubs now hold whole sessions, and each
// keeps the Tenant, Parent and Children its stub has (a caller may have
// set the tenant; Open may have broken a parent cycle). A trace whose id or
// parent changed since Open is an error, as is one that fails validation.
func (st *Stubs) Fill(ctx context.Context, sessions []*Session) error {
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
		if full.ID != s.ID || full.Parent != ref.parent {
			return fmt.Errorf("%s: changed while the shard was reading it", ref.src.Display(ref.file))
		}
		// The tenant the caller gave the stub (fidelity makes every
		// session its own account) is the one it was grouped by.
		full.Tenant, full.Parent, full.Children = s.Tenant, s.Parent, s.Children
		*s = *full
		delete(st.at, s)
	}
	return nil
}

func readFull(ref stubRef) (*Session, error) {
	fh, err := ref.src.FS.Open(ref.file)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	name := ref.src.Display(ref.file)
	s, err := ReadSession(fh, name)
	if err != nil {
		return nil, err
	}
	// Validate before replay, as the native importer does; one process
	// skips such a session, but a shard has already placed it in a tenant
	// by its header, so the shard fails instead of replaying it.
	if ps := Validate(s); len(ps) > 0 {
		return nil, fmt.Errorf("%s:%d: session fails validation (%s; see ctxsim validate): fix or remove it to shard this run", name, ps[0].Line(), ps[0].Msg)
	}
	placeNative(s, name)
	return s, nil
}

// placeNative sets where a native trace's events were read, for warnings:
// event i is line i+2 of file, as Validate counts.
func placeNative(s *Session, file string) {
	s.File = file
	for i := range s.Events {
		s.Events[i].Line = int32(i + 2)
	}
}
