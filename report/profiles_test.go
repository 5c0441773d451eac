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
