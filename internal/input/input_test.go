package input

import (
	"errors"
	"fmt"
	"testing"
)

func flag(in string) string { return "--" + in }

// An Error reads in the library's words; a caller renders its inputs as
// its own names, also through wrapping, and only the names listed.
func TestRender(t *testing.T) {
	err := Usagef("{price file} %s: {since} is after {until} (not {an input})", "p.json")
	var ie *Error
	if !errors.As(err, &ie) || !ie.Usage {
		t.Fatalf("Usagef: %#v, want a usage *Error", err)
	}
	if got, want := err.Error(), "price file p.json: since is after until (not {an input})"; got != want {
		t.Errorf("Error: %q, want %q", got, want)
	}
	if got, want := ie.Name(flag), "--price file p.json: --since is after --until (not {an input})"; got != want {
		t.Errorf("Name: %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("loading: %w", Errorf("{log format} unknown"))
	if got, want := Render(wrapped, flag), "loading: --log format unknown"; got != want {
		t.Errorf("Render: %q, want %q", got, want)
	}
	if errors.As(wrapped, &ie) && ie.Usage {
		t.Error("Errorf made a usage error")
	}
	if got := Render(errors.New("plain {since}"), flag); got != "plain {since}" {
		t.Errorf("Render of a plain error: %q, want it as it is", got)
	}
}

// A message quoting an Error, directly or through a wrap, keeps its
// inputs named: the caller renders the inner ones with the outer's.
func TestQuoted(t *testing.T) {
	inner := Usagef("unknown key (see {key list})")
	direct := Usagef("{override} a=1: %v", inner)
	if got, want := direct.(*Error).Name(flag), "--override a=1: unknown key (see --key list)"; got != want {
		t.Errorf("quoted: %q, want %q", got, want)
	}
	through := Errorf("{grid}: %s", Braced(fmt.Errorf("axis: %w", inner)))
	if got, want := Render(through, flag), "--grid: axis: unknown key (see --key list)"; got != want {
		t.Errorf("quoted through a wrap: %q, want %q", got, want)
	}
	if got, want := direct.Error(), "override a=1: unknown key (see key list)"; got != want {
		t.Errorf("Error: %q, want %q", got, want)
	}
}

// Rename names the listed inputs of any text, and leaves other braces.
func TestRename(t *testing.T) {
	if got, want := Rename("{wide} shows all; {json} too; {x} stays", flag), "--wide shows all; --json too; {x} stays"; got != want {
		t.Errorf("Rename: %q, want %q", got, want)
	}
}
