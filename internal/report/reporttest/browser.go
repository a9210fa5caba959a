// Package reporttest checks an HTML report (internal/report) as a reader sees it: laid out by a real
// headless chromium, with a check in the page for what would read wrong. The report's own tests use it,
// and so do those of the commands that write reports (linerate report, from a cluster's ConfigMaps).
package reporttest

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
    // a frame size is a whole number of bytes, printed exactly: "1024", never "1.02k"
    const xAxis = axes.reduce((a, r) => (r.width > a.width ? r : a), axes[0]);
    if (texts.some((t) => t.textContent === "frame size (B)"))
      texts.forEach((t, i) => {
        const r = rects[i], centre = r.left + r.width / 2;
        if (r.top > xAxis.bottom && centre > xAxis.left && centre < xAxis.right && t.textContent !== "frame size (B)" && !/^[0-9]+$/.test(t.textContent))
          problems.push(name + ": frame size '" + t.textContent + "' on the x axis is not a whole number of bytes");
      });
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

// Browser is the headless chromium the report is checked in; without one the test is skipped, or fails
// where LINERATE_REQUIRE_BROWSER is set (make test sets it).
func Browser(t *testing.T) string {
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

// InBrowser opens the report in dir as a reader would, 1280 px wide, with its charts drawn in the page (so that
// the check can measure them), and returns what the layout check found and the page's text.
func InBrowser(t *testing.T, chromium, dir string) (problems []string, text string) {
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
