package policies

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Marshal writes c as a policy file Load reads back as c (the inverse of
// Load): the settings that differ from a base, nested by their dotted
// names as hermes' config.yaml nests them, after the header lines as
// comments. With preset set, the base is that preset and the file starts
// "preset: NAME" and "name: c.Name": a ctxsim policy file. With preset
// empty, the base is Default (hermes-agent's defaults) and the file names
// nothing: a fragment of a hermes config.yaml, to merge into it.
func Marshal(c *Config, preset string, header []string) ([]byte, error) {
	base := Default()
	if preset != "" {
		p, err := Preset(preset)
		if err != nil {
			return nil, err
		}
		base = p
	}
	diff := c.Diff(&base)
	// Load replaces the whole model_thresholds mapping: when one differs,
	// write them all.
	for _, s := range diff {
		if strings.HasPrefix(s.Key, modelThresholdsKey+".") {
			diff = withThresholds(diff, c)
			break
		}
	}
	for _, s := range diff {
		if !utf8.ValidString(s.Value) {
			return nil, fmt.Errorf("policies: %s: %q is not UTF-8 text: YAML cannot hold it", s.Key, s.Value)
		}
	}
	root := &yaml.Node{Kind: yaml.MappingNode}
	if preset != "" {
		root.Content = append(root.Content, str("preset"), str(preset), str("name"), str(c.Name))
	}
	for _, s := range diff {
		path := splitKey(s.Key)
		m := root
		for _, seg := range path[:len(path)-1] {
			m = child(m, seg)
		}
		m.Content = append(m.Content, str(path[len(path)-1]), scalar(s))
	}
	var b bytes.Buffer
	for _, h := range header {
		b.WriteString("# " + h + "\n")
	}
	if len(root.Content) == 0 {
		b.WriteString("{}\n") // the base as it is
		return b.Bytes(), nil
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// withThresholds is diff without its per-model thresholds, then every one
// of c's, sorted by model (Settings' order).
func withThresholds(diff []Setting, c *Config) []Setting {
	var out []Setting
	for _, s := range diff {
		if !strings.HasPrefix(s.Key, modelThresholdsKey+".") {
			out = append(out, s)
		}
	}
	for _, s := range c.Settings() {
		if strings.HasPrefix(s.Key, modelThresholdsKey+".") {
			out = append(out, s)
		}
	}
	return out
}

// splitKey is a setting's path in the YAML: its dotted name, but a
// per-model threshold's model (which may hold dots) is one segment.
func splitKey(key string) []string {
	if m, ok := strings.CutPrefix(key, modelThresholdsKey+"."); ok {
		return append(strings.Split(modelThresholdsKey, "."), m)
	}
	return strings.Split(key, ".")
}

// child is the mapping under key in m, added when missing.
func child(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	c := &yaml.Node{Kind: yaml.MappingNode}
	m.Content = append(m.Content, str(key), c)
	return c
}

func str(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }

// scalar is s's value typed as its key is, so Load's type check (and
// hermes' YAML reader) sees a number as a number.
func scalar(s Setting) *yaml.Node {
	tag := "!!float" // a per-model threshold
	if k, ok := lookup(s.Key); ok {
		tag = map[valueKind]string{kindBool: "!!bool", kindInt: "!!int", kindFloat: "!!float", kindString: "!!str"}[k.kind]
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: s.Value}
	if tag == "!!str" && !plainString(s.Value) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// plainString reports whether v, written plain, reads back as the string
// v: not "<<" (a merge key), "null", "true", a number, a line break or an
// edge space, which yaml.v3 may write plain or as a block that reads back
// otherwise.
func plainString(v string) bool {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(v), &doc); err != nil || len(doc.Content) != 1 {
		return false
	}
	n := doc.Content[0]
	return n.Kind == yaml.ScalarNode && n.Tag == "!!str" && n.Style == 0 && n.Value == v
}
