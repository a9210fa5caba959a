package report

import (
	"encoding/json"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"linerate.dev/linerate/api/v1alpha1"
	"linerate.dev/linerate/internal/results"
)

// layoutCheck runs in the browser after layout: what a reader would see wrong on the page. Each chart is
// checked where it is drawn: labels cut off by the chart's edge, labels drawn over each other or too
// close to read apart, labels over plotted points, two series drawn in one colour, points outside the axes; and on the page: a line that ends in a colon with nothing
// after it, and a page wider than the window.
const layoutCheck = `<script>
(function () {
  const problems = [];
  const within = (r, o) => r.left >= o.left - 0.5 && r.right <= o.right + 0.5 && r.top >= o.top - 0.5 && r.bottom <= o.bottom + 0.5;
  const overlap = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)) *
                            Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top)) > 1;
  // labels closer than 3 px read as one ("64128")
  const apart = (a, b) => !overlap({ left: a.left - 1.5, right: a.right + 1.5, top: a.top, bottom: a.bottom },
                                   { left: b.left - 1.5, right: b.right + 1.5, top: b.top, bottom: b.bottom });
  if (document.documentElement.scrollWidth > window.innerWidth + 1)
    problems.push("the page is " + document.documentElement.scrollWidth + " px wide in a " + window.innerWidth + " px window");
  for (const el of document.querySelectorAll("h1, h2, p, li, td, th")) {
    const t = el.textContent.trim();
    if (t.endsWith(":")) problems.push("'" + t + "' says nothing after its colon");
  }
  document.querySelectorAll("svg").forEach((svg) => {
    const name = svg.getAttribute("data-file");
    const box = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll("text")].filter((t) => t.textContent.trim() !== "");
    const rects = texts.map((t) => t.getBoundingClientRect());
    texts.forEach((t, i) => {
      if (!within(rects[i], box)) problems.push(name + ": label '" + t.textContent + "' is cut off by the chart's edge");
      for (let j = 0; j < i; j++)
        if (!apart(rects[i], rects[j])) problems.push(name + ": labels '" + texts[j].textContent + "' and '" + t.textContent + "' run together");
    });
    const axes = [...svg.querySelectorAll("line[stroke='black']")].map((l) => l.getBoundingClientRect());
    const plot = { left: Math.min(...axes.map((r) => r.left)), right: Math.max(...axes.map((r) => r.right)),
                   top: Math.min(...axes.map((r) => r.top)), bottom: Math.max(...axes.map((r) => r.bottom)) };
    const colours = [...svg.querySelectorAll("polyline")].map((l) => l.getAttribute("stroke") + " " + (l.getAttribute("stroke-dasharray") || ""));
    if (new Set(colours).size < colours.length) problems.push(name + ": " + colours.length + " series drawn in " + new Set(colours).size + " styles");
    svg.querySelectorAll("circle").forEach((c) => {
      const r = c.getBoundingClientRect();
      const centre = { left: r.left + r.width / 2, right: r.left + r.width / 2, top: r.top + r.height / 2, bottom: r.top + r.height / 2 };
      if (!within(centre, plot)) problems.push(name + ": a point lies outside the axes");
      texts.forEach((t, i) => { if (overlap(r, rects[i])) problems.push(name + ": label '" + t.textContent + "' covers a point"); });
    });
  });
  const out = document.createElement("pre");
  out.id = "layout-problems";
  out.textContent = JSON.stringify(problems);
  document.body.appendChild(out);
})();
</script>`

