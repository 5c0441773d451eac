package synth

import (
	"embed"
	"strings"
	"sync"
)

// The corpora are small hand-written seed texts (about 35 KB in all). The
// generator recombines them with the seeded RNG: code units get fresh
// identifiers, prose is re-sampled sentence by sentence, shell output, JSON,
// grep hits and diffs are built from templates. Token counts are therefore
// those of real text, but the text repeats far more than a real project's:
// anything that compresses or deduplicates content sees it as easier than it
// is.
//
//go:embed corpus/*.txt
var corpusFS embed.FS

// Lang is a language of code or prose in the corpora.
type Lang string

// Code and prose languages.
const (
	Go         Lang = "go"
	Python     Lang = "python"
	TypeScript Lang = "ts"
	Elixir     Lang = "elixir"

	English  Lang = "en"
	Chinese  Lang = "zh"
	Japanese Lang = "ja"
	Russian  Lang = "ru"
	Arabic   Lang = "ar"
)

type toolDoc struct{ name, desc string }

type corpus struct {
	code   map[Lang][]string // units separated by %% lines
	prose  map[Lang][]string // one sentence per line
	system string
	rules  []string
	tools  []toolDoc
}

var loadCorpus = sync.OnceValue(func() *corpus {
	read := func(name string) string {
		b, err := corpusFS.ReadFile("corpus/" + name)
		if err != nil {
			// The files are embedded at build time; a miss is a build bug.
			panic("synth: missing embedded corpus " + name)
		}
		return string(b)
	}
	units := func(s string) []string {
		var out []string
		for _, u := range strings.Split(s, "\n%%\n") {
			if u = strings.Trim(u, "\n"); u != "" {
				out = append(out, u)
			}
		}
		return out
	}
	lines := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
		return out
	}
	c := &corpus{code: map[Lang][]string{}, prose: map[Lang][]string{}}
	for _, l := range []Lang{Go, Python, TypeScript, Elixir} {
		c.code[l] = units(read(string(l) + ".txt"))
	}
	for _, l := range []Lang{English, Chinese, Japanese, Russian, Arabic} {
		c.prose[l] = lines(read(string(l) + ".txt"))
	}
	c.system = strings.TrimSpace(read("system.txt"))
	c.rules = lines(read("rules.txt"))
	for _, u := range units(read("tools.txt")) {
		name, desc, _ := strings.Cut(u, "\n")
		c.tools = append(c.tools, toolDoc{name: name, desc: strings.TrimSpace(desc)})
	}
	return c
})

// Vocabulary for identifiers in code templates and paths. Slices, not maps,
// so that a seeded pick is reproducible.
var (
	nouns = []string{"order", "invoice", "session", "account", "job", "ticket", "payment", "report",
		"build", "artifact", "lease", "node", "shard", "widget", "project", "comment", "upload",
		"schedule", "webhook", "tenant", "policy", "device", "message", "snapshot"}
	verbs = []string{"fetch", "sync", "archive", "resolve", "load", "refresh", "compact", "publish",
		"import", "render", "reconcile", "expire", "migrate", "index", "retry", "export"}
	pkgs = []string{"store", "api", "worker", "billing", "auth", "ingest", "sched", "notify", "search",
		"cache", "queue", "config"}
	projects = []string{"atlas", "ledger", "harbor", "beacon", "orbit", "quarry", "relay", "spruce"}
)
