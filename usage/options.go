package usage

import (
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/internal/input"
)

// An OptionError is a grouping option that does not parse, a usage
// error: its message names the option in braces ({by}, {since}, {until},
// {timezone}, {week start}), which ctxsim cost renders as its flags
// (package internal/input).
type OptionError = input.Error

func optionErrorf(format string, args ...any) error { return input.Usagef(format, args...) }

// ParseOptions reads the grouping options as ctxsim cost takes them: by
// (ParseBy), the since and until bounds (ParseBound; "" for none), the
// timezone tz (LoadLocation) and the first day of a week, a weekday name.
func ParseOptions(by, since, until, tz, weekStart string) (Options, error) {
	var o Options
	b, err := ParseBy(by)
	if err != nil {
		return o, optionErrorf("{by}: %v", err)
	}
	o.By = b
	if o.Loc, err = LoadLocation(tz); err != nil {
		return o, err
	}
	if since != "" {
		if o.Since, err = ParseBound(since, o.Loc, false); err != nil {
			return o, optionErrorf("{since}: %v", err)
		}
	}
	if until != "" {
		if o.Until, err = ParseBound(until, o.Loc, true); err != nil {
			return o, optionErrorf("{until}: %v", err)
		}
	}
	if !o.Since.IsZero() && !o.Until.IsZero() && o.Until.Before(o.Since) {
		return o, optionErrorf("{until} %s is before {since} %s", until, since)
	}
	found := false
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(d.String(), weekStart) {
			o.WeekStart, found = d, true
		}
	}
	if !found {
		return o, optionErrorf("{week start} %q: want a weekday name (sunday, monday, ...)", weekStart)
	}
	return o, nil
}
