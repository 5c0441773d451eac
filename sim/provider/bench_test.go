package provider

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/ctxsim/ctxsim/policies/prompt"
	"github.com/ctxsim/ctxsim/pricing"
)

// BenchmarkAnthropicSend sends a 500-block conversation that grows by 3
// blocks per call, with breakpoints on the floor and the last block (the
// claude-code layout). Building the request is not timed. Per-call work
// must not grow with the prompt: compare with -bench 'Send/blocks=' sizes.
func BenchmarkAnthropicSend(b *testing.B) {
	for _, size := range []int{500, 5000} {
		b.Run("blocks="+strconv.Itoa(size), func(b *testing.B) {
			card := pricing.NewCard(pricing.Price{Model: "m", Input: 3, Window: 1 << 40, MinCacheable: 1024})
			p := NewAnthropic(AnthropicOptions{Common: Common{Prices: card}})
			c := newConvo(nil, 2000).blocks(size, 50)
			base := len(c.v.Messages)
			now := t0
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				if i%300 == 299 {
					c.v.Messages = c.v.Messages[:base]
				}
				c.add(prompt.RoleAssistant, 40).add(prompt.RoleTool, 200, 30)
				r := c.req(prompt.TTL5m, 0, -1)
				b.StartTimer()
				resp, err := p.Send(now, r)
				if err != nil {
					b.Fatal(err)
				}
				now = now.Add(resp.Latency() + time.Second)
			}
		})
	}
}

// BenchmarkImplicitSend is BenchmarkAnthropicSend for the implicit caches.
func BenchmarkImplicitSend(b *testing.B) {
	card := pricing.NewCard(pricing.Price{Model: "m", Input: 3, Window: 1 << 40, MinCacheable: 1024})
	mk := map[string]func() Provider{
		"openai": func() Provider {
			p, _ := NewOpenAI(OpenAIOptions{Common: Common{Prices: card}, Rand: rand.New(rand.NewPCG(1, 1))})
			return p
		},
		"deepseek": func() Provider { return NewDeepSeek(DeepSeekOptions{Common: Common{Prices: card}}) },
		"vllm": func() Provider {
			p, _ := NewVLLM(VLLMOptions{Common: Common{Prices: card}, Capacity: 1 << 22})
			return p
		},
	}
	for _, name := range []string{"deepseek", "openai", "vllm"} {
		for _, size := range []int{500, 5000} {
			b.Run(name+"/blocks="+strconv.Itoa(size), func(b *testing.B) {
				p := mk[name]()
				c := newConvo(nil, 2000).blocks(size, 50)
				base := len(c.v.Messages)
				now := t0
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					b.StopTimer()
					if i%300 == 299 {
						c.v.Messages = c.v.Messages[:base]
					}
					c.add(prompt.RoleAssistant, 40).add(prompt.RoleTool, 200, 30)
					r := c.req(prompt.NoCache)
					b.StartTimer()
					resp, err := p.Send(now, r)
					if err != nil {
						b.Fatal(err)
					}
					now = now.Add(resp.Latency() + time.Second)
				}
			})
		}
	}
}
