// bench/CuratorBench.java - scenario 11 of zkl-bench for Curator 5.4
// (Debian's libcurator-recipes-java): counter compare-and-set increments
// with N contenders, on the same server in the same run as zkl's, so that
// the report shows zkl/Curator ratios measured side by side.  zkl-bench
// compiles it at run time (javac, into a temporary directory) and runs it
// right after its own S11:
//
//   java -cp /usr/share/java/curator-recipes.jar:/usr/share/java/slf4j-nop.jar:DIR \
//       CuratorBench HOSTS ROOT CONTENDERS INCREMENTS REPS CAP_S CSV
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
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicInteger;
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

  static void add(String kase, String metric, String unit, double median, double p99, long n) {
    rows.add(String.format(Locale.ROOT, ",m,11,%s,curator,%s,%s,%s,%s,%d,,,", kase, metric,
                           unit, fmt(median), fmt(p99), n));
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
  static class Run {
    long done;                // increments applied
    long[] per;               // of each contender
    double rate;              // increments per second
    List<Double> lat = Collections.synchronizedList(new ArrayList<>());
    Map<String, Double> srv;  // the server's work
    double cpuNs;             // this process's CPU time
    double[] host;            // the machine's busy µs and context switches
  }

  // n contenders, each on a client of its own, increment the node at path
  // (made with 4 zero bytes) until total increments are done or capS
  // passed; then the node must hold what they did.
  static Run once(CuratorFramework admin, String path, int n, long total, double capS)
      throws Exception {
    admin.create().creatingParentsIfNeeded().forPath(path, new byte[4]);
    Run r = new Run();
    r.per = new long[n];
    CuratorFramework[] clients = new CuratorFramework[n];
    DistributedAtomicInteger[] dai = new DistributedAtomicInteger[n];
    long[] end = new long[n];
    Thread[] threads = new Thread[n];
    AtomicLong claimed = new AtomicLong();
    AtomicBoolean stop = new AtomicBoolean();
    CyclicBarrier start = new CyclicBarrier(n + 1);
    try {
      for (int i = 0; i < n; i++) {
        clients[i] = client();
        dai[i] = new DistributedAtomicInteger(clients[i], path, new RetryNTimes(1000, 0));
        if (!dai[i].get().succeeded()) throw new Exception("a first get failed");
      }
      for (int i = 0; i < n; i++) {
        final int me = i;
        threads[i] = new Thread(() -> {
          try {
            start.await();
            while (!stop.get() && claimed.getAndIncrement() < total) {
              long t0 = System.nanoTime();
              AtomicValue<Integer> v = dai[me].increment();
              long t1 = System.nanoTime();
              if (!v.succeeded()) {
                errors.add("increment() did not succeed in 1000 tries");
                break;
              }
              r.lat.add((t1 - t0) / 1e3);
              r.per[me]++;
            }
          } catch (Exception e) {
            errors.add(e.toString());
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
          stop.set(true); // each stops after its increment
          break;
        }
      }
      for (Thread t : threads) t.join();
      r.cpuNs = cpuNs() - c0;
      double[] h1 = host();
      if (h0 != null && h1 != null) r.host = new double[] {h1[0] - h0[0], h1[1] - h0[1]};
      r.srv = delta(s0, sample(), overhead);
      long tEnd = t0;
      for (int i = 0; i < n; i++) {
        r.done += r.per[i];
        tEnd = Math.max(tEnd, end[i]);
      }
      r.rate = tEnd > t0 ? r.done * 1e9 / (tEnd - t0) : Double.NaN;
      if (r.done < total)
        System.err.printf("CuratorBench: a run stopped after %.0f s with %d of %d "
                          + "increments%n", capS, r.done, total);
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

  public static void main(String[] a) throws Exception {
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
