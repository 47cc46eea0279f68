// bench/CuratorBench.java - scenarios 1, 3, 6 and 11 to 14 of zkl-bench
// for Curator 5.4 (Debian's libcurator-recipes-java): the uncontended
// InterProcessMutex cycle (S1), its handoffs with N contenders (S3), the
// LeaderLatch takeover (S6), counter compare-and-set increments with N
// contenders (S11), the multi-lock (S12), the semaphore (S13) and T threads
// on one client each cycling a mutex of its own path (S14), on the same
// server in the same run as zkl's, so that the report shows zkl/Curator
// ratios measured side by side.  zkl-bench compiles it at run time (javac,
// into a temporary directory) and runs it for its own scenario: right after
// it (S6, S11-S13), or taking turns with its runs (S1, S3, S14: with
// ZKL_BENCH_TURNS=B in the environment, before each unit of its work, a
// case's setup and warm-up, one run, each block of B cycles of S1 and S1's
// counted window, it prints "@zkl-turn" on stdout and waits for a line on
// stdin; see bench/peers.c):
//
//   java -cp ... CuratorBench cycle HOSTS ROOT ITERS CSV            (S1)
//   java -cp ... CuratorBench handoff HOSTS ROOT NS DURATION REPS CSV (S3)
//   java -cp ... CuratorBench election HOSTS ROOT ROUNDS CSV        (S6)
//   java -cp ... CuratorBench aggregate HOSTS ROOT THREADS DURATION REPS CSV
//                                                                    (S14)
// (what each measures: at cycleMain, handoffOnce, electionMain and
// aggregateMain below, and in docs/performance.md), and for S11-S13:
//
//   java -cp /usr/share/java/curator-recipes.jar:/usr/share/java/slf4j-nop.jar:DIR \
//       CuratorBench HOSTS ROOT CONTENDERS INCREMENTS REPS CAP_S CSV
//   java -cp ... CuratorBench multilock HOSTS ROOT CONTENDERS ACQUISITIONS \
//       REPS CAP_S KS CSV
//   java -cp ... CuratorBench semaphore HOSTS ROOT CONTENDERS GRANTS REPS \
//       CAP_S MAXES HOLD_MS CSV
//
// (curator-recipes.jar's manifest brings curator-framework, curator-client,
// guava, slf4j-api, zookeeper and zookeeper-jute, and zookeeper.jar's its
// netty, jackson, metrics...; slf4j-nop only silences slf4j's warning.)
//
// CONTENDERS threads, each with a CuratorFramework of its own and a
// DistributedAtomicInteger(client, path, new RetryNTimes(1000, 0)) (the
// optimistic mode: getData with its stat, then setData at that version, at
// once again on BadVersion), call increment() until CONTENDERS x INCREMENTS
// increments are done (a shared count of slots: all of them contend until
// the end) or CAP_S seconds passed; each AtomicValue must have succeeded().
// REPS runs, each on a node of its own made with 4 zero bytes (the format
// of zkl's ZKL_COUNTER_INT32), whose final value must be the number of
// increments done (anything else is a lost update: an error); before them
// one unmeasured run of at most WARM_INCREMENTS per contender, so that the
// JIT has compiled the paths measured.
//
// Rows go to CSV in zkl-bench's format (impl "curator"): increments/s (the
// median run), the per-increment latency (every increment of every run),
// fairness (fewest / most increments of a contender over the runs), the
// server's requests, reads, writes, fsyncs and bytes per increment (mntr,
// minus what sampling costs, as bench/server.c) and this process's CPU per
// increment, and the machine's (/proc/stat: every process, the server's
// too when it is local) busy CPU time and context switches per increment.
//
// S12 (the first argument "multilock"): for each K of KS (e.g. "2,8"),
// CONTENDERS threads, each with a CuratorFramework of its own and an
// InterProcessMultiLock(client, paths) over K paths (InterProcessMutex
// each), ALL in the same sorted order (in another order two of them can
// deadlock: it takes its mutexes one by one), loop acquire(60 s) /
// release() with a hold of ~0, until CONTENDERS x ACQUISITIONS
// acquisitions are done (a shared count of slots) or CAP_S seconds passed;
// REPS runs on fresh paths (made before the run), after one unmeasured
// warm-up run per K.  A per-path counter checks that no two hold a path at
// once (from the grant to the release call); after each run no node may be
// left under the paths.  Rows (impl "curator", case "K=<k> N=<n>"):
// acquisitions/s (the median run), acquire (the acquire() call) and
// handoff (from the previous holder's release() call, or this acquire() if
// later, to the grant) latencies, fairness, the server's work and this
// process's CPU per acquisition.
//
// S13 (the first argument "semaphore"): for each MAX of MAXES (e.g.
// "1,5,20"), CONTENDERS threads, each with a CuratorFramework of its own
// and an InterProcessSemaphoreV2(client, path, MAX) on the same path
// (<path>/locks and <path>/leases made before the run, as zkl-bench does
// for zkl's), loop acquire(60 s) / hold HOLD_MS (0: ~0) / returnLease()
// until CONTENDERS x GRANTS grants are done (a shared count of slots) or
// CAP_S seconds passed; REPS runs on fresh paths, after one unmeasured
// warm-up run per MAX.  A shared counter checks that never more than MAX
// hold at once (from the grant to the returnLease call); after each run
// locks/ and leases/ must be empty.  Rows (impl "curator", case "MAX=<m>
// N=<n>"): grants/s (the median run), acquire (the acquire() call)
// latency, peak holders, fairness, the server's work and this process's
// CPU per grant.
//
// Exit status 0, or 1 after "CuratorBench: error: ..." on
// stderr.  A watchdog halts the process if a run never ends.  The nodes
// stay: ROOT is zkl-bench's private tree, which it deletes at the end.
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicInteger;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.retry.RetryOneTime;

public class CuratorBench {
  static final List<String> errors = Collections.synchronizedList(new ArrayList<>());
  static final List<String> rows = new ArrayList<>();
  static final int WARM_INCREMENTS = 50; // per contender, before the runs

