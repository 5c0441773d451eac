package usage

import (
	"context"
	"io"
	"path/filepath"
	"slices"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/claudecode"
	"github.com/ctxsim/ctxsim/traces/formats"
	"github.com/ctxsim/ctxsim/traces/hermes"
)

// Load reads the billed calls of the sessions at paths (files or trees;
// "-" is stdin): Claude Code logs on disk by claudecode.ScanUsage, which
// decodes only the lines carrying usage, everything else through the
// importers. from forces a format by name ("" detects it). A session seen
// twice counts once, with a warning.
func Load(ctx context.Context, paths []string, from string, stdin io.Reader) ([]Session, *traces.Warnings, error) {
	if from == "" && !slices.Contains(paths, "-") && !slices.ContainsFunc(paths, namedFormat) {
		// Most trees are Claude Code logs alone: scan them at once, each
		// file's format checked by the worker that reads it, as Detect
		// and MixedFiles would find it. Anything else, or any error,
		// takes the general way below, which reports it as it always has.
		us, ws, all, err := claudecode.ScanUsageIf(ctx, isClaudeCode, paths...)
		if err == nil && all {
			return sessionsOf(us), ws, nil
		}
	}
	return load(ctx, paths, from, stdin)
}

// load is Load's general way: the paths opened as traces.Open opens them
// (each format detected, a directory of several formats split into its
// files, a session reached twice kept once, a request id billed once),
// but for Claude Code logs on disk, which are scanned together at the end.
func load(ctx context.Context, paths []string, from string, stdin io.Reader) ([]Session, *traces.Warnings, error) {
	var ccPaths []string
	fromPath := map[*traces.Session]string{}
	imported, ws, err := traces.Open(ctx, paths, traces.OpenOptions{Formats: formats.All(), From: from, Stdin: stdin,
		Take: func(f traces.Importer, p string) bool {
			if f == formats.ClaudeCode && p != "-" {
				ccPaths = append(ccPaths, p)
				return true
			}
			return false
		},
		Source: func(s *traces.Session, p string) { fromPath[s] = p },
	})
	if err != nil {
		return nil, &traces.Warnings{}, err
	}
	var out []Session
	for _, s := range imported {
		p := fromPath[s]
		cs := Session{ID: s.ID, Parent: s.Parent, Start: s.Start(), Project: filepath.Base(filepath.Clean(p)), File: p}
		if s.File != "" {
			cs.File = s.File // the file itself, its lines known: warnings name file:line
		}
		for i := range s.Events {
			ev := &s.Events[i]
			if ev.Kind == traces.Assistant && ev.Usage != nil {
				m := ev.Model
				if m == "" {
					m = s.Model
				}
				cs.Calls = append(cs.Calls, SessionCall{At: ev.Time, Model: m, Usage: *ev.Usage, Line: int(ev.Line)})
			}
		}
		if len(cs.Calls) == 0 {
			// hermes' state.db keeps per-session totals, not per call.
			if u, n, ok := hermes.Totals(s); ok && u.Prompt()+u.Output > 0 {
				cs.Calls = append(cs.Calls, SessionCall{At: s.Start(), Model: s.Model, Usage: u, Requests: int(max(n, 1))})
			}
		}
		if len(cs.Calls) > 0 {
			out = append(out, cs)
		}
	}
	if len(ccPaths) > 0 {
		ss, w, err := ScanClaudeCode(ctx, ccPaths...)
		if err != nil {
			return nil, ws, err
		}
		ws.Merge(w)
		out = append(out, ss...)
	}
	return out, ws, nil
}

// namedFormat reports whether a format takes the file p by its name (a
// state.db: traces.NameSniffer), which the Claude Code scan, sniffing
// heads, would take for a log.
func namedFormat(p string) bool {
	for _, f := range formats.All() {
		if ns, ok := f.(traces.NameSniffer); ok && ns.SniffName(filepath.Base(p)) {
			return true
		}
	}
	return false
}

// isClaudeCode reports whether a file whose first line starts with head
// is detected as a Claude Code log (the first of the formats to take it).
func isClaudeCode(head []byte) bool {
	return traces.Sniff(formats.All(), head) == formats.ClaudeCode
}

// ScanClaudeCode is claudecode.ScanUsage of the files or trees as Sessions.
func ScanClaudeCode(ctx context.Context, paths ...string) ([]Session, *traces.Warnings, error) {
	us, w, err := claudecode.ScanUsage(ctx, paths...)
	if err != nil {
		return nil, w, err
	}
	return sessionsOf(us), w, nil
}

// sessionsOf converts scanned usage to Sessions.
func sessionsOf(us []*claudecode.SessionUsage) []Session {
	var out []Session // nil when empty, as sharded cost cells encode it
	if len(us) > 0 {
		out = make([]Session, 0, len(us))
	}
	for _, u := range us {
		cs := Session{ID: u.ID, Parent: u.Parent, Start: u.Start, Project: ProjectOf(u.File), File: u.File,
			Calls: make([]SessionCall, 0, len(u.Calls))}
		for _, c := range u.Calls {
			cs.Calls = append(cs.Calls, SessionCall{At: c.Time, Model: c.Model, Usage: c.Usage, Line: c.Line, BadTime: c.BadTime})
		}
		out = append(out, cs)
	}
	return out
}
