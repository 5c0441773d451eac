package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/ctxsim/ctxsim/internal/input"
	"github.com/ctxsim/ctxsim/internal/safetext"
)

// A Table is rows of cells under named columns, rendered as aligned text,
// Markdown or CSV. Cells are preformatted strings so that every format shows
// the same digits.
type Table struct {
	Title   string
	Columns []string
	// Right marks columns to right-align in text (numbers).
	Right []bool
	Rows  [][]string
	// Notes are printed under the table (text and Markdown only).
	Notes []string
	// Drop ranks the columns for dropping when a text table is too wide
	// (see Fit): 0 keeps a column; higher ranks go first.
	Drop []int
	// Width is the widest a text table may be (Fit); 0 is unlimited.
	Width int
}

// Widther is an output that knows its width: Write fits a text table to
// it (unless the table sets its own Width). A command's stdout is one when
// COLUMNS or the terminal gives a width.
type Widther interface {
	io.Writer
	TableWidth() int
}

// An Output is a command's standard output as the renderings write to it:
// a Widther (text tables fit Width; 0 is unlimited) that remembers its
// first failed write, so that a command whose main output could not be
// written fails (`ctxsim version > /dev/full` exited 0).
type Output struct {
	io.Writer
	Width int
	// Name, when set, names the inputs the tables' notes mention in braces
	// (input.Rename: the CLI's flags); else they read as plain words.
	Name func(input string) string
	err  error
}

// TableWidth implements Widther.
func (o *Output) TableWidth() int { return o.Width }

// note is note n as w names its inputs (Output.Name), else in plain
// words. A name in braces is as long as its flag (--wide, {wide}), so a
// note wraps the same either way.
func note(w io.Writer, n string) string {
	name := func(in string) string { return in }
	if o, ok := w.(*Output); ok && o.Name != nil {
		name = o.Name
	}
	return input.Rename(n, name)
}

// Write implements io.Writer, keeping the first error.
func (o *Output) Write(p []byte) (int, error) {
	n, err := o.Writer.Write(p)
	if err != nil && o.err == nil {
		o.err = err
	}
	return n, err
}

// Err is the first write that failed, wrapped to say it was standard
// output's; nil if none did.
func (o *Output) Err() error {
	if o.err == nil {
		return nil
	}
	return fmt.Errorf("write standard output: %w", o.err)
}

// AddRow appends a row.
func (t *Table) AddRow(cells ...string) { t.Rows = append(t.Rows, cells) }

// Format names an output format.
type Format string

// Formats every command that produces results supports.
const (
	Text     Format = "text"
	Markdown Format = "markdown"
	CSV      Format = "csv"
	JSON     Format = "json"
)

// ParseFormat reads an output format's name; an unknown one is an
// input.Error naming the {output format}.
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case Text, Markdown, CSV, JSON:
		return Format(s), nil
	case "md":
		return Markdown, nil
	}
	return "", input.Usagef("{output format} %q: want text, markdown, csv or json", s)
}

// Write renders t in format f (Text, Markdown or CSV). Cells, columns
// and the title are input (session ids, model names, file names): their
// control characters are escaped in every format (safetext), so none can
// act on a terminal, split a Markdown row or a CSV line a program reads
// line by line.
func (t *Table) Write(w io.Writer, f Format) error {
	t = t.safe()
	switch f {
	case Markdown:
		return t.writeMarkdown(w)
	case CSV:
		return t.writeCSV(w)
	default:
		return t.writeText(w)
	}
}

// safe is t with its text escaped by safetext.Line (t itself when none
// needs it: the common case allocates nothing).
func (t *Table) safe() *Table {
	dirty := safetext.Line(t.Title) != t.Title
	for _, c := range t.Columns {
		dirty = dirty || safetext.Line(c) != c
	}
	for _, r := range t.Rows {
		for _, c := range r {
			dirty = dirty || safetext.Line(c) != c
		}
	}
	if !dirty {
		return t
	}
	u := *t
	u.Title = safetext.Line(t.Title)
	u.Columns = make([]string, len(t.Columns))
	for i, c := range t.Columns {
		u.Columns[i] = safetext.Line(c)
	}
	u.Rows = make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		u.Rows[i] = make([]string, len(r))
		for j, c := range r {
			u.Rows[i][j] = safetext.Line(c)
		}
	}
	return &u
}

// minAbbrev is the narrowest an abbreviated text column gets.
const minAbbrev = 12

