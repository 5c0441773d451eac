package policies_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxsim/ctxsim/policies"
)

// TestMarshalRoundTrip writes every preset, changed in a setting of each
// kind, as a policy file (against its preset) and as a hermes fragment
// (against the defaults), and reads each back: every setting comes back.
func TestMarshalRoundTrip(t *testing.T) {
	for _, p := range policies.Presets() {
		c := p
		for _, kv := range [][2]string{{"compression.threshold", "0.85"}, {"prompt_caching.cache_ttl", "off"},
			{"compression.micro_compact_every_n_turns", "3"}, {"compression.micro_compact", "true"},
			{"auxiliary.compression.model", "claude-haiku-4-5"}, {"compression.model_thresholds.claude-3.5-sonnet", "0.6"}} {
			if err := c.Set(kv[0], kv[1]); err != nil {
				t.Fatal(err)
			}
		}
		for _, preset := range []string{p.Name, ""} {
			b, err := policies.Marshal(&c, preset, []string{"made by a test"})
			if err != nil {
				t.Fatalf("%s/%q: %v", p.Name, preset, err)
			}
			got, warnings, err := policies.Load(bytes.NewReader(b), "emitted.yaml")
			if err != nil || len(warnings) > 0 {
				t.Fatalf("%s/%q: Load: %v %v\n%s", p.Name, preset, err, warnings, b)
			}
			if !slices.Equal(got.Settings(), c.Settings()) {
				t.Errorf("%s/%q: read back differs: %v\n%s", p.Name, preset, got.Diff(&c), b)
			}
			if preset == "" && strings.Contains(string(b), "preset:") {
				t.Errorf("%s: a hermes fragment names a preset:\n%s", p.Name, b)
			}
		}
	}
}

// TestMarshalHermesFragment pins the shape of a hermes config.yaml
// fragment: nested as hermes nests its keys, numbers as numbers.
func TestMarshalHermesFragment(t *testing.T) {
	c := policies.Default()
	_ = c.Set("compression.threshold", "0.75")
	_ = c.Set("prompt_caching.cache_ttl", "1h")
	b, err := policies.Marshal(&c, "", []string{"ctxsim tune"})
	if err != nil {
		t.Fatal(err)
	}
	want := "# ctxsim tune\ncompression:\n  threshold: 0.75\nprompt_caching:\n  cache_ttl: 1h\n"
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	d := policies.Default()
	if b, _ := policies.Marshal(&d, "", nil); string(b) != "{}\n" {
		t.Errorf("the defaults: got %q, want {}", b)
	}
}

// FuzzMarshal sets any value of any setting of any preset, and writes the
// config that results both ways (policy file, hermes fragment): Load reads
// each back as the same settings.
func FuzzMarshal(f *testing.F) {
	f.Add(uint8(1), uint8(0), "0.7")
	f.Add(uint8(2), uint8(24), "claude-haiku: # not a comment\n")
	f.Add(uint8(8), uint8(20), "1h")
	f.Add(uint8(0), uint8(24), "null")
	f.Add(uint8(3), uint8(24), "yes")
	presets, keys := policies.Presets(), policies.Keys()
	f.Fuzz(func(t *testing.T, p, k uint8, value string) {
		c := presets[int(p)%len(presets)]
		if err := c.Set(keys[int(k)%len(keys)].Name, value); err != nil {
			return
		}
		for _, preset := range []string{c.Name, ""} {
			b, err := policies.Marshal(&c, preset, []string{"fuzz"})
			if !utf8.ValidString(value) {
				return // an error, or the value is not in the file
			}
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			got, _, err := policies.Load(bytes.NewReader(b), "f.yaml")
			if err != nil {
				t.Fatalf("Load: %v\n%s", err, b)
			}
			if !slices.Equal(got.Settings(), c.Settings()) {
				t.Fatalf("read back differs: %v\n%s", got.Diff(&c), b)
			}
		}
	})
}
