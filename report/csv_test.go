package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestCSVNeutralizesFormulas pins issue 10's CSV injection: a session id
// or model name starting with =, +, -, @ reached the CSV as a formula.
func TestCSVNeutralizesFormulas(t *testing.T) {
	tb := &Table{Columns: []string{"session", "cost"}}
	tb.AddRow(`=HYPERLINK("http://x","y")`, "-0.5")
	tb.AddRow("+1+1", "1e3") // arithmetic only: no function, no link
	tb.AddRow("-2+cmd|' /C calc'!A0", "-7")
	tb.AddRow("-", "+1.88pp")
	tb.AddRow("@SUM(A1)", "0")
	tb.AddRow("\tx", "")
	tb.AddRow("plain", "3")
	var b bytes.Buffer
	if err := tb.Write(&b, CSV); err != nil {
		t.Fatal(err)
	}
	want := "session,cost\n" +
		`"'=HYPERLINK(""http://x"",""y"")",-0.5` + "\n" +
		"+1+1,1e3\n" +
		"'-2+cmd|' /C calc'!A0,-7\n" +
		"-,+1.88pp\n" +
		"'@SUM(A1),0\n" +
		"\\tx,\n" + // escaped (TestTableEscapesControls): no longer a tab

		"plain,3\n"
	if got := b.String(); got != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", got, want)
	}
}

// TestTableEscapesControls pins issue 27's terminal and Markdown
// injection: a model name, session id or file name holding an escape
// sequence, CR or LF was printed raw (clearing the screen, retitling the
// terminal, forging a line), and a line break split a Markdown row. Every
// format escapes them, and a Markdown cell its |.
func TestTableEscapesControls(t *testing.T) {
	tb := &Table{Title: "cost of \x1b]0;pwned\x07", Columns: []string{"session", "model"}}
	tb.AddRow("a\nctxsim: all clear", "claude\x1b[2J|x")
	tb.AddRow("b\r", "m\u202eexe.txt")
	for _, f := range []Format{Text, Markdown, CSV} {
		var b bytes.Buffer
		if err := tb.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.ContainsAny(out, "\x1b\x07\r\u202e") {
			t.Errorf("%s: a control character reached the output:\n%q", f, out)
		}
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		for _, l := range lines {
			if strings.HasPrefix(l, "ctxsim") {
				t.Errorf("%s: a name forged a line: %q", f, l)
			}
		}
		if !strings.Contains(out, `a\nctxsim: all clear`) || !strings.Contains(out, `claude\x1b[2J`) {
			t.Errorf("%s: the names are not shown escaped:\n%s", f, out)
		}
		if f == Markdown {
			for _, l := range lines[2:] {
				if strings.HasPrefix(l, "|") && strings.Count(l, "|")-strings.Count(l, `\|`) != 3 {
					t.Errorf("markdown row split or widened: %q", l)
				}
			}
		}
	}
}
