package jsonl

import (
	"encoding/json"
	"testing"
)

// Number agrees with encoding/json on whether a whole slice is a number.
func TestNumber(t *testing.T) {
	for _, s := range []string{"0", "-0", "12", "-12.5", "1e9", "1E+9", "2.5e-3", "", "-", "01", "1.", ".5", "1e", "1e+", "+1", "--1", "0x1", "1.5.5"} {
		end, ok := Number([]byte(s), 0)
		whole := ok && end == len(s)
		var v json.Number
		want := json.Unmarshal([]byte(s), &v) == nil && s != ""
		if whole != want {
			t.Errorf("Number(%q) = %d, %v: whole %v, encoding/json says %v", s, end, ok, whole, want)
		}
	}
	if end, ok := Number([]byte(`{"a":-3.25,"b":1}`), 5); !ok || end != 10 {
		t.Errorf("Number inside an object = %d, %v, want 10, true", end, ok)
	}
}
