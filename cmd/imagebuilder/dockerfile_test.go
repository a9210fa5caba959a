package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The Dockerfiles and the imagebuilder specs describe the same images twice; these tests fail as soon as one
// changes without the other.

type instruction struct {
	cmd  string // upper case: FROM, RUN, COPY, ...
	args string
}

type stage struct {
	name, base string
	ins        []instruction
}

// parseDockerfile splits a Dockerfile into stages of instructions (continuation lines joined, comments
// dropped). It covers the subset our Dockerfiles use.
func parseDockerfile(t *testing.T, file string) []*stage {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var stages []*stage
	var cur strings.Builder
	flush := func() {
		line := strings.TrimSpace(cur.String())
		cur.Reset()
		if line == "" {
			return
		}
		cmd, args, _ := strings.Cut(line, " ")
		in := instruction{strings.ToUpper(cmd), strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			st := &stage{base: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			stages = append(stages, st)
			return
		}
		if len(stages) == 0 {
			t.Fatalf("%s: %s before FROM", file, in.cmd)
		}
		stages[len(stages)-1].ins = append(stages[len(stages)-1].ins, in)
	}
	for _, raw := range strings.Split(string(data), "\n") {
		l := strings.TrimSpace(raw)
		if strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(strings.TrimSuffix(l, "\\") + " ")
			continue
		}
		cur.WriteString(l)
		flush()
	}
	flush()
	return stages
}

func (s *stage) all(cmd string) []string {
	var out []string
	for _, in := range s.ins {
		if in.cmd == cmd {
			out = append(out, in.args)
		}
	}
	return out
}

func (s *stage) runs() string { return strings.Join(s.all("RUN"), " && ") }

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s", root)
	}
	return root
}

