"""Test helpers: network namespaces the tests own, and the engine driven through its control socket.

Everything a test creates carries its PID in the name and is removed in tearDown, even on failure.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ENGINE = os.environ.get("LINERATE_ENGINE", os.path.join(HERE, "..", "build", "linerate-engine"))


# Set on a host whose tester has dedicated cores: a test that would skip because the OS kept preempting the
# engine (its truth not shown, the engine saying so) fails instead, for a green suite there proves every truth.
REQUIRE_CLEAN_TESTER = "LINERATE_REQUIRE_CLEAN_TESTER"


def skip_for_load(test, why):
    """Skips a test whose truth a loaded host kept the engine from showing (it said so), or fails it where
    REQUIRE_CLEAN_TESTER is set."""
    if os.environ.get(REQUIRE_CLEAN_TESTER):
        test.fail("%s is set, but the tester spoiled what this test needed: %s" % (REQUIRE_CLEAN_TESTER, why))
    test.skipTest(why)


def skip_if_sent_short(test, s):
    """Skips (see skip_for_load) a test whose exact counts need a stream the engine sent in full, when the
    engine said it sent short of its schedule: a busy host kept its worker off the CPU at the trial's end,
    and the frames it still owed were never due in the trial (a runner books that trial as the tester's)."""
    if s["tx_frames"] < s["scheduled_frames"]:
        skip_for_load(test, "the engine sent %d of the %d frames scheduled (it said so)" %
                      (s["tx_frames"], s["scheduled_frames"]))


def missing(s):
    """Frames of a stream (or a size class) sent and not received intact, from the engine's counts.

    The engine reports counts only; loss is the runner's (internal/engine). The tests check the counts
    against what the namespace DUT did, so they count what is missing themselves.
    """
    return max(0, s["tx_frames"] - (s["rx_frames"] - s.get("duplicates", 0)))


def interrupt(p):
    """What a process (dpdk-testpmd, which prints its statistics as it quits) wrote, after SIGINT; killed if
    it has not quit within 15 s."""
    p.send_signal(2)
    try:
        out, _ = p.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    return out


def sh(*cmd, check=True, ns=None):
    if ns:
        cmd = ("ip", "netns", "exec", ns) + cmd
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


class Netns:
    """A set of namespaces and veth pairs, deleted on close()."""

    def __init__(self, tag):
        self.prefix = "lrt%d%s" % (os.getpid() % 100000, tag)
        self.names = []

    def ns(self, suffix):
        name = self.prefix + suffix
        sh("ip", "netns", "add", name)
        self.names.append(name)
        sh("ip", "link", "set", "lo", "up", ns=name)
        return name

    def veth(self, a, ns_a, b, ns_b, mtu=1500):
        sh("ip", "link", "add", a, "mtu", str(mtu), "type", "veth", "peer", "name", b, "mtu", str(mtu))
        sh("ip", "link", "set", a, "netns", ns_a)
        sh("ip", "link", "set", b, "netns", ns_b)
        for n, ns in ((a, ns_a), (b, ns_b)):
            sh("ip", "link", "set", n, "up", ns=ns)
            # no IPv6 chatter (router solicitations, DAD) on test links: foreign counts stay exact
            sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % n, ns=ns, check=False)

    def mac(self, ifname, ns):
        out = sh("ip", "-j", "link", "show", ifname, ns=ns).stdout
        return json.loads(out)[0]["address"]

    def close(self):
        for n in reversed(self.names):
            sh("ip", "netns", "del", n, check=False)
        self.names = []


class EngineError(Exception):
    def __init__(self, resp):
        super().__init__("%s: %s" % (resp.get("error"), resp.get("message")))
        self.resp = resp


