// tests/integration/java/CuratorCounterPeer.java - Curator 5.4's counters
// (DistributedAtomicInteger, DistributedAtomicLong, SharedCount) as peers of
// zkl's counter in the interop tests (test-counter-interop.c compiles and
// runs it).  Usage:
//   CuratorCounterPeer HOSTS SECS
// It prints "ready" once connected, then reads commands from stdin, one a
// line, and answers each with one line ("ok ..." or "timeout ..."):
//   dai-inc PATH N       DistributedAtomicInteger.increment() N times:
//                        "ok POST..." (each increment's postValue)
//   dal-inc PATH N       the same with DistributedAtomicLong
//   dai-add PATH DELTA   DistributedAtomicInteger.add(): "ok PRE POST"
//   dal-add PATH DELTA   the same with DistributedAtomicLong
//   dai-get PATH         DistributedAtomicInteger.get(): "ok VALUE"
//   dal-get PATH         the same with DistributedAtomicLong
//   sc-start PATH SEED   starts the peer's SharedCount (one per peer) with
//                        a listener: "ok COUNT VERSION"
//   sc-get               getVersionedValue(): "ok COUNT VERSION"
//   sc-keep              keeps getVersionedValue() for sc-tryset-kept:
//                        "ok COUNT VERSION"
//   sc-tryset-kept N     trySetCount(kept, N): "ok true" or "ok false"
//   sc-set N             setCount(N): "ok"
//   sc-await N SECS      waits until the listener (countHasChanged) has
//                        reported N: "ok N", or "timeout LAST..." (the
//                        counts it reported meanwhile)
//   quit                 "done", exit status 0 (so does the end of stdin)
// Any failure: "error <what>", exit status 1.  The peer exits by itself
// after SECS seconds whatever it is doing ("error watchdog", status 2).
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicInteger;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.framework.recipes.shared.SharedCountListener;
import org.apache.curator.framework.recipes.shared.SharedCountReader;
import org.apache.curator.framework.recipes.shared.VersionedValue;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.retry.RetryUntilElapsed;

public class CuratorCounterPeer {
  static void say(String line) {
    synchronized (System.out) {
      System.out.println(line);
      System.out.flush();
    }
  }

  // The optimistic tries of DistributedAtomic*: retried for up to 20 s
  // (every 1 ms) while other writers come first.
  static RetryPolicy contended() { return new RetryUntilElapsed(20000, 1); }

  static <T> T applied(AtomicValue<T> v, String what) throws Exception {
    if (!v.succeeded()) throw new Exception(what + " did not succeed");
    return v.postValue();
  }

  public static void main(String[] a) throws Exception {
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
    CuratorFramework c = CuratorFrameworkFactory.newClient(
        a[0], 10000, 10000, new RetryOneTime(200));
    SharedCount sc = null;
    VersionedValue<Integer> kept = null;
    LinkedBlockingQueue<Integer> changes = new LinkedBlockingQueue<>();
    try {
      c.start();
      if (!c.blockUntilConnected(15, TimeUnit.SECONDS))
        throw new Exception("not connected");
      say("ready");
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
      String line;
      while ((line = in.readLine()) != null) {
        String[] w = line.trim().split(" +");
        if (w[0].equals("quit")) break;
        switch (w[0]) {
          case "dai-inc": {
            DistributedAtomicInteger n =
                new DistributedAtomicInteger(c, w[1], contended());
            int count = Integer.parseInt(w[2]);
            StringBuilder out = new StringBuilder("ok");
            long tries = 0;
            for (int i = 0; i < count; i++) {
              AtomicValue<Integer> v = n.increment();
              tries += v.getStats().getOptimisticTries();
              out.append(' ').append(applied(v, "increment"));
            }
            System.err.println("curator dai-inc: " + count +
                               " increments, " + tries + " optimistic tries");
            say(out.toString());
            break;
          }
          case "dal-inc": {
            DistributedAtomicLong n =
                new DistributedAtomicLong(c, w[1], contended());
            int count = Integer.parseInt(w[2]);
            StringBuilder out = new StringBuilder("ok");
            long tries = 0;
            for (int i = 0; i < count; i++) {
              AtomicValue<Long> v = n.increment();
              tries += v.getStats().getOptimisticTries();
              out.append(' ').append(applied(v, "increment"));
            }
            System.err.println("curator dal-inc: " + count +
                               " increments, " + tries + " optimistic tries");
            say(out.toString());
            break;
          }
          case "dai-add": {
            AtomicValue<Integer> v =
                new DistributedAtomicInteger(c, w[1], contended())
                    .add(Integer.parseInt(w[2]));
            applied(v, "add");
            say("ok " + v.preValue() + " " + v.postValue());
            break;
          }
          case "dal-add": {
            AtomicValue<Long> v =
                new DistributedAtomicLong(c, w[1], contended())
                    .add(Long.parseLong(w[2]));
            applied(v, "add");
            say("ok " + v.preValue() + " " + v.postValue());
            break;
          }
          case "dai-get":
            say("ok " + applied(new DistributedAtomicInteger(
                            c, w[1], contended()).get(), "get"));
            break;
          case "dal-get":
            say("ok " + applied(new DistributedAtomicLong(
                            c, w[1], contended()).get(), "get"));
            break;
          case "sc-start": {
            sc = new SharedCount(c, w[1], Integer.parseInt(w[2]));
            sc.addListener(new SharedCountListener() {
              @Override
              public void countHasChanged(SharedCountReader r, int n) {
                changes.add(n);
              }

              @Override
              public void stateChanged(CuratorFramework f,
                                       ConnectionState s) {}
            });
            sc.start();
            VersionedValue<Integer> v = sc.getVersionedValue();
            say("ok " + v.getValue() + " " + v.getVersion());
            break;
          }
          case "sc-get":
          case "sc-keep": {
            VersionedValue<Integer> v = sc.getVersionedValue();
            if (w[0].equals("sc-keep")) kept = v;
            say("ok " + v.getValue() + " " + v.getVersion());
            break;
          }
          case "sc-tryset-kept":
            say("ok " + sc.trySetCount(kept, Integer.parseInt(w[1])));
            break;
          case "sc-set":
            sc.setCount(Integer.parseInt(w[1]));
            say("ok");
            break;
          case "sc-await": {
            int want = Integer.parseInt(w[1]);
            long end = System.nanoTime() + Long.parseLong(w[2]) * 1000000000L;
            StringBuilder seen = new StringBuilder();
            Integer n = null;
            for (;;) {
              long left = end - System.nanoTime();
              if (left <= 0) break;
              n = changes.poll(left, TimeUnit.NANOSECONDS);
              if (n == null || n == want) break;
              seen.append(' ').append(n);
            }
            if (n != null && n == want) say("ok " + n);
            else say("timeout" + seen);
            break;
          }
          default:
            throw new Exception("unknown command " + line);
        }
      }
      if (sc != null) sc.close();
      say("done");
    } catch (Exception e) {
      say("error " + e);
      status = 1;
    } finally {
      c.close();
    }
    System.exit(status);
  }
}
