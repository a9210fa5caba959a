package main

// The contents of linerate's images, in one place. The top-level Dockerfile (manager) and Dockerfile.tester
// build the same images with a container engine; dockerfile_test.go checks that they agree with these specs
// (how each file is built and where it goes, entrypoint, user, labels, directories, symlinks, and the Debian
// package list they install).

// File is one file copied into an image from the build machine.
type File struct {
	// Flag is the command-line flag that gives the file's path on the build machine.
	Flag string
	// Path inside the image.
	Path string
	// Static requires a statically linked binary (no ELF interpreter, no DT_NEEDED).
	Static bool
	// Dynamic requires a dynamically linked ELF whose libraries all resolve inside the image.
	Dynamic bool
	// GoPackage is the Go package the file is built from (CGO_ENABLED=0 when Static); MakeOutput, for C,
	// is what `make -C dataplane` leaves (relative to the repository root). Exactly one is set.
	GoPackage  string
	MakeOutput string
	Help       string
}

// Dir is an empty directory created in the image (a mount point or a writable place).
type Dir struct {
	Path string
	Mode int64
	// InDebianBase: debian:bookworm-slim, the Dockerfile's base, already has it.
	InDebianBase bool
}

// Symlink is a symbolic link created in the image.
type Symlink struct {
	Path, Target string
	InDebianBase bool
}

// Spec describes one image.
type Spec struct {
	Name       string
	DefaultTag string
	Files      []File
	Dirs       []Dir
	Symlinks   []Symlink
	// Packages is the Debian package list (relative to the repository root) whose files go into the image.
	Packages   string
	Entrypoint []string
	User       string
	// Dockerfile is the file (relative to the repository root) that builds the same image with a container
	// engine; "" for images only the local cluster uses.
	Dockerfile string
	// DockerBase is the Dockerfile's final base image: scratch when the image holds only our files,
	// debian:bookworm-slim when it installs Debian packages.
	DockerBase string
}

// Labels are the OCI labels of an image (the Dockerfiles set the same).
func (s *Spec) Labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":  "linerate-" + s.Name,
		"org.opencontainers.image.source": "linerate.dev/linerate",
	}
}

// TesterPMDDir is where Debian's DPDK 22.11 EAL loads its poll-mode-driver plugins from.
const TesterPMDDir = "/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0"

var specs = map[string]*Spec{
	"manager": {
		Name:       "manager",
		DefaultTag: "linerate.dev/manager:dev",
		Files: []File{{Flag: "manager", Path: "/manager", Static: true, GoPackage: "./cmd/manager",
			Help: "the manager binary (CGO_ENABLED=0 go build ./cmd/manager)"}},
		Entrypoint: []string{"/manager"},
		User:       "65532:65532",
		Dockerfile: "Dockerfile",
		DockerBase: "scratch",
	},
	"tester": {
		Name:       "tester",
		DefaultTag: "linerate.dev/tester:dev",
		Files: []File{
			{Flag: "linerate", Path: "/usr/local/bin/linerate", Static: true, GoPackage: "./cmd/linerate",
				Help: "the runner (CGO_ENABLED=0 go build ./cmd/linerate)"},
			{Flag: "engine", Path: "/usr/local/bin/linerate-engine", Dynamic: true, MakeOutput: "dataplane/build/linerate-engine",
				Help: "the DPDK engine (make -C dataplane: dataplane/build/linerate-engine)"},
		},
		// /run/linerate is the pod's writable run directory (an emptyDir; the root filesystem is read-only).
		// DPDK's EAL, running as root, insists on /var/run/dpdk/<prefix> for its runtime files: send that
		// into the run directory too. (/dev/hugepages is not here: /dev is the runtime's tmpfs, and the
		// runtime makes the hugepages volume's mount point itself.)
		Dirs: []Dir{
			{Path: "/run/linerate", Mode: 0o755},
			{Path: "/etc/linerate", Mode: 0o755},
			{Path: "/tmp", Mode: 0o1777, InDebianBase: true},
		},
		Symlinks:   []Symlink{{Path: "/var/run", Target: "/run", InDebianBase: true}, {Path: "/run/dpdk", Target: "linerate"}},
		Packages:   "images/tester.packages",
		Entrypoint: []string{"/usr/local/bin/linerate"},
		Dockerfile: "Dockerfile.tester",
		DockerBase: "debian:bookworm-slim",
	},
	"pause": {
		Name:       "pause",
		DefaultTag: "linerate.dev/pause:v1",
		Files: []File{{Flag: "pause", Path: "/pause", Static: true, GoPackage: "./images/pause",
			Help: "the pause binary (CGO_ENABLED=0 go build ./images/pause)"}},
		Entrypoint: []string{"/pause"},
		User:       "65535:65535",
	},
}
