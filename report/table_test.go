package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func fitTable() *Table {
	t := &Table{
		Columns: []string{"session", "model", "input", "cache read", "cost"},
		Right:   []bool{false, false, true, true, true},
		Drop:    []int{0, 3, 1, 2, 0},
	}
	t.AddRow("4d5611e5-241a-462a-8d15-5122611a9569", "claude-sonnet-4-5-20250929", "1,890", "13,009,928", "$11.04")
	t.AddRow("short", "claude-opus-4-6", "3", "11,515", "$0.14")
	return t
}

func lines(t *testing.T, tb *Table, f Format) []string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, tb.Write(&b, f))
	return strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
}

func maxLen(ls []string) int {
	n := 0
	for _, l := range ls {
		n = max(n, runeLen(l))
	}
	return n
}

// TestFit: ids are abbreviated first, then columns go by rank (model,
// rank 2, before cache read, rank 1), numbers are never cut, and the note
// says what is hidden.
func TestFit(t *testing.T) {
	full := lines(t, fitTable(), Text)
	require.Equal(t, 91, maxLen(full), "unfitted width")

	tb := fitTable()
	tb.Width = 80
	got := lines(t, tb, Text)
	require.LessOrEqual(t, maxLen(got), 80)
	require.Contains(t, got[2], "4d5611e5-241a-462a-8d15-…  claude-sonnet", "the widest cell column abbreviated, nothing dropped")
	require.Contains(t, got[2], "claude-sonnet-4-5-20250929")

	tb.Width = 45
	got = lines(t, tb, Text)
	require.LessOrEqual(t, maxLen(got), 45)
	require.Equal(t, "session               input    cost", got[0], "model dropped first (rank 3), then cache read (2); ids cut to 20")
	require.Equal(t, "4d5611e5-241a-462a-…  1,890  $11.04", got[2])
	// The note names the flag in the library's words: a plain writer
	// reads it as a word (the CLI's Output names it --wide).
	require.Equal(t, []string{"(model, cache read hidden to fit 45 columns;", "wide shows all)"}, got[len(got)-2:], "notes wrap too")

	tb.Width = 20
	got = lines(t, tb, Text)
	require.Equal(t, "session         cost", got[0], "rank-0 columns stay, ids cut to 12, when nothing fits")
	require.Contains(t, strings.Join(got, " "), "model, cache read, input hidden")

	// Markdown and CSV are never fitted; Fit leaves t as it was.
	require.Equal(t, "session,model,input,cache read,cost", lines(t, tb, CSV)[0])
	require.Equal(t, fitTable().Rows, tb.Rows)
}

type widthWriter struct {
	strings.Builder
	w int
}

func (w *widthWriter) TableWidth() int { return w.w }

func TestFitToWriter(t *testing.T) {
	w := &widthWriter{w: 60}
	require.NoError(t, fitTable().Write(w, Text))
	require.LessOrEqual(t, maxLen(strings.Split(strings.TrimRight(w.String(), "\n"), "\n")), 60)
	w = &widthWriter{w: 0}
	require.NoError(t, fitTable().Write(w, Text))
	require.Equal(t, 91, maxLen(strings.Split(strings.TrimRight(w.String(), "\n"), "\n")))
}

// TestCSVPlainNumbers: markers move to their own column and numbers lose
// their thousands separators, so every number cell parses.
func TestCSVPlainNumbers(t *testing.T) {
	tb := &Table{Columns: []string{"policy", "cost", "tokens"}, Right: []bool{false, true, true}}
	tb.AddRow("a", "8.43 !", "1,234,567")
	tb.AddRow("b", "0.03 *", "12")
	tb.AddRow("c", "2.37  ", "n/a")
	tb.AddRow("d", "21500 ms", "3 4")
	require.Equal(t, []string{
		"policy,cost,cost mark,tokens",
		"a,8.43,!,1234567",
		"b,0.03,*,12",
		"c,2.37,,n/a",
		"d,21500 ms,,3 4",
	}, lines(t, tb, CSV))
}
