package dev.fencing.fence.http;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Orders the request handlers of one lock in this JVM by token, which is what makes the HTTP fence atomic with the
 * work behind it, as the SQL fence is with the write: a handler runs only after every handler admitted with a lower
 * token has finished, and once a higher token is in, no lower one starts. Without it a request admitted with the old
 * token could still be running, or not yet started, when the new holder's first request has done its work.
 *
 * <p>Requests are grouped in epochs, one per token. Entering the current epoch is a compare-and-set on its counter,
 * and its {@link Epoch#ready} is already complete, so the holder's requests never wait for each other. A higher token
 * opens a new epoch and closes the old one (no one enters it again, so late old-token requests are refused); the new
 * epoch becomes ready when the old one has drained, the analogue of the SQL fence's exclusive lock waiting for the
 * shared holders.
 *
 * <p>The fence store is consulted before the gate: the gate only orders tokens the store accepted, and refuses one that
 * a higher token overtook between the two steps.
 */
final class InFlightGate {

  private final AtomicReference<Epoch> current = new AtomicReference<>(Epoch.initial());

  /** The highest token admitted here so far (0 before any): anything lower is stale without asking the store. */
  long token() {
    return current.get().token;
  }

  /**
   * Enters the epoch of {@code token}, opening it if the token is higher than the current one; null when a higher
   * token is already in (stale). The caller waits for {@link Epoch#ready} before running the handler and calls
   * {@link Epoch#exit} when it has finished.
   */
  Epoch enter(long token) {
    while (true) {
      Epoch e = current.get();
      if (token < e.token) {
        return null;
      }
      if (token == e.token) {
        if (e.tryEnter()) {
          return e;
        }
        continue;
      }
      Epoch next = new Epoch(token, CompletableFuture.allOf(e.ready, e.drained));
      if (current.compareAndSet(e, next)) {
        e.close();
        return next;
      }
    }
  }

  /** The requests admitted with one token: a count of those in flight, and a flag that closes it to newcomers. */
  static final class Epoch {

    private static final int CLOSED = 1 << 30;

    final long token;
    /** Complete when every epoch before this one has drained. */
    final CompletableFuture<Void> ready;
    /** Complete when this epoch is closed and its last request has exited. */
    final CompletableFuture<Void> drained = new CompletableFuture<>();
    private final AtomicInteger state;

    private Epoch(long token, CompletableFuture<Void> ready, int entered) {
      this.token = token;
      this.ready = ready;
      this.state = new AtomicInteger(entered);
    }

    /** A newly opened epoch, entered by the request that opened it. */
    Epoch(long token, CompletableFuture<Void> ready) {
      this(token, ready, 1);
    }

    static Epoch initial() {
      return new Epoch(0, CompletableFuture.completedFuture(null), 0);
    }

    boolean tryEnter() {
      while (true) {
        int s = state.get();
        if ((s & CLOSED) != 0) {
          return false;
        }
        if (state.compareAndSet(s, s + 1)) {
          return true;
        }
      }
    }

    void exit() {
      if (state.decrementAndGet() == CLOSED) {
        drained.complete(null);
      }
    }

    void close() {
      if (state.getAndUpdate(s -> s | CLOSED) == 0) {
        drained.complete(null);
      }
    }
  }
}
