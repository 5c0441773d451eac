package claudecode

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"image"
	_ "image/gif"  // image sizes of pasted screenshots
	_ "image/jpeg" // image sizes of pasted screenshots
	_ "image/png"  // image sizes of pasted screenshots
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxsim/ctxsim/internal/filebuf"
	"github.com/ctxsim/ctxsim/traces"
)

// Format is the Session.Format of imported sessions.
const Format = "claude-code"

// FormatCompaction is the Session.Format of an agent-acompact-* subagent:
// the summarizer call of a compaction, which the engine bills as the
// compaction's own call rather than as agent work.
const FormatCompaction = "claude-code:compaction"

// summaryPrefix starts the continuation summary of a compacted session in
// versions that do not set isCompactSummary.
const summaryPrefix = "This session is being continued from a previous conversation"

// line is the part of a Claude Code log line the importer uses.
type line struct {
	Type             string        `json:"type"`
	Subtype          string        `json:"subtype"`
	UUID             string        `json:"uuid"`
	ParentUUID       string        `json:"parentUuid"`
	SessionID        string        `json:"sessionId"`
	AgentID          string        `json:"agentId"`
	Timestamp        string        `json:"timestamp"`
	Version          string        `json:"version"`
	Cwd              string        `json:"cwd"`
	RequestID        string        `json:"requestId"`
	IsSidechain      bool          `json:"isSidechain"`
	IsMeta           bool          `json:"isMeta"`
	IsCompactSummary bool          `json:"isCompactSummary"`
	Message          *message      `json:"message"`
	CompactMetadata  *compactMeta  `json:"compactMetadata"`
	Attachment       *attachment   `json:"attachment"`
	ThinkingMetadata *thinkingMeta `json:"thinkingMetadata"`
}

// thinkingMeta is the thinking setting Claude Code logs with a prompt:
// {level, disabled} from 2.0.0 to 2.1.18, {maxThinkingTokens} from 2.1.19
// to 2.1.46 (claudecode.PromptBudget reads it per version).
type thinkingMeta struct {
	Level             string `json:"level"`
	Disabled          bool   `json:"disabled"`
	MaxThinkingTokens *int64 `json:"maxThinkingTokens"`
}

// settingOf is the metadata as traces.MetaThinking writes it, "" for none.
func (m *thinkingMeta) settingOf() string {
	switch {
	case m == nil:
		return ""
	case m.MaxThinkingTokens != nil:
		return "max=" + strconv.FormatInt(max(*m.MaxThinkingTokens, 0), 10)
	case m.Disabled:
		return "disabled"
	case m.Level != "":
		return "level=" + m.Level
	}
	return ""
}

// attachment is context Claude Code 2.1 sends the model with the next user
// message, as a system reminder, and logs as its own line: hook output,
// CLAUDE.md files found on the way, the skill list, a prompt queued while
// the model worked, MCP instructions and deferred tools added mid-session.
type attachment struct {
	Type       string          `json:"type"`
	Content    json.RawMessage `json:"content"`
	Prompt     string          `json:"prompt"`
	AddedNames []string        `json:"addedNames"`
	AddedTypes []string        `json:"addedTypes"`
	AddedBlock []string        `json:"addedBlocks"`
}

// text is what of the attachment the model reads that the log shows.
// Some attachments (plan mode's instructions) carry their text only in
// Claude Code itself: unseen content, which the anchored replay absorbs.
func (a *attachment) text() string {
	var parts []string
	raw := bytes.TrimSpace(a.Content)
	switch {
	case len(raw) == 0 || string(raw) == "null":
	case raw[0] == '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		parts = append(parts, s)
	case raw[0] == '[':
		var ss []string
		_ = json.Unmarshal(raw, &ss)
		parts = append(parts, ss...)
	case raw[0] == '{':
		var c struct {
			Content string `json:"content"`
		}
		_ = json.Unmarshal(raw, &c)
		parts = append(parts, c.Content)
	}
	parts = append(parts, a.Prompt)
	parts = append(parts, a.AddedBlock...)
	parts = append(parts, strings.Join(a.AddedNames, "\n"), strings.Join(a.AddedTypes, "\n"))
	return strings.TrimSpace(strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), "\n"))
}

type compactMeta struct {
	Trigger   string `json:"trigger"`
	PreTokens int64  `json:"preTokens"`
}

type message struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *rawUsage       `json:"usage"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	ToolName  string          `json:"tool_name"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Source    *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
}

// Import reads a Claude Code session log (a .jsonl file) or every .jsonl
// under a directory (a ~/.claude/projects tree) into native sessions, as
// ImportFS does; the tree is walked by traces.WalkFiles, so devices, FIFOs
// and symlinks out of the tree are skipped with a warning, never opened.
func Import(ctx context.Context, p string) ([]*traces.Session, *traces.Warnings, error) {
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
		// A session file brings its subagents (see listFiles).
		return ImportFS(ctx, os.DirFS(filepath.Dir(p)), filepath.Base(p), filepath.Dir(p))
	}
	w := &traces.Warnings{}
	files, err := traces.WalkFiles(p, isLog, w)
	if err != nil {
		return nil, nil, fmt.Errorf("claudecode: %w", err)
	}
	ss, ws, err := Options{}.importFiles(ctx, files, func(i int) (io.ReadCloser, error) { return os.Open(files[i]) },
		func(i int) string { return filepath.Clean(files[i]) }, p)
	if err != nil {
		return nil, nil, err
	}
	w.Merge(ws)
	return ss, w, nil
}

func isLog(name string) bool { return strings.HasSuffix(name, ".jsonl") }

