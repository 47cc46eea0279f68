// tests/integration/java/CuratorSemPeer.java - Curator 5.4's
// InterProcessSemaphoreV2 as a peer of zkl's semaphore in the interop tests
// (test-semaphore-interop.c compiles and runs it).  Usage:
//   CuratorSemPeer HOSTS SECS
// It prints "ready", then reads commands from stdin, one a line, and answers
// each with one line.  It holds named clients (ID), each a CuratorFramework
// of its own (its own session) whose default data, and so the data of its
// gate (lock) nodes and lease nodes, is the ID, with one semaphore:
//   open ID PATH MAX SESSMS   a client with a session timeout of SESSMS and
//                             InterProcessSemaphoreV2(client, PATH, MAX):
//                             "ok SESSIONID" (hex)
//   openc ID PATH CPATH SEED SESSMS
//                             the same on a SharedCount at CPATH (seeded with
//                             SEED if missing, started):
//                             InterProcessSemaphoreV2(client, PATH, count):
//                             "ok COUNT"
//   setcount ID N             that SharedCount's setCount(N): "ok"
//   acquire ID QTY MS         starts acquire(QTY) (MS < 0) or acquire(QTY,
//                             MS, ms) in the background: "ok"
//   await ID MS               waits up to MS ms for ID's background job:
//                             "got NAME..." (the leases' getNodeName(), now
//                             held), "none" (acquire gave null: timed out),
//                             a loop's line (below), or "waiting" (still)
//   release ID N              returnLease() of ID's N oldest leases: "ok"
//   loop ID ROUNDS HOLDMS MS  in the background, ROUNDS times: acquire()
//                             (MS < 0) or acquire(MS, ms), hold HOLDMS ms,
//                             returnLease().  Its await line:
//                             "loop FAILS OVER PEAK T0 T1 T0 T1 ..." - the
//                             acquires that gave null, the times this JVM's
//                             leases on PATH (all its clients) were over MAX
//                             and their peak, and for each lease held the
//                             System.nanoTime() (CLOCK_MONOTONIC) just after
//                             acquire() returned and just before returnLease()
//   leases ID                 the semaphore's getParticipantNodes() (the
//                             children of PATH/leases), by sequence:
//                             "ok NAME..."
//   participants ID LPATH     InterProcessMutex(client, LPATH)
//                             .getParticipantNodes(), names in its order:
//                             "ok NAME..."
//   quit                      "done", exit status 0 (so does the end of stdin)
// Any failure: "error <what>", exit status 1.  The peer exits by itself
// after SECS seconds whatever it is doing ("error watchdog", status 2).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.retry.RetryOneTime;

public class CuratorSemPeer {
  static void say(String line) {
    synchronized (System.out) {
      System.out.println(line);
      System.out.flush();
    }
  }

  // This JVM's leases per semaphore path, across its clients.
  static final Map<String, AtomicInteger> inUse = new ConcurrentHashMap<>();

