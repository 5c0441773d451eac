package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/ctxsim/ctxsim/traces"
)

// Sniff tells JSON Lines from one JSON document, as the importers that
// accept both must: r holds lines when its first line, read whole up to
// traces.MaxLine, is a complete JSON object. rest yields everything r did.
func Sniff(r io.Reader) (rest io.Reader, lines bool, err error) {
	br := bufio.NewReaderSize(traces.DecodeText(r), 64<<10)
	var first []byte
	for {
		chunk, err := br.ReadSlice('\n')
		first = append(first, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) && len(first) <= traces.MaxLine {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, false, err
		}
		break
	}
	t := bytes.TrimSpace(first)
	lines = len(t) > 0 && t[0] == '{' && json.Valid(t)
	return io.MultiReader(bytes.NewReader(first), br), lines, nil
}

// SyntaxError turns an error from decoding the document data into
// file:line: reason (line 0 when the error has no offset).
func SyntaxError(file string, data []byte, err error) error {
	return traces.JSONError(file, data, err)
}
