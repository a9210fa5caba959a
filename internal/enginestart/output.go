package enginestart

import (
	"io"
	"regexp"
	"strings"
	"sync"
)

// outputTail passes the engine's output on and keeps its last few KiB. A writer that fails downstream
// (a full disk under the log) loses those bytes, not the engine: an error here would close the pipe, and
// the engine's next line would end it with SIGPIPE.
type outputTail struct {
	w   io.Writer
	mu  sync.Mutex
	buf []byte
}

const outputTailBytes = 8 << 10

func (t *outputTail) Write(b []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > outputTailBytes {
		t.buf = t.buf[len(t.buf)-outputTailBytes:]
	}
	t.mu.Unlock()
	if t.w != nil {
		_, _ = t.w.Write(b)
	}
	return len(b), nil
}

func (t *outputTail) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Split(string(t.buf), "\n")
}

// engineOutput is the tail of the engine's stderr and, when it goes elsewhere, of its stdout.
type engineOutput []*outputTail

// driverLine is a line of DPDK's log named after the function that wrote it ("init_internals(): ...").
var driverLine = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\(\): `)

// said is the engine's last line of its own (": linerate-engine: ..."), "" if it wrote none.
func (o engineOutput) said() string {
	for _, t := range o {
		lines := t.lines()
		for i := len(lines) - 1; i >= 0; i-- {
			if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "linerate-engine:") {
				return ": " + l
			}
		}
	}
	return ""
}

// refusals are the lines in which DPDK said why it did not open a device, joined by "; ", or where to
// look.
func (o engineOutput) refusals() string {
	why := o.refusalLines()
	if len(why) == 0 {
		return ": the engine's log says why DPDK refused the others (a PCI device not bound to vfio-pci is skipped without a word: check its driver)"
	}
	return ": " + strings.Join(why, "; ")
}

// refusalLines: before each "failed to initialize" of the vdev bus, the driver's own lines ("function():
// ...", up to 3); and the EAL's lines of a PCI device a driver would not take.
func (o engineOutput) refusalLines() []string {
	var why []string
	for _, t := range o {
		lines := t.lines()
		for i, l := range lines {
			if strings.Contains(l, "cannot be used") || strings.Contains(l, "Driver cannot attach") {
				why = append(why, strings.TrimSpace(l))
				continue
			}
			if !strings.Contains(l, "failed to initialize") {
				continue
			}
			first := i
			for first > 0 && i-first < 3 && driverLine.MatchString(lines[first-1]) && !strings.Contains(lines[first-1], "failed to initialize") {
				first--
			}
			for _, w := range lines[first : i+1] {
				why = append(why, strings.TrimSpace(w))
			}
		}
	}
	return why
}

// exitReason is what the engine said last and, if DPDK refused a device, why.
func (o engineOutput) exitReason() string {
	r := o.said()
	if why := o.refusalLines(); len(why) > 0 {
		r += " (" + strings.Join(why, "; ") + ")"
	}
	return r
}
