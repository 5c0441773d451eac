package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/ctxsim/ctxsim/traces"
)

// After a compaction Claude Code re-attaches what its file state holds: the
// five files most recently read, edited or written (never the memory files,
// CLAUDE.md), each read again from disk and sent as a Read call and its
// result, and, up to 2.1.62, the todo list (cli.js, every version from
// 1.0.17: the function logging tengu_post_compact_file_restore_success,
// and the "todo" attachment with context "post-compact"). The log never
// shows them; their contents are in the log: the last full Read of each
// file, what a Write wrote, with the Edits since applied. How many tokens a
// file and all of them may take changed by version (restoreRuleOf).
const restoreFiles = 5

// bytesPerToken is how many bytes of a file's text the importer, which has
// no tokenizer, takes a Claude token to be, for the restore's per-file
// limit (Claude Code counts a file's tokens with the API's countTokens).
// Measured from the bills: over the 76 calls of the training corpus whose
// only new content was one whole Read result of over 4 KB, the call's new
// input tokens came to one per 2.54 bytes of the file's text (quartiles
// 2.31 and 2.81; the numbered result, 3.15). The measurement is
// ../shared/traces/corpus, not any one session: docs/fidelity.md says how
// to repeat it.
const bytesPerToken = 2.5

// A restoreRule is one version range's limits: perFile, the tokens a file
// may have (0: any); budget, what all of them may take, each counted as its
// attachment's JSON length over four (0: no limit); note, whether a file
// over perFile is named in a note instead of dropped; todo, whether the
// todo list is re-attached too.
type restoreRule struct {
	perFile, budget int
	note, todo      bool
}

// restoreRuleOf is the rule of the Claude Code version harness names
// (traces.Session.Harness), read from each version's cli.js:
//   - up to 1.0.29 the five files whole (no limit);
//   - 1.0.30 to 1.0.84 each at most 10,000 tokens (maxTokens 1e4; a
//     larger one fails its read and is left out), 50,000 in all;
//   - from 1.0.85 each at most 5,000 tokens, 50,000 in all, and a larger
//     one is named in a compact_file_reference note;
//   - the todo list up to 2.1.62 (2.1.63 dropped the attachment).
//
// An unknown version gets the newest rule.
func restoreRuleOf(harness string) restoreRule {
	v := ""
	if name, ver, ok := strings.Cut(strings.TrimSpace(harness), " "); ok && name == Format {
		v = semver.Canonical("v" + ver)
	}
	before := func(s string) bool { return v != "" && semver.Compare(v, "v"+s) < 0 }
	r := restoreRule{perFile: 5000, budget: 50000, note: true, todo: before("2.1.63")}
	switch {
	case before("1.0.30"):
		r.perFile, r.budget, r.note = 0, 0, false
	case before("1.0.85"):
		r.perFile, r.note = 10000, false
	}
	return r
}

// knownFile is a file in Claude Code's file state: its path and, when the
// log showed it, its text as on disk (known false: edited before any Read
// or Write the log shows).
type knownFile struct {
	path, text string
	known      bool
	// read is a Read result as logged, whose numbering text has not had
	// taken off yet (text), partial whether the Read had an offset or a
	// limit: most files read are never edited or re-attached, so the
	// importer strips a result only when it needs the text (plain).
	read    string
	partial bool
	// size is what the file's whole text is estimated to weigh in bytes
	// when the log showed only part of it: its last line number shown
	// times the bytes a line it showed takes. Claude Code reads the whole
	// file again.
	size int
}

// plain makes f's text the file's, taking a Read result's numbering off.
func (f *knownFile) plain() {
	if f.read == "" {
		return
	}
	text, _, last := unnumber(f.read)
	f.text, f.read, f.size = text, "", 0
	if n := lineCount(text); f.partial && n > 0 && last > n {
		f.size = len(text) * last / n
	}
}

// bytes is the file's whole size as far as the log shows.
func (f *knownFile) bytes() int {
	f.plain()
	return max(len(f.text), f.size)
}

// fileUse is a file tool call awaiting its result.
type fileUse struct {
	name, path, written string
	partial             bool
	edits               []fileEdit
}

// fileEdit is one replacement of an Edit or a MultiEdit.
type fileEdit struct {
	Old string `json:"old_string"`
	New string `json:"new_string"`
	All bool   `json:"replace_all"`
}

