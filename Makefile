# linerate — an RFC 2544 tester as a Kubernetes operator.
#   make demo   the main job: a local cluster, the operator, a real IPsec DUT, a throughput test
#   make test   every test (Go unit + envtest against a real kube-apiserver/etcd, C engine, real netns)

K8S_VERSION ?= 1.37.2
LOCALBIN    ?= $(CURDIR)/bin
# VERSION is what `linerate version` prints: the nearest tag and the commit.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
ENVTEST_DIR ?= $(LOCALBIN)/k8s/$(K8S_VERSION)-linux-amd64
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
IMG         ?= linerate.dev/manager:dev
TESTER_IMG  ?= linerate.dev/tester:dev
GOTEST_FLAGS ?= -count=1
# a package's tests get 30 minutes, not go test's 10: on a loaded host the tester spoils trials and the
# runner repeats each up to twice, and internal/runner already took 447 s of the 600 on a loaded CI host
GOTEST_TIMEOUT ?= 30m

.PHONY: all
all: build

##@ General
.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development
.PHONY: manifests
manifests: controller-gen ## Generate the CRDs and RBAC from the kubebuilder markers.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd paths="./api/...;./controllers/..." output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	@bash hack/sync-chart.sh >/dev/null

.PHONY: generate
generate: controller-gen ## Generate the DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## go fmt.
	go fmt ./...

.PHONY: vet
vet: ## go vet.
	go vet ./...

.PHONY: lint lint-go lint-c lint-shell lint-docs lint-workflows
lint: lint-go lint-c lint-shell lint-docs lint-workflows ## Every static check: golangci-lint (kube-api-linter on api/), clang-tidy on the engine, shellcheck, the docs' links, actionlint on .github/workflows.

lint-go: ## golangci-lint with the checked-in .golangci.yml (kube-api-linter on api/).
	bash hack/lint-go.sh

lint-c: ## The engine's C under clang-tidy, next to the compiler's -Wall -Wextra -Werror.
	bash hack/install-dataplane-deps.sh
	bash hack/install-lint-c.sh
	$(MAKE) -C dataplane lint

lint-shell: ## shellcheck on hack/ and .ci/.
	bash hack/lint-shell.sh

lint-docs: ## Every relative link and #anchor in the Markdown docs resolves (hack/checklinks; no network).
	go run ./hack/checklinks

lint-workflows: ## actionlint on .github/workflows (shellcheck on their run: scripts).
	bash hack/lint-workflows.sh

.PHONY: verify-generated
verify-generated: manifests generate ## Fail when generated code or CRDs are stale.
	@git diff --exit-code -- api config charts || { echo "generated files are stale: run 'make manifests generate' and commit"; exit 1; }

.PHONY: test
test: deps manifests generate vet engine ## Run every test: Go (unit, envtest, runner on the real engine) and the C engine.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@# build every test binary in parallel first, then run them one package at a time
	@# (their output only when one fails: it names what is missing, e.g. an envtest that cannot start)
	KUBEBUILDER_ASSETS=$(ENVTEST_DIR) go test -count=1 -run '^$$' ./... >$(LOCALBIN)/test-build.log 2>&1 || \
		{ grep -v '^ok\|no test files' $(LOCALBIN)/test-build.log; exit 1; }
	@# packages one at a time: the engine tests busy-poll a core each and time real traffic through the kernel
	KUBEBUILDER_ASSETS=$(ENVTEST_DIR) LINERATE_ENGINE=$(CURDIR)/dataplane/build/linerate-engine LINERATE_REQUIRE_BROWSER=1 \
		go test -p 1 -timeout $(GOTEST_TIMEOUT) $(GOTEST_FLAGS) ./...
	$(MAKE) -C dataplane test

.PHONY: test-busy
test-busy: ## `make test` beside two busy loops (a shared node): every test passes or skips with evidence.
	bash hack/test-busy.sh

