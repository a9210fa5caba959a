// Package runner is the runner in the tester pod (`linerate runner`, `linerate engine`) and on the CLI
// (`linerate run`, `linerate calibrate`): it drives a run end to end around the methodology. It finds each
// port's device (internal/devices), lays the engine's lcores out over the CPUs it may use and starts
// linerate-engine (internal/enginestart), pairs it with a receiving engine on another node, and hands the
// engine to rfc2544.Runner; what that measures it delivers to the terminal for `linerate run`, and inside
// the tester pod to the results ConfigMap (ConfigMapSink: trial records, progress, checkpoints, sealed
// segments) and to live metrics. A pod started again after a suspension or a crash resumes from the last
// checkpoint it finds there.
//
// rfc2544.Runner is the methodology: which trials to run at which rates, and what they mean. This package is
// everything around it that touches the pod, the node and the API server: it picks no rate and judges no
// trial.
package runner
