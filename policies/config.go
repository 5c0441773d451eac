package policies

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ctxsim/ctxsim/internal/input"
	"github.com/ctxsim/ctxsim/internal/numflag"
	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/policies/estimate"
	"github.com/ctxsim/ctxsim/traces"
)

// A Config is one context-management policy: the compaction ladder, the
// cache layout and TTL, the summarizer model and the estimator. Keys follow
// hermes-agent's config.yaml (compression.*, prompt_caching.cache_ttl,
// auxiliary.compression.model), so a hermes config loads as a policy; the
// keys hermes lacks are ours (see Keys).
type Config struct {
	// Name is the preset or file the config came from.
	Name string
	// Description says what the policy is for (presets).
	Description string
	Compact     compact.Config
	// CacheTTL is prompt_caching.cache_ttl: 5m, 1h, auto or off.
	CacheTTL string
	// SubagentCacheTTL is prompt_caching.subagent_cache_ttl (ours, after
	// Claude Code's subagentPromptCacheTtl): the tier of subagent sessions,
	// or "inherit" to use CacheTTL for them too.
	SubagentCacheTTL string
	// Layout is prompt_caching.layout (ours): the cache planner's name.
	Layout string
	// SummaryModel is auxiliary.compression.model; empty means the main
	// model summarizes.
	SummaryModel string
	// SummaryFork is auxiliary.compression.fork (ours): the summary call
	// is the session's own request plus the summary instruction, sent by the
	// main model, so it reads the conversation from the prompt cache — the
	// cache-safe fork Claude Code compacts with — instead of a fresh prompt
	// to the auxiliary model (hermes).
	SummaryFork bool
	// ScaffoldBoundaries is prompt_caching.scaffold_boundaries (ours): the
	// planner splits skill/webhook/cron messages where their builder
	// registered the end of the static scaffold and marks only the scaffold
	// (hermes' prompt_cache_boundary). Off, such a message is one block and
	// its volatile tail makes every mark on it a miss.
	ScaffoldBoundaries bool
}

// Default is hermes-agent's defaults (Preset "hermes-default" without its
// name).
func Default() Config {
	c := Config{Compact: compact.DefaultConfig(), CacheTTL: "5m", SubagentCacheTTL: "inherit", Layout: "hermes", ScaffoldBoundaries: true}
	c.Compact.ThresholdTokens = 256_000
	return c
}

// A Key is one setting of a Config.
type Key struct {
	Name string
	// Allowed describes the values accepted, for messages and help.
	Allowed string
	Help    string
	get     func(c *Config) string
	set     func(c *Config, s string) error
	kind    valueKind
}

type valueKind uint8

const (
	kindBool valueKind = iota
	kindInt
	kindFloat
	kindString
)

// ErrBadValue is an invalid setting; the error names the key and the
// allowed range.
var ErrBadValue = errors.New("policies: invalid value")

func badValue(key, allowed, got string) error {
	return fmt.Errorf("%w: %s: want %s, got %q", ErrBadValue, key, allowed, got)
}

func boolKey(name, help string, p func(c *Config) *bool) Key {
	return Key{Name: name, Allowed: "true or false", Help: help, kind: kindBool,
		get: func(c *Config) string { return strconv.FormatBool(*p(c)) },
		set: func(c *Config, s string) error {
			v, err := strconv.ParseBool(s)
			if err != nil {
				return badValue(name, "true or false", s)
			}
			*p(c) = v
			return nil
		}}
}

// intKey and floatKey parse as numeric flags do (numflag): finite, in
// range, or an error naming the key.
func intKey(name, help string, lo, hi int, p func(c *Config) *int) Key {
	r := numflag.IntRange{Lo: lo, Hi: hi}
	return Key{Name: name, Allowed: r.Allowed(), Help: help, kind: kindInt,
		get: func(c *Config) string { return strconv.Itoa(*p(c)) },
		set: func(c *Config, s string) error {
			if (s == "" || s == "null" || s == "~") && lo <= 0 {
				*p(c) = 0 // hermes' None: off
				return nil
			}
			v, err := r.Parse(s)
			if err != nil {
				return badValue(name, r.Allowed(), s)
			}
			*p(c) = v
			return nil
		}}
}

