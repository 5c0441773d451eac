package columnar

import (
	"io"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/ctxsim/ctxsim/results"
	"github.com/ctxsim/ctxsim/sim"
	"github.com/ctxsim/ctxsim/traces"
)

// Usage is token counts by class, in OTel GenAI names. InputTokens is the
// whole prompt (the OTel definition); Uncached, Read and the two writes sum
// to it.
type Usage struct {
	InputTokens         int64 `parquet:"gen_ai.usage.input_tokens"`
	OutputTokens        int64 `parquet:"gen_ai.usage.output_tokens"`
	CacheReadTokens     int64 `parquet:"gen_ai.usage.cache_read.input_tokens"`
	CacheCreationTokens int64 `parquet:"gen_ai.usage.cache_creation.input_tokens"`
	UncachedTokens      int64 `parquet:"ctxsim.usage.uncached_input_tokens"`
	CacheCreation5m     int64 `parquet:"ctxsim.usage.cache_creation_5m.input_tokens"`
	CacheCreation1h     int64 `parquet:"ctxsim.usage.cache_creation_1h.input_tokens"`
}

func usageOf(u traces.Usage) Usage {
	return Usage{
		InputTokens: u.Prompt(), OutputTokens: u.Output,
		CacheReadTokens: u.CacheRead, CacheCreationTokens: u.Writes(),
		UncachedTokens: u.Input, CacheCreation5m: u.CacheWrite5m, CacheCreation1h: u.CacheWrite1h,
	}
}

// A Run is one row of runs.parquet: a results.RunSummary flattened.
type Run struct {
	Trace  string `parquet:"trace,dict"`
	Policy string `parquet:"policy,dict"`
	// Tenant is the work unit the run was replayed in (the provider
	// account): the --trace path for logs, the root session otherwise.
	Tenant string `parquet:"tenant,dict"`
	// Workload is the synthetic profile or the log format.
	Workload string `parquet:"workload,dict"`
	Requests int64  `parquet:"requests"`
	Usage
	CostUSD        float64 `parquet:"cost_usd"`
	CacheHitRate   float64 `parquet:"cache_hit_rate"`
	RequestHitRate float64 `parquet:"request_hit_rate"`

	CostInputUSD        float64 `parquet:"cost_by_class.input"`
	CostCacheWrite5mUSD float64 `parquet:"cost_by_class.cache_write_5m"`
	CostCacheWrite1hUSD float64 `parquet:"cost_by_class.cache_write_1h"`
	CostCacheReadUSD    float64 `parquet:"cost_by_class.cache_read"`
	CostOutputUSD       float64 `parquet:"cost_by_class.output"`
	CostSummarizerUSD   float64 `parquet:"cost_by_class.summarizer"`
	MissCostUSD         float64 `parquet:"miss_cost_usd"`
	SummarizerTokens    int64   `parquet:"summarizer_tokens"`

	LatencyP50MS int64 `parquet:"latency_ms.p50"`
	LatencyP95MS int64 `parquet:"latency_ms.p95"`
	LatencyMaxMS int64 `parquet:"latency_ms.max"`
	StallMS      int64 `parquet:"stall_ms"`

	OccupancyMean  float64 `parquet:"occupancy.mean"`
	OccupancyMax   float64 `parquet:"occupancy.max"`
	OccupancyFinal float64 `parquet:"occupancy.final"`

	CompactionsBatch   int64 `parquet:"compactions.batch"`
	CompactionsMicro   int64 `parquet:"compactions.micro"`
	CompactionsPrune   int64 `parquet:"compactions.prune"`
	CompactionsIdle    int64 `parquet:"compactions.idle"`
	CompactionsMasking int64 `parquet:"compactions.masking"`
	BreakerTrips       int64 `parquet:"breaker_trips"`
	OverflowErrors     int64 `parquet:"overflow_errors"`
	FailedRequests     int64 `parquet:"failed_requests"`
	TokensShed         int64 `parquet:"tokens_shed"`

	// Recorded: what the real provider billed, on traces that recorded it.
	RecordedCostUSD     *float64 `parquet:"recorded.cost_usd,optional"`
	RecordedInputTokens *int64   `parquet:"recorded.gen_ai.usage.input_tokens,optional"`
	RecordedCacheRead   *int64   `parquet:"recorded.gen_ai.usage.cache_read.input_tokens,optional"`

	// Fidelity: on runs of the recorded policy.
	FidelityCalls         *int64   `parquet:"fidelity.calls,optional"`
	FidelityCostPct       *float64 `parquet:"fidelity.cost_pct,optional"`
	FidelityReadMatchPct  *float64 `parquet:"fidelity.read_match_pct,optional"`
	FidelityOpenLoopMdAPE *float64 `parquet:"fidelity.open_loop_prompt_mdape_pct,optional"`
	FidelityOpenLoopP90   *float64 `parquet:"fidelity.open_loop_prompt_p90_ape_pct,optional"`

	// Hindsight: the run's optimum and regret, when it was computed
	// (results.Hindsight; a session's share of a joint optimum is split by
	// call, docs/metrics.md).
	HindsightUSD       *float64 `parquet:"hindsight.hindsight_usd,optional"`
	HindsightBoundUSD  *float64 `parquet:"hindsight.bound_usd,optional"`
	HindsightGapPct    *float64 `parquet:"hindsight.gap_to_bound_pct,optional"`
	HindsightExact     *bool    `parquet:"hindsight.exact,optional"`
	HindsightRegretUSD *float64 `parquet:"hindsight.regret_usd,optional"`
	HindsightRegretPct *float64 `parquet:"hindsight.regret_pct,optional"`
}

