package usage

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseOptions(t *testing.T) {
	o, err := ParseOptions("day", "2026-02-10", "20260211", "UTC", "Sunday")
	require.NoError(t, err)
	require.Equal(t, ByDay, o.By)
	require.Equal(t, time.Sunday, o.WeekStart)
	require.Equal(t, time.Date(2026, 2, 10, 0, 0, 0, 0, time.UTC), o.Since)
	require.True(t, o.Until.After(time.Date(2026, 2, 11, 23, 59, 0, 0, time.UTC)), "until is inclusive of its day")

	for _, c := range []struct{ by, since, until, tz, week, want string }{
		{"fortnight", "", "", "UTC", "monday", "--by: "},
		{"day", "yesterday", "", "UTC", "monday", "--since: "},
		{"day", "", "2026-13-01", "UTC", "monday", "--until: "},
		{"day", "", "", "Mars/Olympus", "monday", `--timezone "Mars/Olympus"`},
		{"day", "2026-02-12", "2026-02-10", "UTC", "monday", "--until 2026-02-10 is before --since 2026-02-12"},
		{"day", "", "", "UTC", "someday", `--week-start "someday"`},
	} {
		_, err := ParseOptions(c.by, c.since, c.until, c.tz, c.week)
		var oe *OptionError
		require.True(t, errors.As(err, &oe) && oe.Usage, "%+v: %v", c, err)
		// The message names each option in braces: the CLI renders them
		// as its flags (--week-start).
		require.Contains(t, oe.Name(func(in string) string { return "--" + strings.ReplaceAll(in, " ", "-") }), c.want)
		require.NotContains(t, err.Error(), "--", "no flag name below the CLI")
	}
}