// ImportFS imports root (a file or a directory, searched recursively for
// .jsonl files) of fsys; it stops, with ctx's error, when ctx is done. Messages name files as display/relative-path, so
// pass the directory fsys was made from. Files are read in parallel;
// sessions come back sorted by id, with subagent sessions linked to their
// parents (Parent, and the parent's Children sorted).
func ImportFS(ctx context.Context, fsys fs.FS, root, display string) ([]*traces.Session, *traces.Warnings, error) {
	return Options{}.ImportFS(ctx, fsys, root, display)
}

// ImportFiles is ImportFS of a list of files in fsys (traces.Input.Files
// lists them, skipping what must not be opened).
func ImportFiles(ctx context.Context, fsys fs.FS, files []string, display string) ([]*traces.Session, *traces.Warnings, error) {
	return Options{}.ImportFiles(ctx, fsys, files, display)
}

// Options are an import's settings; the zero value is ImportFS's.
type Options struct {
	// Cache, when set, keeps what each file read to (its sessions and
	// warnings, before they are linked across files) keyed by the file's
	// bytes: a file read before, by this build, is decoded from the cache
	// instead of its JSON (traces.FileCache).
	Cache traces.FileCache
	// Progress, when set, hears how many files have been read, of how
	// many, as each is (traces.Input.Progress).
	Progress func(read, files int)
}

// ImportFS is the package's ImportFS with o's settings.
func (o Options) ImportFS(ctx context.Context, fsys fs.FS, root, display string) ([]*traces.Session, *traces.Warnings, error) {
	w := &traces.Warnings{}
	files, err := listFiles(fsys, root, w, display)
	if err != nil {
		return nil, nil, err
	}
	ss, ws, err := o.ImportFiles(ctx, fsys, files, display)
	if err != nil {
		return nil, nil, err
	}
	w.Merge(ws)
	return ss, w, nil
}

// ImportFiles is the package's ImportFiles with o's settings.
func (o Options) ImportFiles(ctx context.Context, fsys fs.FS, files []string, display string) ([]*traces.Session, *traces.Warnings, error) {
	return o.importFiles(ctx, files, func(i int) (io.ReadCloser, error) { return fsys.Open(files[i]) },
		func(i int) string { return displayName(display, files[i]) }, display)
}

func (o Options) importFiles(ctx context.Context, files []string, open func(i int) (io.ReadCloser, error), name func(i int) string, display string) ([]*traces.Session, *traces.Warnings, error) {
	var done atomic.Int64
	read, ws, err := readFiles(ctx, len(files), nil, open,
		func(i int, r io.Reader, w *traces.Warnings) ([]*traces.Session, error) {
			if o.Progress != nil {
				defer func() { o.Progress(int(done.Add(1)), len(files)) }()
			}
			if o.Cache == nil {
				return readSession(r, name(i), w)
			}
			return o.cachedRead(r, name(i), w)
		})
	if err != nil {
		return nil, nil, err
	}
	var out []*traces.Session
	for i, ss := range read {
		acct := accountOf(name(i))
		for _, s := range ss {
			s.Account = acct
		}
		out = append(out, ss...)
	}
	link(out, ws, display)
	return out, ws, nil
}

// cachedRead is readSession through o.Cache: the file is read whole and
// keyed by its bytes and name; what a miss reads is put in the cache
// before anything links it to other files' sessions. A cache that keeps
// stamps (traces.StampedCache) serves a file unchanged since it was last
// remembered without reading it; the stamp is taken before the read, and
// one that changes during it is not remembered.
func (o Options) cachedRead(r io.Reader, name string, w *traces.Warnings) ([]*traces.Session, error) {
	sc, _ := o.Cache.(traces.StampedCache)
	stamp, stamped := fileStamp(sc, r, name)
	var tried traces.FileKey // a Get that missed: not asked again
	if stamped {
		if key, ok := sc.Lookup(stamp); ok {
			if ss, cw, ok := o.Cache.Get(key); ok {
				w.Merge(cw)
				return ss, nil
			}
			tried = key
		}
	}
	data, release, err := filebuf.Read(r) // readSession keeps nothing of data
	defer release()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	key := traces.FileKey{Format: Format, Name: name, Sum: xxhash.Sum64(data), Size: int64(len(data))}
	if stamped {
		after, ok := fileStamp(sc, r, name)
		stamped = ok && after == stamp
	}
	var ss []*traces.Session
	var cw *traces.Warnings
	ok := false
	if key != tried {
		ss, cw, ok = o.Cache.Get(key)
	}
	if !ok {
		cw = &traces.Warnings{}
		if ss, err = readSession(bytes.NewReader(data), name, cw); err != nil {
			return nil, err
		}
		o.Cache.Put(key, ss, cw)
	}
	if stamped {
		sc.Remember(stamp, key)
	}
	w.Merge(cw)
	return ss, nil
}

// fileStamp is the stamp of the open file r, when sc keeps stamps and the
// file system gives one.
func fileStamp(sc traces.StampedCache, r io.Reader, name string) (traces.FileStamp, bool) {
	f, ok := r.(interface{ Stat() (fs.FileInfo, error) })
	if sc == nil || !ok {
		return traces.FileStamp{}, false
	}
	fi, err := f.Stat()
	if err != nil {
		return traces.FileStamp{}, false
	}
	return traces.StampOf(fi, Format, name)
}

// accountOf is the config directory a log file lies under, when its path
// shows one: Claude Code writes every session of a login under
// CONFIG/projects/PROJECT/ (CONFIG is ~/.claude, or CLAUDE_CONFIG_DIR), so
// the files under one CONFIG are one account's, whose sessions share the
// provider's cache (a floor one session keeps warm, another reads). Empty
// when the path has no projects/PROJECT/ above the file.
func accountOf(name string) string {
	parts := strings.Split(filepath.ToSlash(name), "/")
	for i := len(parts) - 3; i >= 0; i-- {
		if parts[i] == "projects" {
			if i == 0 {
				return "projects"
			}
			return "claude-code:" + strings.Join(parts[:i], "/")
		}
	}
	return ""
}