// RunOf flattens r; tenant and workload may be "".
func RunOf(r results.RunSummary, tenant, workload string) Run {
	out := Run{
		Trace: r.Trace, Policy: r.Policy, Tenant: tenant, Workload: workload,
		Requests: int64(r.Requests), Usage: usageOf(r.Tokens),
		CostUSD: r.CostUSD, CacheHitRate: r.CacheHitRate, RequestHitRate: r.RequestHitRate,
		CostInputUSD: r.CostByClass.Input, CostCacheWrite5mUSD: r.CostByClass.CacheWrite5m,
		CostCacheWrite1hUSD: r.CostByClass.CacheWrite1h, CostCacheReadUSD: r.CostByClass.CacheRead,
		CostOutputUSD: r.CostByClass.Output, CostSummarizerUSD: r.CostByClass.Summarizer,
		MissCostUSD: r.MissCostUSD, SummarizerTokens: r.SummarizerTokens.Prompt() + r.SummarizerTokens.Output,
		LatencyP50MS: r.LatencyMS.P50, LatencyP95MS: r.LatencyMS.P95, LatencyMaxMS: r.LatencyMS.Max, StallMS: r.StallMS,
		OccupancyMean: r.Occupancy.Mean, OccupancyMax: r.Occupancy.Max, OccupancyFinal: r.Occupancy.Final,
		CompactionsBatch: int64(r.Compactions.Batch), CompactionsMicro: int64(r.Compactions.Micro),
		CompactionsPrune: int64(r.Compactions.Prune), CompactionsIdle: int64(r.Compactions.Idle),
		CompactionsMasking: int64(r.Compactions.Masking),
		BreakerTrips:       int64(r.BreakerTrips), OverflowErrors: int64(r.OverflowErrors),
		FailedRequests: int64(r.FailedRequests), TokensShed: r.TokensShed,
	}
	if rec := r.Recorded; rec != nil {
		c, in, rd := rec.CostUSD, rec.Tokens.Prompt(), rec.Tokens.CacheRead
		out.RecordedCostUSD, out.RecordedInputTokens, out.RecordedCacheRead = &c, &in, &rd
	}
	if f := r.Fidelity; f != nil {
		calls, cost, read, md, p90 := int64(f.Calls), f.CostPct, f.ReadMatchPct, f.OpenLoopMdAPE, f.OpenLoopP90
		out.FidelityCalls, out.FidelityCostPct, out.FidelityReadMatchPct = &calls, &cost, &read
		out.FidelityOpenLoopMdAPE, out.FidelityOpenLoopP90 = &md, &p90
	}
	if h := r.Hindsight; h != nil {
		cost, exact, regret, pct := h.CostUSD, h.Exact, h.RegretUSD, h.RegretPct
		out.HindsightUSD, out.HindsightExact, out.HindsightRegretUSD, out.HindsightRegretPct = &cost, &exact, &regret, &pct
		if h.BoundUSD != nil && h.GapToBoundPct != nil {
			b, g := *h.BoundUSD, *h.GapToBoundPct
			out.HindsightBoundUSD, out.HindsightGapPct = &b, &g
		}
	}
	return out
}

