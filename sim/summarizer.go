package sim

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/policies/compact"
	"github.com/ctxsim/ctxsim/sim/provider"
	"github.com/ctxsim/ctxsim/traces"
)

// A Summarizer is the fake auxiliary model compaction calls. It writes a
// deterministic summary of the size the request asks for, made of real text
// taken from the transcript (so its tokens are real tokens), and bills and
// times it as an uncached call: the summary prompt is new content every
// time.
//
// Simplifications: a real summary is shorter or longer than the target and
// its content is better; size is what cost and occupancy depend on, and the
// target is what hermes' budget rule asks for. The call is billed as a
// fresh, uncached prompt, as hermes' auxiliary call is; a policy with
// ForkSummary bills it as Claude Code's compaction instead (see fork.go).
type Summarizer struct {
	Model string
	// Count sizes text in the summarizer model's tokens.
	Count func(string) int
	// CountParts, when set, is Count of its parts joined, without joining
	// them (estimate.Memo.CountTexts): the prompt is a transcript of tens
	// of KB and a few short parts.
	CountParts func(parts ...string) int
	// Latency times the call (its prompt is never cached).
	Latency provider.Latency
	// FailRate is the probability a call fails (seeded by Rand).
	FailRate float64
	Rand     *rand.Rand
}

// ErrSummarizerFailed is an injected summarizer failure.
var ErrSummarizerFailed = errors.New("sim: summarizer call failed (injected fault)")

// Summarize implements compact.Summarizer.
func (s *Summarizer) Summarize(ctx context.Context, now time.Time, in compact.SummaryInput) (compact.SummaryOutput, error) {
	if err := ctx.Err(); err != nil {
		return compact.SummaryOutput{}, err
	}
	var inTok int
	if s.CountParts != nil {
		inTok = s.CountParts(in.Transcript, in.Previous, in.Focus)
	} else {
		inTok = s.Count(in.Transcript + in.Previous + in.Focus)
	}
	inTok += 700 // the structured template around it
	lat, _ := s.Latency.Time(inTok, 0, 0)
	if s.FailRate > 0 && s.Rand != nil && s.Rand.Float64() < s.FailRate {
		return compact.SummaryOutput{Usage: traces.Usage{Input: int64(inTok)}, Latency: lat}, ErrSummarizerFailed
	}
	target := in.TargetTokens
	if in.MaxTokens > 0 && target > in.MaxTokens {
		target = in.MaxTokens
	}
	text := s.write(in, target)
	out := s.Count(text)
	_, dec := s.Latency.Time(0, 0, out)
	lat += dec
	return compact.SummaryOutput{Text: text, Usage: traces.Usage{Input: int64(inTok), Output: int64(out)}, Latency: lat}, nil
}

// write builds a summary of about target tokens: the previous summary's
// lines first (a summary is cumulative), then the transcript's lines, each
// cut to a bullet, until the target is reached.
func (s *Summarizer) write(in compact.SummaryInput, target int) string {
	if target <= 0 {
		target = 1
	}
	var b strings.Builder
	// The stop test below ends it under 4·target plus a line: one
	// allocation, not one per doubling.
	b.Grow(min(4*target+170, 2*(len(in.Previous)+len(in.Transcript))+8))
	add := func(src string) bool {
		for src != "" { // the lines of strings.Split(src, "\n"), without the slice
			line := src
			if i := strings.IndexByte(src, '\n'); i >= 0 {
				line, src = src[:i], src[i+1:]
			} else {
				src = ""
			}
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			if len(line) > 160 {
				line = line[:160]
				for len(line) > 0 && !isRuneStart(line[len(line)-1]) {
					line = line[:len(line)-1]
				}
			}
			b.WriteString("- ")
			b.WriteString(line)
			b.WriteByte('\n')
			// Counting at every line would be quadratic; chars/4 is a safe
			// stop test, the final size is counted exactly by the caller.
			if b.Len()/4 >= target {
				return true
			}
		}
		return false
	}
	// A transcript too short for the target gives a shorter summary.
	_ = add(in.Previous) || add(in.Transcript)
	return strings.TrimRight(b.String(), "\n")
}

func isRuneStart(c byte) bool { return c&0xC0 != 0x80 }
