package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Client speaks dataplane/PROTOCOL.md to one engine over one connection.
type Client struct {
	mu   sync.Mutex
	conn net.Conn
	rd   *bufio.Reader
	// PollInterval is how often RunTrial reports progress (default 1 s).
	PollInterval time.Duration
	// HungAfter is how long past its warm-up, duration and drain a trial may run before the engine is
	// declared hung (default 30 s).
	HungAfter time.Duration
}

var _ Engine = (*Client)(nil)

// Dial connects to an engine at addr: "unix:/path", "tcp:host:port" or a plain socket path.
func Dial(ctx context.Context, addr string) (*Client, error) {
	network, address := "unix", addr
	switch {
	case strings.HasPrefix(addr, "unix:"):
		address = strings.TrimPrefix(addr, "unix:")
	case strings.HasPrefix(addr, "tcp:"):
		network, address = "tcp", strings.TrimPrefix(addr, "tcp:")
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, fmt.Errorf("engine: connect %s: %w", addr, err)
	}
	return NewClient(conn), nil
}

// NewClient wraps an established connection.
func NewClient(conn net.Conn) *Client {
	return &Client{conn: conn, rd: bufio.NewReaderSize(conn, 64<<10), PollInterval: time.Second}
}

// Close closes the connection (the engine keeps running).
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn = nil
	return err
}

// Quit asks the engine to exit.
func (c *Client) Quit(ctx context.Context) error {
	var r struct{}
	return c.Do(ctx, "QUIT", nil, &r)
}

// KV is one key=value of a request, in order.
type KV struct{ K, V string }

// Do sends one request and decodes the success response into out (which may be nil). The request line
// is VERB k=v ...; values must not contain spaces or newlines.
func (c *Client) Do(ctx context.Context, verb string, args []KV, out any) error {
	var b strings.Builder
	b.WriteString(verb)
	for _, kv := range args {
		if strings.ContainsAny(kv.V, " \t\r\n") || kv.V == "" {
			return fmt.Errorf("engine %s: %s=%q: values must be non-empty and contain no whitespace", verb, kv.K, kv.V)
		}
		b.WriteString(" " + kv.K + "=" + kv.V)
	}
	b.WriteByte('\n')

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return ErrClosed
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.conn.SetDeadline(dl)
	} else {
		_ = c.conn.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := c.conn.Write([]byte(b.String())); err != nil {
		return c.ctxErr(ctx, fmt.Errorf("engine %s: write: %w", verb, err))
	}
	line, err := c.rd.ReadBytes('\n')
	if err != nil {
		return c.ctxErr(ctx, fmt.Errorf("engine %s: read: %w", verb, err))
	}
	return decodeResponse(verb, line, out)
}

func (c *Client) ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}