func TestDockerfilesMatchSpecs(t *testing.T) {
	root := repoRoot(t)
	for _, spec := range specs {
		if spec.Dockerfile == "" {
			continue
		}
		t.Run(spec.Name, func(t *testing.T) {
			stages := parseDockerfile(t, filepath.Join(root, spec.Dockerfile))
			final := stages[len(stages)-1]
			byName := map[string]*stage{}
			for _, s := range stages {
				byName[s.name] = s
			}
			if final.base != spec.DockerBase {
				t.Errorf("final stage FROM %s, spec says %s", final.base, spec.DockerBase)
			}

			// Every file: copied from the stage that builds it, to the spec's path, built the same way.
			copies := map[string]string{} // image path -> "stage:source"
			for _, c := range final.all("COPY") {
				f := strings.Fields(c)
				if len(f) == 3 && strings.HasPrefix(f[0], "--from=") {
					copies[f[2]] = strings.TrimPrefix(f[0], "--from=") + ":" + f[1]
				}
			}
			for _, f := range spec.Files {
				from, ok := copies[f.Path]
				if !ok {
					t.Errorf("%s: no COPY --from=<stage> ... %s in the final stage", spec.Dockerfile, f.Path)
					continue
				}
				stName, src, _ := strings.Cut(from, ":")
				st := byName[stName]
				if st == nil {
					t.Errorf("COPY --from=%s: no such stage", stName)
					continue
				}
				run := st.runs()
				switch {
				case f.GoPackage != "":
					build := regexp.MustCompile(`go build [^&]*-o ` + regexp.QuoteMeta(src) + ` ` + regexp.QuoteMeta(f.GoPackage) + `\b`)
					if !build.MatchString(run) {
						t.Errorf("stage %s does not `go build -o %s %s`: %s", stName, src, f.GoPackage, run)
					}
					if f.Static && !strings.Contains(run, "CGO_ENABLED=0 go build") {
						t.Errorf("stage %s: %s must be static (CGO_ENABLED=0), as imagebuilder requires", stName, f.Path)
					}
				case f.MakeOutput != "":
					if !strings.Contains(run, "make -C dataplane") {
						t.Errorf("stage %s does not run make -C dataplane: %s", stName, run)
					}
					if !strings.HasSuffix(src, "/"+f.MakeOutput) {
						t.Errorf("COPY --from=%s %s: imagebuilder takes %s", stName, src, f.MakeOutput)
					}
					if !regexp.MustCompile(`apt-get install [^&]*\blibdpdk-dev\b`).MatchString(run) {
						t.Errorf("stage %s builds the engine without Debian's libdpdk-dev (the runtime packages' twin)", stName)
					}
					if st.base != "debian:bookworm" {
						t.Errorf("stage %s builds on %s; the runtime libraries are bookworm's", stName, st.base)
					}
				default:
					t.Errorf("spec file %s says neither how it is built", f.Path)
				}
			}
			if len(copies) != len(spec.Files) {
				t.Errorf("final stage copies %d files from build stages, spec has %d: %v", len(copies), len(spec.Files), copies)
			}

			// Entrypoint, user, labels.
			var ep []string
			if e := final.all("ENTRYPOINT"); len(e) != 1 || json.Unmarshal([]byte(e[0]), &ep) != nil {
				t.Errorf("want one exec-form ENTRYPOINT, got %q", e)
			}
			if !reflect.DeepEqual(ep, spec.Entrypoint) {
				t.Errorf("ENTRYPOINT %q, spec %q", ep, spec.Entrypoint)
			}
			user := ""
			if u := final.all("USER"); len(u) > 0 {
				user = u[len(u)-1]
			}
			if user != spec.User {
				t.Errorf("USER %q, spec %q", user, spec.User)
			}
			labels := map[string]string{}
			for _, l := range final.all("LABEL") {
				for _, m := range regexp.MustCompile(`([\w.-]+)="([^"]*)"`).FindAllStringSubmatch(l, -1) {
					labels[m[1]] = m[2]
				}
			}
			if !reflect.DeepEqual(labels, spec.Labels()) {
				t.Errorf("LABELs %v, spec %v", labels, spec.Labels())
			}

			// Directories and symlinks the base does not have.
			run := final.runs()
			for _, d := range spec.Dirs {
				if !d.InDebianBase && !regexp.MustCompile(`mkdir -p [^&]*`+regexp.QuoteMeta(d.Path)+`\b`).MatchString(run) {
					t.Errorf("no mkdir -p %s in the final stage", d.Path)
				}
			}
			for _, s := range spec.Symlinks {
				if !s.InDebianBase && !strings.Contains(run, "ln -s "+s.Target+" "+s.Path) {
					t.Errorf("no ln -s %s %s in the final stage", s.Target, s.Path)
				}
			}

			// The package list: the same file, installed the same way (no recommends), in the final stage.
			if spec.Packages != "" {
				listCopied := false
				for _, c := range final.all("COPY") {
					f := strings.Fields(c)
					if len(f) == 2 && f[0] == spec.Packages {
						listCopied = true
						if !regexp.MustCompile(`apt-get install -y --no-install-recommends \$\(sed 's/#\.\*//' ` + regexp.QuoteMeta(f[1]) + `\)`).MatchString(run) {
							t.Errorf("the final stage does not install the packages of %s (%s): %s", spec.Packages, f[1], run)
						}
					}
				}
				if !listCopied {
					t.Errorf("the final stage does not COPY %s", spec.Packages)
				}
			} else if final.base != "scratch" {
				t.Errorf("an image without packages should be FROM scratch, as imagebuilder makes it")
			}
		})
	}
}

// The list that both builders read must be a list imagebuilder accepts, and the Dockerfile's sed must read it
// the same way readPackageList does.
func TestPackageListReadAlike(t *testing.T) {
	root := repoRoot(t)
	file := filepath.Join(root, specs["tester"].Packages)
	pkgs, err := readPackageList(file)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	var sedWords []string
	for _, line := range strings.Split(string(data), "\n") {
		line = regexp.MustCompile(`#.*`).ReplaceAllString(line, "")
		sedWords = append(sedWords, strings.Fields(line)...)
	}
	sort.Strings(pkgs)
	sort.Strings(sedWords)
	if !reflect.DeepEqual(pkgs, sedWords) {
		t.Errorf("imagebuilder reads %v, the Dockerfile's sed reads %v", pkgs, sedWords)
	}
	for _, must := range []string{"librte-eal23", "librte-ethdev23", "librte-mempool-ring23", "librte-net-af-packet23"} {
		if !contains(pkgs, must) {
			t.Errorf("%s lacks %s, which every engine run needs", file, must)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