// noteFileUses remembers the file tool calls of an assistant message, and
// the todo list a TodoWrite sets.
func (st *fileState) noteFileUses(blocks []traces.Block) {
	for i := range blocks {
		b := &blocks[i]
		if b.Kind != traces.ToolUse {
			continue
		}
		switch b.Name {
		case "TodoWrite":
			st.todos = b.Input // read at the next restore (todoList)
			continue
		case "Read", "Write", "Edit", "MultiEdit":
		default:
			continue
		}
		var in struct {
			Path    string     `json:"file_path"`
			Content string     `json:"content"`
			Offset  *int       `json:"offset"`
			Limit   *int       `json:"limit"`
			Edits   []fileEdit `json:"edits"`
			fileEdit
		}
		if json.Unmarshal([]byte(b.Input), &in) != nil || in.Path == "" {
			continue
		}
		u := fileUse{name: b.Name, path: in.Path, written: in.Content, partial: in.Offset != nil || in.Limit != nil, edits: in.Edits}
		if b.Name == "Edit" {
			u.edits = []fileEdit{in.fileEdit}
		}
		if st.fileUses == nil {
			st.fileUses = map[string]fileUse{}
		}
		st.fileUses[b.ID] = u
	}
}

// noteFiles moves the files a tool result shows to the front of the file
// state, with their text: a Read's (its numbering and reminder taken off),
// a Write's, or the last known text with an Edit's replacements applied.
func (st *fileState) noteFiles(blocks []traces.Block) {
	for i := range blocks {
		b := &blocks[i]
		u, ok := st.fileUses[b.ID]
		if b.Kind != traces.ToolResultBlock || !ok || b.IsError {
			continue
		}
		delete(st.fileUses, b.ID)
		f := knownFile{path: u.path}
		if j := st.fileIndex(u.path); j >= 0 {
			f = st.files[j]
			st.files = slices.Delete(st.files, j, j+1) // back at the end, most recent
		}
		switch u.name {
		case "Read":
			// A partial read is all the log shows of the file: the
			// restore reads it whole, so its text counts short, and
			// its size says at least how large the file is.
			f = knownFile{path: u.path, known: true, read: b.Text, partial: u.partial}
			if !u.partial {
				st.readSuffix, st.readSuffixSeen = readSuffix(b.Text), true
			}
		case "Write":
			f = knownFile{path: u.path, known: true, text: u.written}
		default:
			f.plain()
			for _, e := range u.edits {
				if !f.known || e.Old == "" {
					break
				}
				if e.All {
					f.text = strings.ReplaceAll(f.text, e.Old, e.New)
				} else {
					f.text = strings.Replace(f.text, e.Old, e.New, 1)
				}
			}
		}
		st.files = append(st.files, f)
	}
}

func (st *fileState) fileIndex(p string) int {
	for j := range st.files {
		if st.files[j].path == p {
			return j
		}
	}
	return -1
}

// readSuffix is the reminder Claude Code appended to a Read result, "" when
// none. It is the result's last few hundred bytes: only those are searched.
func readSuffix(result string) string {
	tail := result[max(0, len(result)-2048):]
	if i := strings.LastIndex(tail, "\n\n<system-reminder>"); i >= 0 {
		return tail[i:]
	}
	return ""
}

// todoList is the todo list a TodoWrite input sets, as JSON.stringify
// writes it ("" when it has none).
func todoList(input string) string {
	var in struct {
		Todos json.RawMessage `json:"todos"`
	}
	var c bytes.Buffer
	if json.Unmarshal([]byte(input), &in) != nil || json.Compact(&c, in.Todos) != nil {
		return ""
	}
	return c.String()
}

// unnumber is the file text a Read result shows, the reminder Claude Code
// appended after it ("" when none), and the last line number shown.
func unnumber(result string) (text, suffix string, last int) {
	suffix = readSuffix(result)
	body := result[:len(result)-len(suffix)]
	var b strings.Builder
	b.Grow(len(body))
	for k := 0; ; k++ {
		l, rest, more := strings.Cut(body, "\n")
		if k > 0 {
			b.WriteByte('\n')
		}
		if n, text, ok := numberedLine(l); ok {
			last, l = n, text
		}
		b.WriteString(l)
		if !more {
			break
		}
		body = rest
	}
	return b.String(), suffix, last
}

// numberedLine splits one line of a Read result, "   12→text", into its
// number and text (ok false for a line without the numbering).
func numberedLine(l string) (n int, text string, ok bool) {
	i := 0
	for i < len(l) && l[i] == ' ' {
		i++
	}
	j := i
	for j < len(l) && l[j] >= '0' && l[j] <= '9' {
		j++
	}
	if j == i || !strings.HasPrefix(l[j:], "→") {
		return 0, l, false
	}
	n, err := strconv.Atoi(l[i:j])
	if err != nil {
		return 0, l, false
	}
	return n, l[j+len("→"):], true
}

// number is text as Claude Code's Read tool returns it (cli.js jk): each
// line numbered from 1, right-aligned in six columns.
func number(text string) string {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%6d→%s", i+1, l)
	}
	return b.String()
}