class Engine:
    """linerate-engine in a namespace, on af_packet ports over the given interfaces; lcores as EAL's -l
    takes them, or with @ as --lcores does (lcore@cpu: more lcores than this machine's 2 CPUs); vdevs: other
    virtual devices, as EAL's --vdev takes them, after the af_packet ports (e.g. a net_ring looped on itself)."""

    def __init__(self, ns, ifaces, tag="e", lcores="0,1", extra=(), qpairs=1, vdevs=()):
        self.dir = tempfile.mkdtemp(prefix="lrt-engine-")
        self.sock_path = os.path.join(self.dir, "ctl.sock")
        args = ["ip", "netns", "exec", ns, ENGINE, "--no-pci", "--no-huge", "-m", "256", "--no-shconf",
                "--file-prefix", "lrt%d%s" % (os.getpid(), tag), "--lcores" if "@" in lcores else "-l", lcores,
                "--log-level", "lib.eal:error"]
        for i, ifname in enumerate(ifaces):
            # qpairs > 1: the kernel fans the interface's frames out over that many sockets by flow hash
            # (an int for every port, or one per port)
            n = qpairs[i] if isinstance(qpairs, (list, tuple)) else qpairs
            args += ["--vdev", "net_af_packet%d,iface=%s,qpairs=%d,blocksz=4096,framesz=2048,framecnt=512" %
                     (i, ifname, n)]
        for v in vdevs:
            args += ["--vdev", v]
        args += ["--", "--control", self.sock_path, "--mbufs", "8191"] + list(extra)
        self.log = open(os.path.join(self.dir, "engine.log"), "w+")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while not os.path.exists(self.sock_path):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("engine did not start: " + self.logtext())
            time.sleep(0.05)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.sock_path)
        self.rfile = self.sock.makefile("r")

    def logtext(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def raw(self, line):
        self.sock.sendall((line + "\n").encode())
        return json.loads(self.rfile.readline())

    def cmd(self, line):
        r = self.raw(line)
        if not r.get("ok"):
            raise EngineError(r)
        return r

    def trial(self, streams, rates=None, unit="fps", **kw):
        args = ["TRIAL", "streams=" + ",".join(str(s) for s in streams)]
        if rates is not None:
            args.append("rates=" + ",".join(str(r) for r in rates))
            args.append("unit=" + unit)
        args += ["%s=%s" % (k, v) for k, v in kw.items()]
        self.cmd(" ".join(args))
        self.cmd("WAIT timeout_ms=600000")
        return self.cmd("RESULT")

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self.raw("QUIT")
                except OSError:
                    pass
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        finally:
            self.sock.close()
            self.log.close()
            subprocess.run(["rm", "-rf", self.dir])


INJECT = """
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
for line in sys.stdin:
    s.send(bytes.fromhex(line.strip()))
"""


class ThrottledThread:
    """One thread of a process held to a CPU quota (a cgroup v1 cpu group of its own, or a v2 one): the host
    running that thread late, the rest of the process free. The thread goes back to where it was, and the
    group is removed, on exit."""

    def __init__(self, pid, comm, quota_us, period_us):
        self.tid = None
        for t in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
                if f.read().strip() == comm:
                    self.tid = t
        if self.tid is None:
            raise RuntimeError("no thread %s in process %d" % (comm, pid))
        self.v2 = os.path.exists("/sys/fs/cgroup/cgroup.controllers")
        root = "/sys/fs/cgroup" if self.v2 else "/sys/fs/cgroup/cpu"
        with open("/proc/%s/cgroup" % self.tid) as f:
            for line in f:
                hid, ctrls, path = line.rstrip("\n").split(":", 2)
                if (self.v2 and hid == "0") or (not self.v2 and "cpu" in ctrls.split(",")):
                    self.home = root + path
        self.dir = "%s/lrt%d-throttle" % (root, os.getpid())
        self.quota, self.period = quota_us, period_us

    def _write(self, name, value):
        with open(os.path.join(self.dir, name), "w") as f:
            f.write(str(value))

    def __enter__(self):
        os.mkdir(self.dir)
        if self.v2:
            self._write("cgroup.type", "threaded")
            self._write("cpu.max", "%d %d" % (self.quota, self.period))
            self._write("cgroup.threads", self.tid)
        else:
            self._write("cpu.cfs_period_us", self.period)
            self._write("cpu.cfs_quota_us", self.quota)
            self._write("tasks", self.tid)
        return self

    def __exit__(self, *exc):
        try:
            with open(os.path.join(self.home, "cgroup.threads" if self.v2 else "tasks"), "w") as f:
                f.write(self.tid)
        except OSError:
            pass  # the thread ended
        os.rmdir(self.dir)


def inject(ns, ifname, frames):
    """Sends raw frames from inside the namespace, in order."""
    subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", INJECT, ifname],
                   input="\n".join(f.hex() for f in frames), text=True, check=True)  # frames/s: far below what af_packet through a namespace forwards (~200 kpps)
