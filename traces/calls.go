package traces

// WarnNoCall is DropCallless' warning.
const WarnNoCall = "skipped session with no model call (nothing to replay)"

// DropCallless drops the sessions with no model call, with a WarnNoCall
// warning in w for each: there is nothing to replay or bill. keep, when
// set, keeps a session anyway (a shard's stub, whose events are not read
// yet).
func DropCallless(ss []*Session, w *Warnings, keep func(*Session) bool) []*Session {
	kept := ss[:0]
	for _, s := range ss {
		if !HasCall(s) && (keep == nil || !keep(s)) {
			w.AddPlace(s.ID, WarnNoCall)
			continue
		}
		kept = append(kept, s)
	}
	return kept
}

// HasCall reports whether s holds a model call (an assistant event).
func HasCall(s *Session) bool {
	for i := range s.Events {
		if s.Events[i].Kind == Assistant {
			return true
		}
	}
	return false
}
