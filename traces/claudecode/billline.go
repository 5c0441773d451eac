package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/ctxsim/ctxsim/traces"
	"github.com/ctxsim/ctxsim/traces/internal/jsonl"
)

// billLine is what the cost scan takes from one log line: raw spans of the
// line (string contents still escaped; nil when absent). parseBillLine
// fills it in one pass over the line, checking the JSON grammar of every
// value as it skips it (brackets, commas, colons, literals, numbers,
// closed strings) but looking inside strings only for their closing quote:
// most of a log is message text, and skipping it at memchr speed is what
// makes the scan fast. Only the message's id, model and usage are read.
//
// encoding/json, fastjson and JSON v2 all build or validate every string
// byte by byte; measured on a 290 MB tree this one pass is ~2× fastjson's
// parse (see BenchmarkCostTree).
type billLine struct {
	typ, sessionID, agentID, timestamp, requestID []byte
	hasMessage, messageObject                     bool
	msgID, model                                  []byte
	usage                                         usageRead
	// odd is set when a key read here is spelled other than exactly (in
	// another case, or with escapes) or comes twice in its object:
	// encoding/json, which the importer uses, matches keys without regard
	// to case and merges a repeated object, so such a line is decoded by
	// encoding/json instead (billJSON). No Claude Code log has one; the
	// fuzzer does.
	odd bool
	// sessionV is the sessionId value, any JSON type.
	sessionV []byte
	// prog is the subagent response a progress line's data echoes.
	prog progEcho
	// unusual is jscan's: a number not spelled as JSON spells it, or a
	// nesting deeper than any log's.
	unusual bool
}

// The keys parseBillLine reads, by object.
var (
	lineKeys    = newKeySet("type", "sessionId", "agentId", "timestamp", "requestId", "message")
	messageKeys = newKeySet("id", "model", "usage")
	usageKeys   = newKeySet("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens", "cache_creation")
	splitKeys   = newKeySet("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")
	// A progress line's echo of a subagent response (progressLine).
	dataKeys        = newKeySet("data")
	progDataKeys    = newKeySet("agentId", "message")
	progMessageKeys = newKeySet("type", "timestamp", "requestId", "message")
)

// keySeen tracks one object's keys for oddness: seen is a bit per known
// key met (its index in names).
type keySeen struct {
	*keySet
	seen uint
}

// keySet is a list of known keys, with a bit per lower-case ASCII letter
// that starts one of them: a key starting with any other ASCII byte save
// '\\' can fold to none of them, which dismisses most keys on one byte.
type keySet struct {
	names []string
	first uint32
}

func newKeySet(names ...string) *keySet {
	k := &keySet{names: names}
	for _, n := range names {
		k.first |= 1 << (n[0] | 0x20 - 'a')
	}
	return k
}

// odd reports whether key makes its line odd: a known key seen before in
// this object, or a key encoding/json would take for a known one although
// it is not spelled exactly. A key starting with an ASCII letter no known
// key starts with matches none; a key folds to a name only if it has at
// least the name's bytes (escapes and the non-ASCII folds, K and ſ, are
// longer), and a plain ASCII one only if it has exactly as many.
func (k *keySeen) odd(key []byte) bool {
	if len(key) == 0 {
		return false
	}
	if c := key[0]; c < 0x80 && c != '\\' {
		if c |= 0x20; c < 'a' || c > 'z' || k.first&(1<<(c-'a')) == 0 {
			return false
		}
	}
	for i, n := range k.names {
		if string(key) == n {
			bit := uint(1) << i
			dup := k.seen&bit != 0
			k.seen |= bit
			return dup
		}
	}
	var folded []byte // key unescaped, once it is known not to be plain
	known := false    // whether plainness is known (folded != nil if not plain)
	for _, n := range k.names {
		switch {
		case len(key) < len(n):
			continue
		case len(key) == len(n) && bytes.EqualFold(key, []byte(n)):
			return true
		case !known:
			known = true
			if !plain(key) {
				folded = []byte(text(key))
			}
		}
		if folded != nil && bytes.EqualFold(folded, []byte(n)) {
			return true
		}
	}
	return false
}