func displayName(dir, name string) string {
	if dir == "" || dir == "." {
		return name
	}
	return filepath.Join(dir, filepath.FromSlash(name))
}

// listFiles is root itself when it is a file, else the regular .jsonl
// files under it, sorted; anything else is skipped with a warning (an
// fs.FS cannot say where a symlink leads; Import walks real trees).
func listFiles(fsys fs.FS, root string, w *traces.Warnings, display string) ([]string, error) {
	fi, err := fs.Stat(fsys, root)
	if err != nil {
		return nil, fmt.Errorf("claudecode: %w", err)
	}
	if !fi.IsDir() {
		// A session file brings its subagents (<session>/subagents/,
		// Claude Code 2.1 and later): they share its account and cache,
		// and the compaction agent's calls are part of its bill.
		files := []string{root}
		sub := path.Join(strings.TrimSuffix(root, ".jsonl"), "subagents")
		if ents, err := fs.ReadDir(fsys, sub); err == nil {
			for _, e := range ents {
				if !e.IsDir() && e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".jsonl") {
					files = append(files, path.Join(sub, e.Name()))
				}
			}
		}
		return files, nil
	}
	var files []string
	err = fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir() || !isLog(p):
		case d.Type().IsRegular():
			files = append(files, p)
		default:
			w.Add(displayName(display, p), 0, traces.WarnSpecialFile)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claudecode: %w", err)
	}
	sort.Strings(files)
	return files, nil
}

// link sets Parent/Children of subagent sessions, renames duplicate ids and
// sorts the sessions by id.
func link(ss []*traces.Session, w *traces.Warnings, display string) {
	seen := map[string]int{}
	for _, s := range ss {
		if n := seen[s.ID]; n > 0 {
			w.Add(display, 0, warnDupSession)
			s.ID = s.ID + "~" + strconv.Itoa(n+1)
		}
		seen[s.ID]++
	}
	byID := map[string]*traces.Session{}
	for _, s := range ss {
		byID[s.ID] = s
	}
	for _, s := range ss {
		if p := byID[s.Parent]; p != nil && s.Parent != "" {
			p.Children = append(p.Children, s.ID)
		}
	}
	for _, s := range ss {
		sort.Strings(s.Children)
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i].ID < ss[j].ID })
	traces.MarkCopied(ss, w)
}

// fileState is the importer's state while reading one session's lines.
type fileState struct {
	name string
	w    *traces.Warnings
	s    *traces.Session
	// calls maps a call key to its event index; last holds each assistant
	// event's last-line time (for LatencyMS).
	calls    map[string]int
	last     map[int]time.Time
	toolUses map[string]int // tool_use id → its position in the session, from 1
	// borrowed marks the calls timed by another line (their own time bad,
	// missing or backwards): no evidence of a resume's copy burst.
	borrowed  map[int]bool
	borrowing bool // the line being read took another's time
	lastTime  time.Time
	lineNo    int

	// Inline sidechains (main state only). Before Claude Code wrote
	// subagents to <session>/subagents/agent-*.jsonl (2025 logs, 1.0.x), a
	// Task subagent's conversation was logged in the main file with
	// "isSidechain": true and no agentId, starting at a user line with no
	// parentUuid (the Task prompt) and chained to it by parentUuid. Each
	// such chain is its own conversation with its own prompt and cache
	// (corpus: kesslerio/attio-mcp-server, conneroisu/templar,
	// d-kimuson/claude-code-viewer); it becomes a child session.
	root  map[string]string     // line uuid -> sidechain root uuid ("" for the main chain)
	subs  map[string]*fileState // by root uuid
	order []string              // roots in order of appearance
	tasks []taskUse             // Task tool_uses of the main chain, in order
	// rootText is the sidechain's first user text, to find its Task.
	rootText string

	// fileUses are file tool calls awaiting results; files what Claude
	// Code's file state holds, least recent first; todos the last
	// TodoWrite's list (see restore.go).
	fileUses map[string]fileUse
	files    []knownFile
	todos    string
	// readSuffix is what Claude Code appends to a Read result (its
	// reminder), as this log's whole Read results show it, once one has.
	readSuffix     string
	readSuffixSeen bool
	// pending are attachments waiting for the next user-role message.
	pending []traces.Block
	// The transcript is a tree (uuid, parentUuid): parents holds every
	// main-chain line's parent, msgEvent the event each user or assistant
	// line went into, lastMsg the last such line. A user message whose
	// parent (through hook, system and attachment lines) is an earlier
	// message than lastMsg starts a branch: the person rewound (Esc Esc)
	// or edited a message (corpus home-assistant-green-button cfef384f,
	// attio-mcp-server aa57d486), and the conversation later calls saw is
	// the path from the root, not file order.
	parents  map[string]string
	msgEvent map[string]int
	lastMsg  string
	// touched is the event the line being applied went into (a new one,
	// or one it merged into), -1 for none.
	touched int
	// lastSID is the sessionId of the last user or assistant line: a
	// resumed session's file opens with lines copied from the session it
	// continues, under that session's id (corpus conneroisu/templar
	// 91c1aab5, kesslerio 9fa9888f); the file is the last id's.
	lastSID string
	// promptCwd is the working directory of the last prompt (see user).
	promptCwd string
}

// taskUse is a Task tool_use of the main chain: its id and prompt.
type taskUse struct {
	id, prompt string
	used       bool
}

func newFileState(name string, w *traces.Warnings) *fileState {
	return &fileState{
		name:     name,
		w:        w,
		s:        &traces.Session{Source: traces.SourceCLI, Format: Format, File: name},
		calls:    map[string]int{},
		last:     map[int]time.Time{},
		toolUses: map[string]int{},
		borrowed: map[int]bool{},
		parents:  map[string]string{},
		msgEvent: map[string]int{},
	}
}

