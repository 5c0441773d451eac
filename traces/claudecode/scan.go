package claudecode

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ctxsim/ctxsim/traces"
)

// SessionUsage is what one Claude Code log file billed: its calls, each
// counted once.
type SessionUsage struct {
	ID string
	// Parent is the parent session of a subagent file, else "".
	Parent string
	// Compaction marks an agent-acompact-* file: a compaction's summarizer
	// call.
	Compaction bool
	// File is the file the calls were read from (as displayed).
	File string
	// FromProgress marks a subagent known only from the progress lines of
	// its parent's log (Claude Code 2.1 echoes each subagent response there;
	// its own agent-*.jsonl may be missing).
	FromProgress bool
	// Model is the first call's model.
	Model string
	Start time.Time
	Calls []Call
}

// Call is one billed API response.
type Call struct {
	// Time is the timestamp of the first line with its final usage (zero
	// when it has none), as ccusage dates a call.
	Time  time.Time
	Model string
	// MessageID and RequestID identify the response (the dedupe key).
	MessageID, RequestID string
	Usage                traces.Usage
}

// Total is the sum of the calls' usage.
func (s *SessionUsage) Total() traces.Usage {
	var u traces.Usage
	for i := range s.Calls {
		u = u.Add(s.Calls[i].Usage)
	}
	return u
}

// usageLine is the little of a line the cost path decodes.
type usageLine struct {
	Type      string        `json:"type"`
	SessionID string        `json:"sessionId"`
	AgentID   string        `json:"agentId"`
	Timestamp string        `json:"timestamp"`
	RequestID string        `json:"requestId"`
	Message   *usageMessage `json:"message"`
	// Data is a progress line's payload: a subagent's response, echoed in
	// its parent's log.
	Data *struct {
		AgentID string `json:"agentId"`
		Message *struct {
			Type      string        `json:"type"`
			Timestamp string        `json:"timestamp"`
			RequestID string        `json:"requestId"`
			Message   *usageMessage `json:"message"`
		} `json:"message"`
	} `json:"data"`
}

type usageMessage struct {
	ID    string    `json:"id"`
	Model string    `json:"model"`
	Usage *rawUsage `json:"usage"`
}

