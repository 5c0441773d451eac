package traces

import "slices"

// MarkCopied marks the calls a resumed session's log copied from the
// session it continues: an assistant event whose request id an earlier
// session (by start time) already logged is that conversation's history,
// not a call of its own, and its bill belongs to the earlier session
// (Claude Code copies the lines of the session it resumes into the new
// file; corpus kesslerio/attio-mcp-server: 39 calls of 278a2245 reappear
// in 9fa9888f). Such events get Meta MetaCopied and lose their Usage. It
// is idempotent.
func MarkCopied(ss []*Session) {
	order := slices.Clone(ss)
	slices.SortStableFunc(order, func(a, b *Session) int { return a.Start().Compare(b.Start()) })
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
				e.Usage = nil
				continue
			}
			owner[e.RequestID] = s
		}
	}
}