// readSession imports one file: its session, and a child session per
// inline sidechain. It fails only on a read error; everything wrong inside
// the file is a counted warning.
func readSession(r io.Reader, name string, w *traces.Warnings) ([]*traces.Session, error) {
	st := newFileState(name, w)
	st.root, st.subs = map[string]string{}, map[string]*fileState{}
	lr := newLineReader(traces.DecodeText(r))
	lines, records := 0, 0 // for traces.WarnUnreadFile
	for {
		b, ok, err := lr.next()
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, lr.line+1, err)
		}
		if !ok {
			break
		}
		st.lineNo = lr.line
		if lr.long {
			lines++
			w.Add(name, lr.line, warnTooLong)
			continue
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		lines++
		if st.line(b, lr.eof) {
			records++
		}
	}
	if records == 0 && lines > 0 {
		w.Fail(name, traces.WarnUnreadFile)
	}
	main, err := st.session()
	if err != nil {
		return nil, err
	}
	var out []*traces.Session
	if main != nil {
		out = append(out, main)
	}
	for k, root := range st.order {
		sub := st.subs[root]
		if len(sub.s.Events) == 0 {
			continue
		}
		parent := st.s.ID
		if parent == "" {
			parent = strings.TrimSuffix(path.Base(filepath.ToSlash(name)), ".jsonl")
		}
		sub.s.ID = fmt.Sprintf("%s.agent-side%02d-%.8s", parent, k+1, root)
		sub.s.Parent = parent
		sub.s.Source = traces.SourceSubagent
		if id := st.taskFor(sub.rootText); id != "" {
			ev := &sub.s.Events[0]
			if ev.Meta == nil {
				ev.Meta = map[string]string{}
			}
			ev.Meta["task_tool_use"] = id
		}
		s, err := sub.session()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// session finishes the state's session; nil when the file held nothing.
func (st *fileState) session() (*traces.Session, error) {
	st.finish()
	if len(st.pending) > 0 {
		st.w.Add(st.name, st.lineNo, warnAttachment)
	}
	if len(st.s.Events) > 0 && st.s.Events[0].Time.IsZero() {
		return nil, &traces.SyntaxError{File: st.name, Msg: "no line has a valid timestamp: cannot place the session in time"}
	}
	if len(st.s.Events) == 0 && st.s.ID == "" {
		return nil, nil
	}
	if st.s.ID == "" {
		st.s.ID = strings.TrimSuffix(path.Base(filepath.ToSlash(st.name)), ".jsonl")
	}
	if st.s.Parent == "" && st.lastSID != "" && st.lastSID != st.s.ID {
		st.s.Notes = append(st.s.Notes, "resumes session "+st.s.ID)
		st.s.ID = st.lastSID
	}
	return st.s, nil
}

// taskFor is the id of the Task tool_use that started a sidechain whose
// first message is prompt: the first unused Task with exactly that prompt,
// else the first unused Task.
func (st *fileState) taskFor(prompt string) string {
	pick := -1
	for i := range st.tasks {
		if st.tasks[i].used {
			continue
		}
		if st.tasks[i].prompt == prompt {
			pick = i
			break
		}
		if pick < 0 {
			pick = i
		}
	}
	if pick < 0 {
		return ""
	}
	st.tasks[pick].used = true
	return st.tasks[pick].id
}

// sidechain routes an inline sidechain line to its conversation's state,
// which it returns; nil for a main-chain line.
func (st *fileState) sidechain(l *line) *fileState {
	if st.root == nil {
		return nil
	}
	if !l.IsSidechain || l.AgentID != "" {
		if l.UUID != "" {
			st.root[l.UUID] = ""
		}
		return nil
	}
	root, ok := st.root[l.ParentUUID]
	if l.ParentUUID == "" || !ok || root == "" {
		root = l.UUID // a new sidechain: the Task prompt
		if root == "" {
			root = fmt.Sprintf("line%d", st.lineNo)
		}
	}
	if l.UUID != "" {
		st.root[l.UUID] = root
	}
	sub := st.subs[root]
	if sub == nil {
		sub = newFileState(st.name, st.w)
		sub.s.Format = st.s.Format
		st.subs[root] = sub
		st.order = append(st.order, root)
	}
	sub.lineNo = st.lineNo
	return sub
}

func (st *fileState) warn(reason string) { st.w.Add(st.name, st.lineNo, reason) }

// line imports one line; it reports whether the line was a log record
// (JSON with a type), read or not.
func (st *fileState) line(b []byte, last bool) bool {
	var l line
	if !decodeLine(b, last, &l, st.w, st.name, st.lineNo) {
		return false
	}
	if sub := st.sidechain(&l); sub != nil {
		if l.Type == "user" && sub.rootText == "" && l.Message != nil {
			if bs := sub.blocks(l.Message.Content); len(bs) > 0 {
				sub.rootText = bs[0].Text
			}
		}
		sub.apply(&l)
		st.identify(&l) // a file may open with a sidechain line
		return true
	}
	if l.UUID != "" {
		st.parents[l.UUID] = l.ParentUUID
	}
	st.touched = -1
	st.apply(&l)
	if (l.Type == "user" || l.Type == "assistant") && l.UUID != "" && st.touched >= 0 {
		st.msgEvent[l.UUID] = st.touched
		st.lastMsg = l.UUID
	}
	return l.Type != ""
}

// rewoundTo is the event a user message with parent p follows, when that
// is not the last message: the message a rewind went back to.
func (st *fileState) rewoundTo(p string) (int, bool) {
	for range len(st.parents) + 1 {
		if p == "" || p == st.lastMsg {
			return 0, false
		}
		if k, ok := st.msgEvent[p]; ok {
			return k, k < len(st.s.Events)-1
		}
		next, ok := st.parents[p]
		if !ok {
			return 0, false
		}
		p = next
	}
	return 0, false // a cycle: not a tree, no rewind
}

// apply imports one decoded line into st's session.
func (st *fileState) apply(l *line) {
	switch l.Type {
	case "user", "assistant":
	case "attachment":
		if l.Attachment != nil {
			if t := l.Attachment.text(); t != "" {
				st.pending = append(st.pending, traces.Block{Kind: traces.Text, Text: t})
			}
		}
		return
	case "system":
		if l.Subtype != "compact_boundary" {
			return // hook summaries, turn durations, local commands: never sent
		}
	default:
		if !knownSkip[l.Type] {
			st.warn(warnUnknownType)
		}
		return
	}
	st.identify(l)
	clock := st.lastTime
	t := st.time(l.Timestamp)
	switch l.Type {
	case "system":
		ev := traces.Event{Time: t, Kind: traces.Compaction, Meta: map[string]string{}}
		if m := l.CompactMetadata; m != nil {
			if m.Trigger != "" {
				ev.Meta["trigger"] = m.Trigger
			}
			if m.PreTokens > 0 {
				ev.Meta["pre_tokens"] = strconv.FormatInt(m.PreTokens, 10)
			}
		}
		st.add(ev)
	case "assistant":
		if st.assistant(l, t) {
			// A later line of a response adds to its event, whose time
			// is its first line's: the clock the next events are ordered
			// by stays where it was. Claude Code runs a tool as soon as
			// its block has streamed, so a tool's result can be logged
			// before a later block of the same response (testdata's
			// agent-a2898e3.jsonl: the result at line 36, 16:02:59.857,
			// answers the block at line 32, .659, and follows the next
			// block at line 33, .913); it is not a time going backwards.
			st.lastTime = clock
		}
	case "user":
		st.user(l, t)
	}
}

// identify takes the session's identity from the first line that has one.
func (st *fileState) identify(l *line) {
	s := st.s
	if l.SessionID != "" && l.AgentID == "" && (l.Type == "user" || l.Type == "assistant") {
		if st.lastSID != "" && l.SessionID != st.lastSID {
			// A resumed session's own lines after those it copied: a
			// new process, whose file state starts empty (corpus
			// conneroisu/templar 91c1aab5: the compaction just after
			// the resume re-attached no file).
			st.files, st.fileUses = nil, nil
		}
		st.lastSID = l.SessionID
	}
	if l.Version != "" {
		// The version that wrote the file's last lines: a resumed file
		// opens with lines an older version may have written.
		s.Harness = Format + " " + l.Version
	}
	if s.ID != "" || l.SessionID == "" {
		return
	}
	id, parent, compaction := identity(l.SessionID, l.AgentID)
	s.ID, s.Parent = id, parent
	if parent != "" {
		s.Source = traces.SourceSubagent
	}
	if compaction {
		s.Format = FormatCompaction
	}
}

// time is a line's time, or the previous event's (st.borrowing) when the
// line's is bad or goes backwards.
func (st *fileState) time(ts string) time.Time {
	t, ok := parseTime(ts)
	st.borrowing = true
	switch {
	case !ok:
		st.w.AddPlace(traces.TimePlace(st.name, st.lineNo, ts), warnBadTime)
		return st.lastTime
	case t.Before(st.lastTime):
		st.warn(warnBackwards)
		return st.lastTime
	}
	st.borrowing = false
	st.lastTime = t
	return t
}

func (st *fileState) add(ev traces.Event) int {
	if len(ev.Meta) == 0 {
		ev.Meta = nil
	}
	st.s.Events = append(st.s.Events, ev)
	st.touched = len(st.s.Events) - 1
	return st.touched
}

// assistant imports an assistant line; continued says it was a later line
// of a response already imported.
func (st *fileState) assistant(l *line, t time.Time) (continued bool) {
	m := l.Message
	if m == nil {
		st.warn(warnNoMessage)
		return false
	}
	if m.Model == syntheticModel {
		st.warn(warnSynthetic)
		return false
	}
	blocks := st.blocks(m.Content)
	st.noteTasks(blocks)
	st.noteFileUses(blocks)
	key := callKey(m.ID, l.RequestID)
	if i, ok := st.calls[key]; ok && key != "" {
		// A later line of the same response: more content, and the usage
		// so far (the last line's is final).
		ev := &st.s.Events[i]
		for _, b := range blocks {
			if b.Kind == traces.ToolUse && containsToolUse(ev.Blocks, b.ID) {
				continue
			}
			ev.Blocks = append(ev.Blocks, b)
		}
		if m.Usage != nil {
			u := m.Usage.usage(st.warn)
			if ev.Usage == nil {
				ev.Usage = &u
			} else {
				mergeUsage(ev.Usage, u, st.warn)
			}
		}
		st.last[i] = t
		st.touched = i
		return true
	}
	// Line: where the call started, for warnings (a copy's, a resume's).
	ev := traces.Event{Time: t, Kind: traces.Assistant, Blocks: blocks, Model: m.Model, RequestID: l.RequestID, Line: int32(st.lineNo)}
	if m.Usage != nil {
		u := m.Usage.usage(st.warn)
		ev.Usage = &u
	} else {
		st.warn(warnNoUsage)
	}
	i := st.add(ev)
	st.last[i] = t
	if st.borrowing {
		st.borrowed[i] = true
	}
	if key != "" {
		st.calls[key] = i
	}
	if st.s.Model == "" {
		st.s.Model = m.Model
	}
	return false
}

// compacted reports whether the session had a compaction boundary before
// the event being added.
func (st *fileState) compacted() bool {
	n := len(st.s.Events)
	return n > 0 && st.s.Events[n-1].Kind == traces.Compaction
}

// noteTasks remembers the main chain's Task (Agent, in later versions)
// tool_uses, whose prompt an inline sidechain's first message repeats.
func (st *fileState) noteTasks(blocks []traces.Block) {
	if st.root == nil {
		return
	}
	for i := range blocks {
		b := &blocks[i]
		if b.Kind != traces.ToolUse || (b.Name != "Task" && b.Name != "Agent") {
			continue
		}
		var in struct {
			Prompt string `json:"prompt"`
		}
		_ = json.Unmarshal([]byte(b.Input), &in)
		st.tasks = append(st.tasks, taskUse{id: b.ID, prompt: in.Prompt})
	}
}

func containsToolUse(bs []traces.Block, id string) bool {
	for i := range bs {
		if bs[i].Kind == traces.ToolUse && bs[i].ID == id {
			return true
		}
	}
	return false
}

func (st *fileState) user(l *line, t time.Time) {
	m := l.Message
	if m == nil {
		st.warn(warnNoMessage)
		return
	}
	blocks := st.blocks(m.Content)
	if len(blocks) == 0 {
		return
	}
	kind := traces.User
	for i := range blocks {
		if blocks[i].Kind == traces.ToolResultBlock {
			kind = traces.ToolResult
			if st.toolUses[blocks[i].ID] == 0 {
				st.warn(warnOrphanResult)
			}
		}
	}
	ev := traces.Event{Time: t, Kind: kind, Blocks: blocks}
	clear := kind == traces.User && isClear(blocks) && st.calledModel()
	if clear {
		// /clear empties the conversation: what follows starts afresh on
		// the same system prompt. Recorded as a compaction whose
		// "summary" is the command itself.
		st.add(traces.Event{Time: t, Kind: traces.Compaction, Meta: map[string]string{"trigger": "clear"}})
	}
	if kind == traces.User && !l.IsMeta && !l.IsCompactSummary && l.Cwd != "" && !interrupted(blocks) {
		// Claude Code's system prompt names the working directory
		// ("Working directory: ${cwd}" in its environment section, every
		// version from 1.0.x to 2.1.x); the prompt is built per prompt, so
		// a cd in one turn's tool calls can change the next prompt's system
		// text. The log's cwd is a fact; whether the version rebuilt that
		// text is the replay's question (claudecode.EnvPerPrompt).
		if st.promptCwd != "" && l.Cwd != st.promptCwd {
			st.add(traces.Event{Time: t, Kind: traces.FloorChange, Meta: map[string]string{traces.MetaCause: traces.CauseWorkingDir,
				traces.MetaEnv: envKey(l.Cwd), traces.MetaEnvWas: envKey(st.promptCwd)}})
		}
		if st.s.Project == "" {
			st.s.Project = envKey(l.Cwd)
		}
		st.promptCwd = l.Cwd
	}
	if kind == traces.User && mcpReconnect(blocks) {
		// The command's output line stays in the transcript (the model sees
		// it); the reconnect rewrites the tools and their instructions in
		// the system prompt, which the log does not show.
		defer st.add(traces.Event{Time: t, Kind: traces.FloorChange, Meta: map[string]string{traces.MetaCause: "mcp reconnect"}})
	}
	if kind == traces.User {
		ev.Summary = l.IsCompactSummary || strings.HasPrefix(blocks[0].Text, summaryPrefix) || clear
		if l.IsMeta {
			ev.Meta = map[string]string{"meta": "true"}
		}
		if set := l.ThinkingMetadata.settingOf(); set != "" {
			if ev.Meta == nil {
				ev.Meta = map[string]string{}
			}
			ev.Meta[traces.MetaThinking] = set
		}
		if interrupted(blocks) && st.lastPrompt() {
			if ev.Meta == nil {
				ev.Meta = map[string]string{}
			}
			ev.Meta[traces.MetaInterrupted] = "prompt"
		}
		if k, ok := st.rewoundTo(l.ParentUUID); ok && !ev.Summary && st.parents != nil {
			if ev.Meta == nil {
				ev.Meta = map[string]string{}
			}
			ev.Meta[traces.MetaRewindTo] = strconv.Itoa(k)
		}
		if ev.Summary && !clear && (st.compacted() || l.IsCompactSummary) {
			// Logs before 1.0.86 have no compact_boundary line: the
			// summary's isCompactSummary is the compaction.
			if restored, files := st.restore(st.s.Harness); len(restored) > 0 {
				ev.Blocks = append(append([]traces.Block(nil), blocks...), restored...)
				ev.Meta = map[string]string{"restored_files": strconv.Itoa(files)}
			}
		}
	}
	if kind == traces.ToolResult {
		st.noteFiles(blocks)
	}
	if len(st.pending) > 0 {
		// Attachments logged since the last message go out with this one.
		ev.Blocks = append(ev.Blocks, st.pending...)
		blocks = ev.Blocks
		st.pending = nil
	}
	// Claude Code logs one line per tool result; the API gets them as one
	// user message, so consecutive results are one event.
	if n := len(st.s.Events); kind == traces.ToolResult && n > 0 && st.s.Events[n-1].Kind == traces.ToolResult {
		prev := &st.s.Events[n-1]
		prev.Blocks = append(prev.Blocks, blocks...)
		st.orderResults(prev.Blocks, blocks)
		st.touched = n - 1
		return
	}
	st.add(ev)
}

// orderResults puts a message's tool results in the order of their
// tool_use blocks, as the API receives them, and marks Early those
// received before the latest one (in latest) that now follow it. Claude
// Code appends each result as it arrives and marks the last it appended;
// the results are sent in tool_use order. In the corpus, of the calls
// after parallel results, 48 of 59 whose last-logged result was not the
// last tool_use billed a large input (the results after it; 351b5d6c
// line 44: 2,443 tokens, the 6,961-character Read result that finished
// first), and 2 of 260 whose last-logged result was last did.
func (st *fileState) orderResults(all, latest []traces.Block) {
	var at []int
	for i := range all {
		if all[i].Kind == traces.ToolResultBlock {
			at = append(at, i)
		}
	}
	last := ""
	for i := range latest {
		if latest[i].Kind == traces.ToolResultBlock {
			last = latest[i].ID
		}
	}
	if len(at) < 2 || last == "" {
		return
	}
	results := make([]traces.Block, len(at))
	for k, i := range at {
		results[k] = all[i]
	}
	pos := func(b *traces.Block) int {
		if p := st.toolUses[b.ID]; p > 0 {
			return p
		}
		return math.MaxInt // unknown: after the known, in arrival order
	}
	slices.SortStableFunc(results, func(a, b traces.Block) int { return cmp.Compare(pos(&a), pos(&b)) })
	after := false
	for k, i := range at {
		results[k].Early = after
		if results[k].ID == last {
			after = true
		}
		all[i] = results[k]
	}
}

// interrupted reports Claude Code's "[Request interrupted by user]" line:
// a notice in the transcript, not a prompt that starts a turn.
func interrupted(blocks []traces.Block) bool {
	return len(blocks) == 1 && strings.HasPrefix(blocks[0].Text, "[Request interrupted by user")
}

// lastPrompt reports whether the session's last event is a prompt the
// person typed (not a tool result, a meta line, a summary or a notice).
func (st *fileState) lastPrompt() bool {
	n := len(st.s.Events)
	if n == 0 {
		return false
	}
	e := &st.s.Events[n-1]
	return e.Kind == traces.User && e.Meta["meta"] != "true" && !e.Summary && !interrupted(e.Blocks)
}

// isClear reports the /clear command's line.
func isClear(blocks []traces.Block) bool {
	return len(blocks) > 0 && strings.Contains(blocks[0].Text, "<command-name>/clear</command-name>")
}

// calledModel reports whether the session has had a model call yet (a
// /clear before any is the file's own start, as Claude Code writes it).
func (st *fileState) calledModel() bool {
	for i := range st.s.Events {
		if st.s.Events[i].Kind == traces.Assistant {
			return true
		}
	}
	return false
}

// mcpReconnect reports the output of /mcp reconnecting a server: Claude
// Code then sends a new system prompt (the server's tools and instructions).
func mcpReconnect(blocks []traces.Block) bool {
	for i := range blocks {
		t := blocks[i].Text
		if strings.Contains(t, "<local-command-stdout>") && strings.Contains(t, "Reconnected to ") {
			return true
		}
	}
	return false
}

// blocks converts message content: a string (user text) or an array of
// blocks.
func (st *fileState) blocks(raw json.RawMessage) []traces.Block {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || s == "" {
			return nil
		}
		return []traces.Block{{Kind: traces.Text, Text: s}}
	}
	var bs []block
	if err := json.Unmarshal(raw, &bs); err != nil {
		st.warn(warnUnknownBlock)
		return nil
	}
	out := make([]traces.Block, 0, len(bs))
	for i := range bs {
		b := &bs[i]
		switch b.Type {
		case "text":
			if b.Text != "" {
				out = append(out, traces.Block{Kind: traces.Text, Text: b.Text})
			}
		case "thinking":
			out = append(out, traces.Block{Kind: traces.Thinking, Text: b.Thinking})
		case "redacted_thinking":
			out = append(out, traces.Block{Kind: traces.Thinking, Name: "redacted"})
		case "tool_use", "server_tool_use":
			in := compactJSON(b.Input)
			out = append(out, traces.Block{Kind: traces.ToolUse, ID: b.ID, Name: b.Name, Input: in})
			if st.toolUses[b.ID] == 0 {
				st.toolUses[b.ID] = len(st.toolUses) + 1
			}
		case "tool_result":
			text, imgs := st.resultContent(b.Content)
			out = append(out, traces.Block{Kind: traces.ToolResultBlock, ID: b.ToolUseID, Text: text, IsError: b.IsError})
			out = append(out, imgs...)
		case "image":
			out = append(out, imageBlock(b))
		case "document":
			out = append(out, documentBlock(b))
		default:
			st.warn(warnUnknownBlock)
		}
	}
	return out
}

