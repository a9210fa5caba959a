// Command pause is the sandbox ("pause") container of the local cluster's containerd: it holds a pod's
// namespaces open and does nothing. Built static, it is the only file of the linerate.dev/pause image that
// cmd/imagebuilder makes, so the cluster needs no registry.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	// As PID 1 of the sandbox it also inherits orphans of a shared PID namespace: reap them.
	signal.Notify(sig, syscall.SIGCHLD)
	for s := range sig {
		if s == syscall.SIGCHLD {
			for {
				if pid, _ := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); pid <= 0 {
					break
				}
			}
			continue
		}
		os.Exit(0)
	}
}
