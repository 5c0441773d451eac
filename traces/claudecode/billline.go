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
	end, err := eachKey(b, i, 0, func(key []byte, v, vend int) error {
		switch string(key) {
		case "type":
			l.typ = strVal(b, v, vend)
		case "sessionId":
			l.sessionID = strVal(b, v, vend)
		case "agentId":
			l.agentID = strVal(b, v, vend)
		case "timestamp":
			l.timestamp = strVal(b, v, vend)
		case "requestId":
			l.requestID = strVal(b, v, vend)
		}
		return nil
	}, func(key []byte) bool {
		return string(key) == "message"
	}, func(v int) (int, error) {
		l.hasMessage = true
		if b[v] != '{' {
			return skipValue(b, v, 1)
		}
		l.messageObject = true
		return eachKey(b, v, 1, func(key []byte, v, vend int) error {
			switch string(key) {
			case "id":
				l.msgID = strVal(b, v, vend)
			case "model":
				l.model = strVal(b, v, vend)
			case "usage":
				l.usage = b[v:vend]
			}
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
// an object.
func usageOf(raw []byte) (u traces.RawAnthropic, ok bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return u, false
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
	_, err := eachKey(raw, 0, 0, func(key []byte, v, vend int) error {
		switch string(key) {
		case "input_tokens":
			u.Input = num(raw[v:vend])
		case "cache_creation_input_tokens":
			u.CacheCreation = num(raw[v:vend])
		case "cache_read_input_tokens":
			u.CacheRead = num(raw[v:vend])
		case "output_tokens":
			u.Output = num(raw[v:vend])
		case "cache_creation":
			if raw[v] != '{' {
				return nil
			}
			u.HasSplit = true
			_, err := eachKey(raw, v, 1, func(key []byte, v2, vend2 int) error {
				switch string(key) {
				case "ephemeral_5m_input_tokens":
					u.W5m = num(raw[v2:vend2])
				case "ephemeral_1h_input_tokens":
					u.W1h = num(raw[v2:vend2])
				}
				return nil
			}, nil, nil)
			return err
		}
		return nil
	}, nil, nil)
	return u, err == nil
}
