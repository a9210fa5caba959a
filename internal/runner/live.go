package runner

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
)

// Live serves the runner's live counters on /metrics while a test runs (the operator's gauges hold the
// results; these show what happens now).
type Live struct {
	reg      *prometheus.Registry
	trials   *prometheus.CounterVec
	lastLoss *prometheus.GaugeVec
	lastFPS  *prometheus.GaugeVec
	offered  prometheus.Gauge
	steps    *prometheus.GaugeVec
}

// NewLive registers the live metrics.
func NewLive() *Live {
	l := &Live{reg: prometheus.NewRegistry()}
	l.trials = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "linerate_runner_trials_total",
		Help: "Trials run, by test and outcome (pass, fail, tester_limited, aborted)."}, []string{"test", "outcome"})
	l.lastLoss = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "linerate_runner_last_trial_loss_ratio",
		Help: "Frame loss ratio of the last trial, by direction."}, []string{"direction"})
	l.lastFPS = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "linerate_runner_last_trial_achieved_frames_per_second",
		Help: "Frames per second the tester achieved in the last trial, by direction."}, []string{"direction"})
	l.offered = prometheus.NewGauge(prometheus.GaugeOpts{Name: "linerate_runner_offered_ratio",
		Help: "Offered rate of the current trial as a ratio of line rate."})
	l.steps = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "linerate_runner_steps",
		Help: "Steps (test and frame size) of the plan, done and total."}, []string{"state"})
	l.reg.MustRegister(l.trials, l.lastLoss, l.lastFPS, l.offered, l.steps)
	return l
}

// Handler is the /metrics handler.
func (l *Live) Handler() http.Handler { return promhttp.HandlerFor(l.reg, promhttp.HandlerOpts{}) }

// Trial accounts for one trial record.
func (l *Live) Trial(t results.Trial) {
	outcome := "fail"
	switch {
	case t.Aborted != "":
		outcome = "aborted"
	case t.TesterLimited:
		outcome = "tester_limited"
	case t.Pass:
		outcome = "pass"
	}
	l.trials.WithLabelValues(string(t.Test), outcome).Inc()
	l.lastLoss.WithLabelValues(t.Direction).Set(t.LossPercent / 100)
	l.lastFPS.WithLabelValues(t.Direction).Set(t.AchievedFPS)
}

// Progress updates the step gauges.
func (l *Live) Progress(p v1alpha1.Progress) {
	l.steps.WithLabelValues("done").Set(float64(p.StepsDone))
	l.steps.WithLabelValues("total").Set(float64(p.StepsTotal))
	if v, ok := parseFloat(p.OfferedRate); ok {
		l.offered.Set(v / 100)
	}
}
