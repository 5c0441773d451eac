package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ctxsim/ctxsim/internal/atomicfile"
	"github.com/ctxsim/ctxsim/report"
	"github.com/ctxsim/ctxsim/results"
)

// OpenJournal prepares dir for a sweep with meta. A fresh sweep writes
// sweep.json and an empty cells.jsonl; a resumed one checks sweep.json,
// reads the finished cells (done, by Cell.JournalKey) and rewrites
// cells.jsonl without any torn or incomplete tail, so appends start on a
// line boundary. wrap, when set, wraps the journal's file: the seam tests
// inject write failures through. dropped hears of a last line cut short by
// an interrupted write (its cell runs again). close closes the file.
func OpenJournal(dir string, resume bool, meta SweepMeta, wrap func(io.Writer) io.Writer, dropped func(path string, line int)) (j *Journal, done map[string][]results.RunSummary, close func() error, err error) {
	metaPath := filepath.Join(dir, "sweep.json")
	path := filepath.Join(dir, "cells.jsonl")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, nil, err
	}
	done = map[string][]results.RunSummary{}
	_, statErr := os.Stat(path)
	have := statErr == nil
	old, err := atomicfile.ReadFile(metaPath)
	switch {
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return nil, nil, nil, err
	case err == nil && resume:
		var was SweepMeta
		if err := json.Unmarshal(old, &was); err != nil || was.Format != JournalFormat {
			return nil, nil, nil, fmt.Errorf("%s: not a %s file", metaPath, JournalFormat)
		}
		if d := was.Identity.Diff(meta.Identity); d != "" {
			return nil, nil, nil, &InputError{Msg: fmt.Sprintf("{resume}: the sweep in %s is another one: %s; rerun it with the same flags, or sweep into a new {output directory}", dir, d)}
		}
		if have {
			lines, err := ReadJournalFile(path, dropped)
			if err != nil {
				return nil, nil, nil, err
			}
			done = CompleteCells(lines)
			if err := atomicfile.WriteFunc(path, func(w io.Writer) error {
				return WriteComplete(w, lines, done)
			}); err != nil {
				return nil, nil, nil, err
			}
		}
	case err == nil || have:
		if resume {
			return nil, nil, nil, &InputError{Msg: fmt.Sprintf("{resume}: %s has cells.jsonl but no sweep.json; cannot tell which sweep it holds", dir)}
		}
		return nil, nil, nil, &InputError{Msg: fmt.Sprintf("{output directory} %s already holds a sweep: add {resume} to continue it, or remove it", dir)}
	default:
		if err := atomicfile.WriteFunc(metaPath, func(w io.Writer) error {
			return report.WriteJSON(w, meta)
		}); err != nil {
			return nil, nil, nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, nil, err
	}
	var w io.Writer = f
	if wrap != nil {
		w = wrap(f)
	}
	return NewJournal(w, path), done, f.Close, nil
}

// ReadJournalFile reads the journal at path (ReadJournal); dropped, when
// set, hears of a last line cut short by an interrupted write.
func ReadJournalFile(path string, dropped func(path string, line int)) ([]JournalLine, error) {
	f, err := atomicfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadJournal(f, path, func(line int) {
		if dropped != nil {
			dropped(path, line)
		}
	})
}
