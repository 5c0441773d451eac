package sumline

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestSealCheck(t *testing.T) {
	for _, v := range []any{map[string]int{}, map[string]any{"cell": "a", "run": map[string]float64{"cost_usd": 1.5}}} {
		b, err := Line(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(b); err != nil {
			t.Errorf("%s: %v", b, err)
		}
		var back map[string]any
		if err := json.Unmarshal(b, &back); err != nil {
			t.Errorf("%s is not JSON: %v", b, err)
		}
		edited := strings.Replace(string(b), "1.5", "-1e9", 1)
		if edited != string(b) && !errors.Is(Check([]byte(edited)), ErrMismatch) {
			t.Errorf("an edit verified: %s", edited)
		}
	}
	for _, bad := range []string{`{"cell":"a"}`, `{"sum":"zz","cell":"a"}`, ``, `{"sum":"0123456789abcdef"`} {
		if err := Check([]byte(bad)); !errors.Is(err, ErrNoSum) {
			t.Errorf("Check(%q) = %v, want ErrNoSum", bad, err)
		}
	}
}