// A Record is one row of records.parquet: a sim.Record flattened, without
// its estimates and detail lists (records.jsonl keeps them).
type Record struct {
	Trace  string    `parquet:"trace,dict"`
	Policy string    `parquet:"policy,dict"`
	Seq    int64     `parquet:"seq"`
	Kind   string    `parquet:"kind,dict"`
	Time   time.Time `parquet:"t,timestamp(microsecond)"`
	Event  int64     `parquet:"event"`
	Turn   int64     `parquet:"turn"`
	Model  string    `parquet:"gen_ai.request.model,dict"`
	Usage
	CostUSD float64 `parquet:"cost_usd"`

	RecordedInputTokens *int64   `parquet:"recorded.gen_ai.usage.input_tokens,optional"`
	RecordedCacheRead   *int64   `parquet:"recorded.gen_ai.usage.cache_read.input_tokens,optional"`
	RecordedCacheWrite  *int64   `parquet:"recorded.gen_ai.usage.cache_creation.input_tokens,optional"`
	RecordedOutput      *int64   `parquet:"recorded.gen_ai.usage.output_tokens,optional"`
	RecordedCostUSD     *float64 `parquet:"recorded.cost_usd,optional"`

	Prompt       int64  `parquet:"prompt"`
	Threshold    int64  `parquet:"threshold"`
	Window       int64  `parquet:"window"`
	Breakpoints  int64  `parquet:"breakpoints"`
	MissReason   string `parquet:"miss_reason,dict"`
	MissTokens   int64  `parquet:"miss_tokens"`
	TTFTMS       int64  `parquet:"ttft_ms"`
	LatencyMS    int64  `parquet:"latency_ms"`
	StallMS      int64  `parquet:"stall_ms"`
	Trigger      string `parquet:"trigger,dict"`
	Outcome      string `parquet:"outcome,dict"`
	TokensBefore int64  `parquet:"tokens_before"`
	TokensAfter  int64  `parquet:"tokens_after"`
	Error        string `parquet:"error"`
}

// RecordOf flattens r.
func RecordOf(r *sim.Record) Record {
	out := Record{
		Trace: r.Trace, Policy: r.Policy, Seq: int64(r.Seq), Kind: string(r.Kind), Time: r.Time.UTC(),
		Event: int64(r.Event), Turn: int64(r.Turn), Model: r.Model, Usage: usageOf(r.Usage), CostUSD: r.CostUSD,
		Prompt: int64(r.Prompt), Threshold: int64(r.Threshold), Window: int64(r.Window),
		Breakpoints: int64(r.Breakpoints), MissReason: r.MissReason, MissTokens: int64(r.MissTokens),
		TTFTMS: r.TTFTMS, LatencyMS: r.LatencyMS, StallMS: r.StallMS,
		Trigger: r.Trigger, Outcome: r.Outcome, TokensBefore: int64(r.TokensBefore), TokensAfter: int64(r.TokensAfter),
		Error: r.Error,
	}
	if u := r.Recorded; u != nil {
		in, rd, wr, o, c := u.Prompt(), u.CacheRead, u.Writes(), u.Output, r.RecordedCostUSD
		out.RecordedInputTokens, out.RecordedCacheRead, out.RecordedCacheWrite, out.RecordedOutput, out.RecordedCostUSD = &in, &rd, &wr, &o, &c
	}
	return out
}

// rowGroup bounds a writer's buffered rows, so writing a fleet's records
// holds one row group, not the file.
const rowGroup = 64 << 10

func options() []parquet.WriterOption {
	return []parquet.WriterOption{
		parquet.Compression(&zstd.Codec{}),
		parquet.MaxRowsPerRowGroup(rowGroup),
		// A fixed creator keeps the bytes a function of the rows.
		parquet.CreatedBy("ctxsim", "", ""),
	}
}

// A Writer streams rows of one type to a Parquet file.
type Writer[T any] struct{ w *parquet.GenericWriter[T] }

// NewWriter starts a Parquet file of T rows (Run or Record) on w.
func NewWriter[T Run | Record](w io.Writer) *Writer[T] {
	return &Writer[T]{parquet.NewGenericWriter[T](w, options()...)}
}

// Write appends rows.
func (w *Writer[T]) Write(rows ...T) error {
	_, err := w.w.Write(rows)
	return err
}

// Close writes the footer; the file is incomplete without it.
func (w *Writer[T]) Close() error { return w.w.Close() }

// WriteRuns writes runs.parquet content to w.
func WriteRuns(w io.Writer, runs []Run) error {
	pw := NewWriter[Run](w)
	if err := pw.Write(runs...); err != nil {
		return err
	}
	return pw.Close()
}

// WriteRecords writes records.parquet content to w, in the order given.
func WriteRecords(w io.Writer, recs []sim.Record) error {
	pw := NewWriter[Record](w)
	for i := range recs {
		if err := pw.Write(RecordOf(&recs[i])); err != nil {
			return err
		}
	}
	return pw.Close()
}

// Read reads a whole runs.parquet or records.parquet file.
func Read[T Run | Record](r io.ReaderAt, size int64) ([]T, error) {
	return parquet.Read[T](r, size)
}
