package traces

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxsim/ctxsim/internal/input"
)

// An Importer reads one log format into native sessions. Importers are
// small: a name, a test of a file's first line, and a reader of an Input.
// Package traces/formats lists the ones ctxsim ships.
type Importer interface {
	// Name is the format's name, as --from takes it ("claude-code").
	Name() string
	// Summary says in one line what the format is and where it lives.
	Summary() string
	// Sniff reports whether a file whose first line (up to 4 KiB) is head
	// is in this format.
	Sniff(head []byte) bool
	// Import reads every session of src, with the warnings of what it
	// skipped or repaired. It stops with ctx's error when ctx is done.
	Import(ctx context.Context, src Input) ([]*Session, *Warnings, error)
}

// An Input is a log to import: a file or a directory tree in an fs.FS.
type Input struct {
	FS fs.FS
	// Root is the file or directory in FS ("." for all of FS).
	Root string
	// Name is how messages call Root: the path the user gave, or "stdin".
	Name string
	// Dir is the OS directory FS was made from, "" when the source is not
	// on disk (standard input, an embedded tree): for readers that need a
	// real file (SQLite).
	Dir string
	// Cache, when set, keeps what an importer read from each file across
	// runs (see FileCache); importers that do not use one ignore it.
	Cache FileCache
	// Progress, when set, hears how many of the source's files an
	// importer has read, of how many, as it reads them (a progress line;
	// from any goroutine, counts possibly out of order). Importers that
	// do not count leave it unheard.
	Progress func(read, files int)
}

// DirInput is the file or directory p on disk.
func DirInput(p string) (Input, error) {
	st, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Input{}, fmt.Errorf("%s: no such file or directory", p)
		}
		return Input{}, err
	}
	if st.IsDir() {
		return Input{FS: os.DirFS(p), Root: ".", Name: p, Dir: p}, nil
	}
	dir := filepath.Dir(p)
	return Input{FS: os.DirFS(dir), Root: filepath.Base(p), Name: p, Dir: dir}, nil
}

// PathInput is the input a command line names: "-" for stdin, else the
// file or directory p on disk.
func PathInput(p string, stdin io.Reader) (Input, error) {
	if p != "-" {
		return DirInput(p)
	}
	if stdin == nil {
		return Input{}, errors.New("-: no standard input")
	}
	return ReaderInput(stdin, "stdin")
}

// ReaderInput is a single file read from r (standard input) into memory.
func ReaderInput(r io.Reader, name string) (Input, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return Input{}, fmt.Errorf("%s: %w", name, err)
	}
	return Input{FS: oneFile{name: "stdin", data: b}, Root: "stdin", Name: name}, nil
}

