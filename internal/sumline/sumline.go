// Package sumline checksums the JSON objects ctxsim writes for itself and
// reads back (a sweep's journal, a shard's cells and manifest), so that
// what does not verify is refused instead of trusted: an edited journal
// line starred a −$123,456 cell, an edited shard line merged into −5
// requests and a 750 % hit rate. The sum is a first key of the object,
// "sum", the xxhash64 of the object as written without it, so a line stays
// JSON any reader can decode (the key is ignored) and its bytes are
// checked as they are, never re-encoded:
//
//	{"sum":"5f0c2bd1e0a3f6d9","cell":"ttl-5m","tenant":"a",...}
//
// It guards against accidents and edits, not against someone who
// recomputes the sum.
package sumline

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"
)

const prefix = `{"sum":"`

// sumLen is the hex length of a sum.
const sumLen = 16

// Seal returns obj, a JSON object as encoding/json writes it (no
// surrounding space), with its sum as its first key.
func Seal(obj []byte) ([]byte, error) {
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return nil, errors.New("sumline: not a JSON object")
	}
	out := make([]byte, 0, len(obj)+len(prefix)+sumLen+2)
	out = append(out, prefix...)
	out = hex.AppendEncode(out, sum(obj))
	out = append(out, '"')
	if len(obj) > 2 {
		out = append(out, ',')
	}
	return append(out, obj[1:]...), nil
}

// ErrMismatch is Check's error for an object whose content does not match
// its sum.
var ErrMismatch = errors.New("checksum mismatch: edited or damaged since it was written")

// ErrNoSum is Check's error for an object that carries no sum.
var ErrNoSum = errors.New("no checksum: not written by this version of ctxsim")

// Check verifies sealed (surrounding space allowed): nil when its content
// matches its sum.
func Check(sealed []byte) error {
	b := bytes.TrimSpace(sealed)
	if len(b) < len(prefix)+sumLen+2 || !bytes.HasPrefix(b, []byte(prefix)) || b[len(prefix)+sumLen] != '"' {
		return ErrNoSum
	}
	var want [8]byte
	if _, err := hex.Decode(want[:], b[len(prefix):len(prefix)+sumLen]); err != nil {
		return ErrNoSum
	}
	rest := b[len(prefix)+sumLen+1:]
	var obj []byte
	switch {
	case len(rest) == 1 && rest[0] == '}':
		obj = []byte("{}")
	case len(rest) > 1 && rest[0] == ',':
		obj = append([]byte{'{'}, rest[1:]...)
	default:
		return ErrNoSum
	}
	if !bytes.Equal(sum(obj), want[:]) {
		return ErrMismatch
	}
	return nil
}

func sum(b []byte) []byte {
	var out [8]byte
	h := xxhash.Sum64(b)
	for i := range out {
		out[i] = byte(h >> (56 - 8*i))
	}
	return out[:]
}

// A Writer writes values as sealed JSON lines.
type Writer struct{ w io.Writer }

// NewWriter writes sealed lines to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Encode writes v as one sealed JSON line.
func (w *Writer) Encode(v any) error {
	b, err := Line(v)
	if err != nil {
		return err
	}
	_, err = w.w.Write(b)
	return err
}

// Line is v as one sealed JSON line, newline included.
func Line(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	s, err := Seal(b)
	if err != nil {
		return nil, fmt.Errorf("sumline: %T: %w", v, err)
	}
	return append(s, '\n'), nil
}
