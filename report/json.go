package report

import (
	"encoding/json"
	"io"
)

// WriteJSON is every command's machine output: v as one indented JSON
// document with a final newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
