package claudecode

import "testing"

// Each row is a version's shipped rule (PromptBudget's doc names the code).
func TestPromptBudget(t *testing.T) {
	for _, tt := range []struct {
		version, setting, text string
		meta                   bool
		budget                 int
		ok                     bool
	}{
		{"1.0.89", "", "think hard about it", false, 10000, true},
		{"1.0.89", "", "fix it", false, 0, true},
		{"1.0.89", "", "ultrathink", true, 0, false}, // meta messages never count
		{"1.0.5", "", "ultrathink", false, 0, false},
		{"2.0.57", "level=high", "fix it", false, 31999, true},
		{"2.0.57", "level=none", "fix it", false, 0, true},
		{"2.0.57", "disabled", "ultrathink", false, 0, true},
		{"2.0.57", "", "ultrathink this", false, 31999, true}, // a command's message, no setting
		{"2.0.57", "", "think hard", false, 0, true},          // 2.0 kept only ultrathink
		{"2.1.7", "", "ULTRATHINK", false, 31999, true},
		{"2.1.8", "", "ultrathink", false, 0, true},
		{"2.1.18", "level=high", "", false, 31999, true},
		{"2.1.19", "max=31999", "", false, 31999, true},
		{"2.1.29", "max=0", "", false, 0, true},
		{"2.1.29", "", "<command-message>brainstorming</command-message>", false, 0, true},
		{"2.1.37", "", "<command-message>plan</command-message>", false, 0, true},
		{"2.1.38", "", "<command-message>plan</command-message>", false, 0, false}, // the toggle decides
		{"2.1.38", "max=0", "", false, 0, true},
		{"2.1.45", "max=4000", "", false, 4000, true},
		{"2.1.47", "max=31999", "", false, 0, false},
		{"2.1.96", "", "ultrathink", false, 0, false},
		{"", "max=31999", "", false, 0, false},
	} {
		b, ok := PromptBudget(Parse(tt.version), tt.setting, tt.text, tt.meta)
		if b != tt.budget || ok != tt.ok {
			t.Errorf("PromptBudget(%s, %q, %q, meta %v) = %d, %v; want %d, %v", tt.version, tt.setting, tt.text, tt.meta, b, ok, tt.budget, tt.ok)
		}
	}
}

func TestEffortCommand(t *testing.T) {
	for _, c := range []struct {
		text string
		lvl  string
		ok   bool
	}{
		// As Claude Code 2.1.96 logs it (corpus pookNast+loopkit da0d9633 line 126).
		{"<command-name>/effort</command-name>\n            <command-message>effort</command-message>\n            <command-args>high</command-args>", "high", true},
		{"<command-name>/effort</command-name><command-args> low </command-args>", "low", true},
		// A bare /effort opens a picker the log does not show.
		{"<command-name>/effort</command-name><command-args></command-args>", "", false},
		{"<command-name>/model</command-name><command-args>opus</command-args>", "", false},
		{"set the effort to high", "", false},
		{"<command-name>/effort</command-name><command-args>high", "", false},
	} {
		lvl, ok := EffortCommand(c.text)
		if lvl != c.lvl || ok != c.ok {
			t.Errorf("EffortCommand(%q) = %q, %v; want %q, %v", c.text, lvl, ok, c.lvl, c.ok)
		}
	}
}
