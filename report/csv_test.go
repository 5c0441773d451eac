package report

import (
	"bytes"
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
		"'\tx,\n" +
		"plain,3\n"
	if got := b.String(); got != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", got, want)
	}
}