// Fit makes a text table at most width columns wide, in this order:
//
//  1. left-aligned columns (ids, names, labels) wider than 20 characters
//     are abbreviated, the widest first, cells cut with "…", to no fewer
//     than 20 (or the header's width);
//  2. columns are dropped by rank (Drop: highest first; between equal
//     ranks, the rightmost first; rank 0 never), and a note under the
//     table names them and says that --wide shows all;
//  3. headers of number columns wider than their numbers are cut, a
//     character at a time from the widest, to no fewer than 6;
//  4. left-aligned columns are abbreviated further, to 12;
//  5. numbers, right-aligned, are never cut; notes and the title wrap.
//
// A table that still does not fit is printed as it then is. Fit returns
// the fitted copy; t is unchanged.
func (t *Table) Fit(width int) *Table {
	if width <= 0 {
		return t
	}
	f := *t
	f.Rows = make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		f.Rows[i] = append([]string(nil), r...)
	}
	f.Columns = append([]string(nil), t.Columns...)
	f.Right = append([]bool(nil), t.Right...)
	f.Drop = append([]int(nil), t.Drop...)
	f.Notes = append([]string(nil), t.Notes...)
	f.Width = 0
	f.abbreviate(width, 20)
	var dropped []string
	for f.total() > width {
		victim := -1
		for i := range f.Columns {
			if i < len(f.Drop) && f.Drop[i] > 0 && (victim < 0 || f.Drop[i] >= f.Drop[victim]) {
				victim = i
			}
		}
		if victim < 0 {
			break
		}
		dropped = append(dropped, f.Columns[victim])
		f.Columns = slices.Delete(f.Columns, victim, victim+1)
		if victim < len(f.Right) {
			f.Right = slices.Delete(f.Right, victim, victim+1)
		}
		f.Drop = slices.Delete(f.Drop, victim, victim+1)
		for i, r := range f.Rows {
			if victim < len(r) {
				f.Rows[i] = slices.Delete(r, victim, victim+1)
			}
		}
	}
	f.abbreviateHeaders(width)
	f.abbreviate(width, minAbbrev)
	if len(dropped) > 0 {
		f.Notes = append(f.Notes, fmt.Sprintf("(%s hidden to fit %d columns; {wide} shows all)", strings.Join(dropped, ", "), width))
	}
	f.Title = wrap(f.Title, width)
	for i, n := range f.Notes {
		f.Notes[i] = wrap(n, width)
	}
	return &f
}

// abbreviateHeaders cuts the headers of number columns that are wider than
// their numbers, a character at a time from the widest, so that the cuts
// spread, to no fewer than 6 characters (or the numbers' width).
func (t *Table) abbreviateHeaders(width int) {
	for t.total() > width {
		best, bestOver := -1, 0
		for i, c := range t.Columns {
			if i >= len(t.Right) || !t.Right[i] {
				continue
			}
			cells := 0
			for _, r := range t.Rows {
				if i < len(r) {
					cells = max(cells, runeLen(r[i]))
				}
			}
			if over := runeLen(c) - max(cells, 6); over > 0 && (best < 0 || runeLen(c) > runeLen(t.Columns[best])) {
				best, bestOver = i, over
			}
		}
		if best < 0 || bestOver <= 0 {
			return
		}
		h := []rune(strings.TrimSuffix(t.Columns[best], "…"))
		t.Columns[best] = string(h[:len(h)-1]) + "…"
	}
}