// plain reports whether key is ASCII without escapes.
func plain(key []byte) bool {
	for _, c := range key {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// maxDepth bounds nesting, as encoding/json does (10000); deeper is
// invalid input, not a stack overflow.
const maxDepth = 10000

var (
	errSyntax = errors.New("invalid JSON")
	errDepth  = errors.New("JSON nested too deeply")
)

func parseBillLine(b []byte, l *billLine) error {
	*l = billLine{}
	p := jscan{b: b}
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		// Not an object: still must be valid JSON to be "not a record".
		j, err := p.skipValue(i, 0)
		if err != nil {
			return err
		}
		if skipWS(b, j) != len(b) {
			return errSyntax
		}
		return nil
	}
	top := keySeen{keySet: lineKeys}
	data := keySeen{keySet: dataKeys}
	end, err := p.object(i, 0, func(key []byte, v int) (int, error) {
		l.odd = top.odd(key) || l.odd
		l.prog.odd = data.odd(key) || l.prog.odd
		vend, err := 0, error(nil)
		switch string(key) {
		case "message":
			l.hasMessage = true
			if b[v] == '{' {
				l.messageObject = true
				vend, err = p.message(v, l)
			} else {
				vend, err = p.skipValue(v, 1)
			}
		case "data":
			l.prog.dataKind = b[v]
			if b[v] == '{' {
				vend, err = p.progData(v, &l.prog)
			} else {
				vend, err = p.skipValue(v, 1)
			}
		default:
			if vend, err = p.skipValue(v, 1); err != nil {
				return 0, err
			}
			switch string(key) {
			case "type":
				l.typ = strVal(b, v, vend)
			case "sessionId":
				l.sessionV, l.sessionID = b[v:vend], strVal(b, v, vend)
			case "agentId":
				l.agentID = strVal(b, v, vend)
			case "timestamp":
				l.timestamp = strVal(b, v, vend)
			case "requestId":
				l.requestID = strVal(b, v, vend)
			}
		}
		return vend, err
	})
	if err != nil {
		return err
	}
	if skipWS(b, end) != len(b) {
		return errSyntax
	}
	l.unusual = p.unusual
	return nil
}

// message reads the message object at b[v]: its id, model and usage.
func (p *jscan) message(v int, l *billLine) (int, error) {
	b := p.b
	msg := keySeen{keySet: messageKeys}
	return p.object(v, 1, func(key []byte, v int) (int, error) {
		l.odd = msg.odd(key) || l.odd
		var vend int
		var err error
		if string(key) == "usage" {
			vend, err = p.usage(v, 2, &l.usage)
		} else {
			vend, err = p.skipValue(v, 2)
		}
		if err != nil {
			return 0, err
		}
		switch string(key) {
		case "id":
			l.msgID = strVal(b, v, vend)
		case "model":
			l.model = strVal(b, v, vend)
		}
		return vend, nil
	})
}

// progEcho is what a progress line's data holds of the subagent response
// it echoes (Claude Code 2.1): the raw values of data.agentId,
// data.message.{type,timestamp,requestId} and
// data.message.message.{id,model,usage} (nil when absent), and the first
// byte of the data, data.message and data.message.message values (0 when
// absent). odd is as in billLine, for these keys and the line's "data".
type progEcho struct {
	dataKind, msgKind, innerKind, usageKind          byte
	agentID, typ, timestamp, requestID, msgID, model []byte
	usage                                            usageRead
	odd                                              bool
}

// progData reads the data object of a progress line at b[v].
func (p *jscan) progData(v int, e *progEcho) (int, error) {
	b := p.b
	seen := keySeen{keySet: progDataKeys}
	return p.object(v, 1, func(key []byte, v int) (int, error) {
		e.odd = seen.odd(key) || e.odd
		var vend int
		var err error
		if string(key) == "message" {
			e.msgKind = b[v]
			if b[v] == '{' {
				vend, err = p.progMessage(v, e)
			} else {
				vend, err = p.skipValue(v, 2)
			}
		} else {
			if vend, err = p.skipValue(v, 2); err != nil {
				return 0, err
			}
			if string(key) == "agentId" {
				e.agentID = b[v:vend]
			}
		}
		return vend, err
	})
}

// progMessage reads data.message at b[v].
func (p *jscan) progMessage(v int, e *progEcho) (int, error) {
	b := p.b
	seen := keySeen{keySet: progMessageKeys}
	return p.object(v, 2, func(key []byte, v int) (int, error) {
		e.odd = seen.odd(key) || e.odd
		var vend int
		var err error
		if string(key) == "message" {
			e.innerKind = b[v]
			if b[v] == '{' {
				vend, err = p.progInner(v, e)
			} else {
				vend, err = p.skipValue(v, 3)
			}
		} else {
			if vend, err = p.skipValue(v, 3); err != nil {
				return 0, err
			}
			switch string(key) {
			case "type":
				e.typ = b[v:vend]
			case "timestamp":
				e.timestamp = b[v:vend]
			case "requestId":
				e.requestID = b[v:vend]
			}
		}
		return vend, err
	})
}

// progInner reads data.message.message at b[v].
func (p *jscan) progInner(v int, e *progEcho) (int, error) {
	b := p.b
	seen := keySeen{keySet: messageKeys}
	return p.object(v, 3, func(key []byte, v int) (int, error) {
		e.odd = seen.odd(key) || e.odd
		var vend int
		var err error
		if string(key) == "usage" {
			e.usageKind = b[v]
			vend, err = p.usage(v, 4, &e.usage)
		} else {
			vend, err = p.skipValue(v, 4)
		}
		if err != nil {
			return 0, err
		}
		switch string(key) {
		case "id":
			e.msgID = b[v:vend]
		case "model":
			e.model = b[v:vend]
		}
		return vend, err
	})
}

// strVal is the contents of the string at b[v:vend], or nil if the value
// is not a string.
func strVal(b []byte, v, vend int) []byte {
	if b[v] != '"' {
		return nil
	}
	return b[v+1 : vend-1]
}

// text decodes a string's raw contents: escapes (rare in the fields read)
// go through encoding/json, invalid UTF-8 becomes U+FFFD.
func text(raw []byte) string {
	if bytes.IndexByte(raw, '\\') >= 0 {
		var s string
		q := make([]byte, 0, len(raw)+2)
		q = append(append(append(q, '"'), raw...), '"')
		if json.Unmarshal(q, &s) == nil {
			return s
		}
	}
	if utf8.Valid(raw) {
		return string(raw)
	}
	return string(bytes.ToValidUTF8(raw, []byte("\uFFFD")))
}

// jscan skips the JSON values of one line, checking their grammar as
// billLine says. unusual is set when a skipped number is not spelled as
// JSON's grammar wants (the scan accepts it, as it always has) or the
// nesting is deeper than any log's: such a line is valid JSON to
// encoding/json only perhaps, which matters to the progress echo
// (progressAgents.scan).
type jscan struct {
	b       []byte
	unusual bool
}

// unusualDepth is a nesting deeper than Claude Code logs have (they nest
// about ten levels); encoding/json rejects lines past maxDepth.
const unusualDepth = 1000

// object walks the object at b[i] (b[i] == '{'), calling field with each
// key and the index of its value; field returns the value's end (nil
// field: every value is skipped). It returns the index after the '}'.
func (p *jscan) object(i, depth int, field func(key []byte, v int) (int, error)) (int, error) {
	if depth > unusualDepth {
		if depth > maxDepth {
			return 0, errDepth
		}
		p.unusual = true
	}
	b := p.b
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, errSyntax
		}
		kend, err := skipString(b, i)
		if err != nil {
			return 0, err
		}
		key := b[i+1 : kend-1]
		i = skipWS(b, kend)
		if i >= len(b) || b[i] != ':' {
			return 0, errSyntax
		}
		v := skipWS(b, i+1)
		if v >= len(b) {
			return 0, errSyntax
		}
		var vend int
		if field != nil {
			vend, err = field(key, v)
		} else {
			vend, err = p.skipValue(v, depth+1)
		}
		if err != nil {
			return 0, err
		}
		i = skipWS(b, vend)
		if i >= len(b) {
			return 0, errSyntax
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, errSyntax
		}
	}
}

