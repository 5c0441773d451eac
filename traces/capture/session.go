package capture

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/ctxsim/ctxsim/traces"
)

// Meta keys a capture's assistant events carry: the request as sent.
const (
	// MetaMarks are the request's cache_control markers (FormatMarks).
	MetaMarks = "cache_control"
	// MetaAutomatic is a top-level cache_control's TTL.
	MetaAutomatic = "cache_control_auto"
	// MetaThinking, MetaToolChoice and MetaContextManagement are the
	// request's settings, compact JSON (OpenAI's reasoning for thinking).
	MetaThinking          = "thinking"
	MetaToolChoice        = "tool_choice"
	MetaContextManagement = "context_management"
	// MetaAPI is the API the call was made on (Anthropic, OpenAIResponses,
	// OpenAIChat).
	MetaAPI = "api"
	// MetaRole marks a user event that was a system message sent among the
	// messages (Anthropic's mid-conversation system messages, OpenAI's
	// developer messages).
	MetaRole = "role"
	// MetaCacheKey is an OpenAI request's prompt_cache_key, which routes
	// it (prompt.Request.RouteKey).
	MetaCacheKey = "prompt_cache_key"
	// MetaHosted is the hosted tool (a Responses output item type:
	// image_generation_call, web_search_call...) the server ran inside
	// the response before sampling again (Continued).
	MetaHosted = "hosted_tool"
	// MetaCut marks a call whose request the capture tool cut short
	// (WarnCut).
	MetaCut = "cut"
)

// hostedTools are the Responses API output items of tools the server runs
// itself, inside the response.
var hostedTools = map[string]bool{"image_generation_call": true, "web_search_call": true,
	"file_search_call": true, "code_interpreter_call": true, "mcp_call": true}

// Continued is the hosted tool a response's output ran before more output
// ("" when none did): the server ran the tool and sampled again, with the
// model's call and the tool's result (a generated image, search results)
// in the model's input. The response's usage.input_tokens counts that
// input too, beyond the request's prompt, and no later request sends it
// as the model saw it (trace_image_codex event 4 bills 24,041 where the
// next request, all of its items and ~830 tokens more, bills 22,766);
// cached_tokens is what the first sampling read.
func Continued(out []traces.Block) string {
	for i := range out {
		if out[i].Kind == traces.Text && hostedTools[out[i].Name] && i < len(out)-1 {
			return out[i].Name
		}
	}
	return ""
}

// Warnings of the grouping.
const (
	WarnFailedCall = "skipped call the provider refused or failed (not billed; the status and error are in the capture)"
)

// FormatMarks writes marks as MetaMarks holds them: comma-separated
// SECTION.INDEX[.BLOCK]:TTL[@SCOPE], in request order.
func FormatMarks(marks []Mark) string {
	var sb strings.Builder
	for i, m := range marks {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(m.Section)
		sb.WriteByte('.')
		sb.WriteString(strconv.Itoa(m.Index))
		if m.Section == SecMessages {
			sb.WriteByte('.')
			sb.WriteString(strconv.Itoa(m.Block))
		}
		sb.WriteByte(':')
		sb.WriteString(m.TTL)
		if m.Scope != "" {
			sb.WriteByte('@')
			sb.WriteString(m.Scope)
		}
	}
	return sb.String()
}

