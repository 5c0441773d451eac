package traces

import (
	"context"
	"io"
)

// ImportPaths reads each of paths (a file or a directory tree on disk, "-"
// for stdin) with im, in order: every session, and the warnings of all.
// Unlike Open it detects nothing and keeps every session im returns.
func ImportPaths(ctx context.Context, im Importer, paths []string, stdin io.Reader) ([]*Session, *Warnings, error) {
	var all []*Session
	ws := &Warnings{}
	for _, p := range paths {
		in, err := PathInput(p, stdin)
		if err != nil {
			return nil, nil, err
		}
		ss, w, err := im.Import(ctx, in)
		if err != nil {
			return nil, nil, err
		}
		ws.Merge(w)
		all = append(all, ss...)
	}
	return all, ws, nil
}

// ReadSessionPath reads the one native trace at path ("-" for stdin), its
// errors naming it as path names it.
func ReadSessionPath(path string, stdin io.Reader) (*Session, error) {
	in, err := PathInput(path, stdin)
	if err != nil {
		return nil, err
	}
	f, err := in.FS.Open(in.Root)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadSession(f, in.Name)
}
