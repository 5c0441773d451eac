package synth

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/ctxsim/ctxsim/traces"
)

// A harness is the agent program a profile imitates: its tools and the size
// of its system prompt. The floor depends on the harness only, not on the
// seed or the session, as a real harness sends the same system prompt and
// tools to every session of one version; that is what lets sessions of one
// tenant share a cached prefix. The per-session environment block real
// harnesses add (cwd, date, git status) is left out, which makes the floor
// slightly more cacheable than it is in life.
type harness struct {
	name  string
	tools []string
	// notes is the number of usage-note bullets per tool description and
	// examples the number of example invocations.
	notes, examples int
	// projectDoc is the size in characters of the project instructions
	// (a CLAUDE.md or AGENTS.md) appended to the system prompt.
	projectDoc int
}

var (
	// codingHarness is Claude-Code-like: 17,948 tokens of floor (o200k),
	// tools first.
	codingHarness = harness{name: "coding",
		tools: []string{"Task", "Bash", "Glob", "Grep", "Read", "Edit", "Write", "NotebookEdit",
			"WebFetch", "TodoWrite", "WebSearch", "BashOutput"},
		notes: 22, examples: 9, projectDoc: 14000}
	// cronHarness is a scheduled job runner: three tools, a short prompt,
	// 2,799 tokens.
	cronHarness = harness{name: "cron", tools: []string{"Bash", "Read", "WebFetch"},
		notes: 6, examples: 2, projectDoc: 3000}
)

var floors sync.Map // harness name -> []traces.Block

// floor returns the harness's floor. Callers must not modify it; sessions
// share the slice's blocks by value.
func (h harness) floor() []traces.Block {
	if f, ok := floors.Load(h.name); ok {
		return f.([]traces.Block)
	}
	f := h.build()
	floors.Store(h.name, f)
	return f
}

func (h harness) build() []traces.Block {
	r := rand.New(rand.NewPCG(0, traces.HashString("floor/"+h.name)))
	g := newTextGen(r, Go)
	c := g.c
	var out []traces.Block
	for _, name := range h.tools {
		var doc toolDoc
		for _, d := range c.tools {
			if d.name == name {
				doc = d
			}
		}
		var desc strings.Builder
		desc.WriteString(doc.desc)
		desc.WriteString("\n\nUsage notes:\n")
		for range h.notes {
			fmt.Fprintf(&desc, "- %s\n", pick(r, c.rules))
		}
		if h.examples > 0 {
			desc.WriteString("\nExamples:\n")
			for range h.examples {
				fmt.Fprintf(&desc, "<example>\nuser: %s\nassistant: I'll use the %s tool. %s\n</example>\n", g.sentence(English), name, g.sentence(English))
			}
		}
		schema := map[string]any{
			"description": desc.String(),
			"type":        "object",
			"properties":  toolParams(name),
			"required":    toolRequired[name],
			"$schema":     "http://json-schema.org/draft-07/schema#",
		}
		b, err := json.Marshal(schema) // map keys are sorted: stable bytes
		if err != nil {
			panic("synth: marshal schema: " + err.Error())
		}
		out = append(out, traces.Block{Kind: traces.ToolSchema, Name: name, Input: string(b)})
	}
	var sys strings.Builder
	sys.WriteString(c.system)
	sys.WriteString("\n\n# Project instructions\nThe project's instruction file follows. These instructions override default behaviour and you must follow them exactly.\n\n")
	sys.WriteString(g.prose(English, h.projectDoc*2/3))
	sys.WriteString("\n## Code style\n```go\n")
	sys.WriteString(g.code(Go, h.projectDoc/3))
	sys.WriteString("```\n")
	out = append(out, traces.Block{Kind: traces.System, Text: sys.String()})
	return out
}

var toolRequired = map[string][]string{
	"Task": {"description", "prompt"}, "Bash": {"command"}, "Glob": {"pattern"}, "Grep": {"pattern"},
	"Read": {"file_path"}, "Edit": {"file_path", "old_string", "new_string"}, "Write": {"file_path", "content"},
	"NotebookEdit": {"notebook_path", "new_source"}, "WebFetch": {"url", "prompt"}, "TodoWrite": {"todos"},
	"WebSearch": {"query"}, "BashOutput": {"bash_id"},
}

func prop(typ, desc string) map[string]any { return map[string]any{"type": typ, "description": desc} }

func toolParams(name string) map[string]any {
	switch name {
	case "Task":
		return map[string]any{"description": prop("string", "A short (3-5 word) description of the task"),
			"prompt": prop("string", "The task for the agent to perform"), "subagent_type": prop("string", "The type of specialized agent to use for this task")}
	case "Bash":
		return map[string]any{"command": prop("string", "The command to execute"),
			"timeout":           prop("number", "Optional timeout in milliseconds (max 600000)"),
			"description":       prop("string", "Clear, concise description of what this command does in 5-10 words"),
			"run_in_background": prop("boolean", "Set to true to run this command in the background")}
	case "Glob":
		return map[string]any{"pattern": prop("string", "The glob pattern to match files against"),
			"path": prop("string", "The directory to search in. Defaults to the current working directory.")}
	case "Grep":
		return map[string]any{"pattern": prop("string", "The regular expression pattern to search for in file contents"),
			"path": prop("string", "File or directory to search in"), "glob": prop("string", "Glob pattern to filter files"),
			"output_mode": map[string]any{"type": "string", "enum": []string{"content", "files_with_matches", "count"}, "description": "Output mode"},
			"-n":          prop("boolean", "Show line numbers in output"), "-i": prop("boolean", "Case insensitive search"),
			"multiline": prop("boolean", "Enable multiline mode where . matches newlines")}
	case "Read":
		return map[string]any{"file_path": prop("string", "The absolute path to the file to read"),
			"offset": prop("number", "The line number to start reading from"), "limit": prop("number", "The number of lines to read")}
	case "Edit":
		return map[string]any{"file_path": prop("string", "The absolute path to the file to modify"),
			"old_string": prop("string", "The text to replace"), "new_string": prop("string", "The text to replace it with (must be different from old_string)"),
			"replace_all": prop("boolean", "Replace all occurences of old_string (default false)")}
	case "Write":
		return map[string]any{"file_path": prop("string", "The absolute path to the file to write"), "content": prop("string", "The content to write to the file")}
	case "NotebookEdit":
		return map[string]any{"notebook_path": prop("string", "The absolute path to the Jupyter notebook file"),
			"cell_id": prop("string", "The ID of the cell to edit"), "new_source": prop("string", "The new source for the cell")}
	case "WebFetch":
		return map[string]any{"url": map[string]any{"type": "string", "format": "uri", "description": "The URL to fetch content from"},
			"prompt": prop("string", "The prompt to run on the fetched content")}
	case "TodoWrite":
		return map[string]any{"todos": map[string]any{"type": "array", "description": "The updated todo list", "items": map[string]any{
			"type": "object", "required": []string{"content", "status", "activeForm"},
			"properties": map[string]any{"content": prop("string", "What to do"), "activeForm": prop("string", "Present continuous form"),
				"status": map[string]any{"type": "string", "enum": []string{"pending", "in_progress", "completed"}}}}}}
	case "WebSearch":
		return map[string]any{"query": prop("string", "The search query to use"),
			"allowed_domains": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Only include results from these domains"}}
	case "BashOutput":
		return map[string]any{"bash_id": prop("string", "The ID of the background shell to retrieve output from"),
			"filter": prop("string", "Optional regular expression to filter the output lines")}
	}
	return map[string]any{}
}
