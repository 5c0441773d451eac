package input

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Names are the inputs an Error's message may name, in braces.
var Names = []string{
	// the runner's
	"policy", "policy list", "override", "grid", "summarizer fail rate", "provider error rate",
	"clear tool uses", "provider", "kv capacity", "block size", "resume", "output directory", "price file",
	"max cells", "keep", "folds", "shard", "profile",
	// the readers', the rendering's and the cost report's
	"log format", "output format", "key list", "by", "since", "until", "timezone", "week start",
	// the tables' notes'
	"wide", "json", "detail", "trace", "help",
	// a synthetic profile's description's
	"length",
}

var braces = regexp.MustCompile(`\{(` + strings.Join(Names, "|") + `)\}`)

// An Error is bad input: a name that resolves to nothing, a setting out
// of range, a file that cannot be used. Msg names each input in braces;
// Error drops the braces. Usage is set when the input alone is at fault
// (a name that resolves to nothing), rather than the state it meets (a
// sweep directory in use).
type Error struct {
	Msg   string
	Usage bool
}

func (e *Error) Error() string { return e.Name(func(in string) string { return in }) }

// Name is the message with each input named by name.
func (e *Error) Name(name func(input string) string) string { return Rename(e.Msg, name) }

// Rename is s with each input it names in braces named by name: how a
// text that is no error (a table's note) names its inputs too.
func Rename(s string, name func(input string) string) string {
	return braces.ReplaceAllStringFunc(s, func(m string) string { return name(m[1 : len(m)-1]) })
}

// Usagef is an Error the input alone is at fault for. An error among
// args that wraps an Error is quoted with its inputs in braces (Braced),
// so the message names them too.
func Usagef(format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, braced(args)...), Usage: true}
}

// Errorf is an Error of the state the input meets; args as Usagef's.
func Errorf(format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, braced(args)...)}
}

// Braced is err's message with the inputs of the Error it wraps, if any,
// in braces: what a message quoting err keeps, for Name to render.
func Braced(err error) string {
	return Render(err, func(in string) string { return "{" + in + "}" })
}

func braced(args []any) []any {
	out := slices.Clone(args)
	for i, a := range out {
		var ie *Error
		if err, ok := a.(error); ok && errors.As(err, &ie) {
			out[i] = Braced(err)
		}
	}
	return out
}

// Render is err's message with the inputs of the Error it wraps, if any,
// named by name.
func Render(err error, name func(input string) string) string {
	var ie *Error
	if !errors.As(err, &ie) {
		return err.Error()
	}
	return strings.Replace(err.Error(), ie.Error(), ie.Name(name), 1)
}
