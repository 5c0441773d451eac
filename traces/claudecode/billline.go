package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"

	"github.com/ctxsim/ctxsim/traces"
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
	usage                                         []byte // the usage value, any JSON type
	// odd is set when a key read here is spelled other than exactly (in
	// another case, or with escapes) or comes twice in its object:
	// encoding/json, which the importer uses, matches keys without regard
	// to case and merges a repeated object, so such a line is decoded by
	// encoding/json instead (billJSON). No Claude Code log has one; the
	// fuzzer does.
	odd bool
}

// The keys parseBillLine and usageOf read, by object.
var (
	lineKeys    = newKeySet("type", "sessionId", "agentId", "timestamp", "requestId", "message")
	messageKeys = newKeySet("id", "model", "usage")
	usageKeys   = newKeySet("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens", "cache_creation")
	splitKeys   = newKeySet("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")
)

// keySeen tracks one object's keys for oddness: seen is a bit per known
// key (its index in names).
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

// check reports whether key makes its line odd: a known key seen before,
// or a key encoding/json would take for a known one although it is not
// spelled exactly (exact is the known key's index, or -1). A key folds to
// a name only if it has at least the name's bytes (escapes and the
// non-ASCII folds, K and ſ, are longer), and a plain ASCII one only if it
// has exactly as many; most keys are dismissed on their length.
func (k *keySeen) check(key []byte, exact int) bool {
	if exact >= 0 {
		bit := uint(1) << exact
		dup := k.seen&bit != 0
		k.seen |= bit
		return dup
	}
	if len(key) == 0 {
		return false
	}
	if c := key[0]; c < 0x80 && c != '\\' {
		if c |= 0x20; c < 'a' || c > 'z' || k.first&(1<<(c-'a')) == 0 {
			return false
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
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		// Not an object: still must be valid JSON to be "not a record".
		j, err := skipValue(b, i, 0)
		if err != nil {
			return err
		}
		if skipWS(b, j) != len(b) {
			return errSyntax
		}
		return nil
	}
	top := keySeen{keySet: lineKeys}
	end, err := eachKey(b, i, 0, func(key []byte, v, vend int) error {
		exact := 0
		switch string(key) {
		case "type":
			l.typ = strVal(b, v, vend)
		case "sessionId":
			l.sessionID, exact = strVal(b, v, vend), 1
		case "agentId":
			l.agentID, exact = strVal(b, v, vend), 2
		case "timestamp":
			l.timestamp, exact = strVal(b, v, vend), 3
		case "requestId":
			l.requestID, exact = strVal(b, v, vend), 4
		case "message":
			exact = 5
		default:
			exact = -1
		}
		l.odd = top.check(key, exact) || l.odd
		return nil
	}, func(key []byte) bool {
		return string(key) == "message"
	}, func(v int) (int, error) {
		l.hasMessage = true
		if b[v] != '{' {
			return skipValue(b, v, 1)
		}
		l.messageObject = true
		msg := keySeen{keySet: messageKeys}
		return eachKey(b, v, 1, func(key []byte, v, vend int) error {
			exact := 0
			switch string(key) {
			case "id":
				l.msgID = strVal(b, v, vend)
			case "model":
				l.model, exact = strVal(b, v, vend), 1
			case "usage":
				l.usage, exact = b[v:vend], 2
			default:
				exact = -1
			}
			l.odd = msg.check(key, exact) || l.odd
			return nil
		}, nil, nil)
	})
	if err != nil {
		return err
	}
	if skipWS(b, end) != len(b) {
		return errSyntax
	}
	return nil
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
	return string(bytes.ToValidUTF8(raw, []byte("\uFFFD")))
}

// eachKey walks the object at b[i] (b[i] == '{'), calling val with each
// key's value span; a key for which deep reports true is handed to sub,
// which returns the value's end. It returns the index after the '}'.
func eachKey(b []byte, i, depth int, val func(key []byte, v, vend int) error,
	deep func(key []byte) bool, sub func(v int) (int, error)) (int, error) {
	if depth > maxDepth {
		return 0, errDepth
	}
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
		if deep != nil && deep(key) {
			vend, err = sub(v)
		} else {
			vend, err = skipValue(b, v, depth+1)
		}
		if err != nil {
			return 0, err
		}
		if err := val(key, v, vend); err != nil {
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
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{':
		return eachKey(b, i, depth, func([]byte, int, int) error { return nil }, nil, nil)
	case c == '[':
		if depth > maxDepth {
			return 0, errDepth
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for {
			j, err := skipValue(b, i, depth+1)
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
		return j, nil
	}
	return 0, errSyntax
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

// usageOf reads a usage object's counts; a count that is not a number is
// NaN (reported by traces.CheckCount). ok is false when the value is not
// an object; odd as in billLine.
func usageOf(raw []byte) (u traces.RawAnthropic, ok, odd bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return u, false, false
	}
	num := func(v []byte) float64 {
		if string(v) == "null" {
			return 0
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return math.NaN()
		}
		return f
	}
	top := keySeen{keySet: usageKeys}
	_, err := eachKey(raw, 0, 0, func(key []byte, v, vend int) error {
		exact := 0
		switch string(key) {
		case "input_tokens":
			u.Input = num(raw[v:vend])
		case "cache_creation_input_tokens":
			u.CacheCreation, exact = num(raw[v:vend]), 1
		case "cache_read_input_tokens":
			u.CacheRead, exact = num(raw[v:vend]), 2
		case "output_tokens":
			u.Output, exact = num(raw[v:vend]), 3
		case "cache_creation":
			exact = 4
		default:
			exact = -1
		}
		odd = top.check(key, exact) || odd
		if exact != 4 || raw[v] != '{' {
			return nil
		}
		u.HasSplit = true
		split := keySeen{keySet: splitKeys}
		_, err := eachKey(raw, v, 1, func(key []byte, v2, vend2 int) error {
			exact := 0
			switch string(key) {
			case "ephemeral_5m_input_tokens":
				u.W5m = num(raw[v2:vend2])
			case "ephemeral_1h_input_tokens":
				u.W1h, exact = num(raw[v2:vend2]), 1
			default:
				exact = -1
			}
			odd = split.check(key, exact) || odd
			return nil
		}, nil, nil)
		return err
	}, nil, nil)
	return u, err == nil, odd
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