// resultContent is a tool_result's content: a string, or text and image
// blocks. Texts are joined with newlines; images follow the result as
// their own blocks.
func (st *fileState) resultContent(raw json.RawMessage) (string, []traces.Block) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		return s, nil
	}
	var bs []block
	if err := json.Unmarshal(raw, &bs); err != nil {
		st.warn(warnUnknownBlock)
		return "", nil
	}
	var texts []string
	var imgs []traces.Block
	for i := range bs {
		switch bs[i].Type {
		case "text":
			texts = append(texts, bs[i].Text)
		case "tool_reference":
			// ToolSearch's answer (2.1 logs): the tool's schema is loaded
			// for the model, which the log shows only by name; the
			// anchored replay absorbs the schema's size.
			texts = append(texts, "tool_reference: "+bs[i].ToolName)
		case "image":
			imgs = append(imgs, imageBlock(&bs[i]))
		case "document":
			imgs = append(imgs, documentBlock(&bs[i]))
		default:
			st.warn(warnUnknownBlock)
		}
	}
	return strings.Join(texts, "\n"), imgs
}

// imageTokens is the size given an image whose dimensions are unknown: the
// most Anthropic charges for one image (about 1.15 megapixels).
const imageTokens = 1600

// imageBlock is an opaque block sized by Anthropic's rule (width × height
// ÷ 750, capped at imageTokens) and named by its data's hash, so equal
// images are equal blocks.
func imageBlock(b *block) traces.Block {
	out := traces.Block{Kind: traces.Image, Tokens: imageTokens, Name: "image"}
	if b.Source == nil {
		return out
	}
	out.Name = fmt.Sprintf("%s %016x", b.Source.MediaType, traces.HashString(b.Source.Data))
	if b.Source.Type == "base64" {
		dec := base64.NewDecoder(base64.StdEncoding, strings.NewReader(b.Source.Data))
		if cfg, _, err := image.DecodeConfig(dec); err == nil && cfg.Width > 0 && cfg.Height > 0 {
			out.Tokens = min(max(cfg.Width*cfg.Height/750, 1), imageTokens)
		}
	}
	return out
}

