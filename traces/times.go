package traces

import (
	"fmt"
	"time"
)

// The years a log's timestamp may date a call in: no agent's log is older
// than 2000, and none is from 2100 or later. A time outside them is no
// time a call was made but a placeholder or a stopped clock: Go's and
// .NET's zero time (0001-01-01T00:00:00Z, an unset time written out), the
// Unix epoch (1970-01-01T00:00:00Z, a clock reset), 9999-12-31.
var (
	EarliestTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	LatestTime   = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// PlausibleTime reports whether t can date a call: in [EarliestTime,
// LatestTime). Readers treat any other time as a bad timestamp, warned
// with TimePlace, never as the time of the call (Go's zero time read as
// "no time" in silence).
func PlausibleTime(t time.Time) bool {
	return !t.Before(EarliestTime) && t.Before(LatestTime)
}

// TimePlace names a bad timestamp for a warning: file:line and the value
// as the log wrote it (quoted, its first 64 bytes), or file:line alone for
// a missing one.
func TimePlace(file string, line int, value string) string {
	if value == "" {
		return fmt.Sprintf("%s:%d", file, line)
	}
	if len(value) > 64 {
		value = value[:64] + "..."
	}
	return fmt.Sprintf("%s:%d (timestamp %q)", file, line, value)
}
