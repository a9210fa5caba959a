// Command apiserver-relay lets pods of the local cluster (hack/cluster-up.sh) reach the kube-apiserver,
// which listens on 127.0.0.1 only and has no kube-proxy in front of it: cluster-up puts the first service IP
// (the "kubernetes" Service, 10.96.0.1) on the node's pod bridge, and this relay forwards its port 443 to
// the apiserver's loopback port. TLS passes through untouched (the apiserver's certificate names 10.96.0.1).
//
//	apiserver-relay -listen 10.96.0.1:443 -to 127.0.0.1:26443
package main

import (
	"flag"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	listen := flag.String("listen", "10.96.0.1:443", "address the pods dial (the kubernetes Service's IP and port)")
	to := flag.String("to", "127.0.0.1:26443", "the kube-apiserver's address")
	flag.Parse()
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		_ = l.Close()
		os.Exit(0)
	}()
	log.Printf("relaying %s -> %s", *listen, *to)
	for {
		c, err := l.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go relay(c, *to)
	}
}

func relay(c net.Conn, to string) {
	defer func() { _ = c.Close() }() // a relay: a failing close has no one to tell
	u, err := net.Dial("tcp", to)
	if err != nil {
		log.Print(err)
		return
	}
	defer func() { _ = u.Close() }()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(u, c)
	go pipe(c, u)
	<-done
	<-done
}