// pdfPageTokens is what a PDF page costs: Anthropic extracts each page's
// text (1,500–3,000 tokens a page by its PDF-support documentation; the
// midpoint, 2,250) and also sends the page as an image (at most
// imageTokens). Claude Code's Read tool returns a PDF as a document block.
const pdfPageTokens = 2250 + imageTokens

// pdfPage matches a page object of a PDF ("/Type /Page", not "/Pages").
// Compiled at the first PDF, not at start-up.
var pdfPage = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`/Type\s*/Page[^s]`) })

// documentBlock sizes a document block: a plain-text document is its
// text; a base64 PDF is an opaque block of pdfPageTokens a page (pages
// counted from its page objects, at least one), named by its data's hash.
func documentBlock(b *block) traces.Block {
	if b.Source != nil && b.Source.Type == "text" {
		return traces.Block{Kind: traces.Text, Text: b.Source.Data}
	}
	out := traces.Block{Kind: traces.Image, Tokens: pdfPageTokens, Name: "document"}
	if b.Source == nil {
		return out
	}
	pages := 1
	if b.Source.Type == "base64" {
		if raw, err := base64.StdEncoding.DecodeString(b.Source.Data); err == nil {
			pages = max(1, len(pdfPage().FindAllIndex(raw, -1)))
		}
	}
	out.Tokens = pages * pdfPageTokens
	out.Name = fmt.Sprintf("%s %016x %d pages", b.Source.MediaType, traces.HashString(b.Source.Data), pages)
	return out
}