// ParseMarks reads FormatMarks' text.
func ParseMarks(s string) ([]Mark, error) {
	if s == "" {
		return nil, nil
	}
	var out []Mark
	for _, f := range strings.Split(s, ",") {
		pos, ttl, ok := strings.Cut(f, ":")
		if !ok {
			return nil, fmt.Errorf("cache_control %q: no ttl", f)
		}
		var m Mark
		m.TTL, m.Scope, _ = strings.Cut(ttl, "@")
		if m.TTL != "5m" && m.TTL != "1h" {
			return nil, fmt.Errorf("cache_control %q: ttl %q", f, m.TTL)
		}
		parts := strings.Split(pos, ".")
		m.Section = parts[0]
		want := 2
		if m.Section == SecMessages {
			want = 3
		} else if m.Section != SecTools && m.Section != SecSystem {
			return nil, fmt.Errorf("cache_control %q: section %q", f, m.Section)
		}
		if len(parts) != want {
			return nil, fmt.Errorf("cache_control %q: want %d fields", f, want)
		}
		var err error
		if m.Index, err = strconv.Atoi(parts[1]); err != nil || m.Index < 0 {
			return nil, fmt.Errorf("cache_control %q: index", f)
		}
		if want == 3 {
			if m.Block, err = strconv.Atoi(parts[2]); err != nil || m.Block < 0 {
				return nil, fmt.Errorf("cache_control %q: block", f)
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// msgHash is the identity of message m after the prefix prev: its role
// and blocks, markers not included.
func msgHash(prev uint64, m *Message) uint64 {
	d := xxhash.New()
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], prev)
	d.Write(buf[:])
	d.WriteString(m.Role)
	for i := range m.Blocks {
		binary.LittleEndian.PutUint64(buf[:], m.Blocks[i].Hash())
		d.Write(buf[:])
	}
	return d.Sum64()
}

func floorHash(c *Call) uint64 {
	d := xxhash.New()
	var buf [8]byte
	for _, bs := range [][]traces.Block{c.Tools, c.System} {
		for i := range bs {
			binary.LittleEndian.PutUint64(buf[:], bs[i].Hash())
			d.Write(buf[:])
		}
		d.Write([]byte{0})
	}
	return d.Sum64()
}

type open struct {
	s     *traces.Session
	floor uint64
	n     int // messages of its last call
	// last is the index of its last call's assistant event, call that call.
	last int
	call *Call
}

type prefixKey struct {
	n int
	h uint64
}

// Sessions groups calls into sessions by common prefix (see the package
// doc). name is the file the calls came from: sessions are named after it.
// Calls continuing a previous_response_id get that call's input and output
// in front of their own.
func Sessions(calls []*Call, name string, w *traces.Warnings) []*traces.Session {
	base := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	byResp := map[string]*Call{}
	byKey := map[prefixKey]*open{}
	var out []*traces.Session
	// openOf is the session each call went to, and the call it ended at.
	openOf := map[*Call]*open{}
	for _, c := range calls {
		var prev *Call
		if c.Previous != "" {
			if p, ok := byResp[c.Previous]; ok {
				prev = p
				msgs := slices.Clone(p.Msgs)
				msgs = appendOutput(msgs, p.Output)
				c.Msgs = append(msgs, c.Msgs...)
				// Markers index the request's own messages.
				for i := range c.Marks {
					if c.Marks[i].Section == SecMessages {
						c.Marks[i].Index += len(msgs)
					}
				}
				c.Previous = ""
			} else {
				w.Add(c.File, c.Line, WarnNoPrevious)
			}
		}
		if c.ResponseID != "" {
			byResp[c.ResponseID] = c
		}
		if c.Usage == nil || c.Error != "" || (c.Status >= 300 && c.Status != 0) {
			w.Add(c.File, c.Line, WarnFailedCall)
			continue
		}
		chain := make([]uint64, len(c.Msgs))
		var h uint64
		for i := range c.Msgs {
			h = msgHash(h, &c.Msgs[i])
			chain[i] = h
		}
		var o *open
		if k := openOf[prev]; prev != nil && k != nil && k.call == prev {
			// It continues that response, whatever it holds.
			o = k
		}
		for n := len(chain); n >= 1 && o == nil; n-- {
			if k, ok := byKey[prefixKey{n, chain[n-1]}]; ok && k.n == n {
				o = k
			}
		}
		start := 0
		if o == nil {
			// One file is one account's traffic: its sessions share the
			// provider's cache, as they did.
			s := &traces.Session{ID: fmt.Sprintf("%s-%d", base, len(out)+1), Model: c.Model, Format: FormatName,
				Source: traces.SourceCLI, Floor: floorOf(c), Tenant: base}
			if c.Key != "" {
				s.Notes = append(s.Notes, "conversation "+c.Key)
			}
			out = append(out, s)
			o = &open{s: s, floor: floorHash(c), last: -1}
		} else {
			if o.n > 0 {
				delete(byKey, prefixKey{o.n, chain[o.n-1]})
			}
			start = o.n
			if start < len(c.Msgs) && c.Msgs[start].Role == "assistant" && o.last >= 0 {
				// The response as the harness sent it back.
				o.s.Events[o.last].Blocks = c.Msgs[start].Blocks
				start++
			}
			if f := floorHash(c); f != o.floor {
				o.s.Events = append(o.s.Events, traces.Event{Time: c.Time, Kind: traces.FloorChange, Blocks: floorOf(c)})
				o.floor = f
			}
		}
		s := o.s
		for _, m := range c.Msgs[start:] {
			s.Events = append(s.Events, messageEvent(c, m))
		}
		u := *c.Usage
		ev := traces.Event{Time: c.Time, Kind: traces.Assistant, Model: c.Model, Blocks: c.Output, Usage: &u,
			RequestID: c.ResponseID, Meta: map[string]string{MetaAPI: c.API}}
		if len(ev.Blocks) == 0 {
			ev.Blocks = []traces.Block{{Kind: traces.Text}}
		}
		set := func(k, v string) {
			if v != "" {
				ev.Meta[k] = v
			}
		}
		set(MetaMarks, FormatMarks(c.Marks))
		set(MetaAutomatic, c.Automatic)
		set(MetaThinking, c.Thinking)
		set(MetaToolChoice, c.ToolChoice)
		set(MetaContextManagement, c.ContextManagement)
		if c.Cut {
			set(MetaCut, "1")
		}
		if c.API != Anthropic {
			set(MetaCacheKey, c.Key)
			set(MetaHosted, Continued(c.Output))
		}
		s.Events = append(s.Events, ev)
		o.last, o.n, o.call = len(s.Events)-1, len(c.Msgs), c
		openOf[c] = o
		if o.n > 0 {
			byKey[prefixKey{o.n, chain[o.n-1]}] = o
		}
	}
	return out
}

func floorOf(c *Call) []traces.Block {
	return append(slices.Clone(c.Tools), c.System...)
}

// appendOutput adds a response's output to msgs as the assistant message
// the next request continues.
func appendOutput(msgs []Message, out []traces.Block) []Message {
	if len(out) == 0 {
		return msgs
	}
	return append(msgs, Message{Role: "assistant", Blocks: slices.Clone(out)})
}

// messageEvent is a request message as a transcript event: a user
// message, a tool-result message, a system message among the messages,
// or an assistant message the capture shows only as history (no call of
// this session produced it): copied.
func messageEvent(c *Call, m Message) traces.Event {
	ev := traces.Event{Time: c.Time, Kind: traces.User, Blocks: m.Blocks}
	switch m.Role {
	case "assistant":
		ev.Kind, ev.Model = traces.Assistant, c.Model
		ev.Meta = map[string]string{traces.MetaCopied: "true"}
	case "system":
		ev.Meta = map[string]string{MetaRole: "system"}
	default:
		results := len(m.Blocks) > 0
		for _, b := range m.Blocks {
			results = results && b.Kind == traces.ToolResultBlock
		}
		if results {
			ev.Kind = traces.ToolResult
		}
	}
	if len(ev.Blocks) == 0 {
		ev.Blocks = []traces.Block{{Kind: traces.Text}}
	}
	return ev
}
