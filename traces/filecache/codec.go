package filecache

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"unsafe"

	"github.com/ctxsim/ctxsim/traces"
)

// The entry codec: an import's sessions written field by field as
// uvarints, varints and length-prefixed strings, in the order of the
// struct fields. It decodes straight from the entry file's bytes, where
// gob (this cache's first format) copied each entry whole into a message
// buffer and walked it by reflection: a warm import of the shared
// sessions spent a tenth of its time there. A slice, map or pointer
// writes 0 for nil and 1+n for n elements, so nil and empty come back as
// they went (gob returns both as nil). TestCodecEveryField fills every
// field of a session by reflection and round-trips it, so a field added
// to traces and not here fails it.

type encoder struct {
	b   []byte
	err error // the first error met
}

func (e *encoder) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) length(n int, isNil bool) {
	if isNil {
		e.uvarint(0)
	} else {
		e.uvarint(uint64(n) + 1)
	}
}

func (e *encoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

func (e *encoder) strings(ss []string) {
	e.length(len(ss), ss == nil)
	for _, s := range ss {
		e.str(s)
	}
}

func (e *encoder) entry(x *entry) error {
	e.str(x.Build)
	e.str(x.Key.Format)
	e.str(x.Key.Name)
	e.uvarint(x.Key.Sum)
	e.varint(x.Key.Size)
	w := x.Warnings
	if w == nil {
		w = &traces.Warnings{}
	}
	wb, err := w.AppendBinary(nil)
	if err != nil {
		return err
	}
	e.str(string(wb))
	e.length(len(x.Sessions), x.Sessions == nil)
	for _, s := range x.Sessions {
		if s == nil {
			return errors.New("a nil session")
		}
		e.session(s)
	}
	return e.err
}

func (e *encoder) session(s *traces.Session) {
	e.str(s.ID)
	e.str(string(s.Source))
	e.str(s.Model)
	e.varint(int64(s.Window))
	e.str(s.Format)
	e.str(s.Harness)
	e.str(s.Tenant)
	e.str(s.Account)
	e.str(s.Project)
	e.str(s.Parent)
	e.strings(s.Children)
	e.blocks(s.Floor)
	e.bool(s.FloorPartial)
	e.strings(s.Notes)
	e.str(s.File)
	e.length(len(s.Events), s.Events == nil)
	for i := range s.Events {
		e.event(&s.Events[i])
	}
}

func (e *encoder) event(v *traces.Event) {
	t, err := v.Time.MarshalBinary() // time's own form, its offset included, as gob kept it
	if err != nil && e.err == nil {
		e.err = err
	}
	e.str(string(t))
	e.str(string(v.Kind))
	e.blocks(v.Blocks)
	e.str(v.Model)
	e.bool(v.Usage != nil)
	if u := v.Usage; u != nil {
		e.varint(u.Input)
		e.varint(u.CacheWrite5m)
		e.varint(u.CacheWrite1h)
		e.varint(u.CacheRead)
		e.varint(u.Output)
	}
	e.varint(v.LatencyMS)
	e.str(v.RequestID)
	e.bool(v.Summary)
	e.varint(int64(v.Line))
	e.length(len(v.Meta), v.Meta == nil)
	keys := make([]string, 0, len(v.Meta))
	for k := range v.Meta {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the same bytes for the same session
	for _, k := range keys {
		e.str(k)
		e.str(v.Meta[k])
	}
}

func (e *encoder) blocks(bs []traces.Block) {
	e.length(len(bs), bs == nil)
	for i := range bs {
		b := &bs[i]
		e.str(string(b.Kind))
		e.str(b.Text)
		e.varint(int64(b.Tokens))
		e.str(b.ID)
		e.str(b.Name)
		e.str(b.Input)
		e.bool(b.IsError)
		e.varint(int64(b.ScaffoldEnd))
		e.bool(b.Early)
	}
}

var errShort = errors.New("entry cut short or malformed")

// decoder reads what encoder wrote; the first error sticks and every
// later read returns zero values. The strings it returns are b's own
// bytes: b is handed over, and never written again.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errShort
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 { return next(d, binary.Uvarint) }
func (d *decoder) varint() int64   { return next(d, binary.Varint) }

// next reads a varint of either sign with read.
func next[T uint64 | int64](d *decoder, read func([]byte) (T, int)) T {
	v, n := read(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int {
	v := d.varint()
	if v > math.MaxInt || v < math.MinInt {
		d.fail()
		return 0
	}
	return int(v)
}

func (d *decoder) raw() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	r := d.b[:n]
	d.b = d.b[n:]
	return r
}

func (d *decoder) str() string {
	r := d.raw()
	if len(r) == 0 {
		return ""
	}
	return unsafe.String(&r[0], len(r))
}

func (d *decoder) bool() bool {
	if len(d.b) == 0 || d.b[0] > 1 {
		d.fail()
		return false
	}
	v := d.b[0] == 1
	d.b = d.b[1:]
	return v
}

// length reads a slice's or map's length; each element takes at least a
// byte, which bounds what a spoiled length can make the decoder allocate.
func (d *decoder) length() (n int, isNil bool) {
	v := d.uvarint()
	if v == 0 {
		return 0, true
	}
	if v-1 > uint64(len(d.b)) {
		d.fail()
		return 0, true
	}
	return int(v - 1), false
}

func (d *decoder) strings() []string {
	n, isNil := d.length()
	if isNil {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = d.str()
	}
	return ss
}

// decodeEntry decodes an entry from b, which it keeps: the entry's
// strings (block texts are most of an entry's bytes) are b's own bytes
// rather than copies, and the caller never writes b again. Copying them
// was a warm run's largest source of fresh pages after the read.
func decodeEntry(b []byte) (*entry, error) {
	d := &decoder{b: b}
	x := &entry{Build: d.str()}
	x.Key = traces.FileKey{Format: d.str(), Name: d.str(), Sum: d.uvarint(), Size: d.varint()}
	wb := d.raw()
	if d.err == nil {
		x.Warnings = &traces.Warnings{}
		if err := x.Warnings.UnmarshalBinary(wb); err != nil {
			return nil, err
		}
	}
	if n, isNil := d.length(); !isNil {
		x.Sessions = make([]*traces.Session, n)
		for i := range x.Sessions {
			x.Sessions[i] = d.session()
		}
	}
	if d.err == nil && len(d.b) > 0 {
		d.err = errors.New("trailing bytes")
	}
	if d.err != nil {
		return nil, d.err
	}
	return x, nil
}

func (d *decoder) session() *traces.Session {
	s := &traces.Session{
		ID:      d.str(),
		Source:  traces.Source(d.str()),
		Model:   d.str(),
		Window:  d.int(),
		Format:  d.str(),
		Harness: d.str(),
		Tenant:  d.str(),
		Account: d.str(),
		Project: d.str(),
		Parent:  d.str(),
	}
	s.Children = d.strings()
	s.Floor = d.blocks()
	s.FloorPartial = d.bool()
	s.Notes = d.strings()
	s.File = d.str()
	if n, isNil := d.length(); !isNil {
		s.Events = make([]traces.Event, n)
		for i := range s.Events {
			d.event(&s.Events[i])
		}
	}
	return s
}

func (d *decoder) event(v *traces.Event) {
	if err := v.Time.UnmarshalBinary(d.raw()); err != nil {
		d.fail()
		return
	}
	v.Kind = traces.Kind(d.str())
	v.Blocks = d.blocks()
	v.Model = d.str()
	if d.bool() {
		v.Usage = &traces.Usage{Input: d.varint(), CacheWrite5m: d.varint(), CacheWrite1h: d.varint(), CacheRead: d.varint(), Output: d.varint()}
	}
	v.LatencyMS = d.varint()
	v.RequestID = d.str()
	v.Summary = d.bool()
	v.Line = int32(d.varint())
	if n, isNil := d.length(); !isNil {
		v.Meta = make(map[string]string, n)
		for range n {
			k := d.str()
			v.Meta[k] = d.str()
		}
	}
}

func (d *decoder) blocks() []traces.Block {
	n, isNil := d.length()
	if isNil {
		return nil
	}
	bs := make([]traces.Block, n)
	for i := range bs {
		b := &bs[i]
		b.Kind = traces.BlockKind(d.str())
		b.Text = d.str()
		b.Tokens = d.int()
		b.ID = d.str()
		b.Name = d.str()
		b.Input = d.str()
		b.IsError = d.bool()
		b.ScaffoldEnd = d.int()
		b.Early = d.bool()
	}
	return bs
}
