package traces

import (
	"bytes"
	"io"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Byte-order marks at the start of a text file.
var (
	bomUTF8    = []byte{0xef, 0xbb, 0xbf}
	bomUTF16LE = []byte{0xff, 0xfe}
	bomUTF16BE = []byte{0xfe, 0xff}
)

// DecodeText is r's content as UTF-8, which every reader of a log expects: a
// UTF-16 file with a byte-order mark (what Windows PowerShell's `>` writes)
// is decoded, and a UTF-8 byte-order mark dropped; anything else is r's
// bytes unchanged. Read as bytes, a UTF-16 log was every line invalid
// JSON: cost skipped each with a warning and billed $0, exit 0. Every
// reader of the formats reads through it (or DecodeTextBytes), so every command
// sees one text.
func DecodeText(r io.Reader) io.Reader {
	var head [3]byte
	n, err := io.ReadFull(r, head[:])
	rest := io.MultiReader(bytes.NewReader(head[:n]), r)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return io.MultiReader(bytes.NewReader(head[:n]), errReader{err})
	}
	switch h := head[:n]; {
	case bytes.HasPrefix(h, bomUTF8):
		return r
	case bytes.HasPrefix(h, bomUTF16LE), bytes.HasPrefix(h, bomUTF16BE):
		// ExpectBOM reads the mark and takes its byte order from it.
		return transform.NewReader(rest, unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder())
	}
	return rest
}

// DecodeTextBytes is DecodeText of a whole file held in b: b itself unless it starts
// with a byte-order mark.
func DecodeTextBytes(b []byte) []byte {
	switch {
	case bytes.HasPrefix(b, bomUTF8):
		return b[len(bomUTF8):]
	case bytes.HasPrefix(b, bomUTF16LE), bytes.HasPrefix(b, bomUTF16BE):
		out, err := unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder().Bytes(b)
		if err == nil {
			return out
		}
	}
	return b
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
