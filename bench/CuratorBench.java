// bench/CuratorBench.java - scenarios 11, 12 and 13 of zkl-bench for
// Curator 5.4 (Debian's libcurator-recipes-java): counter compare-and-set
// increments with N contenders (S11), the multi-lock (S12) and the
// semaphore (S13), on the same server in the same run as zkl's, so that
// the report shows zkl/Curator ratios measured side by side.  zkl-bench
// compiles it at run time (javac, into a temporary directory) and runs it
// right after its own S11, S12 or S13:
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
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
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
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
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
    String first = hosts.split(",")[0].split("/")[0];
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

  static class Crew {
    long done;                // operations done
    long[] per;               // of each contender
    double rate;              // operations per second
    Map<String, Double> srv;  // the server's work
    double cpuNs;             // this process's CPU time
    double[] host;            // the machine's busy µs and context switches

    void run(int n, long total, double capS, String what, String noun, Op op)
        throws Exception {
      per = new long[n];
      long[] end = new long[n];
      Thread[] threads = new Thread[n];
      AtomicLong claimed = new AtomicLong();
      AtomicBoolean stop = new AtomicBoolean();
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
      long t0 = System.nanoTime();
      long deadline = t0 + (long) (capS * 1e9);
      for (Thread t : threads) {
        t.join(Math.max(1, (deadline - System.nanoTime()) / 1000000));
        if (t.isAlive()) {
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
      if (done < total)
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

    Thread watchdog = new Thread(() -> {
      try {
        Thread.sleep((long) ((capS + 60) * (reps + 1) * ks.length * 1000) + 60000);
      } catch (InterruptedException e) {
        return;
      }
      System.err.println("CuratorBench: error: watchdog: a run did not end");
      Runtime.getRuntime().halt(1);
    });
    watchdog.setDaemon(true);
    watchdog.start();

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
          if (srv == null) {
            srv = r.srv;
          } else {
            for (String x : r.srv.keySet()) srv.put(x, srv.get(x) + r.srv.get(x));
          }
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
          add(kase, "requests/acq", "", srv.get("requests") / done, Double.NaN, done);
          add(kase, "reads/acq", "", srv.get("reads") / done, Double.NaN, done);
          add(kase, "writes/acq", "", srv.get("writes") / done, Double.NaN, done);
          if (!Double.isNaN(srv.get("fsyncs")))
            add(kase, "fsyncs/acq", "", srv.get("fsyncs") / done, Double.NaN, done);
          add(kase, "bytes/acq", "B", (srv.get("bytes_in") + srv.get("bytes_out")) / done,
              Double.NaN, done);
          if (!Double.isNaN(cpu)) add(kase, "cpu/acq", "us", cpu / 1e3 / done, Double.NaN, done);
        }
        System.err.println("  S12 curator " + kase + " done");
      }
    } catch (Exception e) {
      errors.add(e.toString());
    } finally {
      admin.close();
    }
    try (PrintWriter w = new PrintWriter(csv, StandardCharsets.UTF_8)) {
      w.println("config,kind,scenario,case,impl,metric,unit,median,p99,n,ratio,limit,verdict");
      for (String r : rows) w.println(r);
    }
    for (String e : errors) System.err.println("CuratorBench: error: " + e);
    return errors.isEmpty() ? 0 : 1;
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

    Thread watchdog = new Thread(() -> {
      try {
        Thread.sleep((long) ((capS + 60) * (reps + 1) * maxes.length * 1000) + 60000);
      } catch (InterruptedException e) {
        return;
      }
      System.err.println("CuratorBench: error: watchdog: a run did not end");
      Runtime.getRuntime().halt(1);
    });
    watchdog.setDaemon(true);
    watchdog.start();

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
          if (srv == null) {
            srv = r.srv;
          } else {
            for (String x : r.srv.keySet()) srv.put(x, srv.get(x) + r.srv.get(x));
          }
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
          add(kase, "requests/grant", "", srv.get("requests") / done, Double.NaN, done);
          add(kase, "reads/grant", "", srv.get("reads") / done, Double.NaN, done);
          add(kase, "writes/grant", "", srv.get("writes") / done, Double.NaN, done);
          if (!Double.isNaN(srv.get("fsyncs")))
            add(kase, "fsyncs/grant", "", srv.get("fsyncs") / done, Double.NaN, done);
          add(kase, "bytes/grant", "B", (srv.get("bytes_in") + srv.get("bytes_out")) / done,
              Double.NaN, done);
          if (!Double.isNaN(cpu)) add(kase, "cpu/grant", "us", cpu / 1e3 / done, Double.NaN, done);
        }
        System.err.println("  S13 curator " + kase + " done");
      }
    } catch (Exception e) {
      errors.add(e.toString());
    } finally {
      admin.close();
    }
    try (PrintWriter w = new PrintWriter(csv, StandardCharsets.UTF_8)) {
      w.println("config,kind,scenario,case,impl,metric,unit,median,p99,n,ratio,limit,verdict");
      for (String r : rows) w.println(r);
    }
    for (String e : errors) System.err.println("CuratorBench: error: " + e);
    return errors.isEmpty() ? 0 : 1;
  }

  public static void main(String[] a) throws Exception {
    if (a.length > 0 && a[0].equals("multilock"))
      System.exit(multilockMain(Arrays.copyOfRange(a, 1, a.length)));
    if (a.length > 0 && a[0].equals("semaphore"))
      System.exit(semaphoreMain(Arrays.copyOfRange(a, 1, a.length)));
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

    Thread watchdog = new Thread(() -> {
      try {
        Thread.sleep((long) ((capS + 60) * (reps + 1) * 1000) + 60000);
      } catch (InterruptedException e) {
        return;
      }
      System.err.println("CuratorBench: error: watchdog: a run did not end");
      Runtime.getRuntime().halt(1);
    });
    watchdog.setDaemon(true);
    watchdog.start();

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
        if (srv == null) {
          srv = r.srv;
        } else {
          for (String k : r.srv.keySet()) srv.put(k, srv.get(k) + r.srv.get(k));
        }
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
      add(kase, "requests/inc", "", srv.get("requests") / done, Double.NaN, done);
      add(kase, "reads/inc", "", srv.get("reads") / done, Double.NaN, done);
      add(kase, "writes/inc", "", srv.get("writes") / done, Double.NaN, done);
      if (!Double.isNaN(srv.get("fsyncs")))
        add(kase, "fsyncs/inc", "", srv.get("fsyncs") / done, Double.NaN, done);
      add(kase, "bytes/inc", "B", (srv.get("bytes_in") + srv.get("bytes_out")) / done,
          Double.NaN, done);
      if (!Double.isNaN(cpu)) add(kase, "cpu/inc", "us", cpu / 1e3 / done, Double.NaN, done);
      if (host != null) {
        add(kase, "host-cpu/inc", "us", host[0] / done, Double.NaN, done);
        add(kase, "ctxsw/inc", "", host[1] / done, Double.NaN, done);
      }
    }
    try (PrintWriter w = new PrintWriter(csv, StandardCharsets.UTF_8)) {
      w.println("config,kind,scenario,case,impl,metric,unit,median,p99,n,ratio,limit,verdict");
      for (String r : rows) w.println(r);
    }
    for (String e : errors) System.err.println("CuratorBench: error: " + e);
    System.exit(errors.isEmpty() ? 0 : 1);
  }
}