func decodeResponse(verb string, line []byte, out any) error {
	var head struct {
		OK      *bool  `json:"ok"`
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return fmt.Errorf("engine %s: response is not JSON: %q", verb, truncate(string(line), 200))
	}
	if head.OK == nil {
		return fmt.Errorf("engine %s: response has no \"ok\": %q", verb, truncate(string(line), 200))
	}
	if !*head.OK {
		if head.Error == "" {
			head.Error = "error"
		}
		return &Error{Verb: verb, Code: head.Error, Message: head.Message}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(line, out); err != nil {
		return fmt.Errorf("engine %s: response: %w", verb, err)
	}
	return nil
}

func truncate(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// Hello implements Engine.
func (c *Client) Hello(ctx context.Context) (*Hello, error) {
	var h Hello
	if err := c.Do(ctx, "HELLO", nil, &h); err != nil {
		return nil, err
	}
	if h.Proto != ProtocolVersion {
		return nil, fmt.Errorf("%w: engine HELLO: protocol version %d, this runner speaks %d (runner and engine come from the same release)", ErrProtocolVersion, h.Proto, ProtocolVersion)
	}
	return &h, nil
}

// Port implements Engine.
func (c *Client) Port(ctx context.Context, p PortConfig) (*PortInfo, error) {
	args := []KV{{"id", strconv.Itoa(p.ID)}}
	add := func(k, v string) {
		if v != "" {
			args = append(args, KV{k, v})
		}
	}
	add("ip4", p.IP4)
	add("gw4", p.GW4)
	add("ip6", p.IP6)
	add("gw6", p.GW6)
	add("peer_mac", p.PeerMAC)
	if p.VLAN != 0 {
		add("vlan", strconv.Itoa(p.VLAN))
	}
	var info PortInfo
	if err := c.Do(ctx, "PORT", args, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// Resolve implements Engine.
func (c *Client) Resolve(ctx context.Context, port int, timeout time.Duration) (string, error) {
	args := []KV{{"id", strconv.Itoa(port)}}
	if timeout > 0 {
		args = append(args, KV{"timeout_ms", strconv.FormatInt(timeout.Milliseconds(), 10)})
	}
	var r struct {
		PeerMAC string `json:"peer_mac"`
	}
	if err := c.Do(ctx, "RESOLVE", args, &r); err != nil {
		return "", err
	}
	return r.PeerMAC, nil
}

// Stream implements Engine.
func (c *Client) Stream(ctx context.Context, s StreamConfig) (*StreamInfo, error) {
	if len(s.Sizes) == 0 {
		return nil, fmt.Errorf("engine STREAM: no sizes")
	}
	args := []KV{{"id", strconv.Itoa(s.ID)}, {"tx", portArg(s.TX)}, {"rx", portArg(s.RX)}}
	if s.L3 != "" {
		args = append(args, KV{"l3", s.L3})
	}
	args = append(args, KV{"src", s.Src}, KV{"dst", s.Dst})
	if s.SPort != 0 {
		args = append(args, KV{"sport", strconv.Itoa(s.SPort)})
	}
	if s.DPort != 0 {
		args = append(args, KV{"dport", strconv.Itoa(s.DPort)})
	}
	if s.Flows > 1 {
		args = append(args, KV{"flows", strconv.Itoa(s.Flows)})
		if len(s.Vary) > 0 {
			args = append(args, KV{"vary", strings.Join(s.Vary, ",")})
		}
	}
	if s.DSCP != 0 {
		args = append(args, KV{"dscp", strconv.Itoa(s.DSCP)})
	}
	if s.Payload != "" {
		args = append(args, KV{"payload", s.Payload})
	}
	if s.Lanes > 1 {
		args = append(args, KV{"lanes", strconv.Itoa(s.Lanes)})
	}
	if s.Fragmentable {
		args = append(args, KV{"df", "0"})
	}
	args = append(args, KV{"sizes", joinInts(s.Sizes)})
	var info StreamInfo
	if err := c.Do(ctx, "STREAM", args, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// portArg renders a port of a stream; a negative port is "none" (the other engine of a split stream).
func portArg(p int) string {
	if p < 0 {
		return "none"
	}
	return strconv.Itoa(p)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// TrialArgs renders a TrialConfig as the TRIAL request's arguments.
func TrialArgs(t TrialConfig) ([]KV, error) {
	if len(t.Streams) == 0 || len(t.Streams) != len(t.RatesFPS) {
		return nil, fmt.Errorf("engine TRIAL: %d streams and %d rates", len(t.Streams), len(t.RatesFPS))
	}
	rates := make([]string, len(t.RatesFPS))
	for i, r := range t.RatesFPS {
		if r <= 0 {
			return nil, fmt.Errorf("engine TRIAL: rate %g of stream %d is not positive", r, t.Streams[i])
		}
		rates[i] = strconv.FormatFloat(r, 'f', 3, 64)
	}
	args := []KV{{"streams", joinInts(t.Streams)}, {"rates", strings.Join(rates, ",")}, {"unit", "fps"}}
	if t.Burst > 0 {
		args = append(args, KV{"burst", strconv.FormatInt(t.Burst, 10)})
	} else {
		if t.Duration <= 0 {
			return nil, fmt.Errorf("engine TRIAL: no duration and no burst")
		}
		args = append(args, KV{"duration_ms", ms(t.Duration)})
	}
	args = append(args, KV{"warmup_ms", ms(t.WarmUp)}, KV{"drain_ms", ms(t.Drain)})
	if t.Stall > 0 {
		args = append(args, KV{"stall_ms", ms(t.Stall)})
	}
	if t.ID > 0 {
		args = append(args, KV{"id", strconv.Itoa(t.ID)})
	}
	if t.Timeline != nil {
		if t.Burst > 0 {
			return nil, fmt.Errorf("engine TRIAL: a timeline needs a paced trial, not a burst")
		}
		args = append(args, timelineArgs(t.Timeline)...)
	}
	return args, nil
}

// RunTrial implements Engine: TRIAL, then WAIT in steps of PollInterval reporting progress, then RESULT.
func (c *Client) RunTrial(ctx context.Context, t TrialConfig, progress func(Progress)) (*TrialResult, error) {
	args, err := TrialArgs(t)
	if err != nil {
		return nil, err
	}
	rest := Rest{Quiet: true}
	if t.Quiet > 0 {
		if rest, err = c.Quiet(ctx, t.Quiet, t.QuietMax); err != nil {
			return nil, err
		}
	}
	var started struct {
		Trial int `json:"trial"`
	}
	if t.OnStart != nil {
		t.OnStart()
	}
	if err := c.Do(ctx, "TRIAL", args, &started); err != nil {
		return nil, err
	}
	step := c.PollInterval
	if step <= 0 {
		step = time.Second
	}
	// The engine must finish within warm-up + duration + drain; allow generous slack for bursts and
	// slow control paths before declaring it hung.
	slack := c.HungAfter
	if slack <= 0 {
		slack = 30 * time.Second
	}
	limit := t.WarmUp + t.Duration + t.Drain + slack
	if t.Burst > 0 {
		limit += time.Minute
	}
	deadline := time.Now().Add(limit)
	for {
		if ctx.Err() != nil {
			return c.abort(ctx.Err())
		}
		var p Progress
		waitCtx, cancel := context.WithTimeout(ctx, step+10*time.Second)
		err := c.Do(waitCtx, "WAIT", []KV{{"timeout_ms", ms(step)}}, &p)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return c.abort(ctx.Err())
			}
			return nil, err
		}
		p.Elapsed = time.Duration(p.ElapsedM) * time.Millisecond
		// the state is judged as the engine gave it, before the caller's progress hook runs: a hook that
		// takes long (an API server that answers slowly) must not make a finished trial look hung
		done := p.State == StateDone || p.State == StateAborted
		hung := !done && time.Now().After(deadline)
		if progress != nil {
			progress(p)
		}
		if done {
			break
		}
		if hung {
			res, _ := c.abort(fmt.Errorf("trial %d did not finish within %s", started.Trial, limit))
			_ = res
			return nil, fmt.Errorf("engine: trial %d did not finish within %s (state %q)", started.Trial, limit, p.State)
		}
	}
	var r TrialResult
	if err := c.Do(ctx, "RESULT", nil, &r); err != nil {
		return nil, err
	}
	r.QuietWaitNs, r.QuietMissed = rest.WaitedNs, !rest.Quiet
	return &r, nil
}

// Rest is what QUIET answered: how long the DUT rested, and whether it fell quiet.
type Rest struct {
	WaitedNs int64 `json:"waited_ns"`
	Quiet    bool  `json:"quiet"`
}

// Quiet implements Quieter: QUIET, the DUT's rest until nothing has arrived on any port for quiet, or
// for most at most (0: the engine's default, 10 s).
func (c *Client) Quiet(ctx context.Context, quiet, most time.Duration) (Rest, error) {
	args := []KV{{"quiet_ms", ms(quiet)}}
	if most > 0 {
		args = append(args, KV{"max_ms", ms(most)})
	}
	var r Rest
	err := c.Do(ctx, "QUIET", args, &r)
	return r, err
}

// abort stops the running trial after the caller's context ended and returns the cause.
func (c *Client) abort(cause error) (*TrialResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.Do(ctx, "ABORT", nil, nil)
	return nil, cause
}