.PHONY: test-go
test-go: controller-gen envtest-assets ## Only the Go tests.
	KUBEBUILDER_ASSETS=$(ENVTEST_DIR) LINERATE_ENGINE=$(CURDIR)/dataplane/build/linerate-engine \
		go test -timeout $(GOTEST_TIMEOUT) $(GOTEST_FLAGS) ./...

.PHONY: deps
deps: controller-gen envtest-assets ## Install everything the build needs (apt packages, Go tools, k8s binaries).
	bash hack/install-dataplane-deps.sh
	bash hack/install-browser.sh
	@test -x $(LOCALBIN)/helm -a -x $(LOCALBIN)/kustomize || bash hack/install-tools.sh helm kustomize

.PHONY: fresh-check
fresh-check: ## `make test` in a clean Debian 12 root (debootstrap) on a fresh clone of HEAD: proves hack/ installs everything.
	bash hack/fresh-check.sh make test

##@ Build
.PHONY: build
build: generate ## Build the manager, the runner CLI and the engine.
	go build -o $(LOCALBIN)/manager ./cmd/manager
	go build -ldflags "-X main.version=$(VERSION)" -o $(LOCALBIN)/linerate ./cmd/linerate
	$(MAKE) engine

PLUGIN_DIR ?= $(HOME)/.local/bin
.PHONY: install-kubectl-plugin
install-kubectl-plugin: build ## Install bin/linerate as the kubectl plugin 'kubectl linerate' (into PLUGIN_DIR, default ~/.local/bin).
	mkdir -p $(PLUGIN_DIR)
	ln -sf $(LOCALBIN)/linerate $(PLUGIN_DIR)/kubectl-linerate
	ln -sf $(LOCALBIN)/linerate $(PLUGIN_DIR)/kubectl_complete-linerate

.PHONY: engine
engine: ## Build the DPDK engine (dataplane/build/linerate-engine).
	$(MAKE) -C dataplane all

.PHONY: run
run: manifests generate ## Run the manager against the current kubeconfig.
	go run ./cmd/manager --tester-image=$(TESTER_IMG)

##@ Benchmarks (figures and ratios, never timed assertions)
.PHONY: bench
bench: bench-search bench-dataplane ## All benchmarks, checked against the accepted figures (dataplane/bench-accepted.json).

MLRSEARCH_PEER := bin/mlrsearch/bin/python hack/bench/mlrsearch_peer.py

.PHONY: bench-search bench-search-mlr
bench-search: ## Multistage vs plain binary search on simulated DUTs (trial time and count), then vs FD.io CSIT's MLRsearch (PyPI, into bin/mlrsearch).
	bash hack/install-mlrsearch.sh
	go run ./internal/search/cmd/bench-search -mlrsearch "$(MLRSEARCH_PEER)"

bench-search-mlr: ## Multistage vs FD.io CSIT's MLRsearch alone, under the CSIT goal preset, paired by seed (MLRSEEDS=n: seeds a model, 2000).
	bash hack/install-mlrsearch.sh
	go run ./internal/search/cmd/bench-search -mlrsearch-only -mlrsearch "$(MLRSEARCH_PEER)" $(if $(MLRSEEDS),-mlrsearch-seeds $(MLRSEEDS))

.PHONY: bench-dataplane
bench-dataplane: engine ## The engine against dpdk-testpmd on the same vdevs and cores; how light it is at low rates.
	$(MAKE) -C dataplane bench

.PHONY: bench-accept
bench-accept: ## Take the last make bench's engine figures as the accepted ones (commit with the reason).
	$(MAKE) -C dataplane bench-accept

##@ Demo, images and the local cluster (root; no hardware, no existing cluster)
.PHONY: demo demo-down test-e2e images push cluster-up cluster-down docker-build helm-install
CLUSTER_STATE ?= /var/tmp/linerate-cluster
# Where `make push` pushes: REGISTRY/manager:TAG, REGISTRY/tester:TAG and oci://REGISTRY/charts/linerate.
REGISTRY ?=
TAG ?= $(VERSION)
# The manager's architectures in `make images` (e.g. "amd64 arm64": one multi-arch image); the tester is amd64.
MANAGER_ARCHS ?= amd64
demo: ## The main job: a local cluster, linerate (Helm), a real IPsec gateway pair, an RFC 2544 test.
	bash hack/demo.sh