// Files is Root itself when it is a file, else the regular files under it
// whose base name keep accepts, in lexical path order. What a tree holds
// besides is skipped with a warning in w, never opened (opening a FIFO
// blocks forever; a device such as /dev/zero never ends): devices, FIFOs,
// sockets, symlinks to directories (never followed, so no cycles), and
// symlinks to files outside the tree (on disk; a symlink inside it is
// read by its own name; in a tree not on disk every symlink is skipped).
// Root itself may be a symlink: the user named it. It stops with ctx's
// error when ctx is done.
func (s Input) Files(ctx context.Context, keep func(name string) bool, w *Warnings) ([]string, error) {
	st, err := fs.Stat(s.FS, s.Root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	if !st.IsDir() {
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file (%s)", s.Name, st.Mode().Type())
		}
		return []string{s.Root}, nil
	}
	var root string // the tree on disk, symlinks resolved
	if p, ok := s.OSPath(s.Root); ok {
		if root, err = filepath.EvalSymlinks(p); err == nil {
			root, err = filepath.Abs(root)
		}
		if err != nil {
			return nil, err
		}
	}
	var files []string
	err = fs.WalkDir(s.FS, s.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || !keep(d.Name()) {
			return nil
		}
		switch t := d.Type(); {
		case t.IsRegular():
			files = append(files, p)
		case t&fs.ModeSymlink != 0:
			reason := WarnSymlinkOut
			if osPath, ok := s.OSPath(p); ok {
				reason = symlinkProblem(osPath, root)
			}
			if reason != "" {
				w.Add(s.Display(p), 0, reason)
				return nil
			}
			files = append(files, p)
		default:
			w.Add(s.Display(p), 0, WarnSpecialFile)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// Display is how messages name file (a path in FS, from Files).
func (s Input) Display(file string) string {
	if file == s.Root {
		return s.Name
	}
	rel := strings.TrimPrefix(file, s.Root+"/")
	if s.Root == "." {
		rel = file
	}
	return filepath.Join(s.Name, filepath.FromSlash(rel))
}

// OSPath is file's path on disk, ok false when the source is not on disk.
func (s Input) OSPath(file string) (string, bool) {
	if s.Dir == "" {
		return "", false
	}
	return filepath.Join(s.Dir, filepath.FromSlash(file)), true
}

// ReadFiles reads each file of s that keep accepts with read, in Files'
// order, and returns every session read; w gets Files' warnings.
func (s Input) ReadFiles(ctx context.Context, keep func(name string) bool, w *Warnings, read func(r io.Reader, name string) ([]*Session, error)) ([]*Session, error) {
	files, err := s.Files(ctx, keep, w)
	if err != nil {
		return nil, err
	}
	var out []*Session
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fh, err := s.FS.Open(f)
		if err != nil {
			return nil, err
		}
		ss, err := read(fh, s.Display(f))
		fh.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, ss...)
	}
	return out, nil
}

// Native is the importer of ctxsim's own trace format: a file, or every
// .jsonl file under a directory, one session each.
var Native Importer = native{}

type native struct{}

func (native) Name() string    { return "native" }
func (native) Summary() string { return "ctxsim native traces (" + FormatName + " JSONL)" }
func (native) Sniff(head []byte) bool {
	return bytes.Contains(head, []byte(`"format":"`+FormatName+`"`))
}
func (native) Import(ctx context.Context, src Input) ([]*Session, *Warnings, error) {
	w := &Warnings{}
	ss, err := src.ReadFiles(ctx, func(n string) bool { return strings.HasSuffix(n, ".jsonl") }, w,
		func(r io.Reader, name string) ([]*Session, error) {
			s, err := ReadSession(r, name)
			if err != nil {
				return nil, err
			}
			// Validate before replay: a replay of a trace with events out
			// of order, a result before its call or negative usage
			// printed a confident result. The session is dropped, the
			// rest go on, and the command exits 1.
			if ps := Validate(s); len(ps) > 0 {
				w.Fail(fmt.Sprintf("%s:%d", name, ps[0].Line()), fmt.Sprintf("skipped session that fails validation (%s; see ctxsim validate)", ps[0].Msg))
				return nil, nil
			}
			placeNative(s, name)
			return []*Session{s}, nil
		})
	return ss, w, err
}

// An UnknownFormatError is a format name no importer has: bad input
// (it wraps an input.Error naming the {log format}).
type UnknownFormatError struct {
	Name  string
	Known []string
}

func (e *UnknownFormatError) Error() string { return e.Unwrap().Error() }

// Unwrap is the input.Error the name is.
func (e *UnknownFormatError) Unwrap() error {
	return input.Usagef("{log format} %q: unknown format (have %s)", e.Name, strings.Join(e.Known, ", "))
}

// OpenOptions say how Open reads its paths.
type OpenOptions struct {
	// Formats are the importers, in the order detection tries them; the
	// first whose Sniff accepts a source's first file reads it.
	Formats []Importer
	// From forces a format by name; "" detects it.
	From string
	// Stdin is what the path "-" reads.
	Stdin io.Reader
	// Cache is handed to the importers in each Input (Input.Cache).
	Cache FileCache
	// Stubs, when set, has native traces on disk read by their header
	// line only: their sessions have no events and no floor until
	// Stubs.Fill reads them (a shard's run, whose memory must be its own
	// tenants'). Other formats, and standard input, are read in full.
	Stubs *Stubs
	// Take, when set, is offered each source (a path, or a file of a tree
	// of mixed formats) with the format detected for it: a source it
	// takes is the caller's to read its own way, and Open skips it (cost
	// scans Claude Code logs for their billed lines only).
	Take func(format Importer, path string) bool
	// Source, when set, hears the path (or file of a mixed tree) each
	// session was read from, as it is read.
	Source func(s *Session, path string)
	// Progress is each Input's Progress, with the files of the earlier
	// paths added to both counts.
	Progress func(read, files int)
}

// fileCount adds one path's Input.Progress to the earlier paths' counts.
type fileCount struct {
	mu         sync.Mutex
	base, last int // files of the earlier paths; of this one so far
	report     func(read, files int)
}

// path is the Progress of the next path's Input.
func (c *fileCount) path() func(read, files int) {
	c.mu.Lock()
	c.base, c.last = c.base+c.last, 0
	base := c.base
	c.mu.Unlock()
	return func(read, files int) {
		c.mu.Lock()
		c.last = max(c.last, files)
		c.mu.Unlock()
		c.report(base+read, base+files)
	}
}

// Open reads each path: a file or a directory tree in any of opts.Formats,
// or "-" for standard input. The format is detected from the first line
// of the file (of a directory, its first .jsonl file in path order) unless
// opts.From names it. Sessions come back in path order, each path's as its
// importer returned them. Logs other than native traces found under one
// path are one account's: their sessions get the path as Tenant (unless
// they name one), so they share a provider cache when replayed, as they
// did.
func Open(ctx context.Context, paths []string, opts OpenOptions) ([]*Session, *Warnings, error) {
	var out []*Session
	warn := &Warnings{}
	var count *fileCount
	if opts.Progress != nil {
		count = &fileCount{report: opts.Progress}
	}
	for _, p := range paths {
		src, err := PathInput(p, opts.Stdin)
		if err != nil {
			return nil, nil, err
		}
		src.Cache = opts.Cache
		if count != nil {
			src.Progress = count.path()
		}
		if files, mixed, err := mixedTree(ctx, src, p, opts); err != nil {
			return nil, nil, err
		} else if mixed {
			// Logs of several formats under one directory (a corpus):
			// each file is read in its own format.
			sub := opts
			sub.Progress = src.Progress
			ss, w, err := Open(ctx, files, sub)
			if err != nil {
				return nil, nil, err
			}
			for _, s := range ss {
				if slices.Contains(files, s.Tenant) {
					s.Tenant = p // one path, one account, as below
				}
			}
			warn.Merge(w)
			out = append(out, ss...)
			continue
		}
		imp, err := pick(ctx, src, opts)
		if err != nil {
			return nil, nil, err
		}
		if opts.Take != nil && opts.Take(imp, p) {
			continue
		}
		if imp == Native && opts.Stubs != nil && src.Dir != "" {
			ss, err := opts.Stubs.readHeaders(ctx, src, warn)
			if err != nil {
				return nil, nil, err
			}
			out = append(out, ss...)
			continue
		}
		ss, w, err := imp.Import(ctx, src)
		if err != nil {
			return nil, nil, err
		}
		for _, s := range ss {
			if imp != Native && s.Tenant == "" {
				s.Tenant = p
			}
			if opts.Source != nil {
				opts.Source(s, p)
			}
		}
		warn.Merge(w)
		out = append(out, ss...)
	}
	out = dedupe(out, warn)
	GroupProjects(out)
	MarkCopied(out, warn)
	BreakParentCycles(out, warn)
	return out, warn, nil
}

// WarnDupSession is the warning for a session reached twice.
const WarnDupSession = "skipped session already loaded (same id reached twice: a path given twice, a file inside a directory given, or two files with one id)"

// dedupe keeps the first session of each id: one session counted twice
// doubles every figure of a comparison.
func dedupe(ss []*Session, w *Warnings) []*Session {
	seen := make(map[string]bool, len(ss))
	out := ss[:0]
	for _, s := range ss {
		if seen[s.ID] {
			w.AddPlace(s.ID, WarnDupSession)
			continue
		}
		seen[s.ID] = true
		out = append(out, s)
	}
	return out
}

// Lookup is the importer of formats named name.
func Lookup(formats []Importer, name string) (Importer, error) {
	var known []string
	for _, f := range formats {
		if f.Name() == name {
			return f, nil
		}
		known = append(known, f.Name())
	}
	sort.Strings(known)
	return nil, &UnknownFormatError{Name: name, Known: known}
}

// MixedFiles reports whether the directory at path p holds .jsonl logs of
// more than one of formats (a corpus of Claude Code logs and Codex
// rollouts), and if so returns its .jsonl files as paths under p, sorted,
// for the caller to read one by one in their own formats, as Open does.
func MixedFiles(ctx context.Context, p string, stdin io.Reader, formats []Importer) ([]string, bool, error) {
	src, err := PathInput(p, stdin)
	if err != nil {
		return nil, false, err
	}
	return mixedTree(ctx, src, p, OpenOptions{Formats: formats})
}

// mixedTree reports whether src is a directory whose .jsonl files are not
// all of one detected format, and if so returns them as paths under p,
// sorted. A tree of one format is read by its importer as a whole (which
// links subagents across files).
func mixedTree(ctx context.Context, src Input, p string, opts OpenOptions) ([]string, bool, error) {
	if opts.From != "" || p == "-" {
		return nil, false, nil
	}
	st, err := fs.Stat(src.FS, src.Root)
	if err != nil || !st.IsDir() {
		return nil, false, nil
	}
	// The importer walks again and reports what it skips.
	all, err := src.Files(ctx, isJSONL, &Warnings{})
	if err != nil {
		return nil, false, err
	}
	// Each file's first line, on all cores: a tree of many logs is
	// otherwise opened one file at a time before it is read.
	sniffed := make([]Importer, len(all))
	errs := make([]error, len(all))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(all)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(all); i = int(next.Add(1) - 1) {
				head, err := firstLine(src.FS, all[i])
				if err != nil {
					errs[i] = err
					continue
				}
				sniffed[i] = Sniff(opts.Formats, head)
			}
		})
	}
	wg.Wait()
	var files []string
	seen := map[Importer]bool{}
	for i, q := range all {
		if errs[i] != nil {
			return nil, false, errs[i]
		}
		if sniffed[i] != nil {
			seen[sniffed[i]] = true
		}
		files = append(files, filepath.Join(p, filepath.FromSlash(q)))
	}
	if len(seen) < 2 {
		return nil, false, nil
	}
	sort.Strings(files)
	return files, true, nil
}

