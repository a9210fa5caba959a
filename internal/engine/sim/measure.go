package sim

import (
	"context"
	"time"

	"linerate.dev/linerate/internal/engine"
	"linerate.dev/linerate/internal/search"
)

// Measure is a search.Measure on one unidirectional stream of one frame size, for tests and the
// benchmark: it defines stream 0 from port 0 to port 1 and runs trials at percentages of line rate.
func (e *Engine) Measure(size int) search.Measure {
	_, _ = e.Stream(context.Background(), engine.StreamConfig{ID: 0, TX: 0, RX: 1, Src: "198.18.1.2", Dst: "198.19.1.2", Sizes: []int{size}})
	line := e.DUT.lineFPS(float64(size))
	return func(ctx context.Context, rate float64, d time.Duration, _ string) (search.Measurement, error) {
		r, err := e.RunTrial(ctx, engine.TrialConfig{Streams: []int{0}, RatesFPS: []float64{rate / 100 * line}, Duration: d,
			Stall: 2 * time.Second}, nil)
		if err != nil {
			return search.Measurement{}, err
		}
		s := r.Streams[0]
		m := search.Measurement{Duration: time.Duration(r.DurationNs), LossPercent: s.LossPercent(),
			TesterLimited:   len(r.TesterFaults([]int{0}, engine.DefaultLimits())) > 0,
			AchievedPercent: 100 * s.AchievedFPS / line}
		if r.Aborted() {
			m.Aborted = r.Reason
		}
		return m, nil
	}
}
