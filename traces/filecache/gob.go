package filecache

import (
	"bytes"
	"encoding/gob"
	"errors"
	"io"
	"sync"
)

// primed is a gob codec for values of one type whose files hold only the
// value message: the type descriptors, which gob sends at the head of
// every stream and a decoder compiles afresh, go in a preamble made once
// per process (the gob of a zero T) and are fed once to each decoder of a
// pool. Writer and reader of an entry are the same build (Options.Build
// keys every entry), so their preambles are the same bytes. On the shared
// sessions this halves a warm import's gob time.
type primed[T any] struct {
	once     sync.Once
	preamble []byte
	err      error
	decoders sync.Pool // of *primedDecoder
}

// feed is the reader a primed decoder reads: a message at a time. It is
// an io.ByteReader, so gob reads no further than a message.
type feed struct{ b []byte }

func (f *feed) Read(p []byte) (int, error) {
	if len(f.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, f.b)
	f.b = f.b[n:]
	return n, nil
}

func (f *feed) ReadByte() (byte, error) {
	if len(f.b) == 0 {
		return 0, io.EOF
	}
	c := f.b[0]
	f.b = f.b[1:]
	return c, nil
}

type primedDecoder struct {
	dec *gob.Decoder
	in  feed
}

func (p *primed[T]) init() error {
	p.once.Do(func() {
		var b bytes.Buffer
		var zero T
		p.err = gob.NewEncoder(&b).Encode(&zero)
		p.preamble = b.Bytes()
	})
	return p.err
}

// encode appends v's value message to w.
func (p *primed[T]) encode(w *bytes.Buffer, v *T) error {
	if err := p.init(); err != nil {
		return err
	}
	var b bytes.Buffer
	enc := gob.NewEncoder(&b)
	var zero T
	if err := enc.Encode(&zero); err != nil {
		return err
	}
	if !bytes.Equal(b.Bytes(), p.preamble) {
		return errors.New("gob preamble differs") // cannot happen: gob is deterministic for a type
	}
	b.Reset()
	if err := enc.Encode(v); err != nil {
		return err
	}
	w.Write(b.Bytes())
	return nil
}

// decode reads into v the value message msg, which must be all of msg.
func (p *primed[T]) decode(msg []byte, v *T) error {
	if err := p.init(); err != nil {
		return err
	}
	d, _ := p.decoders.Get().(*primedDecoder)
	if d == nil {
		d = &primedDecoder{in: feed{p.preamble}}
		d.dec = gob.NewDecoder(&d.in)
		var zero T
		if err := d.dec.Decode(&zero); err != nil || len(d.in.b) > 0 {
			return errors.New("gob preamble does not decode")
		}
	}
	d.in.b = msg
	if err := d.dec.Decode(v); err != nil {
		return err // the decoder's state is unknown: not pooled again
	}
	if len(d.in.b) > 0 {
		return errors.New("trailing bytes")
	}
	p.decoders.Put(d)
	return nil
}
