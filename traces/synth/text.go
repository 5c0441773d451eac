package synth

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// A Content is a kind of text the generator writes. Each kind has its own
// chars-per-token ratio under real tokenizers (see the package doc).
type Content string

// Content kinds.
const (
	Code     Content = "code"     // Go, Python, TypeScript and Elixir source
	Prose    Content = "prose"    // English technical prose
	JSON     Content = "json"     // pretty-printed API responses
	Shell    Content = "shell"    // test runs, builds, git, ls
	Diff     Content = "diff"     // unified diffs of code
	CJK      Content = "cjk"      // Chinese and Japanese prose
	Cyrillic Content = "cyrillic" // Russian prose
	ArabicT  Content = "arabic"   // Arabic prose
)

// Contents lists every content kind, in a fixed order.
func Contents() []Content {
	return []Content{Code, Prose, JSON, Shell, Diff, CJK, Cyrillic, ArabicT}
}

// Sample returns about chars characters (runes for CJK/Cyrillic/Arabic
// count as one) of content kind k drawn from r. It never returns less than
// one unit (a sentence, a code unit, a record), so small requests may be
// longer. Estimator tests use it to get real text of each kind.
func Sample(r *rand.Rand, k Content, chars int) string {
	g := newTextGen(r, pick(r, []Lang{Go, Python, TypeScript, Elixir}))
	switch k {
	case Code:
		return g.code(g.lang, chars)
	case Prose:
		return g.prose(English, chars)
	case JSON:
		return g.json(chars)
	case Shell:
		return g.shell(chars)
	case Diff:
		return g.diff(chars)
	case CJK:
		return g.prose(pick(r, []Lang{Chinese, Japanese}), chars)
	case Cyrillic:
		return g.prose(Russian, chars)
	case ArabicT:
		return g.prose(Arabic, chars)
	}
	return ""
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// textGen composes text from the corpora for one project: a code language,
// a project name and its files.
type textGen struct {
	r       *rand.Rand
	c       *corpus
	lang    Lang
	project string
}

func newTextGen(r *rand.Rand, lang Lang) *textGen {
	return &textGen{r: r, c: loadCorpus(), lang: lang, project: pick(r, projects)}
}

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func plural(s string) string {
	if strings.HasSuffix(s, "y") {
		return s[:len(s)-1] + "ies"
	}
	return s + "s"
}

// fill substitutes one fresh binding of {Noun} {noun} {nouns} {Verb} {verb}
// {pkg} {N} into t.
func (g *textGen) fill(t string) string {
	if !strings.Contains(t, "{") {
		return t
	}
	n, v := pick(g.r, nouns), pick(g.r, verbs)
	return strings.NewReplacer(
		"{Noun}", title(n), "{nouns}", plural(n), "{noun}", n,
		"{Verb}", title(v), "{verb}", v,
		"{pkg}", pick(g.r, pkgs), "{N}", fmt.Sprint(8<<g.r.IntN(8)),
	).Replace(t)
}

var ext = map[Lang]string{Go: ".go", Python: ".py", TypeScript: ".ts", Elixir: ".ex"}

// path is a plausible absolute path of a source file of the project.
func (g *textGen) path(lang Lang) string {
	dir := map[Lang]string{Go: "internal", Python: "src", TypeScript: "web/src", Elixir: "lib"}[lang]
	return fmt.Sprintf("/home/dev/%s/%s/%s/%s%s", g.project, dir, pick(g.r, pkgs), pick(g.r, nouns), ext[lang])
}

func (g *textGen) header(lang Lang) string {
	switch lang {
	case Go:
		return fmt.Sprintf("package %s\n\nimport (\n\t\"context\"\n\t\"errors\"\n\t\"fmt\"\n\t\"log/slog\"\n\t\"sync\"\n\t\"time\"\n)\n\n", pick(g.r, pkgs))
	case Python:
		return "from __future__ import annotations\n\nimport asyncio\nimport json\nimport logging\nfrom dataclasses import dataclass, field\nfrom datetime import datetime, timezone\nfrom typing import Any, Iterable, Optional\n\nlogger = logging.getLogger(__name__)\n\n\n"
	case TypeScript:
		return fmt.Sprintf("import { useEffect, useState } from \"react\";\nimport { describe, it, expect, vi, beforeEach } from \"vitest\";\nimport { list%ss } from \"../api/client\";\n\n", title(pick(g.r, nouns)))
	}
	return ""
}

// code is a source file of about chars bytes: a header and code units.
func (g *textGen) code(lang Lang, chars int) string {
	var b strings.Builder
	b.WriteString(g.header(lang))
	units := g.c.code[lang]
	for b.Len() < chars {
		b.WriteString(g.fill(pick(g.r, units)))
		b.WriteString("\n\n")
	}
	return b.String()
}

// numbered renders text as "cat -n" output, the way file-reading tools
// return files.
func numbered(text string, first int) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(&b, "%6d\t%s\n", first+i, l)
	}
	return b.String()
}

