package traces

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// WarnCopiedCall is the warning for a call a session shares, by request
// id, with a session that started earlier: billed once, there. cost's
// scan of Claude Code logs (claudecode.ScanUsage) warns with it too.
const WarnCopiedCall = "skipped call already billed in another session (same request id: a resumed session copies the calls of the one it continues)"

// MarkCopied marks the calls a resumed session's log copied from the
// session it continues: an assistant event whose request id a session
// that started earlier already logged is that conversation's history,
// not a call of its own, and its bill belongs to the earlier session
// (Claude Code copies the lines of the session it resumes into the new
// file; corpus kesslerio/attio-mcp-server: 39 calls of 278a2245 reappear
// in 9fa9888f). Such events get Meta MetaCopied and lose their Usage, with
// a warning in w (nil: none) naming the copy's file:line (Place). It is
// idempotent.
//
// One rule for every command: a request id is billed once, by the session
// whose first call is earliest (ties: the smaller session id), as cost's
// scan of Claude Code logs bills it. (Two sessions sharing a request id
// were both billed by cost and one zeroed in silence by compare.)
func MarkCopied(ss []*Session, w *Warnings) {
	order := slices.Clone(ss)
	slices.SortStableFunc(order, func(a, b *Session) int {
		return CompareStart(FirstCall(a), a.ID, FirstCall(b), b.ID)
	})
	owner := map[string]*Session{}
	for _, s := range order {
		for i := range s.Events {
			e := &s.Events[i]
			if e.Kind != Assistant || e.RequestID == "" || e.Meta[MetaCopied] == "true" {
				continue
			}
			if o, ok := owner[e.RequestID]; ok && o != s {
				if e.Meta == nil {
					e.Meta = map[string]string{}
				}
				e.Meta[MetaCopied] = "true"
				if e.Usage != nil && w != nil {
					w.AddPlace(Place(s, i), WarnCopiedCall)
				}
				e.Usage = nil
				continue
			}
			owner[e.RequestID] = s
		}
	}
}

// Place names event i of s for a warning, as every bad-input warning
// names its input: File:Line; the file and the session when the line is
// not known; the session alone when the file is not.
func Place(s *Session, i int) string {
	switch {
	case s.File == "":
		return "session " + s.ID
	case s.Events[i].Line > 0:
		return fmt.Sprintf("%s:%d", s.File, s.Events[i].Line)
	}
	return s.File + " (session " + s.ID + ")"
}

// FirstCall is the time of s's first model call, the zero time if none.
func FirstCall(s *Session) time.Time {
	for i := range s.Events {
		if s.Events[i].Kind == Assistant {
			return s.Events[i].Time
		}
	}
	return time.Time{}
}

// CompareStart orders sessions by start time, a session without one last,
// then by id: which of two sessions sharing a request id bills it.
func CompareStart(a time.Time, aID string, b time.Time, bID string) int {
	switch {
	case a.IsZero() != b.IsZero():
		if a.IsZero() {
			return 1
		}
		return -1
	case !a.Equal(b):
		return a.Compare(b)
	}
	return cmp.Compare(aID, bID)
}
