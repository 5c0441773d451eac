package ctxsim

import (
	"runtime/debug"
	"testing"
)

func TestBuild(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.3.1"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	b := BuildOf(bi, true)
	if !b.Known || b.Revision != "0123456789abcdef0123" || !b.Modified {
		t.Errorf("BuildOf = %+v", b)
	}
	for _, c := range []struct {
		b    Build
		want string
	}{
		{b, "ctxsim v0.3.1 (0123456789ab, 2026-12-01T10:00:00Z, modified) go1.26.0"},
		{BuildOf(&debug.BuildInfo{GoVersion: "go1.26.0"}, true), "ctxsim (devel) go1.26.0"},
		{Build{Known: true, Version: "(devel)", Revision: "abc", GoVersion: "go1.26.0"}, "ctxsim (devel) (abc) go1.26.0"},
		{BuildOf(nil, false), "ctxsim (unknown version: built without module support)"},
	} {
		if got := c.b.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.b, got, c.want)
		}
	}
}
