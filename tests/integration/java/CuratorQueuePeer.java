// tests/integration/java/CuratorQueuePeer.java - Curator 5.4's
// SimpleDistributedQueue as a peer of zkl's queue in the interop tests
// (test-queue-interop.c compiles and runs it).  Usage:
//   CuratorQueuePeer HOSTS PATH offer HEX...   offers each payload (hex)
//   CuratorQueuePeer HOSTS PATH take N SECS    takes N items, each waited
//                                              for up to SECS seconds
//   CuratorQueuePeer HOSTS PATH drain          takes what is there now
// It prints "ready" once connected, then one line per item taken (the
// payload in hex, "-" for empty; "timeout" when none came in time), and
// "done" at the end.  Any failure: "error <what>", exit status 1.
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;
import org.apache.curator.retry.RetryOneTime;

public class CuratorQueuePeer {
  static String hex(byte[] b) {
    if (b.length == 0) return "-";
    StringBuilder s = new StringBuilder();
    for (byte x : b) s.append(String.format("%02x", x & 0xff));
    return s.toString();
  }

  static byte[] unhex(String h) {
    if (h.equals("-")) return new byte[0];
    byte[] b = new byte[h.length() / 2];
    for (int i = 0; i < b.length; i++)
      b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
    return b;
  }

  public static void main(String[] a) {
    int status = 0;
    CuratorFramework c = CuratorFrameworkFactory.newClient(
        a[0], 10000, 10000, new RetryOneTime(200));
    try {
      c.start();
      if (!c.blockUntilConnected(15, TimeUnit.SECONDS))
        throw new Exception("not connected");
      SimpleDistributedQueue q = new SimpleDistributedQueue(c, a[1]);
      System.out.println("ready");
      System.out.flush();
      switch (a[2]) {
        case "offer":
          for (int i = 3; i < a.length; i++) q.offer(unhex(a[i]));
          break;
        case "take": {
          int n = Integer.parseInt(a[3]);
          long secs = Long.parseLong(a[4]);
          for (int i = 0; i < n; i++) {
            byte[] b = q.poll(secs, TimeUnit.SECONDS);
            System.out.println(b == null ? "timeout" : hex(b));
            System.out.flush();
          }
          break;
        }
        case "drain": {
          byte[] b;
          while ((b = q.poll()) != null) System.out.println(hex(b));
          break;
        }
        default:
          throw new Exception("unknown mode " + a[2]);
      }
      System.out.println("done");
    } catch (Exception e) {
      System.out.println("error " + e);
      status = 1;
    } finally {
      System.out.flush();
      c.close();
    }
    System.exit(status);
  }
}
