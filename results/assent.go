package results

// An AsSentGroup is the as-sent replay of the captured calls of one API
// (package sim/assent): each call's own request, markers and settings
// replayed against the fake provider, its bill against the recorded one.
type AsSentGroup struct {
	API       string `json:"api"`
	Calls     int    `json:"calls"`
	Exact     int    `json:"exact"`
	ReadExact int    `json:"read_exact"`
	// Outside counts the calls whose read came from an entry no request
	// of the capture wrote (pre-written, see sim/assent).
	Outside int `json:"outside"`
	// Cut counts the calls whose request the capture tool cut short
	// (capture.WarnCut), CutExact those of them billed exactly.
	Cut          int     `json:"cut,omitempty"`
	CutExact     int     `json:"cut_exact,omitempty"`
	RecordedUSD  float64 `json:"recorded_usd"`
	ReplayUSD    float64 `json:"replay_usd"`
	ErrorPct     float64 `json:"error_pct"`
	ReadMatchPct float64 `json:"read_match_pct"`
	// NotExact names the calls the replay did not bill exactly
	// ("session event N: recorded ..., replayed ...").
	NotExact []string `json:"not_exact,omitempty"`
}
