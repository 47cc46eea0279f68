// tests/integration/java/CuratorLockPeer.java - Curator 5.4's
// InterProcessMutex and InterProcessMultiLock as peers of zkl's multi-lock
// in the interop tests (test-multilock-interop.c compiles and runs it; its
// commands are those of kazoo_peer.py's "serve" mode, so one test script
// drives either), and InterProcessMutex, InterProcessReadWriteLock and
// LeaderLatch as peers of zkl's mutex, read/write lock and election
// (test-curator-interop.c).  Usage:
//   CuratorLockPeer HOSTS SECS
// It prints "ready", then reads commands from stdin, one a line.  It holds
// named clients (ID), each a CuratorFramework of its own (its own session)
// whose default data, and so the data of its lock nodes, is the ID, and
// each with ONE thread of its own that runs its acquires and releases in
// the order given (Curator's locks belong to the thread that took them).
// Paths are named by short labels.  A plain command is answered with one
// line; a command that blocks (acquire, loop) answers nothing at once: its
// result comes later as one line
//   @TAG RESULT T0 T1
// RESULT "true"/"false" (acquired or not) or "error:<what>", T0 and T1 the
// CLOCK_MONOTONIC (System.nanoTime()) in microseconds just before the call
// and just after it returned.
//   path L P                  L names path P from now on: "ok"
//   open ID SESSMS            a client, session timeout SESSMS: "ok 0xSESSION"
//   mutex ID NAME L           InterProcessMutex(ID's client, path L) as NAME
//   multi ID NAME L1 L2 ...   InterProcessMultiLock(ID's client, [paths]) as
//                             NAME (it takes them one by one, in this order)
//   acquire TAG ID NAME MS    on ID's thread: acquire() (MS < 0) or
//                             acquire(MS, ms): @TAG
//   release ID NAME           on ID's thread (after what is queued there):
//                             release(): "ok"
//   loop TAG ID ROUNDS HOLDMS MS NAME...
//                             on ID's thread, ROUNDS times: acquire the
//                             NAMEs in order, each with acquire(MS, ms); if
//                             one fails, release those held (in reverse),
//                             count a retry, sleep 1-10 ms and start the
//                             round again (at most 200 times a round); all
//                             held: hold HOLDMS ms, release in reverse.
//                             @TAG true (every round done) or false
//   log ID                    "ok RETRIES L T0 T1 L T0 T1 ...": ID's holds
//                             ended since the last log, per path label, T0
//                             the System.nanoTime() just after the acquire
//                             returned and T1 just before the release was
//                             called; RETRIES the loops' retries since then
//   queue ID L                the data of the nodes on path L in Curator's
//                             own order (InterProcessMutex's
//                             getParticipantNodes()): "ok DATA..."
//   rwlock ID RNAME WNAME L   InterProcessReadWriteLock(ID's client, path L):
//                             its readLock() as RNAME, its writeLock() as
//                             WNAME, for acquire, release and loop as above
//                             (the write holder may take the read lock: a
//                             downgrade); their holds are logged under the
//                             labels "L:r" and "L:w"
//   rwqueue ID L              the nodes on path L as InterProcessReadWrite-
//                             Lock sees them: its read lock's
//                             getParticipantNodes() (the __READ__ nodes, in
//                             its order), then its write lock's (the
//                             __WRIT__ nodes), each as its data:
//                             "ok DATA... | DATA..."
//   latch ID NAME L           LeaderLatch(ID's client, path L, ID) as NAME,
//                             not started; its listener reports each event
//                             as a line "@NAME#N EVENT T T" (N = 1, 2, ...
//                             for each latch, EVENT "isLeader" or
//                             "notLeader", T the System.nanoTime() in
//                             microseconds as it ran): "ok"
//   start ID NAME             its start(): "ok"
//   await TAG ID NAME MS      on ID's thread: its await() (MS < 0) or
//                             await(MS, ms): @TAG true (leader) or false
//   hasleader ID NAME         its hasLeadership(): "ok true" or "ok false"
//   leader ID NAME            its getLeader(): "ok ID LEADING" (ID "-" when
//                             nobody takes part, LEADING true or false)
//   participants ID NAME      its getParticipants(), in Curator's order:
//                             "ok ID:LEADING..."
//   close ID NAME [notify]    its close() (CloseMode.SILENT), or
//                             close(CloseMode.NOTIFY_LEADER) (the listener
//                             hears notLeader if it led): "ok T", T the
//                             System.nanoTime() in microseconds just before
//                             the call
//   ping                      "pong" (every result before it came first)
//   quit                      "done", exit status 0 (so does the end of stdin)
// Any failure of a plain command: "error <what>", exit status 1.  The peer
// exits by itself after SECS seconds whatever it is doing ("error
// watchdog", status 2).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.retry.RetryOneTime;

public class CuratorLockPeer {
  static void say(String line) {
    synchronized (System.out) {
      System.out.println(line);
      System.out.flush();
    }
  }