func pick(ctx context.Context, src Input, opts OpenOptions) (Importer, error) {
	if opts.From != "" {
		return Lookup(opts.Formats, opts.From)
	}
	return Detect(ctx, src, opts.Formats)
}

// A NameSniffer is an Importer that also knows its files by name: a
// SQLite database by its extension, since an empty one (0 bytes, which
// SQLite reads as a database without tables) has no header to sniff.
type NameSniffer interface {
	SniffName(name string) bool
}

// Detect picks the first of formats that takes src: of a file, by its
// name (NameSniffer) or else its first line; of a directory, by the first
// line of its first .jsonl file in path order, or without any, of its
// first .json or .har file a format takes (detectDocuments).
func Detect(ctx context.Context, src Input, formats []Importer) (Importer, error) {
	first := src.Root
	if st, err := fs.Stat(src.FS, src.Root); err != nil {
		return nil, fmt.Errorf("%s: %w", src.Name, err)
	} else if !st.IsDir() {
		for _, f := range formats {
			if ns, ok := f.(NameSniffer); ok && ns.SniffName(src.Root) {
				return f, nil
			}
		}
	} else {
		// The importer walks again and reports what it skips.
		files, err := src.Files(ctx, isJSONL, &Warnings{})
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			if f, err := detectDocuments(ctx, src, formats); f != nil || err != nil {
				return f, err
			}
			return nil, input.Errorf("%s: no .jsonl files (give {log format} FORMAT for other logs)", src.Name)
		}
		first = files[0]
	}
	head, err := firstLine(src.FS, first)
	if err != nil {
		return nil, err
	}
	if f := Sniff(formats, head); f != nil {
		return f, nil
	}
	return nil, input.Errorf("%s: format not recognized (give {log format} FORMAT)", src.Display(first))
}

