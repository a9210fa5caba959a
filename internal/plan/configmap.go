package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// ConfigMapKey is the key of the plan in the plan ConfigMap.
const ConfigMapKey = "plan.json"

// Marshal renders the plan for the plan ConfigMap.
func (p *Plan) Marshal() (string, error) {
	b, err := json.MarshalIndent(p, "", "  ")
	return string(b), err
}

// Hash names a rendered plan (the text Marshal returns, as the plan ConfigMap and the tester's plan file
// hold it): the operator annotates the tester pods with it, and a runner resumes a run only from a
// checkpoint of the same plan.
func Hash(rendered []byte) string {
	sum := sha256.Sum256(rendered)
	return hex.EncodeToString(sum[:8])
}

// MeasurementHash names what a plan measures: its Hash without the tester's calibration, which only judges
// the rows afterwards (and which a run keeps from its start, through a suspension: the operator's
// attachCalibration).
func MeasurementHash(p *Plan) (string, error) {
	q := *p
	// what the tester was compared with, and where the DUT's CPU is read (a DUT pod made again has a new
	// UID), are not what is measured
	q.Calibration, q.CeilingMarginPercent, q.DUTPod = nil, 0, nil
	data, err := q.Marshal()
	return Hash([]byte(data)), err
}

// Unmarshal reads a plan and checks its version.
func Unmarshal(data []byte) (*Plan, error) {
	var p Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	if p.Version != Version {
		return nil, fmt.Errorf("plan: version %d, this tester understands %d", p.Version, Version)
	}
	return &p, nil
}