func browser(t *testing.T) string {
	t.Helper()
	for _, b := range []string{"chromium-headless-shell", "chromium"} {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	if os.Getenv("LINERATE_REQUIRE_BROWSER") != "" {
		t.Fatal("no chromium-headless-shell: run hack/install-browser.sh (make test does)")
	}
	t.Skip("no chromium-headless-shell (hack/install-browser.sh installs it)")
	return ""
}

// inBrowser opens the report as a reader would, 1280 px wide, with its charts drawn in the page (so that
// the check can measure them), and returns what the layout check found and the page's text.
func inBrowser(t *testing.T, chromium, dir string) (problems []string, text string) {
	t.Helper()
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	inline := regexp.MustCompile(`<img src="([^"]+\.svg)"[^>]*>`).ReplaceAllStringFunc(string(page), func(tag string) string {
		file := regexp.MustCompile(`src="([^"]+)"`).FindStringSubmatch(tag)[1]
		svg, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatalf("the page shows %s, which is not there: %v", file, err)
		}
		return strings.Replace(string(svg), "<svg ", fmt.Sprintf(`<svg data-file=%q `, file), 1)
	})
	check := filepath.Join(dir, "layout-check.html")
	if err := os.WriteFile(check, []byte(strings.Replace(inline, "</body>", layoutCheck+"</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,900",
		"--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+check)
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.Output(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("the browser did not render the report within 60 s")
	}
	if err != nil {
		t.Fatalf("%s: %v", chromium, err)
	}
	m := regexp.MustCompile(`(?s)<pre id="layout-problems">(.*?)</pre>`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the layout check did not run:\n%s", out)
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &problems); err != nil {
		t.Fatal(err)
	}
	text = regexp.MustCompile(`(?s)<(script|style|pre id="layout-problems")[^>]*>.*?</(script|style|pre)>`).ReplaceAllString(string(out), " ")
	text = regexp.MustCompile(`<[^>]+>`).ReplaceAllString(text, " ")
	return problems, strings.Join(strings.Fields(html.UnescapeString(text)), " ")
}

func rate(fps int64, size int32) v1alpha1.Rate {
	return v1alpha1.Rate{FramesPerSecond: fps, L2BitsPerSecond: fps * int64(size) * 8, L1BitsPerSecond: fps * int64(size+20) * 8,
		PercentOfLineRate: fmt.Sprintf("%.2f", float64(fps*int64(size+20)*8)/1e8)}
}

func latency(base int64) v1alpha1.LatencySummary {
	return v1alpha1.LatencySummary{Valid: true, Frames: 1e6, MinNs: base, MeanNs: base * 2, P50Ns: base * 2, P90Ns: base * 3,
		P99Ns: base * 5, P999Ns: base * 9, P9999Ns: base * 12, MaxNs: base * 40, PDVNs: base * 8}
}

// reportShapes are the results a report must read well with: one frame size, the seven of RFC 2544 in
// both directions with every test, an IMIX run, and a run that failed part way.
func reportShapes() map[string]Run {
	seven := &v1alpha1.Results{DUT: &v1alpha1.DUTSpec{Name: "ipsec-gw-1", Model: "GW-9000", Software: "7.2.1", Cipher: "AES-256-GCM"},
		LineRateBitsPerSecond: 10e9}
	for i, size := range []int32{64, 128, 256, 512, 1024, 1280, 1518} {
		for d, dir := range []string{"west->east", "east->west"} {
			fps := int64(10e9/float64((size+20)*8)) * int64(60+5*i-3*d) / 100
			seven.Throughput = append(seven.Throughput, v1alpha1.ThroughputResult{FrameSize: size, Direction: dir, NDR: rate(fps, size),
				LossPercent: "0", Trials: 14, TrialSeconds: "322"})
			seven.Latency = append(seven.Latency, v1alpha1.LatencyResult{FrameSize: size, Direction: dir, Rate: rate(fps, size),
				Aggregate: latency(int64(5000 + 300*i + 100*d))})
			seven.BackToBack = append(seven.BackToBack, v1alpha1.BackToBackResult{FrameSize: size, Direction: dir, Frames: 20000 + 1000*int64(i),
				BurstSeconds: "0.0021"})
			curve := v1alpha1.FrameLossResult{FrameSize: size, Direction: dir}
			for load := 100; load >= 60; load -= 10 {
				curve.Points = append(curve.Points, v1alpha1.FrameLossPoint{PercentOfLineRate: fmt.Sprint(load),
					LossPercent: fmt.Sprintf("%.2f", max(0, float64(load-60-5*i)/2))})
			}
			seven.FrameLoss = append(seven.FrameLoss, curve)
		}
	}
	seven.Diagnosis = &v1alpha1.Diagnosis{Bound: "frames", Explanation: "the NDR in frames/s falls little with the frame size: the DUT is bound by its per-packet cost"}
	seven.Notes = []string{"port east (net_af_packet) does not verify IPv4 header and UDP checksums on receipt"}

	one := &v1alpha1.Results{LineRateBitsPerSecond: 1e9,
		Throughput: []v1alpha1.ThroughputResult{{FrameSize: 512, Direction: "west->east", NDR: rate(116_000, 512), LossPercent: "0", Trials: 9, TrialSeconds: "20"}},
		Latency:    []v1alpha1.LatencyResult{{FrameSize: 512, Direction: "west->east", Rate: rate(116_000, 512), Aggregate: latency(41000)}}}

	imix := &v1alpha1.Results{LineRateBitsPerSecond: 10e9, Imix: []v1alpha1.ImixResult{{Direction: "west->east", AverageFrameSize: "353.83",
		NDR: rate(2_100_000, 354), LossPercent: "0", Trials: 12,
		Classes: []v1alpha1.ImixClassResult{{FrameSize: 64, TxFrames: 7e6, RxFrames: 7e6, LossPercent: "0"},
			{FrameSize: 594, TxFrames: 4e6, RxFrames: 4e6, LossPercent: "0"}, {FrameSize: 1518, TxFrames: 1e6, RxFrames: 1e6, LossPercent: "0"}}}}}

	failed := &v1alpha1.Results{LineRateBitsPerSecond: 10e9, DUT: &v1alpha1.DUTSpec{Name: "vpn-7"},
		Throughput: []v1alpha1.ThroughputResult{{FrameSize: 64, Direction: "west->east", NDR: rate(4_100_000, 64), LossPercent: "0", Trials: 11, TrialSeconds: "40", TesterLimited: true}},
		Notes:      []string{"the DUT stalled (nothing came back for 2s) during throughput at 128 B west->east: the run was aborted; results measured before are kept"}}
	return map[string]Run{
		"one frame size":    {Name: "one-size", Results: one, Trials: make([]results.Trial, 9)},
		"seven frame sizes": {Name: "rfc2544-full", Results: seven, Trials: make([]results.Trial, 1200)},
		"IMIX":              {Name: "imix", Results: imix, Trials: make([]results.Trial, 12)},
		"failed run":        {Name: "stalled", Results: failed, Trials: make([]results.Trial, 11), Failure: "DUTStalled: nothing came back from the DUT for 2 s"},
	}
}

// The report in a real browser: every shape of result reads without a label cut off or drawn over another,
// with every measured row and the run's end said.
func TestReportReadsWellInABrowser(t *testing.T) {
	chromium := browser(t)
	for name, run := range reportShapes() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := Write(dir, run); err != nil {
				t.Fatal(err)
			}
			problems, text := inBrowser(t, chromium, dir)
			for _, p := range problems {
				t.Error(p)
			}
			r := run.Results
			var want []string
			for _, tr := range r.Throughput {
				want = append(want, fmt.Sprintf("%d B", tr.FrameSize))
				if tr.TesterLimited {
					want = append(want, "tester-limited")
				}
			}
			for _, m := range r.Imix {
				want = append(want, "IMIX", m.AverageFrameSize+" B", "1518 B")
			}
			if len(r.BackToBack) > 0 {
				want = append(want, "Back-to-back")
			}
			if run.Failure != "" {
				want = append(want, "did not finish", run.Failure)
			}
			missing := false
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("the page does not say %q", w)
					missing = true
				}
			}
			if missing {
				t.Logf("the page says: %s", text)
			}
		})
	}
}