  static class Client {
    String path;
    int max;
    CuratorFramework c;
    SharedCount sc;
    InterProcessSemaphoreV2 sem;
    final ArrayDeque<Lease> held = new ArrayDeque<>();
    final ExecutorService bg = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r);
      t.setDaemon(true);
      return t;
    });
    Future<String> job;
  }

  static CuratorFramework connect(String hosts, String id, int sessMs)
      throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.builder()
                             .connectString(hosts)
                             .sessionTimeoutMs(sessMs)
                             .connectionTimeoutMs(10000)
                             .retryPolicy(new RetryOneTime(200))
                             .defaultData(id.getBytes(StandardCharsets.UTF_8))
                             .build();
    c.start();
    if (!c.blockUntilConnected(15, TimeUnit.SECONDS))
      throw new Exception("not connected");
    return c;
  }

  static String names(Collection<String> paths) {
    StringBuilder out = new StringBuilder("ok");
    for (String p : paths) out.append(' ').append(p.substring(p.lastIndexOf('/') + 1));
    return out.toString();
  }

  static String seq(String name) {
    return name.substring(Math.max(0, name.length() - 10));
  }

  static String acquire(Client k, int qty, long ms) throws Exception {
    Collection<Lease> got = ms < 0 ? k.sem.acquire(qty)
                                   : k.sem.acquire(qty, ms, TimeUnit.MILLISECONDS);
    if (got == null) return "none";
    StringBuilder out = new StringBuilder("got");
    synchronized (k.held) {
      for (Lease l : got) {
        k.held.add(l);
        out.append(' ').append(l.getNodeName());
      }
    }
    return out.toString();
  }

  static String loop(Client k, int rounds, long holdMs, long ms)
      throws Exception {
    AtomicInteger use = inUse.computeIfAbsent(k.path, p -> new AtomicInteger());
    int fails = 0, over = 0, peak = 0;
    StringBuilder times = new StringBuilder();
    for (int i = 0; i < rounds; i++) {
      Lease l = ms < 0 ? k.sem.acquire() : k.sem.acquire(ms, TimeUnit.MILLISECONDS);
      if (l == null) {
        fails++;
        continue;
      }
      long t0 = System.nanoTime();
      int n = use.incrementAndGet();
      if (n > k.max) over++;
      peak = Math.max(peak, n);
      if (holdMs > 0) Thread.sleep(holdMs);
      use.decrementAndGet();
      long t1 = System.nanoTime();
      k.sem.returnLease(l);
      times.append(' ').append(t0).append(' ').append(t1);
    }
    return "loop " + fails + " " + over + " " + peak + times;
  }

  public static void main(String[] a) throws Exception {
    String hosts = a[0];
    long secs = Long.parseLong(a[1]);
    Thread watchdog = new Thread(() -> {
      try {
        Thread.sleep(secs * 1000);
      } catch (InterruptedException e) {
        return;
      }
      say("error watchdog");
      Runtime.getRuntime().halt(2);
    });
    watchdog.setDaemon(true);
    watchdog.start();

    int status = 0;
    Map<String, Client> cl = new HashMap<>();
    try {
      say("ready");
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
      String line;
      while ((line = in.readLine()) != null) {
        String[] w = line.trim().split(" +");
        if (w[0].equals("quit")) break;
        Client k = w.length > 1 ? cl.get(w[1]) : null;
        if (k == null && !w[0].equals("open") && !w[0].equals("openc"))
          throw new Exception("no client in " + line);
        switch (w[0]) {
          case "open": {
            k = new Client();
            k.path = w[2];
            k.max = Integer.parseInt(w[3]);
            k.c = connect(hosts, w[1], Integer.parseInt(w[4]));
            k.sem = new InterProcessSemaphoreV2(k.c, k.path, k.max);
            cl.put(w[1], k);
            say("ok 0x" + Long.toHexString(
                    k.c.getZookeeperClient().getZooKeeper().getSessionId()));
            break;
          }
          case "openc": {
            k = new Client();
            k.path = w[2];
            k.c = connect(hosts, w[1], Integer.parseInt(w[5]));
            k.sc = new SharedCount(k.c, w[3], Integer.parseInt(w[4]));
            k.sc.start();
            k.max = Integer.MAX_VALUE; // the count's; not checked here
            k.sem = new InterProcessSemaphoreV2(k.c, k.path, k.sc);
            cl.put(w[1], k);
            say("ok " + k.sc.getCount());
            break;
          }
          case "setcount":
            k.sc.setCount(Integer.parseInt(w[2]));
            say("ok");
            break;
          case "acquire":
          case "loop": {
            if (k.job != null) throw new Exception(w[1] + " is busy");
            final Client kk = k;
            if (w[0].equals("acquire")) {
              int qty = Integer.parseInt(w[2]);
              long ms = Long.parseLong(w[3]);
              k.job = k.bg.submit(() -> acquire(kk, qty, ms));
            } else {
              int rounds = Integer.parseInt(w[2]);
              long hold = Long.parseLong(w[3]), ms = Long.parseLong(w[4]);
              k.job = k.bg.submit(() -> loop(kk, rounds, hold, ms));
            }
            say("ok");
            break;
          }
          case "await": {
            if (k.job == null) throw new Exception(w[1] + " has no job");
            String r;
            try {
              r = k.job.get(Long.parseLong(w[2]), TimeUnit.MILLISECONDS);
              k.job = null;
            } catch (TimeoutException e) {
              r = "waiting";
            }
            say(r);
            break;
          }
          case "release": {
            int n = Integer.parseInt(w[2]);
            for (int i = 0; i < n; i++) {
              Lease l;
              synchronized (k.held) {
                l = k.held.poll();
              }
              if (l == null) throw new Exception(w[1] + " holds too few");
              k.sem.returnLease(l);
            }
            say("ok");
            break;
          }
          case "leases": {
            List<String> v = new ArrayList<>(k.sem.getParticipantNodes());
            v.sort((x, y) -> seq(x).compareTo(seq(y)));
            say(names(v));
            break;
          }
          case "participants":
            say(names(new InterProcessMutex(k.c, w[2]).getParticipantNodes()));
            break;
          default:
            throw new Exception("unknown command " + line);
        }
      }
      for (Client k : cl.values()) {
        synchronized (k.held) {
          k.sem.returnAll(new ArrayList<>(k.held));
          k.held.clear();
        }
      }
      say("done");
    } catch (Exception e) {
      say("error " + e);
      status = 1;
    } finally {
      for (Client k : cl.values()) {
        if (k.sc != null) k.sc.close();
        k.c.close();
      }
    }
    System.exit(status);
  }
}
