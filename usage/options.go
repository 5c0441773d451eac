package usage

import (
	"fmt"
	"strings"
	"time"
)

// An OptionError is a grouping option that does not parse; its message
// names the option as ctxsim cost's flag (--by, --since, ...).
type OptionError struct{ Msg string }

func (e *OptionError) Error() string { return e.Msg }

func optionErrorf(format string, args ...any) error {
	return &OptionError{Msg: fmt.Sprintf(format, args...)}
}

// ParseOptions reads the grouping options as ctxsim cost takes them: by
// (ParseBy), the since and until bounds (ParseBound; "" for none), the
// timezone tz (LoadLocation) and the first day of a week, a weekday name.
func ParseOptions(by, since, until, tz, weekStart string) (Options, error) {
	var o Options
	b, err := ParseBy(by)
	if err != nil {
		return o, optionErrorf("--by: %v", err)
	}
	o.By = b
	if o.Loc, err = LoadLocation(tz); err != nil {
		return o, optionErrorf("%v", err)
	}
	if since != "" {
		if o.Since, err = ParseBound(since, o.Loc, false); err != nil {
			return o, optionErrorf("--since: %v", err)
		}
	}
	if until != "" {
		if o.Until, err = ParseBound(until, o.Loc, true); err != nil {
			return o, optionErrorf("--until: %v", err)
		}
	}
	if !o.Since.IsZero() && !o.Until.IsZero() && o.Until.Before(o.Since) {
		return o, optionErrorf("--until %s is before --since %s", until, since)
	}
	found := false
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(d.String(), weekStart) {
			o.WeekStart, found = d, true
		}
	}
	if !found {
		return o, optionErrorf("--week-start %q: want a weekday name (sunday, monday, ...)", weekStart)
	}
	return o, nil
}
