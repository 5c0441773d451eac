package ctxsim

import "runtime/debug"

// A Build is what a binary knows of how it was built, from its
// runtime/debug.BuildInfo: the ctxsim version line and the identity that
// keeps shards of different builds from merging both read it.
type Build struct {
	// Known is false for a binary built without module support.
	Known bool
	// Version is the module version: "(devel)" or "" for a build from a
	// clone rather than go install …@vX.Y.Z.
	Version string
	// Revision, Time and Modified are the VCS revision, its commit time
	// and whether the work tree had uncommitted changes, when the binary
	// was built in one.
	Revision, Time string
	Modified       bool
	GoVersion      string
}

// BuildOf reads bi; it takes debug.ReadBuildInfo's two results.
func BuildOf(bi *debug.BuildInfo, ok bool) Build {
	if !ok || bi == nil {
		return Build{}
	}
	b := Build{Known: true, Version: bi.Main.Version, GoVersion: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// ThisBuild is the running binary's Build.
func ThisBuild() Build { return BuildOf(debug.ReadBuildInfo()) }

// String is ctxsim version's line: "ctxsim VERSION (REVISION, TIME[,
// modified]) GOVERSION", the revision cut to 12 digits and the
// parenthesis left out without one.
func (b Build) String() string {
	if !b.Known {
		return "ctxsim (unknown version: built without module support)"
	}
	v := b.Version
	if v == "" {
		v = "(devel)"
	}
	out := "ctxsim " + v
	if rev := b.Revision; rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		out += " (" + rev
		if b.Time != "" {
			out += ", " + b.Time
		}
		if b.Modified {
			out += ", modified"
		}
		out += ")"
	}
	return out + " " + b.GoVersion
}