// ScanUsage is the fast path of `ctxsim cost`: it reads only the billed
// usage of the Claude Code logs under paths (files, or directories searched
// for .jsonl), without building transcripts. A line is decoded only when it
// can be a billed call (it contains "usage" or "type":"assistant"), and then
// only into the few fields cost needs; files are read on all cores. Results
// are sorted by session id, whatever the read order.
//
// A response spread over several lines is counted once, with the usage of
// its last line (the final one; earlier lines carry partial output counts).
// A response seen in more than one file (a resumed session copies its
// history) is counted in the first file in path order, with a warning.
//
// Claude Code 2.1 echoes each subagent response in a progress line of the
// parent's log (data.message, with data.agentId). Those count too, as
// ccusage 20.0.24 counts them, under the subagent's id
// (<session>.agent-<agent>), but only when no log file holds the same
// response: the subagent's own agent-*.jsonl wins, without a warning.
//
// Lines that are not calls are not validated: a damaged progress line costs
// nothing and is not reported (the full importer reports it).
func ScanUsage(paths ...string) ([]*SessionUsage, *traces.Warnings, error) {
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, nil, fmt.Errorf("claudecode: %w", err)
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		fsys := os.DirFS(p)
		fs0, err := listFiles(fsys, ".")
		if err != nil {
			return nil, nil, err
		}
		for _, f := range fs0 {
			full := filepath.Join(p, filepath.FromSlash(f))
			files = append(files, full)
		}
	}
	read, ws, err := readFiles(len(files), func(i int) (io.ReadCloser, error) { return os.Open(files[i]) },
		func(i int, r io.Reader, w *traces.Warnings) (fileUsage, error) { return scanFile(r, files[i], w) })
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	var out []*SessionUsage
	byID := map[string]*SessionUsage{}
	for _, f := range read {
		s := f.main
		if s == nil {
			continue
		}
		kept := s.Calls[:0]
		for _, c := range s.Calls {
			k := callKey(c.MessageID, c.RequestID)
			if k != "" && seen[k] {
				ws.Add(s.File, 0, warnDupCallGlobal)
				continue
			}
			seen[k] = true
			kept = append(kept, c)
		}
		s.Calls = kept
		if len(s.Calls) > 0 {
			out = append(out, s)
			if byID[s.ID] == nil {
				byID[s.ID] = s
			}
		}
	}
	for _, f := range read {
		for _, s := range f.agents {
			kept := s.Calls[:0]
			for _, c := range s.Calls {
				if k := callKey(c.MessageID, c.RequestID); k == "" || !seen[k] {
					seen[k] = true
					kept = append(kept, c)
				}
			}
			s.Calls = kept
			switch {
			case len(s.Calls) == 0:
			case byID[s.ID] != nil:
				byID[s.ID].Calls = append(byID[s.ID].Calls, s.Calls...)
			default:
				byID[s.ID] = s
				out = append(out, s)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, ws, nil
}

// fileUsage is what one file holds: its own calls, and the subagent
// responses its progress lines echo, by agent in order of first sight.
type fileUsage struct {
	main   *SessionUsage
	agents []*SessionUsage
}

// scanFile reads the calls of one file. Calls keep the order of their first
// line; a later line of the same call replaces its usage.
func scanFile(r io.Reader, name string, w *traces.Warnings) (fileUsage, error) {
	s := &SessionUsage{File: name}
	idx := map[string]int{}
	var agents []*SessionUsage
	agentIdx := map[string]int{}
	progressIdx := map[string][2]int{}
	lr := newLineReader(r)
	for {
		b, ok, err := lr.next()
		if err != nil {
			return fileUsage{}, fmt.Errorf("%s:%d: %w", name, lr.line+1, err)
		}
		if !ok {
			break
		}
		if lr.long {
			w.Add(name, lr.line, warnTooLong)
			continue
		}
		if !bytes.Contains(b, keyUsage) && !bytes.Contains(b, keyAssistant) {
			continue
		}
		var l usageLine
		if !decodeLine(b, lr.eof, &l, w, name, lr.line) {
			continue
		}
		if l.Type == "progress" {
			if d := l.Data; d != nil && d.AgentID != "" && d.Message != nil && d.Message.Type == "assistant" &&
				d.Message.Message != nil && d.Message.Message.Usage != nil && d.Message.Message.Model != syntheticModel && l.SessionID != "" {
				m := d.Message.Message
				u, _ := m.Usage.usage()
				at, _ := parseTime(d.Message.Timestamp)
				key := callKey(m.ID, d.Message.RequestID)
				if ix, ok := progressIdx[key]; ok && key != "" {
					if c := &agents[ix[0]].Calls[ix[1]]; c.Usage != u {
						c.Usage, c.Time = u, at
					}
					continue
				}
				ai, ok := agentIdx[d.AgentID]
				if !ok {
					id, parent, compaction := identity(l.SessionID, d.AgentID)
					ai = len(agents)
					agentIdx[d.AgentID] = ai
					agents = append(agents, &SessionUsage{ID: id, Parent: parent, Compaction: compaction, File: name, FromProgress: true, Model: m.Model, Start: at})
				}
				a := agents[ai]
				if key != "" {
					progressIdx[key] = [2]int{ai, len(a.Calls)}
				}
				a.Calls = append(a.Calls, Call{Time: at, Model: m.Model, MessageID: m.ID, RequestID: d.Message.RequestID, Usage: u})
			}
			continue
		}
		if l.Type != "assistant" {
			continue
		}
		if l.Message == nil {
			w.Add(name, lr.line, warnNoMessage)
			continue
		}
		if l.Message.Model == syntheticModel {
			w.Add(name, lr.line, warnSynthetic)
			continue
		}
		if s.ID == "" && l.SessionID != "" {
			s.ID, s.Parent, s.Compaction = identity(l.SessionID, l.AgentID)
		}
		at, _ := parseTime(l.Timestamp)
		if s.Start.IsZero() {
			s.Start = at
		}
		if l.Message.Usage == nil {
			w.Add(name, lr.line, warnNoUsage)
			continue
		}
		u, split := l.Message.Usage.usage()
		key := callKey(l.Message.ID, l.RequestID)
		if i, ok := idx[key]; ok && key != "" {
			// The last line has the final usage. ccusage dates the call
			// by the line whose usage it keeps: the first, until a later
			// line changes it (tool_heavy.jsonl's streamed output).
			if s.Calls[i].Usage != u {
				s.Calls[i].Usage, s.Calls[i].Time = u, at
			}
			continue
		}
		if !split {
			w.Add(name, lr.line, warnNoSplit)
		}
		if key != "" {
			idx[key] = len(s.Calls)
		}
		s.Calls = append(s.Calls, Call{Time: at, Model: l.Message.Model, MessageID: l.Message.ID, RequestID: l.RequestID, Usage: u})
		if s.Model == "" {
			s.Model = l.Message.Model
		}
	}
	if len(s.Calls) == 0 {
		return fileUsage{agents: agents}, nil
	}
	if s.ID == "" {
		s.ID = strings.TrimSuffix(filepath.Base(name), ".jsonl")
	}
	return fileUsage{main: s, agents: agents}, nil
}

// readFiles opens and reads files 0..n-1 on at most GOMAXPROCS goroutines.
// Results and warnings come back in file order, so output never depends on
// scheduling; the first error in file order wins.
func readFiles[T any](n int, open func(i int) (io.ReadCloser, error),
	read func(i int, r io.Reader, w *traces.Warnings) (T, error)) ([]T, *traces.Warnings, error) {
	out := make([]T, n)
	ws := make([]traces.Warnings, n)
	errs := make([]error, n)
	one := func(i int) {
		f, err := open(i)
		if err != nil {
			errs[i] = fmt.Errorf("claudecode: %w", err)
			return
		}
		defer f.Close()
		out[i], errs[i] = read(i, f, &ws[i])
	}
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			one(i)
		}
	} else {
		var wg sync.WaitGroup
		next := make(chan int)
		for range workers {
			wg.Go(func() {
				for i := range next {
					one(i)
				}
			})
		}
		for i := range n {
			next <- i
		}
		close(next)
		wg.Wait()
	}
	var all traces.Warnings
	for i := range n {
		if errs[i] != nil {
			return nil, nil, errs[i]
		}
		all.Merge(&ws[i])
	}
	return out, &all, nil
}
