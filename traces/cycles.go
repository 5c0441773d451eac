package traces

import (
	"slices"
	"strings"
)

// BreakParentCycles makes roots of the sessions whose Parent links form a
// cycle (a session that names itself, or a ring of them), which would
// otherwise send every walk up the tree round forever. Each cycle is
// reported once, as a warning naming its sessions in parent order from
// the smallest id; their Parent is cleared and they leave their former
// parent's Children.
func BreakParentCycles(ss []*Session, w *Warnings) {
	byID := make(map[string]*Session, len(ss))
	for _, s := range ss {
		if _, ok := byID[s.ID]; !ok {
			byID[s.ID] = s
		}
	}
	parent := func(s *Session) *Session {
		if s.Parent == "" {
			return nil
		}
		return byID[s.Parent]
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := make(map[*Session]int, len(ss))
	for _, s := range ss {
		var path []*Session
		cur := s
		for cur != nil && state[cur] == unseen {
			state[cur] = onPath
			path = append(path, cur)
			cur = parent(cur)
		}
		if cur != nil && state[cur] == onPath {
			cycle := path[slices.Index(path, cur):]
			start := 0
			for i, c := range cycle {
				if c.ID < cycle[start].ID {
					start = i
				}
			}
			ids := make([]string, 0, len(cycle)+1)
			for i := range cycle {
				ids = append(ids, cycle[(start+i)%len(cycle)].ID)
			}
			ids = append(ids, ids[0])
			w.Add(ids[0], 0, "kept sessions whose parents form a cycle ("+strings.Join(ids, " → ")+") as roots")
			for _, c := range cycle {
				if p := parent(c); p != nil {
					p.Children = slices.DeleteFunc(p.Children, func(id string) bool { return id == c.ID })
				}
			}
			for _, c := range cycle {
				c.Parent = ""
			}
		}
		for _, p := range path {
			state[p] = done
		}
	}
}