// skipValue returns the index after the JSON value at b[i].
func (p *jscan) skipValue(i, depth int) (int, error) {
	b := p.b
	if i >= len(b) {
		return 0, errSyntax
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{':
		return p.object(i, depth, nil)
	case c == '[':
		if depth > unusualDepth {
			if depth > maxDepth {
				return 0, errDepth
			}
			p.unusual = true
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for {
			j, err := p.skipValue(i, depth+1)
			if err != nil {
				return 0, err
			}
			i = skipWS(b, j)
			if i >= len(b) {
				return 0, errSyntax
			}
			switch b[i] {
			case ',':
				i = skipWS(b, i+1)
			case ']':
				return i + 1, nil
			default:
				return 0, errSyntax
			}
		}
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		j := i + 1
		for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '.' || b[j] == 'e' || b[j] == 'E' || b[j] == '+' || b[j] == '-') {
			j++
		}
		if !p.unusual && !jsonNumber(b[i:j]) {
			p.unusual = true
		}
		return j, nil
	}
	return 0, errSyntax
}

// jsonNumber reports whether n is a number as JSON spells it.
func jsonNumber(n []byte) bool {
	end, ok := jsonl.Number(n, 0)
	return ok && end == len(n)
}

func literal(b []byte, i int, lit string) (int, error) {
	if !bytes.HasPrefix(b[i:], []byte(lit)) {
		return 0, errSyntax
	}
	return i + len(lit), nil
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, errSyntax
		}
		j += k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		j++
		if n%2 == 0 {
			return j, nil
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// usageRead is a usage value as jscan.usage reads it: the counts (a count
// that is not a number is NaN, reported by traces.CheckCount), ok when the
// value is an object, odd as in billLine, and split the first byte of the
// cache_creation value (0 when absent).
type usageRead struct {
	raw     traces.RawAnthropic
	ok, odd bool
	split   byte
}

// usage reads the usage value at b[v] into *r (read while the line is
// parsed, so the object is walked once) and returns its end.
func (p *jscan) usage(v, depth int, r *usageRead) (int, error) {
	*r = usageRead{}
	if p.b[v] != '{' {
		return p.skipValue(v, depth)
	}
	b, u := p.b, &r.raw
	top := keySeen{keySet: usageKeys}
	end, err := p.object(v, depth, func(key []byte, v int) (int, error) {
		r.odd = top.odd(key) || r.odd
		if string(key) == "cache_creation" {
			r.split = b[v]
			if b[v] != '{' {
				return p.skipValue(v, depth+1)
			}
			u.HasSplit = true
			seen := keySeen{keySet: splitKeys}
			return p.object(v, depth+1, func(key []byte, v int) (int, error) {
				r.odd = seen.odd(key) || r.odd
				vend, err := p.skipValue(v, depth+2)
				if err != nil {
					return 0, err
				}
				switch string(key) {
				case "ephemeral_5m_input_tokens":
					u.W5m = count(b[v:vend])
				case "ephemeral_1h_input_tokens":
					u.W1h = count(b[v:vend])
				}
				return vend, nil
			})
		}
		vend, err := p.skipValue(v, depth+1)
		if err != nil {
			return 0, err
		}
		switch string(key) {
		case "input_tokens":
			u.Input = count(b[v:vend])
		case "cache_creation_input_tokens":
			u.CacheCreation = count(b[v:vend])
		case "cache_read_input_tokens":
			u.CacheRead = count(b[v:vend])
		case "output_tokens":
			u.Output = count(b[v:vend])
		}
		return vend, nil
	})
	r.ok = err == nil
	return end, err
}

// count reads a count as traces.Count decodes it: null is 0, a number
// its value (past float64's range, ±Inf), anything else NaN. Plain digits
// (every count of a log) are read directly.
func count(v []byte) float64 {
	if len(v) > 0 && len(v) <= 15 {
		n := 0
		for _, c := range v {
			if c < '0' || c > '9' {
				n = -1
				break
			}
			n = n*10 + int(c-'0')
		}
		if n >= 0 {
			return float64(n)
		}
	}
	if string(v) == "null" {
		return 0
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return math.NaN()
	}
	return f
}

// billJSON is the part of a line the importer bills from, decoded as the
// importer decodes it: for the lines parseBillLine finds odd.
type billJSON struct {
	Type      *string `json:"type"`
	SessionID *string `json:"sessionId"`
	AgentID   *string `json:"agentId"`
	Timestamp *string `json:"timestamp"`
	RequestID *string `json:"requestId"`
	Message   *struct {
		ID    *string   `json:"id"`
		Model *string   `json:"model"`
		Usage *rawUsage `json:"usage"`
	} `json:"message"`
}

// decodeOdd fills l from b by encoding/json (string spans re-escaped, so
// that text reads them back) and returns the usage it decoded; ok is false
// when b does not decode into a billJSON (a field of the wrong type).
func decodeOdd(b []byte, l *billLine) (u traces.RawAnthropic, hasUsage, ok bool) {
	var j billJSON
	if json.Unmarshal(b, &j) != nil {
		return u, false, false
	}
	span := func(s *string) []byte {
		if s == nil {
			return nil
		}
		q, _ := json.Marshal(*s)
		return q[1 : len(q)-1]
	}
	*l = billLine{typ: span(j.Type), sessionID: span(j.SessionID), agentID: span(j.AgentID),
		timestamp: span(j.Timestamp), requestID: span(j.RequestID), odd: true}
	if m := j.Message; m != nil {
		l.hasMessage, l.messageObject = true, true
		l.msgID, l.model = span(m.ID), span(m.Model)
		if m.Usage != nil {
			return m.Usage.raw(), true, true
		}
	}
	return u, false, true
}
