package dev.fencing.faults;

import dev.fencing.testing.TcpProxy;
import java.time.Duration;

/**
 * {@code delay}: the seed's own example, a write <em>sent</em> while its writer held the lock that <em>arrives</em>
 * after the successor's. The proxy between the holder and one resource (PostgreSQL, MariaDB, the HTTP fence or the
 * Kafka broker, at random) holds the bytes of the holder's writes; once a write is surely in flight, the holder loses
 * its lease (frozen, or cut from etcd, at random); the harness waits for a successor and lets it write for a
 * while, then releases the held bytes, and only then gives the old holder its etcd (or its CPU) back. The delayed
 * writes must be rejected by the fence or be ordered before every write of the successor ({@link DelayedWrites}).
 */
final class DelayFault implements FaultKind {
  @Override
  public String inject(Trial trial) {
    WorkerSlot.Status h = trial.holder();
    if (h == null) {
      return "no holder to delay";
    }
    WorkerSlot slot = trial.slot(h);
    String resource = FaultKind.anyResource(trial.random());
    boolean freeze = trial.random().nextBoolean();
    long inFlight = 50 + trial.random().nextInt(150);
    long successorWrites = 300 + trial.random().nextInt(700);
    TcpProxy proxy = slot.dataPath().proxy(resource);
    long from = System.currentTimeMillis();
    proxy.partition();
    WorkerSlot.Status successor;
    boolean caught;
    try {
      // The worker's write to the resource waits in the proxy (its ATTEMPT line has no OUTCOME), a moment more so
      // that its bytes have left the driver; a loaded machine can take seconds to get there.
      caught = awaitInFlight(slot, resource, 5_000);
      FaultKind.sleep(inFlight);
      if (freeze) {
        slot.current().jvm().suspend();
      } else {
        slot.proxies().forEach(TcpProxy::partition);
      }
      try {
        successor = trial.holder(Duration.ofSeconds(30), h.token());
        FaultKind.sleep(successorWrites);
      } finally {
        proxy.heal();
        trial.held(new DelayedWrites.Hold(h.worker(), resource, h.token(), from, System.currentTimeMillis()));
        FaultKind.sleep(200);
        if (freeze) {
          slot.current().jvm().resume();
        } else {
          slot.proxies().forEach(TcpProxy::heal);
        }
      }
    } catch (RuntimeException e) {
      proxy.heal();
      throw e;
    }
    return (caught ? "" : "(no write in flight within 5 s) ") + "held " + h.worker() + "'s (token " + h.token() + ") bytes to " + resource + " while it was "
        + (freeze ? "frozen" : "cut off the coordinator") + " until " + (successor == null ? "no successor"
        : successor.worker() + " (token " + successor.token() + ")") + " had written for " + successorWrites
        + " ms, then released them (" + (System.currentTimeMillis() - from) + " ms in all)";
  }

  /** Whether the worker's last attempt on {@code resource} (in the tail of its log) has no outcome yet. */
  private static boolean awaitInFlight(WorkerSlot slot, String resource, long timeoutMs) {
    long end = System.nanoTime() + timeoutMs * 1_000_000;
    while (System.nanoTime() < end) {
      String last = null;
      for (String line : tail(slot.current().jvm().logFile(), 8_192).split("\n")) {
        String[] f = line.split(" ", 5);
        if (f.length >= 4 && (f[0].equals("ATTEMPT") || f[0].equals("OUTCOME")) && f[3].equals(resource)) {
          last = f[0];
        }
      }
      if ("ATTEMPT".equals(last)) {
        return true;
      }
      FaultKind.sleep(20);
    }
    return false;
  }

  private static String tail(java.nio.file.Path file, int bytes) {
    try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(file.toFile(), "r")) {
      long start = Math.max(0, f.length() - bytes);
      byte[] b = new byte[(int) (f.length() - start)];
      f.seek(start);
      f.readFully(b);
      return new String(b, java.nio.charset.StandardCharsets.UTF_8);
    } catch (java.io.IOException e) {
      return "";
    }
  }
}
