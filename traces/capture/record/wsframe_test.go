package record

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

// frame encodes one frame as RFC 6455 section 5.2 lays it out.
func frame(op byte, fin, rsv1 bool, mask []byte, p []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	if rsv1 {
		b0 |= 0x40
	}
	h := []byte{b0}
	m := byte(0)
	if mask != nil {
		m = 0x80
	}
	switch {
	case len(p) < 126:
		h = append(h, m|byte(len(p)))
	case len(p) < 1<<16:
		h = binary.BigEndian.AppendUint16(append(h, m|126), uint16(len(p)))
	default:
		h = binary.BigEndian.AppendUint64(append(h, m|127), uint64(len(p)))
	}
	if mask == nil {
		return append(h, p...)
	}
	h = append(h, mask...)
	for i, c := range p {
		h = append(h, c^mask[i&3])
	}
	return h
}

// The frame reader gets the same messages whatever the chunks the bytes
// come in (one byte at a time, 7 at a time, all at once): masked or not,
// fragmented, control frames between fragments, 7-, 16- and 64-bit
// lengths, and compressed messages that refer back into the ones before
// (context takeover: the second rep, and the y's after the message of
// y's); a message over MaxBody is flagged, not kept, and the next one,
// which refers back into it, is read right.
func TestWSReaderChunks(t *testing.T) {
	rep := strings.Repeat(`{"x":"0123456789"}`, 20)
	msgs := []string{`{"type":"a"}`, rep, "", rep, strings.Repeat("y", 70000), strings.Repeat("y", 3000), "end"}
	const max = 65536
	for _, deflate := range []bool{false, true} {
		for _, masked := range []bool{false, true} {
			var stream []byte
			var fbuf bytes.Buffer
			fw, _ := flate.NewWriter(&fbuf, flate.BestCompression)
			var mask []byte
			if masked {
				mask = []byte{1, 2, 3, 250}
			}
			for i, m := range msgs {
				p := []byte(m)
				if deflate {
					fbuf.Reset()
					fw.Write(p)
					fw.Flush()
					p = bytes.TrimSuffix(append([]byte(nil), fbuf.Bytes()...), []byte{0, 0, 0xff, 0xff})
				}
				if i == 1 { // fragmented, a ping between
					k := len(p) / 2
					stream = append(stream, frame(1, false, deflate, mask, p[:k])...)
					stream = append(stream, frame(9, true, false, mask, []byte("ping"))...)
					stream = append(stream, frame(0, true, false, mask, p[k:])...)
					continue
				}
				stream = append(stream, frame(1, true, deflate, mask, p)...)
			}
			for _, chunk := range []int{1, 7, len(stream)} {
				name := fmt.Sprintf("deflate=%v masked=%v chunk=%d", deflate, masked, chunk)
				tap := &wsTap{rec: &Recorder{o: Options{MaxBody: max}}, deflate: deflate}
				r := wsReader{tap: tap, client: masked}
				var got []string
				var overs []int
				for b := stream; len(b) > 0; {
					n := min(chunk, len(b))
					r.feed(b[:n], func(client bool, msg []byte, over bool) {
						if over {
							overs = append(overs, len(got))
						}
						got = append(got, string(msg))
					})
					b = b[n:]
				}
				if r.broken || len(got) != len(msgs) || len(overs) != 1 || overs[0] != 4 {
					t.Fatalf("%s: broken %v, %d messages, over at %v", name, r.broken, len(got), overs)
				}
				for i, m := range msgs {
					if i != 4 && got[i] != m {
						t.Errorf("%s: message %d is %.40q, sent %.40q", name, i, got[i], m)
					}
				}
			}
		}
	}
}

// Frames the reader cannot read stop the recording of their session, not
// the traffic: a reserved bit without deflate, a continuation with no
// message, a control frame over 125 bytes.
func TestWSReaderBroken(t *testing.T) {
	for name, b := range map[string][]byte{
		"rsv1 without deflate": frame(1, true, true, nil, []byte("x")),
		"lone continuation":    frame(0, true, false, nil, []byte("x")),
		"long ping":            frame(9, true, false, nil, make([]byte, 126)),
		"reserved opcode":      frame(3, true, false, nil, nil),
	} {
		tap := &wsTap{rec: &Recorder{o: Options{MaxBody: 1024}}}
		r := wsReader{tap: tap}
		n := 0
		r.feed(b, func(bool, []byte, bool) { n++ })
		if !r.broken || n != 0 || !tap.off || tap.rec.warns.Total() != 1 {
			t.Errorf("%s: broken %v, %d messages, off %v, warnings %v", name, r.broken, n, tap.off, &tap.rec.warns)
		}
	}
}