demo-down: ## Tear the demo down (cluster, DUT, state in /var/tmp/linerate-demo).
	bash hack/demo-down.sh

test-e2e: ## The e2e suite (test/e2e, tag e2e) on its own local cluster, torn down afterwards.
	bash hack/e2e.sh

images: build ## Build the manager and tester images without a container engine (dist/images/*.tar).
	MANAGER_ARCHS="$(MANAGER_ARCHS)" bash hack/build-images.sh dist/images

push: registry-given images ## Push both images and the chart to REGISTRY (REGISTRY/manager:TAG, REGISTRY/tester:TAG, oci://REGISTRY/charts/linerate); TAG defaults to VERSION.
	REGISTRY="$(REGISTRY)" TAG="$(TAG)" bash hack/push.sh dist/images

.PHONY: registry-given
registry-given:
	@test -n "$(REGISTRY)" || { echo "make push: set REGISTRY, e.g. make push REGISTRY=registry.example.com/linerate TAG=v1.2.3"; exit 1; }

cluster-up: ## A local single-node cluster (state in $(CLUSTER_STATE)).
	bash hack/cluster-up.sh $(CLUSTER_STATE)

cluster-down: ## Tear the local cluster down.
	bash hack/cluster-down.sh $(CLUSTER_STATE)

docker-build: ## The same images with a container engine, where there is one.
	docker build -t $(IMG) . && docker build -f Dockerfile.tester -t $(TESTER_IMG) .

helm-install: ## Install or upgrade linerate with its Helm chart in the current cluster.
	$(LOCALBIN)/helm upgrade --install linerate charts/linerate -n linerate-system --create-namespace

##@ Deployment
# The images `make deploy` and `make build-installer` name: IMG and TESTER_IMG, or, when only REGISTRY is
# given, what `make push` pushes there (REGISTRY/manager:TAG, REGISTRY/tester:TAG).
DEPLOY_IMG        = $(if $(and $(REGISTRY),$(filter file,$(origin IMG))),$(REGISTRY)/manager:$(TAG),$(IMG))
DEPLOY_TESTER_IMG = $(if $(and $(REGISTRY),$(filter file,$(origin TESTER_IMG))),$(REGISTRY)/tester:$(TAG),$(TESTER_IMG))

.PHONY: install
install: manifests ## Install the CRDs into the current cluster.
	kubectl apply --server-side -k config/crd

.PHONY: uninstall
uninstall: ## Remove the CRDs (and every TrafficTest) from the current cluster.
	kubectl delete --ignore-not-found -k config/crd

.PHONY: deploy
deploy: manifests ## Deploy the operator with kustomize, running IMG and naming TESTER_IMG (or REGISTRY's, see above).
	bash hack/kustomize-images.sh "$(DEPLOY_IMG)" "$(DEPLOY_TESTER_IMG)" | kubectl apply --server-side -f -

.PHONY: undeploy
undeploy: ## Remove the operator.
	kubectl delete --ignore-not-found -k config/default

.PHONY: build-installer
build-installer: manifests generate ## One YAML with CRDs and the operator (images as for deploy): dist/install.yaml.
	mkdir -p dist
	bash hack/kustomize-images.sh "$(DEPLOY_IMG)" "$(DEPLOY_TESTER_IMG)" > dist/install.yaml

##@ Tools
.PHONY: controller-gen
controller-gen: ## Install controller-gen into bin/.
	@test -x $(CONTROLLER_GEN) || bash hack/install-tools.sh controller-gen

.PHONY: envtest-assets
envtest-assets: ## Build a real etcd and kube-apiserver from the Go module proxy into bin/k8s (cached).
	@test -x $(ENVTEST_DIR)/kube-apiserver -a -x $(ENVTEST_DIR)/etcd || bash hack/build-k8s.sh $(ENVTEST_DIR)