func floatKey(name, help string, lo, hi float64, openLo bool, p func(c *Config) *float64) Key {
	r := numflag.Range{Lo: lo, Hi: hi, OpenLo: openLo}
	return Key{Name: name, Allowed: r.Allowed(), Help: help, kind: kindFloat,
		get: func(c *Config) string { return strconv.FormatFloat(*p(c), 'g', -1, 64) },
		set: func(c *Config, s string) error {
			v, err := r.Parse(s)
			if err != nil {
				return badValue(name, r.Allowed(), s)
			}
			*p(c) = v
			return nil
		}}
}

// thresholdRange is a per-model threshold's: a fraction of the window.
var thresholdRange = numflag.Range{Lo: 0, Hi: 1, OpenLo: true}

func enumKey(name, help string, values []string, p func(c *Config) *string) Key {
	allowed := "one of " + strings.Join(values, ", ")
	return Key{Name: name, Allowed: allowed, Help: help, kind: kindString,
		get: func(c *Config) string { return *p(c) },
		set: func(c *Config, s string) error {
			if !slices.Contains(values, s) {
				return badValue(name, allowed, s)
			}
			*p(c) = s
			return nil
		}}
}

func stringKey(name, help string, p func(c *Config) *string) Key {
	return Key{Name: name, Allowed: "a string", Help: help, kind: kindString,
		get: func(c *Config) string { return *p(c) },
		set: func(c *Config, s string) error { *p(c) = s; return nil }}
}

// Layouts are the cache planner names prompt_caching.layout accepts. The
// engine resolves them with cacheplan.ByName.
var Layouts = []string{"none", "auto", "system_and_3", "hermes", "hermes_prefix", "hermes_tools", "claude-code"}

const modelThresholdsKey = "compression.model_thresholds"

