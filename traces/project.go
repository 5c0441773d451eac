package traces

import (
	"path"
	"path/filepath"
)

// GroupProjects gives the sessions of one folder and project an account,
// when their layout named none: a log whose sessions began in the same
// working directory (Session.Project) as another file's in the same
// folder. Claude Code files every session of a project in one folder
// named by the directory it started in (~/.claude/projects/<cwd>/), so
// such a folder, copied or exported under another name, is one login's
// sessions, which shared the provider's cache (issue 22: a floor one
// session wrote, another read). A file alone in its folder and project
// keeps no account and is replayed alone, as before; subagent sessions
// follow their file's. Idempotent: an account once given stays.
func GroupProjects(ss []*Session) {
	type key struct{ format, dir, project string }
	keyOf := func(s *Session) (key, bool) {
		if s.Account != "" || s.Project == "" || s.File == "" || s.Parent != "" {
			return key{}, false
		}
		return key{s.Format, path.Dir(filepath.ToSlash(s.File)), s.Project}, true
	}
	files := map[key]map[string]bool{}
	for _, s := range ss {
		if k, ok := keyOf(s); ok {
			if files[k] == nil {
				files[k] = map[string]bool{}
			}
			files[k][s.File] = true
		}
	}
	acct := map[string]string{} // file → account
	for _, s := range ss {
		if k, ok := keyOf(s); ok && len(files[k]) > 1 {
			acct[s.File] = k.format + ":" + k.dir + "#" + k.project
		}
	}
	for _, s := range ss {
		if a, ok := acct[s.File]; ok && s.Account == "" {
			s.Account = a
		}
	}
}