// wrap breaks prose at spaces so that no line is wider than width.
func wrap(s string, width int) string {
	if runeLen(s) <= width || width <= 0 {
		return s
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, w := range strings.Fields(para) {
			if line != "" && runeLen(line)+1+runeLen(w) > width {
				out = append(out, line)
				line = w
				continue
			}
			if line != "" {
				line += " "
			}
			line += w
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// total is the table's text width.
func (t *Table) total() int {
	ws := t.widths()
	n := 2 * (len(ws) - 1)
	for _, w := range ws {
		n += w
	}
	return n
}

// abbreviate cuts left-aligned columns, the widest first, to no fewer
// than floor characters (or the header's width), until the table fits.
func (t *Table) abbreviate(width, floor int) {
	right := func(i int) bool { return i < len(t.Right) && t.Right[i] }
	for t.total() > width {
		ws := t.widths()
		best := -1
		for i, w := range ws {
			if !right(i) && w > max(floor, runeLen(t.Columns[i])) && (best < 0 || w > ws[best]) {
				best = i
			}
		}
		if best < 0 {
			return
		}
		to := max(ws[best]-(t.total()-width), floor, runeLen(t.Columns[best]))
		for _, r := range t.Rows {
			if best < len(r) && runeLen(r[best]) > to {
				r[best] = string([]rune(r[best])[:to-1]) + "…"
			}
		}
	}
}

func (t *Table) widths() []int {
	widths := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		widths[i] = runeLen(c)
	}
	for _, r := range t.Rows {
		for i, c := range r {
			if i < len(widths) && runeLen(c) > widths[i] {
				widths[i] = runeLen(c)
			}
		}
	}
	return widths
}

func (t *Table) writeText(w io.Writer) error {
	width := t.Width
	if ww, ok := w.(Widther); ok && width == 0 {
		width = ww.TableWidth()
	}
	if width > 0 {
		t = t.Fit(width)
	}
	if t.Title != "" {
		if _, err := fmt.Fprintf(w, "%s\n\n", t.Title); err != nil {
			return err
		}
	}
	widths := t.widths()
	line := func(cells []string) string {
		var b strings.Builder
		for i := range t.Columns {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			pad := strings.Repeat(" ", widths[i]-runeLen(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if i < len(t.Right) && t.Right[i] {
				b.WriteString(pad + c)
			} else if i < len(t.Columns)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
		}
		return strings.TrimRight(b.String(), " ") + "\n"
	}
	var b strings.Builder
	b.WriteString(line(t.Columns))
	rule := make([]string, len(t.Columns))
	for i := range rule {
		rule[i] = strings.Repeat("-", widths[i])
	}
	b.WriteString(line(rule))
	for _, r := range t.Rows {
		b.WriteString(line(r))
	}
	for _, n := range t.Notes {
		b.WriteString(note(w, n) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func runeLen(s string) int { return len([]rune(s)) }

func mdEscape(s string) string { return safetext.Markdown(s) }

func (t *Table) writeMarkdown(w io.Writer) error {
	var b strings.Builder
	if t.Title != "" {
		fmt.Fprintf(&b, "### %s\n\n", t.Title)
	}
	b.WriteString("|")
	for _, c := range t.Columns {
		b.WriteString(" " + mdEscape(c) + " |")
	}
	b.WriteString("\n|")
	for i := range t.Columns {
		if i < len(t.Right) && t.Right[i] {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		b.WriteString("|")
		for i := range t.Columns {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			b.WriteString(" " + mdEscape(c) + " |")
		}
		b.WriteString("\n")
	}
	if len(t.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range t.Notes {
			b.WriteString(note(w, n) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCSV writes plain cells for programs: in a number column (Right), a
// thousands-separated number loses its commas, and a marker after a
// number ("8.43 !", "0.03 *") moves to a column of its own, named after
// the column with " mark", so that every number cell parses.
func (t *Table) writeCSV(w io.Writer) error {
	marked := make([]bool, len(t.Columns))
	for i := range t.Columns {
		if i >= len(t.Right) || !t.Right[i] {
			continue
		}
		for _, r := range t.Rows {
			if i < len(r) {
				if _, m := splitMark(r[i]); m != "" {
					marked[i] = true
					break
				}
			}
		}
	}
	right := func(i int) bool { return i < len(t.Right) && t.Right[i] }
	cw := csv.NewWriter(w)
	var head []string
	for i, c := range t.Columns {
		head = append(head, c)
		if marked[i] {
			head = append(head, c+" mark")
		}
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, r := range t.Rows {
		var cells []string
		for i := range t.Columns {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			if !right(i) {
				cells = append(cells, CSVSafe(c))
				continue
			}
			v, m := splitMark(c)
			cells = append(cells, CSVSafe(v))
			if marked[i] {
				cells = append(cells, CSVSafe(m))
			}
		}
		if err := cw.Write(cells); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// CSVSafe neutralizes a cell a spreadsheet would run as a formula (one
// starting with =, +, -, @, tab or CR: a session id or model name from a
// log is attacker-controlled) by prefixing a single quote, as OWASP
// recommends. A cell of digits, signs and units only ("-0.5", "+1.88pp",
// "-") is left alone: it can reach no function or link, and programs
// reading the CSV need it as written.
func CSVSafe(c string) string {
	if c == "" || !strings.ContainsRune("=+-@\t\r", rune(c[0])) {
		return c
	}
	if c[0] != '=' && c[0] != '@' && strings.Trim(c, "0123456789.,%pe+-∞$ ") == "" {
		return c
	}
	return "'" + c
}

// splitMark splits a number cell into its plain number (no thousands
// separators) and a trailing marker symbol. A cell that is not a number
// with an optional marker comes back trimmed, unmarked.
func splitMark(cell string) (value, mark string) {
	c := strings.TrimSpace(cell)
	num, mark := c, ""
	if i := strings.LastIndexByte(c, ' '); i >= 0 {
		num, mark = strings.TrimSpace(c[:i]), strings.TrimSpace(c[i+1:])
	}
	plain := strings.ReplaceAll(num, ",", "")
	if _, err := strconv.ParseFloat(plain, 64); err != nil {
		return c, ""
	}
	// A marker is a symbol ("*", "!"); letters or digits are a unit or a
	// second number, and the cell stays as it is.
	if strings.IndexFunc(mark, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
		return c, ""
	}
	return plain, mark
}
