#!/usr/bin/env bash
# Installs bin/golangci-lint: golangci-lint with the kube-api-linter module plugin compiled in (make lint-go).
# `golangci-lint custom` would build the same binary by git-cloning golangci-lint, and this machine reaches
# package registries only; so this does what it does from the Go module proxy: a throwaway module whose main
# runs golangci-lint's commands with the plugin's package imported for its registration. Pinned; built once
# per machine into $LINERATE_CACHE (~3 min on 2 cores), then copied.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GOLANGCI=v2.15.0
KAL=v0.0.0-20260716143926-092fe0c72997 # sigs.k8s.io/kube-api-linter publishes no tags
CACHE=${LINERATE_CACHE:-$HOME/.cache/linerate}/tools
stamp=$CACHE/golangci-lint-$GOLANGCI-kal-${KAL##*-}
if [ ! -x "$stamp" ]; then
	echo "install-lint-go: building golangci-lint $GOLANGCI with kube-api-linter $KAL"
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	cat >"$work/main.go" <<-'GO'
		// Command golangci-lint is golangci-lint with the kube-api-linter module plugin registered.
		package main

		import (
			"fmt"
			"os"
			"runtime/debug"

			"github.com/golangci/golangci-lint/v2/pkg/commands"
			"github.com/golangci/golangci-lint/v2/pkg/exitcodes"

			_ "sigs.k8s.io/kube-api-linter" // registers the "kubeapilinter" module plugin
		)

		func main() {
			info := commands.BuildInfo{Version: "unknown", Commit: "?", GoVersion: "unknown"}
			if bi, ok := debug.ReadBuildInfo(); ok {
				info.GoVersion = bi.GoVersion
				for _, d := range bi.Deps {
					if d.Path == "github.com/golangci/golangci-lint/v2" {
						info.Version = d.Version + "+kube-api-linter"
					}
				}
			}
			if err := commands.Execute(info); err != nil {
				fmt.Fprintf(os.Stderr, "golangci-lint: %v\n", err)
				os.Exit(exitcodes.Failure)
			}
		}
	GO
	(
		cd "$work"
		go mod init linerate.dev/tools/golangci-lint >/dev/null 2>&1
		GOFLAGS=-mod=mod go get "github.com/golangci/golangci-lint/v2@$GOLANGCI" "sigs.k8s.io/kube-api-linter@$KAL" >/dev/null 2>&1
		GOFLAGS=-mod=mod go build -o golangci-lint .
	)
	mkdir -p "$CACHE"
	mv "$work/golangci-lint" "$stamp"
fi
mkdir -p "$ROOT/bin"
cp -f "$stamp" "$ROOT/bin/golangci-lint"
