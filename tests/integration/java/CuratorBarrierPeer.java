// tests/integration/java/CuratorBarrierPeer.java - Curator 5.4's barriers
// (DistributedBarrier, DistributedDoubleBarrier) as peers of zkl's in the
// interop tests (test-barrier-interop.c compiles and runs it).  Usage:
//   CuratorBarrierPeer HOSTS SECS
// It prints "ready" once connected, then reads commands from stdin, one a
// line.  A plain command is answered with one line ("ok ..." or "pong"); a
// command that blocks (b-wait, enter, leave) answers nothing at once and
// runs on a thread of its own: its result comes later as one line
//   @TAG RESULT T0 T1
// RESULT being what the call returned ("true"/"false") or "error:<what>",
// T0 and T1 the wall clock (microseconds since the epoch) just before the
// call and just after it returned, comparable with the test's and the
// other peer's.  Commands:
//   ping                 "pong" (every result finished before it came
//                        first)
//   b-set PATH           DistributedBarrier.setBarrier(): "ok"
//   b-remove PATH        DistributedBarrier.removeBarrier(): "ok"
//   b-wait TAG PATH MS   DistributedBarrier.waitOnBarrier(MS ms): @TAG
//   member TAG PATH N [HOSTS]
//                        a double barrier member TAG: a client (a session)
//                        of its own, to HOSTS if given (e.g. through the
//                        test's fault-injecting proxy), whose nodes hold
//                        "curator-TAG", and a DistributedDoubleBarrier(PATH,
//                        N) on it: "ok"
//   enter TAG MS         the member's enter(MS ms): @TAG
//   leave TAG MS         the member's leave(MS ms): @TAG
//   close TAG            closes the member's client (its session, so its
//                        node, ends): "ok"
//   count PATH           PATH's children but "ready", and whether "ready"
//                        is one: "ok MEMBERS READY" (no PATH: "ok 0 0")
//   quit                 "done", exit status 0 (so does the end of stdin)
// Any failure of a plain command: "error <what>", exit status 1.  The peer
// exits by itself after SECS seconds whatever it is doing ("error
// watchdog", status 2).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.KeeperException;

public class CuratorBarrierPeer {
  static void say(String line) {
    synchronized (System.out) {
      System.out.println(line);
      System.out.flush();
    }
  }

  static long micros() {
    Instant i = Instant.now();
    return i.getEpochSecond() * 1000000L + i.getNano() / 1000;
  }

  // A blocking call on a thread of its own; its result as "@TAG ...".
  static void background(String tag, Callable<Boolean> call) {
    Thread t = new Thread(() -> {
      long t0 = micros();
      String result;
      try {
        result = String.valueOf(call.call());
      } catch (Exception e) {
        result = "error:" + e.getClass().getSimpleName();
        System.err.println("curator " + tag + ": " + e);
      }
      say("@" + tag + " " + result + " " + t0 + " " + micros());
    });
    t.setDaemon(true);
    t.start();
  }

  static CuratorFramework client(String hosts, byte[] data) throws Exception {
    CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder()
        .connectString(hosts)
        .sessionTimeoutMs(10000)
        .connectionTimeoutMs(10000)
        .retryPolicy(new RetryOneTime(200));
    if (data != null) b.defaultData(data);
    CuratorFramework c = b.build();
    c.start();
    if (!c.blockUntilConnected(15, TimeUnit.SECONDS))
      throw new Exception("not connected to " + hosts);
    return c;
  }

  static class Member {
    CuratorFramework client;
    DistributedDoubleBarrier barrier;
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
    Map<String, Member> members = new HashMap<>();
    CuratorFramework c = null;
    try {
      c = client(hosts, null);
      say("ready");
      BufferedReader in = new BufferedReader(
          new InputStreamReader(System.in, StandardCharsets.UTF_8));
      String line;
      while ((line = in.readLine()) != null) {
        String[] w = line.trim().split(" +");
        if (w[0].equals("quit")) break;
        switch (w[0]) {
          case "ping":
            say("pong");
            break;
          case "b-set":
            new DistributedBarrier(c, w[1]).setBarrier();
            say("ok");
            break;
          case "b-remove":
            new DistributedBarrier(c, w[1]).removeBarrier();
            say("ok");
            break;
          case "b-wait": {
            DistributedBarrier b = new DistributedBarrier(c, w[2]);
            long ms = Long.parseLong(w[3]);
            background(w[1], () -> b.waitOnBarrier(ms, TimeUnit.MILLISECONDS));
            break;
          }
          case "member": {
            Member m = new Member();
            m.client = client(w.length > 4 ? w[4] : hosts, ("curator-" + w[1])
                                         .getBytes(StandardCharsets.UTF_8));
            m.barrier = new DistributedDoubleBarrier(m.client, w[2],
                                                     Integer.parseInt(w[3]));
            members.put(w[1], m);
            say("ok");
            break;
          }
          case "enter": {
            DistributedDoubleBarrier b = members.get(w[1]).barrier;
            long ms = Long.parseLong(w[2]);
            background(w[1], () -> b.enter(ms, TimeUnit.MILLISECONDS));
            break;
          }
          case "leave": {
            DistributedDoubleBarrier b = members.get(w[1]).barrier;
            long ms = Long.parseLong(w[2]);
            background(w[1], () -> b.leave(ms, TimeUnit.MILLISECONDS));
            break;
          }
          case "close":
            members.remove(w[1]).client.close();
            say("ok");
            break;
          case "count": {
            int n = 0, ready = 0;
            try {
              List<String> kids = c.getChildren().forPath(w[1]);
              for (String k : kids) {
                if (k.equals("ready")) ready = 1;
                else n++;
              }
            } catch (KeeperException.NoNodeException e) {
              // no barrier: no members
            }
            say("ok " + n + " " + ready);
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
      for (Member m : members.values()) m.client.close();
      if (c != null) c.close();
    }
    System.exit(status);
  }
}