var keys = []Key{
	boolKey("compression.enabled", "batch compaction at the threshold", func(c *Config) *bool { return &c.Compact.Enabled }),
	floatKey("compression.threshold", "trigger as a fraction of the effective window (≥0.75 below 512K); above 1 would be above the window", 0, 1, true, func(c *Config) *float64 { return &c.Compact.Threshold }),
	intKey("model.max_tokens", "output cap sent, reserved from the window before the threshold; 0 = provider default, no reservation (hermes)", 0, math.MaxInt, func(c *Config) *int { return &c.Compact.MaxTokens }),
	intKey("compression.threshold_tokens", "absolute cap on the threshold; 0 = none", 0, math.MaxInt, func(c *Config) *int { return &c.Compact.ThresholdTokens }),
	enumKey("compression.threshold_rule", "threshold formula (ours)", []string{compact.RuleHermes, compact.RuleClaudeCode}, func(c *Config) *string { return &c.Compact.Rule }),
	floatKey("compression.target_ratio", "legacy tail = threshold × ratio", 0.10, 0.80, false, func(c *Config) *float64 { return &c.Compact.TargetRatio }),
	enumKey("compression.tail_mode", "protected tail sizing", []string{compact.TailLean, compact.TailLegacy}, func(c *Config) *string { return &c.Compact.TailMode }),
	intKey("compression.protect_first_n", "head messages kept until the first compaction", 0, math.MaxInt, func(c *Config) *int { return &c.Compact.ProtectFirstN }),
	intKey("compression.protect_last_n", "tail by message count (prune; floor of the token tail)", 1, math.MaxInt, func(c *Config) *int { return &c.Compact.ProtectLastN }),
	intKey("compression.min_tail_user_messages", "real user messages anchored in the tail", 0, math.MaxInt, func(c *Config) *int { return &c.Compact.MinTailUserMessages }),
	boolKey("compression.abort_on_summary_failure", "keep the transcript instead of a fallback summary", func(c *Config) *bool { return &c.Compact.AbortOnSummaryFailure }),
	intKey("compression.proactive_prune_tokens", "deterministic prune trigger; 0 = off", 0, math.MaxInt, func(c *Config) *int { return &c.Compact.ProactivePruneTokens }),
	intKey("compression.proactive_prune_min_result_chars", "results longer than this become one line (floored at 200)", 0, math.MaxInt, func(c *Config) *int { return &c.Compact.ProactivePruneMinResultChars }),
	intKey("compression.proactive_prune_min_reclaim_tokens", "a prune commits only above this", 0, math.MaxInt, func(c *Config) *int { return &c.Compact.ProactivePruneMinReclaimTokens }),
	boolKey("compression.micro_compact", "fold one exchange per turn into a rolling summary", func(c *Config) *bool { return &c.Compact.MicroCompact }),
	intKey("compression.micro_compact_every_n_turns", "micro cadence (clamped ≥1)", 0, math.MaxInt, func(c *Config) *int { return &c.Compact.MicroCompactEveryNTurns }),
	intKey("compression.micro_compact_defrag_threshold_tokens", "re-summarize a rolling summary this large", 1, math.MaxInt, func(c *Config) *int { return &c.Compact.MicroCompactDefragThresholdTokens }),
	intKey("compression.micro_compact_min_reclaim_tokens", "absorb exchanges only once they hold this much (ours); 0 = off", 0, math.MaxInt, func(c *Config) *int { return &c.Compact.MicroCompactMinReclaimTokens }),
	intKey("compression.idle_compact_after_seconds", "idle action after this idle gap; 0 = off", 0, math.MaxInt, func(c *Config) *int { return &c.Compact.IdleCompactAfterSeconds }),
	enumKey("compression.idle_action", "what a resume after idle does (ours)", []string{compact.IdleSummarize, compact.IdlePrune, compact.IdleMask}, func(c *Config) *string { return &c.Compact.IdleAction }),
	enumKey("prompt_caching.cache_ttl", "cache tier", []string{"5m", "1h", "auto", "off"}, func(c *Config) *string { return &c.CacheTTL }),
	enumKey("prompt_caching.subagent_cache_ttl", "cache tier of subagent sessions (ours, Claude Code's subagentPromptCacheTtl); inherit = cache_ttl", []string{"inherit", "5m", "1h", "auto", "off"}, func(c *Config) *string { return &c.SubagentCacheTTL }),
	enumKey("prompt_caching.layout", "cache planner (ours)", Layouts, func(c *Config) *string { return &c.Layout }),
	boolKey("prompt_caching.scaffold_boundaries", "mark only the registered static scaffold of skill/webhook/cron messages (ours)", func(c *Config) *bool { return &c.ScaffoldBoundaries }),
	stringKey("auxiliary.compression.model", "summarizer model; empty = the main model", func(c *Config) *string { return &c.SummaryModel }),
	boolKey("auxiliary.compression.fork", "summarize on the session's cached prefix with the main model (Claude Code's fork; ours)", func(c *Config) *bool { return &c.SummaryFork }),
	enumKey("masking.mode", "observation masking (ours)", []string{compact.MaskOff, compact.MaskSliding, compact.MaskBatched}, func(c *Config) *string { return &c.Compact.Masking.Mode }),
	intKey("masking.keep_last", "tool observations kept verbatim", 0, math.MaxInt, func(c *Config) *int { return &c.Compact.Masking.KeepLast }),
	intKey("masking.min_reclaim_tokens", "batched masking commits only above this", 0, math.MaxInt, func(c *Config) *int { return &c.Compact.Masking.MinReclaimTokens }),
	enumKey("estimate.kind", "estimator that drives the triggers (ours)", []string{compact.EstimateRough, compact.EstimateExact, compact.EstimateCalibrated}, func(c *Config) *string { return &c.Compact.Estimate }),
}

