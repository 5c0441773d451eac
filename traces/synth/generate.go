package synth

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/traces"
)

// DefaultModel is the model of the profiles that do not name their own.
const DefaultModel = "claude-sonnet-4-5"

// DefaultStart is when session 0 of a profile starts: a Monday morning.
var DefaultStart = time.Date(2026, time.January, 5, 9, 0, 0, 0, time.UTC)

// Options adjust a generation. The zero value is the profile's defaults.
type Options struct {
	// Model overrides the profile's model.
	Model string
	// Length scales how long each session is: its number of turns, or for
	// review its transcript token budget. 0 means 1.
	Length float64
	// Start is when session 0 starts; the zero time means DefaultStart.
	// Session i starts i days later (cron: i job intervals later).
	Start time.Time
}

// A Profile is a named kind of workload.
type Profile struct {
	Name string `json:"name"`
	// Description names the inputs it mentions in braces ({length}),
	// for a program to render as its own (internal/input).
	Description string `json:"description"`
	// Model and Window are the defaults of its sessions.
	Model  string `json:"model"`
	Window int    `json:"window"`
	gen    func(c *genCtx) []*traces.Session
}

// Profiles lists the profiles, sorted by name.
func Profiles() []Profile {
	return []Profile{
		{Name: "all-day", Description: "one conversation across a day: terminal, phone at lunch, an overnight cron run; long idle gaps",
			Model: DefaultModel, Window: 200_000, gen: genAllDay},
		{Name: "coding-burst", Description: "tool-heavy coding session, human gaps from seconds to 10 minutes",
			Model: DefaultModel, Window: 200_000, gen: genCodingBurst},
		{Name: "cron", Description: "machine-paced scheduled job: large registered static scaffold, small volatile tail, repeated",
			Model: "claude-haiku-4-5", Window: 200_000, gen: genCron},
		{Name: "multilingual", Description: "coding-burst with Chinese, Japanese, Russian or Arabic prose, to stress estimators",
			Model: DefaultModel, Window: 200_000, gen: genMultilingual},
		{Name: "review", Description: "~3.5 h whole-project review in a 400K window, ~75K tokens of transcript (scales with {length})",
			Model: DefaultModel, Window: 400_000, gen: genReview},
		{Name: "subagents", Description: "a parent fanning out to parallel subagents that share its floor and tenant",
			Model: DefaultModel, Window: 200_000, gen: genSubagents},
	}
}

// Lookup finds a profile by name.
func Lookup(name string) (Profile, bool) {
	for _, p := range Profiles() {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// genCtx is what a profile's generator gets for session index i.
type genCtx struct {
	p      Profile
	seed   uint64
	i      int
	r      *rand.Rand
	length float64
	model  string
	start  time.Time
}

// Stream is the PCG stream of session i of profile: each session has its
// own stream, so session i is the same whatever n is.
func Stream(profile string, i int) uint64 {
	return traces.HashString(fmt.Sprintf("synth/%s/%d", profile, i))
}

// MaxSessions bounds n: Generate holds every session in memory (~1.5 MB
// each for coding-burst), so 1,000 is about 1.5 GB; an unbounded count
// ran out of memory.
const MaxSessions = 1000

// Generate returns n sessions of profile (at most MaxSessions), all drawn
// from seed. The same
// arguments give the same sessions, byte for byte once written. The
// subagents profile returns each parent followed by its children, so it
// returns more than n sessions.
func Generate(ctx context.Context, profile string, n int, seed uint64, opts Options) ([]*traces.Session, error) {
	p, ok := Lookup(profile)
	if !ok {
		var names []string
		for _, q := range Profiles() {
			names = append(names, q.Name)
		}
		return nil, fmt.Errorf("synth: unknown profile %q (have %s)", profile, strings.Join(names, ", "))
	}
	if n < 0 || n > MaxSessions {
		return nil, fmt.Errorf("synth: %d sessions: want 0 to %d", n, MaxSessions)
	}
	if !(opts.Length >= 0 && opts.Length <= 100) { // NaN too: it looped forever
		return nil, fmt.Errorf("synth: length %g: want a multiplier in (0, 100]", opts.Length)
	}
	c := genCtx{p: p, seed: seed, length: opts.Length, model: p.Model, start: opts.Start}
	if c.length == 0 {
		c.length = 1
	}
	if opts.Model != "" {
		c.model = opts.Model
	}
	if c.start.IsZero() {
		c.start = DefaultStart
	}
	var out []*traces.Session
	for i := range n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c.i = i
		c.r = rand.New(rand.NewPCG(seed, Stream(profile, i)))
		out = append(out, p.gen(&c)...)
	}
	return out, nil
}

// session is a new empty session of the context's profile.
func (c *genCtx) session(h harness, src traces.Source) *traces.Session {
	return &traces.Session{
		ID:     fmt.Sprintf("%s-%d-%d", c.p.Name, c.seed, c.i),
		Source: src,
		Model:  c.model,
		Window: c.p.Window,
		Format: "synth:" + c.p.Name,
		Floor:  slices.Clone(h.floor()),
		Notes:  []string{fmt.Sprintf("synthetic: profile %s, seed %d", c.p.Name, c.seed)},
	}
}

// turns scales a mean turn count by the length and draws it.
func (c *genCtx) turns(mean float64) int { return 1 + poisson(c.r, mean*c.length) }

func (c *genCtx) day() time.Time { return c.start.Add(time.Duration(c.i) * 24 * time.Hour) }