func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// copyBurst is how close in time two calls' first lines must be for the
// second to be a copy: no API call answers within it.
const copyBurst = 50 * time.Millisecond

// markResumeCopies marks the calls a resumed session's file copied from
// the session it resumes, when that session's own file is not here to
// claim them (traces.MarkCopied does when it is). Claude Code up to
// 1.0.117 starts a resumed conversation under a new session id and writes
// the old conversation into the new file first, in one burst: the copied
// assistant lines all carry the resume's time, to the millisecond
// (corpus SWORDIntel a2d06622 -Documents-livecd-gen 77570c3a: 17 calls
// stamped 00:56:10.528-.529 before the first own prompt at 00:56:51), and
// the copied user lines keep their older times (so the importer clamped
// them to the burst). Two calls whose first lines are under copyBurst
// apart are both copies; so is every call of the burst. A copy is history,
// not a call (MetaCopied); its bill, when the copy kept it, stays on the
// event for what it is, a bill of the earlier session (ctxsim cost counts
// it, as ccusage does), and each copy is counted in a warning.
func (st *fileState) markResumeCopies() {
	evs := st.s.Events
	prev := -1
	mark := func(i int) {
		e := &evs[i]
		if e.Meta[traces.MetaCopied] == "true" {
			return
		}
		if e.Meta == nil {
			e.Meta = map[string]string{}
		}
		e.Meta[traces.MetaCopied] = "true"
		st.w.Add(st.name, int(e.Line), warnResumeCopy)
	}
	for i := range evs {
		if evs[i].Kind != traces.Assistant || st.borrowed[i] {
			continue // a borrowed time is no burst (a bad timestamp made two calls copies)
		}
		if prev >= 0 && evs[i].Time.Sub(evs[prev].Time) < copyBurst {
			mark(prev)
			mark(i)
		}
		prev = i
	}
}

