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
	// Model is the first call's model.
	Model string
	Start time.Time
	Calls []Call
}

// Call is one billed API response.
type Call struct {
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
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
	AgentID   string `json:"agentId"`
	Timestamp string `json:"timestamp"`
	RequestID string `json:"requestId"`
	Message   *struct {
		ID    string    `json:"id"`
		Model string    `json:"model"`
		Usage *rawUsage `json:"usage"`
	} `json:"message"`
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
		func(i int, r io.Reader, w *traces.Warnings) (*SessionUsage, error) { return scanFile(r, files[i], w) })
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	var out []*SessionUsage
	for _, s := range read {
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
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, ws, nil
}

// scanFile reads the calls of one file. Calls keep the order of their first
// line; a later line of the same call replaces its usage.
func scanFile(r io.Reader, name string, w *traces.Warnings) (*SessionUsage, error) {
	s := &SessionUsage{File: name}
	idx := map[string]int{}
	lr := newLineReader(r)
	for {
		b, ok, err := lr.next()
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, lr.line+1, err)
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
		if s.Start.IsZero() {
			s.Start, _ = parseTime(l.Timestamp)
		}
		if l.Message.Usage == nil {
			w.Add(name, lr.line, warnNoUsage)
			continue
		}
		u, split := l.Message.Usage.usage()
		key := callKey(l.Message.ID, l.RequestID)
		if i, ok := idx[key]; ok && key != "" {
			s.Calls[i].Usage = u
			continue
		}
		if !split {
			w.Add(name, lr.line, warnNoSplit)
		}
		if key != "" {
			idx[key] = len(s.Calls)
		}
		s.Calls = append(s.Calls, Call{Model: l.Message.Model, MessageID: l.Message.ID, RequestID: l.RequestID, Usage: u})
		if s.Model == "" {
			s.Model = l.Message.Model
		}
	}
	if len(s.Calls) == 0 {
		return nil, nil
	}
	if s.ID == "" {
		s.ID = strings.TrimSuffix(filepath.Base(name), ".jsonl")
	}
	return s, nil
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
