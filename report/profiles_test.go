package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/traces/synth"
)

func TestWriteProfiles(t *testing.T) {
	ps := []synth.Profile{{Name: "cron", Description: "a scheduled job", Model: "m", Window: 1000}, {Name: "review", Description: "one long read"}}
	var text bytes.Buffer
	if err := WriteProfiles(&text, false, ps); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(text.String(), "\n"), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "profile") || !strings.Contains(lines[len(lines)-2], "cron") ||
		!strings.HasSuffix(lines[len(lines)-1], "one long read") {
		t.Errorf("text:\n%s", text.String())
	}
	var js bytes.Buffer
	if err := WriteProfiles(&js, true, ps); err != nil {
		t.Fatal(err)
	}
	var back []synth.Profile
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back) != 2 || back[0].Name != "cron" || back[0].Window != 1000 {
		t.Errorf("json %s: %+v, %v", js.String(), back, err)
	}
}

// A description's inputs read as the Output names them (the CLI: --length),
// in the table and in JSON; a plain writer reads a word.
func TestProfilesNameInputs(t *testing.T) {
	ps := []synth.Profile{{Name: "review", Description: "long (scales with {length})"}}
	flags := func(in string) string { return "--" + in }
	for _, c := range []struct {
		asJSON bool
		name   func(string) string
		want   string
	}{
		{false, flags, "(scales with --length)"}, {true, flags, `(scales with --length)"`},
		{false, nil, "(scales with length)"}, {true, nil, `(scales with length)"`},
	} {
		var b bytes.Buffer
		if err := WriteProfiles(&Output{Writer: &b, Name: c.name}, c.asJSON, ps); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("json %v, named %v: %s; want %q", c.asJSON, c.name != nil, b.String(), c.want)
		}
	}
	if ps[0].Description != "long (scales with {length})" {
		t.Errorf("WriteProfiles changed its argument: %q", ps[0].Description)
	}
}