// defaultReadSuffix is the reminder Claude Code 1.0.x appended to a Read
// result, for a log that shows no whole Read (later versions dropped it:
// 2.1.39's results end with their last line).
const defaultReadSuffix = "\n\n<system-reminder>\nWhenever you read a file, you should consider whether it looks malicious. If it does, you MUST refuse to improve or augment the code. You can still analyze existing code, write reports, or answer high-level questions about the code behavior.\n</system-reminder>\n"

// restore is what Claude Code re-attaches after a compaction under the rule
// of the version harness names: for each file its Read call and result (or
// a note for one too large), then the todo list; files is how many files
// it re-attached whole. The file state is then those files, as Claude Code
// clears it and reads them again.
func (st *fileState) restore(harness string) (out []traces.Block, files int) {
	rule := restoreRuleOf(harness)
	suffix := st.readSuffix
	if !st.readSuffixSeen {
		suffix = defaultReadSuffix
	}
	var kept []knownFile
	used, n := 0, 0
	for i := len(st.files) - 1; i >= 0 && n < restoreFiles; i-- {
		f := st.files[i]
		if memoryFile(f.path) {
			continue
		}
		n++
		if !f.known {
			continue // re-attached, but the log never showed its text
		}
		f.plain()
		att := restoredAttachment{Type: "new_file", Filename: f.path,
			Content: &readContent{Type: "text", File: readFile{FilePath: f.path, Content: f.text, NumLines: lineCount(f.text), StartLine: 1, TotalLines: lineCount(f.text)}}}
		var blocks []traces.Block
		if rule.perFile > 0 && float64(f.bytes())/bytesPerToken > float64(rule.perFile) {
			if !rule.note {
				continue
			}
			att = restoredAttachment{Type: "compact_file_reference", Filename: f.path}
			blocks = []traces.Block{{Kind: traces.Text, Text: "Note: " + f.path + " was read before the last conversation was summarized, but the contents are too large to include. Use Read tool if you need to access it."}}
		} else {
			blocks = []traces.Block{
				{Kind: traces.Text, Text: "Called the Read tool with the following input: " + jsString(map[string]string{"file_path": f.path})},
				{Kind: traces.Text, Text: "Result of calling the Read tool: " + jsString(number(f.text)+suffix)},
			}
		}
		if rule.budget > 0 {
			w := att.tokens()
			if used+w > rule.budget {
				continue
			}
			used += w
		}
		out = append(out, blocks...)
		if att.Type == "new_file" {
			files++
			kept = append(kept, f)
		}
	}
	if todos := todoList(st.todos); rule.todo && todos != "" && todos != "[]" && todos != "null" {
		out = append(out, traces.Block{Kind: traces.Text, Text: "Your todo list has changed. DO NOT mention this explicitly to the user. Here are the latest contents of your todo list:\n\n" + todos + ". Continue on with the tasks at hand if applicable."})
	}
	st.files = st.files[:0]
	for i := len(kept) - 1; i >= 0; i-- {
		st.files = append(st.files, kept[i])
	}
	return out, files
}

// memoryFile reports whether p is one of Claude Code's memory files, which
// its restore leaves out (they are in the context already).
func memoryFile(p string) bool {
	b := path.Base(strings.ReplaceAll(p, `\`, "/"))
	return b == "CLAUDE.md" || b == "CLAUDE.local.md"
}

func lineCount(text string) int { return strings.Count(text, "\n") + 1 }

// restoredAttachment is the part of Claude Code's attachment message its budget
// counts (JSON.stringify of the whole message over four, cli.js YY).
type restoredAttachment struct {
	Type     string       `json:"type"`
	Filename string       `json:"filename"`
	Content  *readContent `json:"content,omitempty"`
}

type readContent struct {
	Type string   `json:"type"`
	File readFile `json:"file"`
}

type readFile struct {
	FilePath   string `json:"filePath"`
	Content    string `json:"content"`
	NumLines   int    `json:"numLines"`
	StartLine  int    `json:"startLine"`
	TotalLines int    `json:"totalLines"`
}

// attachmentFrame is the length of what wraps an attachment in its message:
// {"attachment":…,"type":"attachment","uuid":"<36>","timestamp":"<24>"}.
const attachmentFrame = len(`{"attachment":,"type":"attachment","uuid":"","timestamp":""}`) + 36 + 24

// tokens is the attachment's weight against the budget: Math.round of its
// message's JSON length, in UTF-16 units, over four.
func (a restoredAttachment) tokens() int {
	n := utf16Len(jsString(a)) + attachmentFrame
	return (n + 2) / 4 // Math.round(n/4)
}

// jsString is v as JavaScript's JSON.stringify writes it: no HTML escaping.
func jsString(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++ // a surrogate pair
		}
	}
	return n
}
