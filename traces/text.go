package traces

import (
	"bytes"
	"fmt"
	"io"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/encoding/unicode/utf32"
	"golang.org/x/text/transform"
)

// Byte-order marks at the start of a text file.
var (
	bomUTF8    = []byte{0xef, 0xbb, 0xbf}
	bomUTF16LE = []byte{0xff, 0xfe}
	bomUTF16BE = []byte{0xfe, 0xff}
	bomUTF32LE = []byte{0xff, 0xfe, 0, 0}
	bomUTF32BE = []byte{0, 0, 0xfe, 0xff}
)

// DecodeText is r's content as UTF-8, which every reader of a log expects: a
// UTF-16 file (what Windows PowerShell's `>` and Out-File write) or a
// UTF-32 one is decoded, and a UTF-8 byte-order mark dropped; anything else is r's bytes
// unchanged. Read as bytes, a UTF-16 log was every line invalid JSON (or,
// without a byte-order mark, lines that bill nothing): cost billed $0,
// exit 0. Every reader of the formats reads through it (or
// DecodeTextBytes), so every command sees one text.
func DecodeText(r io.Reader) io.Reader {
	var head [4]byte
	n, err := io.ReadFull(r, head[:])
	rest := io.MultiReader(bytes.NewReader(head[:n]), r)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return io.MultiReader(bytes.NewReader(head[:n]), errReader{err})
	}
	if bytes.HasPrefix(head[:n], bomUTF8) {
		return io.MultiReader(bytes.NewReader(head[len(bomUTF8):n]), r)
	}
	if enc := textEncoding(head[:n]); enc != nil {
		return transform.NewReader(rest, enc.NewDecoder())
	}
	return rest
}

// DecodeTextBytes is DecodeText of a whole file held in b: b itself unless
// it is UTF-16 or UTF-32 or starts with a UTF-8 byte-order mark.
func DecodeTextBytes(b []byte) []byte {
	if bytes.HasPrefix(b, bomUTF8) {
		return b[len(bomUTF8):]
	}
	if enc := textEncoding(b); enc != nil {
		if out, err := enc.NewDecoder().Bytes(b); err == nil {
			return out
		}
	}
	return b
}

// textEncoding is the UTF-16 or UTF-32 encoding of a text starting with head,
// nil when it is neither. A byte-order mark says so (and is dropped);
// without one, the pattern of zero bytes around its first two characters
// does, as RFC 4627 §3 tells a JSON text's encoding (00 00 00 xx UTF-32BE,
// xx 00 00 00 UTF-32LE, 00 xx 00 xx UTF-16BE, xx 00 xx 00 UTF-16LE): a
// log's lines start with "{", and no UTF-8 text has a NUL as its second
// byte. UTF-32's little-endian mark starts with UTF-16's, so it is tried
// first (a UTF-16 text cannot start with U+0000).
func textEncoding(head []byte) encoding.Encoding {
	switch {
	case bytes.HasPrefix(head, bomUTF32LE), bytes.HasPrefix(head, bomUTF32BE):
		return utf32.UTF32(utf32.LittleEndian, utf32.ExpectBOM)
	case bytes.HasPrefix(head, bomUTF16LE), bytes.HasPrefix(head, bomUTF16BE):
		// ExpectBOM reads the mark and takes its byte order from it.
		return unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM)
	case len(head) < 4:
		return nil
	case head[0] == 0 && head[1] == 0 && head[2] == 0 && ascii(head[3]):
		return utf32.UTF32(utf32.BigEndian, utf32.IgnoreBOM)
	case ascii(head[0]) && head[1] == 0 && head[2] == 0 && head[3] == 0:
		return utf32.UTF32(utf32.LittleEndian, utf32.IgnoreBOM)
	case head[0] == 0 && head[2] == 0 && ascii(head[1]) && ascii(head[3]):
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)
	case head[1] == 0 && head[3] == 0 && ascii(head[0]) && ascii(head[2]):
		return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)
	}
	return nil
}

func ascii(b byte) bool { return b != 0 && b < 0x80 }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// LimitDocument is r, a whole document read at once (a results file, a
// price file, a policy), failing once more than max bytes have come:
// /dev/zero or `yes` named as one was read into memory without end. The
// error does not name the file: its reader does.
func LimitDocument(r io.Reader, max int64) io.Reader {
	return &limited{r: r, left: max, max: max}
}

// ReadDocument is all of r through LimitDocument.
func ReadDocument(r io.Reader, max int64) ([]byte, error) {
	return io.ReadAll(LimitDocument(r, max))
}

type limited struct {
	r         io.Reader
	left, max int64
}

func (l *limited) Read(p []byte) (int, error) {
	if int64(len(p)) > l.left+1 {
		p = p[:max(l.left+1, 0)]
	}
	n, err := l.r.Read(p)
	if l.left -= int64(n); l.left < 0 {
		return 0, fmt.Errorf("over %d MiB: not read (no such file is that large)", l.max>>20)
	}
	return n, err
}