// notSimulated are hermes keys a config may carry that do not change a
// simulated result (locks, timeouts, gateway hygiene, codex routing). They
// load with a warning saying so.
var notSimulated = []string{
	"compression.checkpoint_required", "compression.progress_notices", "compression.tail_assistant_max_chars",
	"compression.max_attempts", "compression.hygiene_hard_message_limit", "compression.hygiene_timeout_seconds",
	"compression.hygiene_total_ceiling_seconds", "compression.hygiene_failure_cooldown_seconds",
	"compression.hygiene_max_turn_hold_seconds", "compression.context_timeout_seconds",
	"compression.context_total_ceiling_seconds", "compression.codex_gpt55_autoraise",
	"compression.codex_app_server_auto", "compression.codex_responses_native", "compression.in_place",
	"auxiliary.compression.provider", "auxiliary.compression.base_url", "auxiliary.compression.timeout",
	"auxiliary.compression.api_key",
}

// Keys lists every setting in display order.
func Keys() []Key { return slices.Clone(keys) }

func lookup(name string) (*Key, bool) {
	for i := range keys {
		if keys[i].Name == name {
			return &keys[i], true
		}
	}
	return nil, false
}

// Set sets one key from its text form (a --set key=value override).
// compression.model_thresholds.<model> sets one per-model threshold. The
// error names the key and the allowed values.
func (c *Config) Set(key, value string) error {
	if model, ok := strings.CutPrefix(key, modelThresholdsKey+"."); ok && model != "" {
		v, err := thresholdRange.Parse(value)
		if err != nil {
			return badValue(key, thresholdRange.Allowed(), value)
		}
		if c.Compact.ModelThresholds == nil {
			c.Compact.ModelThresholds = map[string]float64{}
		} else {
			c.Compact.ModelThresholds = maps.Clone(c.Compact.ModelThresholds)
		}
		c.Compact.ModelThresholds[model] = v
		return nil
	}
	k, ok := lookup(key)
	if !ok {
		return input.Usagef("policies: unknown key %q (see ctxsim policies {key list})", key)
	}
	return k.set(c, value)
}

// Get returns a key's value in text form.
func (c *Config) Get(key string) (string, bool) {
	k, ok := lookup(key)
	if !ok {
		return "", false
	}
	return k.get(c), true
}

// A Setting is one key and its value.
type Setting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Settings lists every key with its value, in Keys order, then the per-model
// thresholds sorted by model.
func (c *Config) Settings() []Setting {
	out := make([]Setting, 0, len(keys))
	for i := range keys {
		out = append(out, Setting{keys[i].Name, keys[i].get(c)})
	}
	models := make([]string, 0, len(c.Compact.ModelThresholds))
	for k := range c.Compact.ModelThresholds {
		models = append(models, k)
	}
	slices.Sort(models)
	for _, k := range models {
		out = append(out, Setting{modelThresholdsKey + "." + k, strconv.FormatFloat(c.Compact.ModelThresholds[k], 'g', -1, 64)})
	}
	return out
}

// Diff lists the settings of c that differ from base.
func (c *Config) Diff(base *Config) []Setting {
	was := map[string]string{}
	for _, s := range base.Settings() {
		was[s.Key] = s.Value
	}
	var out []Setting
	for _, s := range c.Settings() {
		if was[s.Key] != s.Value {
			out = append(out, s)
		}
	}
	return out
}