// A DocumentReader is an Importer whose directories may hold JSON
// documents (.json, .har) and no .jsonl file: captures. Detection of
// such a directory asks only these (a log format's sniff may take any
// JSON object).
type DocumentReader interface {
	ReadsDocuments() bool
}

// detectDocuments picks the format of a directory without .jsonl files
// from its .json and .har files (captures: claude-tap traces, OTLP
// documents, HAR archives), the first that a DocumentReader takes by name
// or first line among the first maxDocuments in path order; nil if none.
func detectDocuments(ctx context.Context, src Input, formats []Importer) (Importer, error) {
	var readers []Importer
	for _, f := range formats {
		if d, ok := f.(DocumentReader); ok && d.ReadsDocuments() {
			readers = append(readers, f)
		}
	}
	if len(readers) == 0 {
		return nil, nil
	}
	docs, err := src.Files(ctx, isDocument, &Warnings{})
	if err != nil {
		return nil, err
	}
	formats = readers
	for _, name := range docs[:min(len(docs), maxDocuments)] {
		for _, f := range formats {
			if ns, ok := f.(NameSniffer); ok && ns.SniffName(name) {
				return f, nil
			}
		}
		head, err := firstLine(src.FS, name)
		if err != nil {
			return nil, err
		}
		if f := Sniff(formats, head); f != nil {
			return f, nil
		}
	}
	return nil, nil
}