  // ---- the server's counters (as bench/server.c) ----------------------------

  static final String[][] KEYS = {
      {"requests", "zk_packets_received"}, {"bytes_in", "zk_bytes_received_count"},
      {"bytes_out", "zk_response_bytes"}, {"reads", "zk_cnt_readlatency"},
      {"writes", "zk_cnt_updatelatency"}, {"fsyncs", "zk_cnt_fsynctime"}};
  static String hosts;
  static Map<String, Double> overhead;

  static String fourLetters(String word) throws Exception {
    // ZKL_BENCH_SERVERS: the servers, when the clients connect to only some
    // of them (run-bench.sh's ensemble: the followers)
    String servers = System.getenv("ZKL_BENCH_SERVERS");
    if (servers == null || servers.isEmpty()) servers = hosts;
    String first = servers.split(",")[0].split("/")[0];
    int colon = first.lastIndexOf(':');
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(first.substring(0, colon),
                                      Integer.parseInt(first.substring(colon + 1))), 2000);
      s.setSoTimeout(2000);
      OutputStream out = s.getOutputStream();
      out.write(word.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      ByteArrayOutputStream buf = new ByteArrayOutputStream();
      byte[] b = new byte[65536];
      for (int r; (r = in.read(b)) > 0;) buf.write(b, 0, r);
      return buf.toString(StandardCharsets.UTF_8);
    }
  }

  static Map<String, Double> sample() throws Exception {
    Map<String, String> vals = new HashMap<>();
    for (String line : fourLetters("mntr").split("\n")) {
      int tab = line.indexOf('\t');
      if (tab > 0) vals.put(line.substring(0, tab), line.substring(tab + 1).trim());
    }
    fourLetters("srvr"); // the same cost per sample as zkl-bench's
    Map<String, Double> out = new HashMap<>();
    for (String[] k : KEYS) {
      String v = vals.get(k[1]);
      out.put(k[0], v == null ? Double.NaN : Double.parseDouble(v));
    }
    return out;
  }

  static Map<String, Double> delta(Map<String, Double> a, Map<String, Double> b,
                                   Map<String, Double> minus) {
    Map<String, Double> d = new HashMap<>();
    for (String k : a.keySet())
      d.put(k, b.get(k) - a.get(k) - (minus != null ? minus.get(k) : 0.0));
    return d;
  }

  // The smallest difference over a few back-to-back samples is what one
  // sample costs (a client's ping in between can only add).
  static void calibrate() throws Exception {
    Map<String, Double> a = sample();
    for (int i = 0; i < 4; i++) {
      Map<String, Double> b = sample();
      Map<String, Double> d = delta(a, b, null);
      if (overhead == null || d.get("requests") < overhead.get("requests")) overhead = d;
      a = b;
    }
    overhead.put("fsyncs", 0.0);
  }

  // ---- rows -------------------------------------------------------------------

  static String fmt(double x) {
    if (Double.isNaN(x)) return "";
    return String.format(Locale.ROOT, "%.6g", x);
  }

  static String scenario = "11";

  static void add(String kase, String metric, String unit, double median, double p99, long n) {
    rows.add(String.format(Locale.ROOT, ",m,%s,%s,curator,%s,%s,%s,%s,%d,,,", scenario, kase,
                           metric, unit, fmt(median), fmt(p99), n));
  }

  static double quantile(List<Double> v, double q) {
    if (v.isEmpty()) return Double.NaN;
    Collections.sort(v);
    int rank = (int) Math.ceil(q * v.size());
    rank = Math.max(1, Math.min(v.size(), rank));
    return v.get(rank - 1);
  }

  static double cpuNs() {
    java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.OperatingSystemMXBean)
      return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
    return Double.NaN;
  }

  // The whole machine's busy CPU time (µs, every process: the server's too
  // when it is local) and context switches so far, from /proc/stat; null
  // when unknown (as sc-counter.c's host_sample()).
  static double[] host() {
    double busy = Double.NaN, ctxt = Double.NaN;
    try {
      for (String line : java.nio.file.Files.readAllLines(java.nio.file.Paths.get("/proc/stat"))) {
        String[] f = line.trim().split("\\s+");
        if (f[0].equals("cpu") && f.length >= 9) {
          long b = 0;
          for (int i : new int[] {1, 2, 3, 6, 7}) b += Long.parseLong(f[i]);
          busy = b * 1e6 / 100; // USER_HZ: 100 on Linux
        } else if (f[0].equals("ctxt")) {
          ctxt = Double.parseDouble(f[1]);
        }
      }
    } catch (Exception e) {
      return null;
    }
    return Double.isNaN(busy) || Double.isNaN(ctxt) ? null : new double[] {busy, ctxt};
  }

  // ---- the run ----------------------------------------------------------------

  // A mode's arguments a: as many as the words of `usage` but the first
  // (else the usage on stderr, false); the scenario and the hosts set.
  static boolean start(String[] a, String sc, String usage) {
    if (a.length != usage.split(" ").length - 1) {
      System.err.println("usage: CuratorBench " + usage);
      return false;
    }
    scenario = sc;
    hosts = a[0];
    return true;
  }

  // Taking turns with zkl-bench (S1, S3, S14): S1's cycles per turn, 0
  // when not.
  static final int TURN_BLOCK = turnBlock();
  static BufferedReader turnIn;

  static int turnBlock() {
    String v = System.getenv("ZKL_BENCH_TURNS");
    return v == null || v.isEmpty() ? 0 : Integer.parseInt(v);
  }

  // Time spent waiting for our turns (ns), and when the wait underway
  // began (0: none): the watchdog does not count them (zkl-bench bounds
  // each unit of our work, and ends us by closing our stdin).
  static final AtomicLong turnWaitNs = new AtomicLong();
  static volatile long turnSince;

  // Waits for zkl-bench to give us our turn.
  static void turn() throws Exception {
    if (TURN_BLOCK == 0) return;
    System.out.println("@zkl-turn");
    System.out.flush();
    if (turnIn == null)
      turnIn = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    long t0 = System.nanoTime();
    turnSince = t0;
    String line = turnIn.readLine();
    turnSince = 0;
    turnWaitNs.addAndGet(System.nanoTime() - t0);
    if (line == null) throw new Exception("zkl-bench ended the turns");
  }

  // Halts the process if the run is not over after `ms` milliseconds of
  // its own (the waits for our turns not counted).
  static void watchdog(long ms) {
    long start = System.nanoTime();
    Thread t = new Thread(() -> {
      for (;;) {
        long now = System.nanoTime(), since = turnSince;
        long waited = turnWaitNs.get() + (since != 0 ? now - since : 0);
        long left = start + ms * 1000000L + waited - now;
        if (left <= 0) break;
        try {
          Thread.sleep(Math.min(1000, left / 1000000L + 1));
        } catch (InterruptedException e) {
          return;
        }
      }
      System.err.println("CuratorBench: error: watchdog: a run did not end");
      Runtime.getRuntime().halt(1);
    });
    t.setDaemon(true);
    t.start();
  }

  // Writes the rows to csv, the errors to stderr: the exit status.
  static int finish(String csv) throws Exception {
    try (PrintWriter w = new PrintWriter(csv, StandardCharsets.UTF_8)) {
      w.println("config,kind,scenario,case,impl,metric,unit,median,p99,n,ratio,limit,verdict");
      for (String r : rows) w.println(r);
    }
    for (String e : errors) System.err.println("CuratorBench: error: " + e);
    return errors.isEmpty() ? 0 : 1;
  }

  // The server's work (a delta of sample()s) and this process's CPU (ns)
  // per operation `per` of `done` operations, as zkl-bench's srv_report().
  static void addServer(String kase, String per, Map<String, Double> srv, double cpuNs,
                        long done) {
    if (done <= 0) return;
    if (srv != null) {
      add(kase, "requests/" + per, "", srv.get("requests") / done, Double.NaN, done);
      add(kase, "reads/" + per, "", srv.get("reads") / done, Double.NaN, done);
      add(kase, "writes/" + per, "", srv.get("writes") / done, Double.NaN, done);
      if (!Double.isNaN(srv.get("fsyncs")))
        add(kase, "fsyncs/" + per, "", srv.get("fsyncs") / done, Double.NaN, done);
      add(kase, "bytes/" + per, "B", (srv.get("bytes_in") + srv.get("bytes_out")) / done,
          Double.NaN, done);
    }
    if (!Double.isNaN(cpuNs)) add(kase, "cpu/" + per, "us", cpuNs / 1e3 / done, Double.NaN, done);
  }

  static Map<String, Double> sum(Map<String, Double> a, Map<String, Double> b) {
    if (a == null) return b;
    for (String k : b.keySet()) a.put(k, a.get(k) + b.get(k));
    return a;
  }

  static CuratorFramework client() throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.newClient(hosts, 10000, 10000,
                                                           new RetryOneTime(200));
    c.start();
    if (!c.blockUntilConnected(15, TimeUnit.SECONDS)) {
      c.close();
      throw new Exception("no connection to " + hosts);
    }
    return c;
  }

  static int decode(byte[] b) {
    if (b == null || b.length != 4) return Integer.MIN_VALUE;
    return ByteBuffer.wrap(b).getInt();
  }

  // What one run did.
  // n contender threads on clients of their own, let go together: each runs
  // op.once(me) in a loop until `total` operations are done over all of
  // them, op.once() says false (an error, recorded), or capS passed (then
  // each stops after its operation); the window's server work and this
  // process's and the machine's CPU are taken around it.  S11-S13's runs.
  interface Op {
    boolean once(int me) throws Exception;
  }

  interface Mode {
    int main(String[] a) throws Exception;
  }

  static class Crew {
    long done;                // operations done
    long[] per;               // of each contender
    double rate;              // operations per second
    Map<String, Double> srv;  // the server's work
    double cpuNs;             // this process's CPU time
    double[] host;            // the machine's busy µs and context switches
    final AtomicBoolean stop = new AtomicBoolean(); // set at the cap
    long t0, tStop;           // when let go; when stop was set (0: never)

    // A timed run (S3, S14): the contenders loop until stop, set after
    // durationS; each stops after its operation.
    void runFor(int n, double durationS, String what, Op op) throws Exception {
      run(n, Long.MAX_VALUE, durationS, what, null, op);
    }

    void run(int n, long total, double capS, String what, String noun, Op op)
        throws Exception {
      per = new long[n];
      long[] end = new long[n];
      Thread[] threads = new Thread[n];
      AtomicLong claimed = new AtomicLong();
      CyclicBarrier start = new CyclicBarrier(n + 1);
      for (int i = 0; i < n; i++) {
        final int me = i;
        threads[i] = new Thread(() -> {
          try {
            start.await();
            while (!stop.get() && claimed.getAndIncrement() < total) {
              if (!op.once(me)) break;
              per[me]++;
            }
          } catch (Exception e) {
            errors.add(what + ": " + e);
          }
          end[me] = System.nanoTime();
        });
        threads[i].start();
      }
      Map<String, Double> s0 = sample();
      double[] h0 = host();
      double c0 = cpuNs();
      start.await(60, TimeUnit.SECONDS);
      t0 = System.nanoTime();
      long deadline = t0 + (long) (capS * 1e9);
      for (Thread t : threads) {
        long left = deadline - System.nanoTime();
        if (left > 0) t.join(left / 1000000, (int) (left % 1000000));
        if (t.isAlive()) {
          tStop = System.nanoTime();
          stop.set(true); // each stops after its operation
          break;
        }
      }
      for (Thread t : threads) t.join();
      cpuNs = cpuNs() - c0;
      double[] h1 = host();
      if (h0 != null && h1 != null) host = new double[] {h1[0] - h0[0], h1[1] - h0[1]};
      srv = delta(s0, sample(), overhead);
      long tEnd = t0;
      for (int i = 0; i < n; i++) {
        done += per[i];
        tEnd = Math.max(tEnd, end[i]);
      }
      rate = tEnd > t0 ? done * 1e9 / (tEnd - t0) : Double.NaN;
      if (noun != null && done < total)
        System.err.printf("CuratorBench: %s: a run stopped after %.0f s with %d of %d %s%n",
                          what, capS, done, total, noun);
    }
  }

  static class Run extends Crew {
    List<Double> lat = Collections.synchronizedList(new ArrayList<>());
  }

  // n contenders, each on a client of its own, increment the node at path
  // (made with 4 zero bytes) until total increments are done or capS
  // passed; then the node must hold what they did.
  static Run once(CuratorFramework admin, String path, int n, long total, double capS)
      throws Exception {
    admin.create().creatingParentsIfNeeded().forPath(path, new byte[4]);
    Run r = new Run();
    CuratorFramework[] clients = new CuratorFramework[n];
    DistributedAtomicInteger[] dai = new DistributedAtomicInteger[n];
    try {
      for (int i = 0; i < n; i++) {
        clients[i] = client();
        dai[i] = new DistributedAtomicInteger(clients[i], path, new RetryNTimes(1000, 0));
        if (!dai[i].get().succeeded()) throw new Exception("a first get failed");
      }
      r.run(n, total, capS, "S11", "increments", me -> {
        long t0 = System.nanoTime();
        AtomicValue<Integer> v = dai[me].increment();
        long t1 = System.nanoTime();
        if (!v.succeeded()) {
          errors.add("increment() did not succeed in 1000 tries");
          return false;
        }
        r.lat.add((t1 - t0) / 1e3);
        return true;
      });
      int value = decode(admin.getData().forPath(path));
      if (value != r.done)
        errors.add(String.format("%s holds %d after %d increments: a lost update", path,
                                 value, r.done));
      return r;
    } finally {
      for (CuratorFramework c : clients)
        if (c != null) c.close();
    }
  }

  // ---- S12: the multi-lock ------------------------------------------------------

  static final long LOCK_TIMEOUT_S = 60; // an acquire() never waits longer
  static final int WARM_ACQUISITIONS = 10; // per contender, per K, before the runs

  // What one S12 run did.
  static class MlRun extends Crew {
    List<Double> acq = Collections.synchronizedList(new ArrayList<>());
    List<Double> hand = Collections.synchronizedList(new ArrayList<>());
  }

  // n contenders, each on a client of its own with an InterProcessMultiLock
  // over the k paths under dir (made first), in the same sorted order,
  // loop acquire/release until total acquisitions are done or capS passed.
  static MlRun mlOnce(CuratorFramework admin, String dir, int n, int k, long total, double capS)
      throws Exception {
    List<String> paths = new ArrayList<>();
    for (int i = 0; i < k; i++) {
      String p = dir + "/p" + i;
      admin.create().creatingParentsIfNeeded().forPath(p);
      paths.add(p);
    }
    Collections.sort(paths); // the same order for every contender
    MlRun r = new MlRun();
    CuratorFramework[] clients = new CuratorFramework[n];
    InterProcessMultiLock[] locks = new InterProcessMultiLock[n];
    AtomicIntegerArray holders = new AtomicIntegerArray(k);
    AtomicLong violations = new AtomicLong();
    AtomicBoolean released = new AtomicBoolean(); // lastRelease is set
    AtomicLong lastRelease = new AtomicLong();
    try {
      for (int i = 0; i < n; i++) {
        clients[i] = client();
        locks[i] = new InterProcessMultiLock(clients[i], paths);
      }
      r.run(n, total, capS, "S12 K=" + k, "acquisitions", me -> {
        long t0 = System.nanoTime();
        if (!locks[me].acquire(LOCK_TIMEOUT_S, TimeUnit.SECONDS)) {
          errors.add("S12 K=" + k + ": acquire() timed out");
          return false;
        }
        long t1 = System.nanoTime();
        for (int j = 0; j < k; j++)
          if (holders.getAndIncrement(j) != 0) violations.incrementAndGet();
        boolean had = released.get();
        long prev = lastRelease.get();
        r.acq.add((t1 - t0) / 1e3);
        if (had) r.hand.add((t1 - Math.max(prev, t0)) / 1e3);
        for (int j = 0; j < k; j++) holders.decrementAndGet(j);
        lastRelease.set(System.nanoTime());
        released.set(true);
        locks[me].release();
        return true;
      });
      if (violations.get() != 0)
        errors.add(String.format("S12 K=%d: two holders of one path at once %d times", k,
                                 violations.get()));
      // nothing left (the sessions still open: an ephemeral node left
      // behind would still be there)
      for (String p : paths) {
        int left = admin.getChildren().forPath(p).size();
        if (left != 0)
          errors.add(String.format("S12 K=%d: %d node(s) left under %s", k, left, p));
      }
      return r;
    } finally {
      for (CuratorFramework c : clients)
        if (c != null) c.close();
    }
  }

  static int multilockMain(String[] a) throws Exception {
    if (a.length != 8) {
      System.err.println("usage: CuratorBench multilock HOSTS ROOT CONTENDERS ACQUISITIONS "
                         + "REPS CAP_S KS CSV");
      return 2;
    }
    scenario = "12";
    hosts = a[0];
    String root = a[1];
    int n = Integer.parseInt(a[2]);
    int acqs = Integer.parseInt(a[3]);
    int reps = Integer.parseInt(a[4]);
    double capS = Double.parseDouble(a[5]);
    String[] ks = a[6].split(",");
    String csv = a[7];

    watchdog((long) ((capS + 60) * (reps + 1) * ks.length * 1000) + 60000);

    calibrate();
    CuratorFramework admin = client();
    try {
      for (String kk : ks) {
        if (!errors.isEmpty()) break;
        int k = Integer.parseInt(kk);
        String kase = "K=" + k + " N=" + n;
        List<Double> rates = new ArrayList<>(), acq = new ArrayList<>(),
            hand = new ArrayList<>();
        long[] per = new long[n];
        long done = 0;
        Map<String, Double> srv = null;
        double cpu = 0;
        // warm, unmeasured: the JIT compiles the client's and Curator's paths
        mlOnce(admin, root + "/s12-curator-k" + k + "-warm", n, k,
               (long) n * Math.min(acqs, WARM_ACQUISITIONS), capS);
        for (int rep = 0; rep < reps && errors.isEmpty(); rep++) {
          MlRun r = mlOnce(admin, root + "/s12-curator-k" + k + "-" + rep, n, k,
                           (long) n * acqs, capS);
          rates.add(r.rate);
          acq.addAll(r.acq);
          hand.addAll(r.hand);
          for (int i = 0; i < n; i++) per[i] += r.per[i];
          done += r.done;
          cpu += r.cpuNs;
          srv = sum(srv, r.srv);
        }
        if (done > 0) {
          add(kase, "acquisitions/s", "1/s", quantile(rates, 0.5), Double.NaN, done);
          add(kase, "acquire", "us", quantile(acq, 0.5), quantile(acq, 0.99), acq.size());
          add(kase, "handoff", "us", quantile(hand, 0.5), quantile(hand, 0.99), hand.size());
          long lo = Long.MAX_VALUE, hi = 0;
          for (long p : per) {
            lo = Math.min(lo, p);
            hi = Math.max(hi, p);
          }
          add(kase, "fairness", "", hi > 0 ? (double) lo / hi : Double.NaN, Double.NaN, n);
          addServer(kase, "acq", srv, cpu, done);
        }
        System.err.println("  S12 curator " + kase + " done");
      }
    } catch (Exception e) {
      errors.add(e.toString());
    } finally {
      admin.close();
    }
    return finish(csv);
  }

  // ---- S13: the semaphore ----------------------------------------------------------

  static final int WARM_GRANTS = 10; // per contender, per MAX, before the runs

  // What one S13 run did.
  static class SemRun extends Crew {
    int peak;
    List<Double> acq = Collections.synchronizedList(new ArrayList<>());
  }

  // n contenders, each on a client of its own with an
  // InterProcessSemaphoreV2(client, path, max), loop acquire / hold /
  // returnLease until total grants are done or capS passed.
  static SemRun semOnce(CuratorFramework admin, String path, int n, int max, long holdMs,
                        long total, double capS) throws Exception {
    admin.create().creatingParentsIfNeeded().forPath(path + "/locks");
    admin.create().creatingParentsIfNeeded().forPath(path + "/leases");
    SemRun r = new SemRun();
    CuratorFramework[] clients = new CuratorFramework[n];
    InterProcessSemaphoreV2[] sems = new InterProcessSemaphoreV2[n];
    AtomicInteger holders = new AtomicInteger();
    AtomicInteger peak = new AtomicInteger();
    AtomicLong violations = new AtomicLong();
    try {
      for (int i = 0; i < n; i++) {
        clients[i] = client();
        sems[i] = new InterProcessSemaphoreV2(clients[i], path, max);
      }
      r.run(n, total, capS, "S13 MAX=" + max, "grants", me -> {
        long t0 = System.nanoTime();
        Lease lease = sems[me].acquire(LOCK_TIMEOUT_S, TimeUnit.SECONDS);
        if (lease == null) {
          errors.add("S13 MAX=" + max + ": acquire() timed out");
          return false;
        }
        long t1 = System.nanoTime();
        int h = holders.incrementAndGet();
        if (h > max) violations.incrementAndGet();
        peak.accumulateAndGet(h, Math::max);
        r.acq.add((t1 - t0) / 1e3);
        if (holdMs > 0) Thread.sleep(holdMs);
        holders.decrementAndGet();
        sems[me].returnLease(lease);
        return true;
      });
      r.peak = peak.get();
      if (violations.get() != 0)
        errors.add(String.format("S13 MAX=%d: more than MAX holders at once %d times "
                                 + "(peak %d)", max, violations.get(), r.peak));
      // nothing left (the sessions still open: an ephemeral node left
      // behind would still be there)
      for (String p : new String[] {path + "/locks", path + "/leases"}) {
        int left = admin.getChildren().forPath(p).size();
        if (left != 0)
          errors.add(String.format("S13 MAX=%d: %d node(s) left under %s", max, left, p));
      }
      return r;
    } finally {
      for (CuratorFramework c : clients)
        if (c != null) c.close();
    }
  }

  static int semaphoreMain(String[] a) throws Exception {
    if (a.length != 9) {
      System.err.println("usage: CuratorBench semaphore HOSTS ROOT CONTENDERS GRANTS REPS "
                         + "CAP_S MAXES HOLD_MS CSV");
      return 2;
    }
    scenario = "13";
    hosts = a[0];
    String root = a[1];
    int n = Integer.parseInt(a[2]);
    int grants = Integer.parseInt(a[3]);
    int reps = Integer.parseInt(a[4]);
    double capS = Double.parseDouble(a[5]);
    String[] maxes = a[6].split(",");
    long holdMs = Long.parseLong(a[7]);
    String csv = a[8];

    watchdog((long) ((capS + 60) * (reps + 1) * maxes.length * 1000) + 60000);

    calibrate();
    CuratorFramework admin = client();
    try {
      for (String mm : maxes) {
        if (!errors.isEmpty()) break;
        int max = Integer.parseInt(mm);
        String kase = "MAX=" + max + " N=" + n;
        List<Double> rates = new ArrayList<>(), acq = new ArrayList<>();
        long[] per = new long[n];
        long done = 0;
        int peak = 0;
        Map<String, Double> srv = null;
        double cpu = 0;
        // warm, unmeasured: the JIT compiles the client's and Curator's paths
        semOnce(admin, root + "/s13-curator-m" + max + "-warm", n, max, holdMs,
                (long) n * Math.min(grants, WARM_GRANTS), capS);
        for (int rep = 0; rep < reps && errors.isEmpty(); rep++) {
          SemRun r = semOnce(admin, root + "/s13-curator-m" + max + "-" + rep, n, max, holdMs,
                             (long) n * grants, capS);
          rates.add(r.rate);
          acq.addAll(r.acq);
          for (int i = 0; i < n; i++) per[i] += r.per[i];
          done += r.done;
          cpu += r.cpuNs;
          peak = Math.max(peak, r.peak);
          srv = sum(srv, r.srv);
        }
        if (done > 0) {
          add(kase, "grants/s", "1/s", quantile(rates, 0.5), Double.NaN, done);
          add(kase, "acquire", "us", quantile(acq, 0.5), quantile(acq, 0.99), acq.size());
          add(kase, "peak holders", "", peak, Double.NaN, rates.size());
          long lo = Long.MAX_VALUE, hi = 0;
          for (long p : per) {
            lo = Math.min(lo, p);
            hi = Math.max(hi, p);
          }
          add(kase, "fairness", "", hi > 0 ? (double) lo / hi : Double.NaN, Double.NaN, n);
          addServer(kase, "grant", srv, cpu, done);
        }
        System.err.println("  S13 curator " + kase + " done");
      }
    } catch (Exception e) {
      errors.add(e.toString());
    } finally {
      admin.close();
    }
    return finish(csv);
  }

  // ---- S1, S3, S6, S14: the mutex and the election -----------------------------

  static final int WARM_CYCLES = 200; // S1, S14: unmeasured, for the JIT
  static final double WARM_S = 0.5;   // S3: one unmeasured run per N

  static void lockCycle(InterProcessMutex m) throws Exception {
    if (!m.acquire(LOCK_TIMEOUT_S, TimeUnit.SECONDS)) throw new Exception("acquire() timed out");
    m.release();
  }

  // S1: one client alone, acquire + release of an InterProcessMutex, ITERS
  // times (the latency of each), as zkl-bench's S1 cycle; then the
  // server's work and this process's CPU over min(ITERS, COUNT_OPS) more.
  static final int COUNT_OPS = 500; // sc-cycle.c's counted window
  static int cycleMain(String[] a) throws Exception {
    if (!start(a, "1", "cycle HOSTS ROOT ITERS CSV")) return 2;
    int iters = Integer.parseInt(a[2]);
    watchdog(600000);
    calibrate();
    CuratorFramework c = client();
    try {
      InterProcessMutex m = new InterProcessMutex(c, a[1] + "/s1-curator");
      turn();
      for (int i = 0; i < Math.max(20, Math.min(iters, WARM_CYCLES)); i++) lockCycle(m);
      List<Double> lat = new ArrayList<>();
      int block = TURN_BLOCK > 0 ? TURN_BLOCK : Math.max(iters, 1);
      for (int done = 0; done < iters; done += block) {
        turn();
        for (int i = 0; i < Math.min(block, iters - done); i++) {
          long t0 = System.nanoTime();
          lockCycle(m);
          lat.add((System.nanoTime() - t0) / 1e3);
        }
      }
      add("cycle", "latency", "us", quantile(lat, 0.5), quantile(lat, 0.99), lat.size());
      int k = Math.min(iters, COUNT_OPS);
      turn();
      Map<String, Double> s0 = sample();
      double c0 = cpuNs();
      for (int i = 0; i < k; i++) lockCycle(m);
      double cpu = cpuNs() - c0;
      addServer("cycle", "op", delta(s0, sample(), overhead), cpu, k);
    } catch (Exception e) {
      errors.add("S1: " + e);
    } finally {
      c.close();
    }
    return finish(a[3]);
  }

  // What the timed runs of one case add up to (S3, S14).
  static class Tally {
    List<Double> rates = new ArrayList<>();
    List<Double> lat = Collections.synchronizedList(new ArrayList<>());
    long[] per;               // counted operations of each contender
    long total;               // every operation, the drain after the stop too
    Map<String, Double> srv;
    double cpu;

    Tally(int n) {
      per = new long[n];
    }

    // A run r whose contenders counted counted[i] operations at `rate`.
    void add(Crew r, long[] counted, double rate) {
      for (int i = 0; i < per.length; i++) per[i] += counted[i];
      rates.add(rate);
      total += r.done;
      srv = sum(srv, r.srv);
      cpu += r.cpuNs;
    }

    // Rows: `rate` (the median run), `op` latency, fairness, the server's
    // work and CPU per op.
    void report(String kase, String rate, String op) {
      if (rates.isEmpty()) return;
      long done = 0, lo = Long.MAX_VALUE, hi = 0;
      for (long p : per) {
        done += p;
        lo = Math.min(lo, p);
        hi = Math.max(hi, p);
      }
      CuratorBench.add(kase, rate, "1/s", quantile(rates, 0.5), Double.NaN, done);
      CuratorBench.add(kase, op, "us", quantile(lat, 0.5), quantile(lat, 0.99), lat.size());
      CuratorBench.add(kase, "fairness", "", hi > 0 ? (double) lo / hi : Double.NaN, Double.NaN,
                       per.length);
      addServer(kase, op, srv, cpu, total);
    }
  }

  interface Case {
    void run(String root, int n, double durationS, int reps, Tally t) throws Exception;
  }

  // MODE HOSTS ROOT LIST DURATION REPS CSV: for each n of LIST, c.run()
  // fills a Tally, reported as case "<letter>=<n>".
  static int timedMain(String[] a, String sc, String usage, String letter, String rate,
                       String op, Case c) throws Exception {
    if (!start(a, sc, usage + " HOSTS ROOT " + letter + "S DURATION REPS CSV")) return 2;
    String[] ns = a[2].split(",");
    double durationS = Double.parseDouble(a[3]);
    int reps = Integer.parseInt(a[4]);
    watchdog((long) (((durationS + LOCK_TIMEOUT_S) * (reps + 1) + 60) * ns.length * 1000)
             + 60000);
    calibrate();
    for (String nn : ns) {
      if (!errors.isEmpty()) break;
      int n = Integer.parseInt(nn);
      String kase = letter + "=" + n;
      Tally t = new Tally(n);
      try {
        c.run(a[1], n, durationS, reps, t);
      } catch (Exception e) {
        errors.add("S" + sc + " " + kase + ": " + e);
      }
      t.report(kase, rate, op);
      System.err.println("  S" + sc + " curator " + kase + " done");
    }
    return finish(a[5]);
  }

  // S3: n contenders, each a client (a session) of its own with an
  // InterProcessMutex on ONE path, loop acquire / release for durationS,
  // as sc-handoff.c's: a handoff counts when granted before the stop; its
  // latency runs from the previous holder's release() call to this
  // acquire()'s return; the rate is the handoffs counted over the time to
  // the stop.  A shared counter checks that no two hold at once.
  static void handoffOnce(InterProcessMutex[] locks, double durationS, Tally h)
      throws Exception {
    int n = locks.length;
    Crew r = new Crew();
    long[] counted = new long[n];
    List<Double> lat = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger holders = new AtomicInteger();
    AtomicLong violations = new AtomicLong(), lastRelease = new AtomicLong();
    r.runFor(n, durationS, "S3 N=" + n, me -> {
      if (!locks[me].acquire(LOCK_TIMEOUT_S, TimeUnit.SECONDS)) {
        errors.add("S3 N=" + n + ": acquire() timed out");
        return false;
      }
      long tAcq = System.nanoTime();
      boolean stopped = r.stop.get();
      if (holders.getAndIncrement() != 0) violations.incrementAndGet();
      long prev = lastRelease.get();
      if (!stopped && prev != 0) lat.add((tAcq - prev) / 1e3);
      holders.decrementAndGet();
      lastRelease.set(System.nanoTime());
      if (!stopped) counted[me]++;
      locks[me].release();
      return true;
    });
    if (violations.get() != 0)
      errors.add("S3 N=" + n + ": two holders at once " + violations.get() + " times");
    if (h == null) return; // the warm-up
    long sum = 0;
    for (long x : counted) sum += x;
    long tStop = r.tStop != 0 ? r.tStop : System.nanoTime();
    h.add(r, counted, sum * 1e9 / (tStop - r.t0));
    h.lat.addAll(lat);
  }

  static int handoffMain(String[] a) throws Exception {
    return timedMain(a, "3", "handoff", "N", "handoffs/s", "handoff",
                     (root, n, durationS, reps, h) -> {
      // warm, unmeasured: the JIT compiles the client's and Curator's paths
      turn(); // the case's warm-up
      handoffClients(root, n, locks -> handoffOnce(locks, Math.min(durationS, WARM_S), null));
      for (int rep = 0; rep < reps && errors.isEmpty(); rep++) {
        turn();
        handoffClients(root, n, locks -> handoffOnce(locks, durationS, h));
      }
    });
  }

  interface LocksBody {
    void run(InterProcessMutex[] locks) throws Exception;
  }

  // n clients (a session each), each an InterProcessMutex on the case's
  // path, for one run of body, closed after it: their sessions are open
  // only in our turn (as the floor's and zkl's only in theirs), so that
  // their pings never weigh on the others' runs.
  static void handoffClients(String root, int n, LocksBody body) throws Exception {
    CuratorFramework[] clients = new CuratorFramework[n];
    InterProcessMutex[] locks = new InterProcessMutex[n];
    try {
      for (int i = 0; i < n; i++) {
        clients[i] = client();
        locks[i] = new InterProcessMutex(clients[i], root + "/s3-curator-" + n);
      }
      body.run(locks);
    } finally {
      for (CuratorFramework c : clients)
        if (c != null) c.close();
    }
  }

  // S6: three LeaderLatches, each on a client of its own, on one path; the
  // leader close()s its latch (and a new latch of its client stands again,
  // at the back: a closed LeaderLatch cannot start again); the time from
  // the close() call to the next latch's isLeader(), as sc-election.c's
  // resign rounds, each once the successor watches the leader's node (wchp).
  static final int CANDIDATES = 3;
  static final long WAIT_MS = 10000;

  // How many sessions other than `except` watch `path` (wchp), as
  // bench/server.c's srv_watchers().
  static int watchers(String path, long except) throws Exception {
    int n = 0;
    boolean in = false;
    for (String line : fourLetters("wchp").split("\n")) {
      if (line.startsWith("/")) in = line.equals(path);
      else if (in && line.startsWith("\t")
               && Long.parseUnsignedLong(line.trim().replaceFirst("^0x", ""), 16) != except)
        n++;
    }
    return n;
  }

  static int electionMain(String[] a) throws Exception {
    if (!start(a, "6", "election HOSTS ROOT ROUNDS CSV")) return 2;
    String path = a[1] + "/s6-curator";
    int rounds = Integer.parseInt(a[2]);
    watchdog((rounds + 1) * (3 * WAIT_MS) + 60000);
    calibrate();
    CuratorFramework[] clients = new CuratorFramework[CANDIDATES];
    LeaderLatch[] latches = new LeaderLatch[CANDIDATES];
    Object mu = new Object();
    long[] elected = {0, 0}; // when the last isLeader() came; how many so far
    List<Double> lat = new ArrayList<>();
    Map<String, Double> srv = null;
    try {
      for (int i = 0; i < CANDIDATES; i++) clients[i] = client();
      for (int i = 0; i < CANDIDATES; i++) latches[i] = latch(clients[i], path, i, mu, elected);
      for (int r = 0; r < rounds && errors.isEmpty(); r++) {
        int l = -1;
        long deadline = System.nanoTime() + WAIT_MS * 1000000;
        while (l < 0 && System.nanoTime() < deadline) {
          for (int i = 0; i < CANDIDATES; i++)
            if (latches[i].hasLeadership()) l = i;
          if (l < 0) Thread.sleep(1);
        }
        if (l < 0) throw new Exception("no leader");
        // the successor queued and waiting: the leader's node watched
        String node = latches[l].getOurPath();
        long sid = clients[l].getZookeeperClient().getZooKeeper().getSessionId();
        while (watchers(node, sid) == 0) {
          if (System.nanoTime() > deadline) throw new Exception("nobody watched the leader");
          Thread.sleep(1);
        }
        long seen;
        synchronized (mu) {
          seen = elected[1];
        }
        Map<String, Double> s0 = sample();
        long t0 = System.nanoTime();
        latches[l].close();
        long t1;
        synchronized (mu) {
          while (elected[1] == seen && System.nanoTime() < deadline) mu.wait(10);
          if (elected[1] == seen) throw new Exception("nobody took over after a close()");
          t1 = elected[0];
        }
        lat.add((t1 - t0) / 1e3);
        srv = sum(srv, delta(s0, sample(), overhead));
        latches[l] = latch(clients[l], path, l, mu, elected); // at the back
      }
    } catch (Exception e) {
      errors.add("S6: " + e);
    } finally {
      for (LeaderLatch l : latches)
        if (l != null && l.getState() == LeaderLatch.State.STARTED) l.close();
      for (CuratorFramework c : clients)
        if (c != null) c.close();
    }
    if (!lat.isEmpty()) {
      add("resign", "takeover", "us", quantile(lat, 0.5), quantile(lat, 0.99), lat.size());
      addServer("resign", "takeover", srv, Double.NaN, lat.size());
    }
    return finish(a[3]);
  }

  static LeaderLatch latch(CuratorFramework c, String path, int idx, Object mu, long[] elected)
      throws Exception {
    LeaderLatch l = new LeaderLatch(c, path, "curator-bench-" + idx);
    l.addListener(new LeaderLatchListener() {
      public void isLeader() {
        long t = System.nanoTime();
        synchronized (mu) {
          elected[0] = t;
          elected[1]++;
          mu.notifyAll();
        }
      }

      public void notLeader() {}
    });
    l.start();
    return l;
  }

  // S14: T threads on ONE client, each an InterProcessMutex on a path of
  // its own (nobody contends), acquire / release for DURATION seconds, as
  // sc-aggregate.c's: the cycles of all threads over the time to the last
  // one's stop (each finishes the cycle it is in), REPS runs (the median
  // run's rate), after one unmeasured warm-up of WARM_CYCLES per thread.
  static int aggregateMain(String[] a) throws Exception {
    return timedMain(a, "14", "aggregate", "T", "cycles/s", "cycle",
                     (root, t, durationS, reps, tl) -> {
      turn(); // the case's setup and warm-up
      CuratorFramework c = client();
      try {
        InterProcessMutex[] locks = new InterProcessMutex[t];
        for (int i = 0; i < t; i++) locks[i] = new InterProcessMutex(c, root + "/s14-curator/" + i);
        Crew warm = new Crew();
        warm.run(t, (long) t * WARM_CYCLES, LOCK_TIMEOUT_S, "S14 T=" + t, "cycles",
                 me -> {
                   lockCycle(locks[me]);
                   return true;
                 });
        for (int rep = 0; rep < reps && errors.isEmpty(); rep++) {
          turn();
          Crew r = new Crew();
          r.runFor(t, durationS, "S14 T=" + t, me -> {
            long t0 = System.nanoTime();
            lockCycle(locks[me]);
            tl.lat.add((System.nanoTime() - t0) / 1e3);
            return true;
          });
          tl.add(r, r.per, r.rate);
        }
      } finally {
        c.close();
      }
    });
  }

  public static void main(String[] a) throws Exception {
    Map<String, Mode> modes = Map.of("multilock", CuratorBench::multilockMain,
                                     "semaphore", CuratorBench::semaphoreMain,
                                     "cycle", CuratorBench::cycleMain,
                                     "handoff", CuratorBench::handoffMain,
                                     "election", CuratorBench::electionMain,
                                     "aggregate", CuratorBench::aggregateMain);
    if (a.length > 0 && modes.containsKey(a[0]))
      System.exit(modes.get(a[0]).main(Arrays.copyOfRange(a, 1, a.length)));
    if (a.length != 7) {
      System.err.println("usage: CuratorBench HOSTS ROOT CONTENDERS INCREMENTS REPS CAP_S CSV");
      System.exit(2);
    }
    hosts = a[0];
    String root = a[1];
    int n = Integer.parseInt(a[2]);
    int incs = Integer.parseInt(a[3]);
    int reps = Integer.parseInt(a[4]);
    double capS = Double.parseDouble(a[5]);
    String csv = a[6];
    String kase = "N=" + n;

    watchdog((long) ((capS + 60) * (reps + 1) * 1000) + 60000);

    calibrate();
    CuratorFramework admin = client();
    List<Double> rates = new ArrayList<>(), lat = new ArrayList<>();
    long[] per = new long[n];
    long done = 0;
    Map<String, Double> srv = null;
    double cpu = 0;
    double[] host = {0, 0};
    try {
      // warm, unmeasured: the JIT compiles the client's and Curator's paths
      // (zkl and the floor are compiled ahead; kazoo has no JIT)
      once(admin, root + "/s11-curator-warm", n, (long) n * Math.min(incs, WARM_INCREMENTS),
           capS);
      for (int rep = 0; rep < reps && errors.isEmpty(); rep++) {
        Run r = once(admin, root + "/s11-curator-" + rep, n, (long) n * incs, capS);
        rates.add(r.rate);
        lat.addAll(r.lat);
        for (int i = 0; i < n; i++) per[i] += r.per[i];
        done += r.done;
        cpu += r.cpuNs;
        if (host != null && r.host != null) {
          host[0] += r.host[0];
          host[1] += r.host[1];
        } else {
          host = null;
        }
        srv = sum(srv, r.srv);
      }
    } catch (Exception e) {
      errors.add(e.toString());
    } finally {
      admin.close();
    }
    if (done > 0) {
      add(kase, "increments/s", "1/s", quantile(rates, 0.5), Double.NaN, done);
      add(kase, "increment", "us", quantile(lat, 0.5), quantile(lat, 0.99), lat.size());
      long lo = Long.MAX_VALUE, hi = 0;
      for (long p : per) {
        lo = Math.min(lo, p);
        hi = Math.max(hi, p);
      }
      add(kase, "fairness", "", hi > 0 ? (double) lo / hi : Double.NaN, Double.NaN, n);
      addServer(kase, "inc", srv, cpu, done);
      if (host != null) {
        add(kase, "host-cpu/inc", "us", host[0] / done, Double.NaN, done);
        add(kase, "ctxsw/inc", "", host[1] / done, Double.NaN, done);
      }
    }
    System.exit(finish(csv));
  }
}