// Validate checks that c is complete and fits a model with the given
// context window (0 skips the window checks): a Config not built from
// Default or a preset, or a per-model threshold override that is not a
// fraction, is an error. A threshold above the window is caught per key
// (compression.threshold must be in (0, 1]); compression.threshold_tokens
// above the window is not an error: hermes applies it as min(cap, window),
// and its own default (256K) is above every 200K model's window.
func (c *Config) Validate(window int) error {
	if c.Compact.Estimate == "" || c.CacheTTL == "" || c.SubagentCacheTTL == "" || c.Layout == "" || c.Compact.Rule == "" {
		return errors.New("policies: config has empty required settings (start from Default or a preset)")
	}
	for _, k := range slices.Sorted(maps.Keys(c.Compact.ModelThresholds)) {
		if v := c.Compact.ModelThresholds[k]; !thresholdRange.Contains(v) {
			return badValue(modelThresholdsKey+"."+k, thresholdRange.Allowed(), strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	if window < 0 {
		return badValue("window", "a positive token count", strconv.Itoa(window))
	}
	if window > 0 && c.Compact.Rule != compact.RuleClaudeCode && c.Compact.MaxTokens >= window {
		// The output cap reserved from the window would leave none:
		// compact.Reserve drops it, as hermes' effective_window <= 0 does,
		// so the setting would do nothing in silence.
		return badValue("model.max_tokens", fmt.Sprintf("an integer below the model's window (%d)", window), strconv.Itoa(c.Compact.MaxTokens))
	}
	return nil
}

// MaxFile is the largest policy file Load reads (64 MiB).
const MaxFile = 64 << 20

// Load reads a policy file: a hermes config.yaml, or YAML/JSON with the same
// keys plus ours. A top-level "preset: NAME" starts from that preset (else
// from Default); "name" and "description" label the policy. Keys the
// simulator does not know, or knows but does not simulate, are ignored and
// returned as warnings (one per unknown top-level section). Bad values are a
// *traces.SyntaxError naming file:line, the key and the allowed range.
func Load(r io.Reader, file string) (Config, []string, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(traces.LimitDocument(r, MaxFile))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return Default(), nil, nil
		}
		return Config{}, nil, &traces.SyntaxError{File: file, Msg: err.Error()}
	}
	// One file is one policy: a second document would be silently
	// ignored, and a repeated key would silently override the first.
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if err != nil {
			return Config{}, nil, &traces.SyntaxError{File: file, Msg: "after the first document: " + err.Error()}
		}
		return Config{}, nil, &traces.SyntaxError{File: file, Line: line, Msg: "a second YAML document: a policy file holds one"}
	}
	if err := duplicateKey(&doc, file); err != nil {
		return Config{}, nil, err
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return Config{}, nil, &traces.SyntaxError{File: file, Line: root.Line, Msg: "want a mapping of settings"}
	}
	c := Default()
	c.Name = file
	// The preset is the base: apply it first, wherever it appears.
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k, v := root.Content[i], root.Content[i+1]; k.Value == "preset" {
			p, err := Preset(v.Value)
			if err != nil {
				return Config{}, nil, &traces.SyntaxError{File: file, Line: v.Line, Msg: strings.TrimPrefix(err.Error(), "policies: ")}
			}
			p.Name = file
			c = p
		}
	}
	l := loader{file: file, c: &c}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "preset":
		case "name":
			c.Name = v.Value
		case "description":
			c.Description = v.Value
		case "compression", "prompt_caching", "auxiliary", "masking", "estimate":
			l.walk(k.Value, v)
		case "model":
			// hermes' model: is a model name or a mapping (default,
			// provider, base_url, ...); only max_tokens shapes the context.
			l.model(v)
		default:
			l.warn(k.Line, fmt.Sprintf("ignored section %q: not a context-management setting", k.Value))
		}
		if l.err != nil {
			return Config{}, nil, l.err
		}
	}
	return c, l.warnings, nil
}

// duplicateKey is an error naming the first key that appears twice in one
// mapping anywhere under n (yaml.v3 keeps both in a Node).
func duplicateKey(n *yaml.Node, file string) error {
	if n.Kind == yaml.MappingNode {
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if first, ok := seen[k.Value]; ok {
				return &traces.SyntaxError{File: file, Line: k.Line, Msg: fmt.Sprintf("key %q appears twice in one mapping (first at line %d)", k.Value, first)}
			}
			seen[k.Value] = k.Line
		}
	}
	for _, c := range n.Content {
		if err := duplicateKey(c, file); err != nil {
			return err
		}
	}
	return nil
}

type loader struct {
	file     string
	c        *Config
	warnings []string
	err      error
}

func (l *loader) warn(line int, msg string) {
	l.warnings = append(l.warnings, fmt.Sprintf("%s:%d: %s", l.file, line, msg))
}

func (l *loader) fail(line int, err error) {
	if l.err == nil {
		l.err = &traces.SyntaxError{File: l.file, Line: line, Msg: strings.TrimPrefix(err.Error(), "policies: ")}
	}
}

