package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
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

// ParseFormat checks a --format value.
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case Text, Markdown, CSV, JSON:
		return Format(s), nil
	case "md":
		return Markdown, nil
	}
	return "", fmt.Errorf("--format %q: want text, markdown, csv or json", s)
}

// Write renders t in format f (Text, Markdown or CSV).
func (t *Table) Write(w io.Writer, f Format) error {
	switch f {
	case Markdown:
		return t.writeMarkdown(w)
	case CSV:
		return t.writeCSV(w)
	default:
		return t.writeText(w)
	}
}

func (t *Table) writeText(w io.Writer) error {
	if t.Title != "" {
		if _, err := fmt.Fprintf(w, "%s\n\n", t.Title); err != nil {
			return err
		}
	}
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
		b.WriteString(n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func runeLen(s string) int { return len([]rune(s)) }

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

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
			b.WriteString(n + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (t *Table) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Columns); err != nil {
		return err
	}
	for _, r := range t.Rows {
		safe := make([]string, len(r))
		for i, c := range r {
			safe[i] = CSVSafe(c)
		}
		if err := cw.Write(safe); err != nil {
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