// standardWindow is the Anthropic models' default context window, and
// LongWindow the window of their 1M-context option (Claude Sonnet 4/4.5
// beta, Opus 4.6 and later: the models' overview pages). RaggioS/jcode
// 120ec635 (claude-opus-4-8) bills prompts up to 332,701 tokens.
const (
	standardWindow = 200_000
	LongWindow     = 1_000_000
)

// finish fills what needs the whole file: call latencies and tool run
// times.
func (st *fileState) finish() {
	evs := st.s.Events
	// Lines before the first good timestamp take the first known time.
	for i := range evs {
		if !evs[i].Time.IsZero() {
			for j := 0; j < i; j++ {
				evs[j].Time = evs[i].Time
			}
			break
		}
	}
	st.markResumeCopies()
	var lastAssistant time.Time
	for i := range evs {
		e := &evs[i]
		switch e.Kind {
		case traces.Assistant:
			if e.Usage != nil && e.Usage.Prompt() > standardWindow {
				// A billed prompt past 200K: the session ran with the
				// 1M-context option (Claude Code's "[1m]" models send
				// the context-1m beta; the log keeps only the bare id).
				st.s.Window = LongWindow
			}
			// A gap over traces.MaxLatencyMS is no call's latency (the
			// API times a request out within minutes): the session sat
			// idle, or the clock jumped. It stays unknown (0), which the
			// native format can hold (FuzzImport 3b6e85af: a month).
			if i > 0 {
				if d := st.last[i].Sub(evs[i-1].Time); d > 0 && d.Milliseconds() <= traces.MaxLatencyMS {
					e.LatencyMS = d.Milliseconds()
				}
			}
			lastAssistant = st.last[i]
		case traces.ToolResult:
			if !lastAssistant.IsZero() {
				if d := e.Time.Sub(lastAssistant); d > 0 && d.Milliseconds() <= traces.MaxLatencyMS {
					e.LatencyMS = d.Milliseconds()
				}
			}
		}
	}
}

// envKey is the opaque key of a working directory (traces.MetaEnv): a
// hash, so no path of the user's machine reaches a trace or a report.
func envKey(cwd string) string {
	h := fnv.New64a()
	h.Write([]byte(cwd))
	return strconv.FormatUint(h.Sum64(), 36)
}