  static long micros() {
    return System.nanoTime() / 1000;
  }

  static final Map<String, String> paths = new HashMap<>();

  static class Lock {
    InterProcessLock lock;
    String[] labels;
    long since; // System.nanoTime() when the acquire returned; -1: not held
  }

  static class Client {
    String id;
    CuratorFramework c;
    final Map<String, Lock> locks = new HashMap<>();
    final Map<String, LeaderLatch> latches = new HashMap<>();
    final StringBuilder log = new StringBuilder(); // guarded by itself
    int retries;                                   // guarded by log
    final ExecutorService th = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r);
      t.setDaemon(true);
      return t;
    });

    Lock lock(String name) throws Exception {
      Lock l = locks.get(name);
      if (l == null) throw new Exception(id + " has no lock " + name);
      return l;
    }

    LeaderLatch latch(String name) throws Exception {
      LeaderLatch l = latches.get(name);
      if (l == null) throw new Exception(id + " has no latch " + name);
      return l;
    }

    // On the client's thread only.
    boolean acquire(Lock l, long ms) throws Exception {
      if (l.since >= 0) throw new Exception(id + " holds it already");
      boolean got;
      if (ms < 0) {
        l.lock.acquire();
        got = true;
      } else {
        got = l.lock.acquire(ms, TimeUnit.MILLISECONDS);
      }
      if (got) l.since = System.nanoTime();
      return got;
    }

    void release(Lock l) throws Exception {
      if (l.since < 0) throw new Exception(id + " does not hold it");
      long t1 = System.nanoTime();
      synchronized (log) {
        for (String label : l.labels)
          log.append(' ').append(label).append(' ').append(l.since).append(' ').append(t1);
      }
      l.since = -1;
      l.lock.release();
    }

    boolean loop(int rounds, long holdMs, long ms, List<Lock> ls) throws Exception {
      for (int i = 0; i < rounds; i++) {
        for (int tries = 0;; tries++) {
          if (tries >= 200) return false;
          int got = 0;
          while (got < ls.size() && acquire(ls.get(got), ms)) got++;
          if (got == ls.size()) break;
          while (got > 0) release(ls.get(--got));
          synchronized (log) {
            retries++;
          }
          Thread.sleep(ThreadLocalRandom.current().nextInt(1, 11));
        }
        if (holdMs > 0) Thread.sleep(holdMs);
        for (int j = ls.size() - 1; j >= 0; j--) release(ls.get(j));
      }
      return true;
    }
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

  static String path(String label) throws Exception {
    String p = paths.get(label);
    if (p == null) throw new Exception("no path " + label);
    return p;
  }

  // A blocking call on the client's thread, reported as @TAG.
  static void background(Client k, String tag, Callable<Boolean> call) {
    k.th.submit(() -> {
      long t0 = micros();
      String r;
      try {
        r = call.call() ? "true" : "false";
      } catch (Exception e) {
        r = "error:" + e.getClass().getSimpleName();
        System.err.println("curator " + tag + ": " + e);
      }
      say("@" + tag + " " + r + " " + t0 + " " + micros());
    });
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
        if (w[0].isEmpty()) continue;
        if (w[0].equals("quit")) break;
        switch (w[0]) {
          case "ping":
            say("pong");
            break;
          case "path":
            paths.put(w[1], w[2]);
            say("ok");
            break;
          case "open": {
            Client k = new Client();
            k.id = w[1];
            k.c = connect(hosts, w[1], Integer.parseInt(w[2]));
            cl.put(w[1], k);
            say("ok 0x" + Long.toHexString(
                    k.c.getZookeeperClient().getZooKeeper().getSessionId()));
            break;
          }
          case "mutex":
          case "multi": {
            Client k = client(cl, w[1]);
            Lock l = new Lock();
            l.since = -1;
            l.labels = new String[w.length - 3];
            List<String> ps = new ArrayList<>();
            for (int i = 3; i < w.length; i++) {
              l.labels[i - 3] = w[i];
              ps.add(path(w[i]));
            }
            if (ps.isEmpty() || (w[0].equals("mutex") && ps.size() != 1))
              throw new Exception("bad " + line);
            l.lock = w[0].equals("mutex") ? new InterProcessMutex(k.c, ps.get(0))
                                          : new InterProcessMultiLock(k.c, ps);
            k.locks.put(w[2], l);
            say("ok");
            break;
          }
          case "acquire": {
            Client k = client(cl, w[2]);
            Lock l = k.lock(w[3]);
            long ms = Long.parseLong(w[4]);
            background(k, w[1], () -> k.acquire(l, ms));
            break;
          }
          case "release": {
            Client k = client(cl, w[1]);
            Lock l = k.lock(w[2]);
            k.th.submit(() -> {
              k.release(l);
              return null;
            }).get(secs, TimeUnit.SECONDS);
            say("ok");
            break;
          }
          case "loop": {
            Client k = client(cl, w[2]);
            int rounds = Integer.parseInt(w[3]);
            long hold = Long.parseLong(w[4]), ms = Long.parseLong(w[5]);
            List<Lock> ls = new ArrayList<>();
            for (int i = 6; i < w.length; i++) ls.add(k.lock(w[i]));
            background(k, w[1], () -> k.loop(rounds, hold, ms, ls));
            break;
          }
          case "log": {
            Client k = client(cl, w[1]);
            String out;
            synchronized (k.log) {
              out = "ok " + k.retries + k.log;
              k.log.setLength(0);
              k.retries = 0;
            }
            say(out);
            break;
          }
          case "queue": {
            Client k = client(cl, w[1]);
            StringBuilder out = new StringBuilder("ok");
            for (String p : new InterProcessMutex(k.c, path(w[2])).getParticipantNodes())
              out.append(' ').append(new String(k.c.getData().forPath(p),
                                                StandardCharsets.UTF_8));
            say(out.toString());
            break;
          }
          case "rwlock": {
            if (w.length != 5) throw new Exception("bad " + line);
            Client k = client(cl, w[1]);
            InterProcessReadWriteLock rw = new InterProcessReadWriteLock(k.c, path(w[4]));
            Lock r = new Lock(), wr = new Lock();
            r.since = wr.since = -1;
            r.labels = new String[] {w[4] + ":r"};
            wr.labels = new String[] {w[4] + ":w"};
            r.lock = rw.readLock();
            wr.lock = rw.writeLock();
            k.locks.put(w[2], r);
            k.locks.put(w[3], wr);
            say("ok");
            break;
          }
          case "rwqueue": {
            Client k = client(cl, w[1]);
            StringBuilder out = new StringBuilder("ok");
            InterProcessReadWriteLock rw = new InterProcessReadWriteLock(k.c, path(w[2]));
            for (String p : rw.readLock().getParticipantNodes())
              out.append(' ').append(new String(k.c.getData().forPath(p), StandardCharsets.UTF_8));
            out.append(" |");
            for (String p : rw.writeLock().getParticipantNodes())
              out.append(' ').append(new String(k.c.getData().forPath(p), StandardCharsets.UTF_8));
            say(out.toString());
            break;
          }
          case "latch": {
            Client k = client(cl, w[1]);
            String name = w[2];
            LeaderLatch l = new LeaderLatch(k.c, path(w[3]), k.id);
            AtomicInteger n = new AtomicInteger();
            l.addListener(new LeaderLatchListener() {
              @Override
              public void isLeader() {
                long t = micros();
                say("@" + name + "#" + n.incrementAndGet() + " isLeader " + t + " " + t);
              }

              @Override
              public void notLeader() {
                long t = micros();
                say("@" + name + "#" + n.incrementAndGet() + " notLeader " + t + " " + t);
              }
            });
            k.latches.put(name, l);
            say("ok");
            break;
          }
          case "start": {
            client(cl, w[1]).latch(w[2]).start();
            say("ok");
            break;
          }
          case "await": {
            Client k = client(cl, w[2]);
            LeaderLatch l = k.latch(w[3]);
            long ms = Long.parseLong(w[4]);
            background(k, w[1], () -> {
              if (ms >= 0) return l.await(ms, TimeUnit.MILLISECONDS);
              l.await();
              return true;
            });
            break;
          }
          case "hasleader":
            say("ok " + client(cl, w[1]).latch(w[2]).hasLeadership());
            break;
          case "leader": {
            Participant p = client(cl, w[1]).latch(w[2]).getLeader();
            say("ok " + (p.getId().isEmpty() ? "-" : p.getId()) + " " + p.isLeader());
            break;
          }
          case "participants": {
            StringBuilder out = new StringBuilder("ok");
            for (Participant p : client(cl, w[1]).latch(w[2]).getParticipants())
              out.append(' ').append(p.getId()).append(':').append(p.isLeader());
            say(out.toString());
            break;
          }
          case "close": {
            LeaderLatch l = client(cl, w[1]).latch(w[2]);
            boolean notify = w.length > 3 && w[3].equals("notify");
            long t = micros();
            l.close(notify ? LeaderLatch.CloseMode.NOTIFY_LEADER : LeaderLatch.CloseMode.SILENT);
            say("ok " + t);
            break;
          }
          default:
            throw new Exception("unknown command " + line);
        }
      }
      say("done");
    } catch (Exception e) {
      say("error " + e);
      status = 1;
    } finally {
      for (Client k : cl.values()) {
        for (LeaderLatch l : k.latches.values()) {
          if (l.getState() != LeaderLatch.State.STARTED) continue;
          try {
            l.close();
          } catch (Exception e) {
            System.err.println("curator: close " + e);
          }
        }
        k.c.close();
      }
    }
    System.exit(status);
  }

  static Client client(Map<String, Client> cl, String id) throws Exception {
    Client k = cl.get(id);
    if (k == null) throw new Exception("no client " + id);
    return k;
  }
}
