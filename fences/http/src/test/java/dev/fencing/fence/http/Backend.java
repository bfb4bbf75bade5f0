package dev.fencing.fence.http;

import dev.fencing.protocol.TokenHeaders;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The application behind the fence in the server tests, the same for both servers: it records every request it gets
 * (in the order its handler starts, under the fence) and can be told by request headers to hold, meet other requests
 * at a barrier, or sleep, so that tests can overlap requests on purpose.
 */
final class Backend {

  static final String HOLD = "X-Test-Hold";
  static final String BARRIER = "X-Test-Barrier";
  static final String SLEEP_MICROS = "X-Test-Sleep-Micros";

  /** One handled request: its place in the order of handler starts, and the token header it carried. */
  record Entry(long seq, String method, String path, String token) {
  }

  private final AtomicLong seq = new AtomicLong();
  private final ConcurrentLinkedQueue<Entry> entries = new ConcurrentLinkedQueue<>();
  private final Map<String, CountDownLatch> arrived = new ConcurrentHashMap<>();
  private final Map<String, CountDownLatch> released = new ConcurrentHashMap<>();
  private volatile CyclicBarrier barrier;

  /** Handles one request; {@code header} reads a request header. Returns the status; the body is "ok". */
  int handle(String method, String path, java.util.function.Function<String, String> header) throws Exception {
    entries.add(new Entry(seq.incrementAndGet(), method, path, header.apply(TokenHeaders.TOKEN)));
    String hold = header.apply(HOLD);
    if (hold != null) {
      latch(arrived, hold).countDown();
      if (!latch(released, hold).await(20, TimeUnit.SECONDS)) {
        return 500;
      }
    }
    if (header.apply(BARRIER) != null) {
      barrier.await(10, TimeUnit.SECONDS);
    }
    String sleep = header.apply(SLEEP_MICROS);
    if (sleep != null) {
      LockSupport.parkNanos(Long.parseLong(sleep) * 1000);
    }
    return 200;
  }

  List<Entry> entries() {
    List<Entry> out = new ArrayList<>(entries);
    out.sort((a, b) -> Long.compare(a.seq(), b.seq()));
    return out;
  }

  void barrier(int parties) {
    barrier = new CyclicBarrier(parties);
  }

  boolean awaitArrival(String hold, long millis) throws InterruptedException {
    return latch(arrived, hold).await(millis, TimeUnit.MILLISECONDS);
  }

  void release(String hold) {
    latch(released, hold).countDown();
  }

  private static CountDownLatch latch(Map<String, CountDownLatch> latches, String name) {
    return latches.computeIfAbsent(name, k -> new CountDownLatch(1));
  }
}