// sentence is one filled sentence of lang.
func (g *textGen) sentence(lang Lang) string { return g.fill(pick(g.r, g.c.prose[lang])) }

// prose is paragraphs of sentences of lang, about chars runes long. English
// prose is sometimes a bullet list and carries inline code, as assistant
// replies do.
func (g *textGen) prose(lang Lang, chars int) string {
	sep := " "
	if lang == Chinese || lang == Japanese {
		sep = ""
	}
	var b strings.Builder
	n, inPara := 0, 0
	bullets := lang == English && g.r.IntN(4) == 0
	for n < chars {
		s := g.sentence(lang)
		switch {
		case bullets:
			s = "- " + s + "\n"
		case inPara > 0:
			s = sep + s
		}
		if lang == English && g.r.IntN(5) == 0 {
			s += fmt.Sprintf(" See `%s%s()` in `%s`.", pick(g.r, verbs), title(pick(g.r, nouns)), g.path(g.lang)[len("/home/dev/"+g.project+"/"):])
		}
		b.WriteString(s)
		n += len([]rune(s))
		inPara++
		if !bullets && inPara >= 3+g.r.IntN(3) {
			b.WriteString("\n\n")
			inPara = 0
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// shell is terminal output of about chars bytes: test runs, builds, git.
func (g *textGen) shell(chars int) string {
	var b strings.Builder
	for b.Len() < chars {
		switch g.r.IntN(7) {
		case 0: // go test
			for range 2 + g.r.IntN(6) {
				p := pick(g.r, pkgs)
				if g.r.IntN(6) == 0 {
					t := "Test" + title(pick(g.r, nouns)) + title(pick(g.r, verbs))
					fmt.Fprintf(&b, "--- FAIL: %s (0.%02ds)\n    %s_test.go:%d: %s(%q) = %d, want %d\nFAIL\nFAIL\tgithub.com/acme/%s/internal/%s\t0.%03ds\n",
						t, g.r.IntN(100), p, 20+g.r.IntN(300), title(pick(g.r, verbs)), pick(g.r, nouns), g.r.IntN(50), g.r.IntN(50), g.project, p, g.r.IntN(1000))
				} else {
					fmt.Fprintf(&b, "ok  \tgithub.com/acme/%s/internal/%s\t%d.%03ds\n", g.project, p, g.r.IntN(3), g.r.IntN(1000))
				}
			}
		case 1: // pytest
			fmt.Fprintf(&b, "============================= test session starts ==============================\nplatform linux -- Python 3.12.%d, pytest-8.3.%d, pluggy-1.5.0\nrootdir: /home/dev/%s\ncollected %d items\n\n", g.r.IntN(9), g.r.IntN(5), g.project, 10+g.r.IntN(300))
			for range 2 + g.r.IntN(5) {
				fmt.Fprintf(&b, "tests/test_%s.py %s [%3d%%]\n", pick(g.r, nouns), strings.Repeat(".", 3+g.r.IntN(40)), g.r.IntN(101))
			}
			fmt.Fprintf(&b, "\n======================== %d passed, %d warnings in %d.%02ds ========================\n", 10+g.r.IntN(300), g.r.IntN(5), g.r.IntN(20), g.r.IntN(100))
		case 2: // git status
			fmt.Fprintf(&b, "On branch %s\nChanges not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n", pick(g.r, []string{"main", "fix-" + pick(g.r, nouns), "feat/" + pick(g.r, verbs)}))
			for range 1 + g.r.IntN(5) {
				fmt.Fprintf(&b, "\tmodified:   %s\n", g.path(g.lang)[len("/home/dev/"+g.project+"/"):])
			}
			b.WriteString("\nno changes added to commit (use \"git add\" and/or \"git commit -a\")\n")
		case 3: // git log --oneline
			for range 3 + g.r.IntN(8) {
				fmt.Fprintf(&b, "%07x %s %s %s\n", g.r.Uint32()>>4, title(pick(g.r, verbs)), pick(g.r, nouns), pick(g.r, []string{"handler", "tests", "retries", "config loading", "pagination", "error messages"}))
			}
		case 4: // ls -la
			fmt.Fprintf(&b, "total %d\n", 8+g.r.IntN(200))
			for range 3 + g.r.IntN(10) {
				fmt.Fprintf(&b, "-rw-r--r--  1 dev dev %6d Jan %2d %02d:%02d %s%s\n", g.r.IntN(40000), 1+g.r.IntN(28), g.r.IntN(24), g.r.IntN(60), pick(g.r, nouns), ext[g.lang])
			}
		case 5: // compiler errors
			for range 1 + g.r.IntN(4) {
				p := g.path(g.lang)[len("/home/dev/"+g.project+"/"):]
				fmt.Fprintf(&b, "%s:%d:%d: undefined: %s%s\n", p, 10+g.r.IntN(500), 2+g.r.IntN(40), pick(g.r, verbs), title(pick(g.r, nouns)))
			}
		case 6: // service logs
			for range 3 + g.r.IntN(8) {
				fmt.Fprintf(&b, "2026-01-%02dT%02d:%02d:%02d.%03dZ %s %s: %s id=%s-%d duration=%dms\n", 5+g.r.IntN(3), g.r.IntN(24), g.r.IntN(60), g.r.IntN(60), g.r.IntN(1000),
					pick(g.r, []string{"INFO", "INFO", "INFO", "WARN", "ERROR"}), pick(g.r, pkgs), g.sentence(English), pick(g.r, nouns), g.r.IntN(100000), g.r.IntN(3000))
			}
		}
	}
	return b.String()
}

type jsonUser struct {
	Login string `json:"login"`
	ID    int    `json:"id"`
}

type jsonRecord struct {
	ID        int      `json:"id"`
	Number    int      `json:"number"`
	Title     string   `json:"title"`
	State     string   `json:"state"`
	Labels    []string `json:"labels"`
	User      jsonUser `json:"user"`
	Comments  int      `json:"comments"`
	CreatedAt string   `json:"created_at"`
	URL       string   `json:"html_url"`
	Body      string   `json:"body,omitempty"`
}

// json is a pretty-printed array of API records of about chars bytes.
func (g *textGen) json(chars int) string {
	var recs []jsonRecord
	size := 0
	for size < chars {
		n := 100 + g.r.IntN(5000)
		rec := jsonRecord{
			ID: 1_000_000 + g.r.IntN(9_000_000), Number: n,
			Title:    strings.TrimSuffix(g.sentence(English), "."),
			State:    pick(g.r, []string{"open", "open", "closed"}),
			Labels:   []string{pick(g.r, []string{"bug", "enhancement", "docs", "perf"}), pick(g.r, pkgs)},
			User:     jsonUser{Login: pick(g.r, []string{"mkowalski", "ana-l", "jdoe", "t-nakamura", "rvasquez"}), ID: 10_000 + g.r.IntN(900_000)},
			Comments: g.r.IntN(30), CreatedAt: fmt.Sprintf("2025-%02d-%02dT%02d:%02d:%02dZ", 1+g.r.IntN(12), 1+g.r.IntN(28), g.r.IntN(24), g.r.IntN(60), g.r.IntN(60)),
			URL: fmt.Sprintf("https://github.com/acme/%s/issues/%d", g.project, n),
		}
		if g.r.IntN(2) == 0 {
			rec.Body = g.sentence(English) + " " + g.sentence(English)
		}
		recs = append(recs, rec)
		size += 300 + len(rec.Title) + len(rec.Body)
	}
	b, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		panic("synth: marshal fixed struct: " + err.Error()) // cannot happen
	}
	return string(b) + "\n"
}

// diff is a unified diff of about chars bytes over code of the project's
// language: context lines, and changed lines rewritten with other names.
func (g *textGen) diff(chars int) string {
	var b strings.Builder
	for b.Len() < chars {
		p := g.path(g.lang)[len("/home/dev/"+g.project+"/"):]
		fmt.Fprintf(&b, "diff --git a/%s b/%s\nindex %07x..%07x 100644\n--- a/%s\n+++ b/%s\n", p, p, g.r.Uint32()>>4, g.r.Uint32()>>4, p, p)
		unit := pick(g.r, g.c.code[g.lang])
		lines := strings.Split(g.fill(unit), "\n")
		alt := strings.Split(g.fill(unit), "\n")
		start := 10 + g.r.IntN(400)
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", start, len(lines), start, len(lines))
		for i, l := range lines {
			if i < len(alt) && alt[i] != l && g.r.IntN(2) == 0 {
				fmt.Fprintf(&b, "-%s\n+%s\n", l, alt[i])
			} else {
				fmt.Fprintf(&b, " %s\n", l)
			}
		}
	}
	return b.String()
}

// grep is search output: path:line:match lines, about chars bytes.
func (g *textGen) grep(chars int) string {
	var b strings.Builder
	for b.Len() < chars {
		lines := strings.Split(g.fill(pick(g.r, g.c.code[g.lang])), "\n")
		l := strings.TrimSpace(pick(g.r, lines))
		if l == "" {
			continue
		}
		fmt.Fprintf(&b, "%s:%d:%s\n", g.path(g.lang), 1+g.r.IntN(600), l)
	}
	return b.String()
}

// paths is a list of n file paths, as a glob tool returns them.
func (g *textGen) paths(n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(g.path(g.lang))
		b.WriteByte('\n')
	}
	return b.String()
}
