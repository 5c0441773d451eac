package runner

import (
	"strings"

	"github.com/ctxsim/ctxsim/traces"
)

// A Tenant is sessions replayed together against one provider: one
// account's cache. A root session and its subagents always share one;
// sessions with the same traces.Session.Tenant (recorded logs loaded from
// one path) share one too.
type Tenant struct {
	Key      string
	Sessions []*traces.Session
	// Roots are the sessions rows are reported for; a subagent's records
	// are summarized under its root.
	Roots []*traces.Session
}

// blocks is the number of blocks in t's sessions, floors included: about
// how many distinct blocks its requests hold.
func (t Tenant) blocks() int {
	n := 0
	for _, s := range t.Sessions {
		n += len(s.Floor)
		for i := range s.Events {
			n += len(s.Events[i].Blocks)
		}
	}
	return n
}

// Tenants groups sessions by tenant, in first-seen order. A session is
// grouped under the root of its parent chain (walked to the top, not only
// to the immediate parent).
func Tenants(ss []*traces.Session) []Tenant {
	byID := map[string]*traces.Session{}
	for _, s := range ss {
		byID[s.ID] = s
	}
	root := func(s *traces.Session) *traces.Session {
		for s.Parent != "" {
			p, ok := byID[s.Parent]
			if !ok {
				break
			}
			s = p
		}
		return s
	}
	idx := map[string]int{}
	var out []Tenant
	for _, s := range ss {
		r := root(s)
		key := r.TenantID()
		if s.Tenant != "" {
			key = s.Tenant
		}
		i, ok := idx[key]
		if !ok {
			i = len(out)
			idx[key] = i
			out = append(out, Tenant{Key: key})
		}
		out[i].Sessions = append(out[i].Sessions, s)
		if r == s {
			out[i].Roots = append(out[i].Roots, s)
		}
	}
	return out
}

// rootOf maps every session of t to the root it is reported under.
func (t *Tenant) rootOf() map[string]string {
	m := map[string]string{}
	for _, r := range t.Roots {
		m[r.ID] = r.ID
	}
	for changed := true; changed; {
		changed = false
		for _, s := range t.Sessions {
			if _, ok := m[s.ID]; ok {
				continue
			}
			if r, ok := m[s.Parent]; ok {
				m[s.ID] = r
				changed = true
			}
		}
	}
	for _, s := range t.Sessions {
		if _, ok := m[s.ID]; !ok {
			m[s.ID] = s.ID
		}
	}
	return m
}

// HasRecorded reports whether any session of t carries recorded usage.
func (t *Tenant) HasRecorded() bool {
	for _, s := range t.Sessions {
		for i := range s.Events {
			if s.Events[i].Usage != nil {
				return true
			}
		}
	}
	return false
}

// WorkloadOf names the workload a session belongs to: its synthetic
// profile, or the format it was recorded in ("claude-code logs").
func WorkloadOf(s *traces.Session) string {
	if p, ok := strings.CutPrefix(s.Format, "synth:"); ok {
		return p
	}
	if s.Format == "" {
		return "native"
	}
	return strings.SplitN(s.Format, ":", 2)[0] + " logs"
}