func (l *loader) walk(prefix string, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		if n.Tag == "!!null" {
			return
		}
		l.fail(n.Line, fmt.Errorf("%s: want a mapping", prefix))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := prefix + "." + k.Value
		switch {
		case key == modelThresholdsKey:
			l.modelThresholds(v)
		case slices.Contains(notSimulated, key):
			l.warn(k.Line, fmt.Sprintf("ignored %s: hermes setting the simulator does not model", key))
		case v.Kind == yaml.MappingNode:
			if _, ok := lookup(key); ok {
				l.fail(v.Line, fmt.Errorf("%s: want a single value, got a mapping", key))
				return
			}
			if key == "auxiliary.compression" || hasKeyPrefix(key+".") {
				l.walk(key, v)
			} else {
				l.warn(k.Line, fmt.Sprintf("ignored unknown key %s", key))
			}
		default:
			kk, ok := lookup(key)
			if !ok {
				l.warn(k.Line, fmt.Sprintf("ignored unknown key %s", key))
				continue
			}
			l.scalar(kk, v)
		}
		if l.err != nil {
			return
		}
	}
}

func hasKeyPrefix(p string) bool {
	for i := range keys {
		if strings.HasPrefix(keys[i].Name, p) {
			return true
		}
	}
	return false
}

// scalar checks a YAML value's type against the key before setting it, so
// `threshold: "0.5"` (a string) is the wrong-type error it is.
func (l *loader) scalar(k *Key, v *yaml.Node) {
	if v.Kind != yaml.ScalarNode {
		l.fail(v.Line, badValue(k.Name, k.Allowed, "a list"))
		return
	}
	val := v.Value
	switch {
	case k.Name == "prompt_caching.cache_ttl" && (v.Tag == "!!bool" || v.Tag == "!!null"):
		// hermes: false/None (and "off", "disabled", ...) mean no caching.
		if v.Tag == "!!bool" && val != "false" {
			l.fail(v.Line, badValue(k.Name, k.Allowed, val))
			return
		}
		val = "off"
	case k.Name == "prompt_caching.cache_ttl" && slices.Contains([]string{"false", "disabled", "no", "none"}, strings.ToLower(val)):
		val = "off"
	case v.Tag == "!!null":
		if k.kind != kindInt {
			l.fail(v.Line, badValue(k.Name, k.Allowed, "null"))
			return
		}
		val = "0"
	case k.kind == kindBool && v.Tag != "!!bool",
		k.kind == kindInt && v.Tag != "!!int",
		k.kind == kindFloat && v.Tag != "!!float" && v.Tag != "!!int",
		k.kind == kindString && v.Tag != "!!str":
		l.fail(v.Line, badValue(k.Name, k.Allowed, val))
		return
	}
	if err := l.c.Set(k.Name, val); err != nil {
		l.fail(v.Line, err)
	}
}

func (l *loader) model(v *yaml.Node) {
	if v.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		if k := v.Content[i]; k.Value == "max_tokens" {
			kk, _ := lookup("model.max_tokens")
			l.scalar(kk, v.Content[i+1])
		}
	}
}

func (l *loader) modelThresholds(v *yaml.Node) {
	if v.Tag == "!!null" {
		return
	}
	if v.Kind != yaml.MappingNode {
		l.fail(v.Line, badValue(modelThresholdsKey, "a mapping of model substring to a number in (0, 1]", v.Value))
		return
	}
	l.c.Compact.ModelThresholds = nil
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if val.Kind != yaml.ScalarNode || (val.Tag != "!!float" && val.Tag != "!!int") {
			l.fail(val.Line, badValue(modelThresholdsKey+"."+k.Value, "a number in (0, 1]", val.Value))
			return
		}
		if err := l.c.Set(modelThresholdsKey+"."+k.Value, val.Value); err != nil {
			l.fail(val.Line, err)
			return
		}
	}
}

// NewManager builds the compaction manager of one session under c.
func (c *Config) NewManager(model compact.Model, sum compact.Summarizer, exact *estimate.ExactEstimator) (*compact.Manager, error) {
	if err := c.Validate(model.Window); err != nil {
		return nil, err
	}
	return compact.New(c.Compact, model, sum, exact)
}