// maxDocuments bounds how many JSON documents detection opens: a
// directory of unrelated JSON is refused after a few.
const maxDocuments = 16

func isDocument(name string) bool {
	return strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".har")
}

// Sniff is the first of formats that takes a file starting with head (its
// first line, at most HeadSize bytes), nil if none does.
func Sniff(formats []Importer, head []byte) Importer {
	for _, f := range formats {
		if f.Sniff(head) {
			return f
		}
	}
	return nil
}

// HeadSize is how much of a file's first line detection reads.
const HeadSize = 4096

func isJSONL(name string) bool { return strings.HasSuffix(name, ".jsonl") }

// firstLine is the start of a file, up to its first newline (HeadSize
// bytes at most).
func firstLine(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, HeadSize)
	n, err := io.ReadFull(DecodeText(f), buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	buf = buf[:n]
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i]
	}
	return buf, nil
}

// oneFile is an fs.FS of one file held in memory: standard input.
type oneFile struct {
	name string
	data []byte
}

func (o oneFile) Open(name string) (fs.File, error) {
	switch name {
	case o.name:
		return &memFile{info: memInfo{name: o.name, size: int64(len(o.data))}, r: bytes.NewReader(o.data)}, nil
	case ".":
		return &memFile{info: memInfo{name: ".", dir: true}, r: bytes.NewReader(nil)}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

type memFile struct {
	info memInfo
	r    *bytes.Reader
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *memFile) Close() error               { return nil }

type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string       { return path.Base(i.name) }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
