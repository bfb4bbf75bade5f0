package dev.fencing.fence.http;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What {@link HttpFence#decide} said about one request: pass (not fenced, or permissive without a token), admit (the
 * token was accepted; {@link #release} when the handler has finished), or reject with a {@link Problem} to send.
 */
public final class Decision {

  static final Decision PASS = new Decision(null, null, null, 0);

  private final Problem problem;
  private final InFlightGate.Epoch epoch;
  private final String lock;
  private final long token;
  private final AtomicBoolean released;

  private Decision(Problem problem, InFlightGate.Epoch epoch, String lock, long token) {
    this.problem = problem;
    this.epoch = epoch;
    this.lock = lock;
    this.token = token;
    this.released = epoch == null ? null : new AtomicBoolean();
  }

  static Decision reject(Problem problem) {
    return new Decision(problem, null, null, 0);
  }

  static Decision admit(InFlightGate.Epoch epoch, String lock, long token) {
    return new Decision(null, epoch, lock, token);
  }

  public boolean isRejected() {
    return problem != null;
  }

  /** The response to send instead of calling the handler; null unless rejected. */
  public Problem problem() {
    return problem;
  }

  /** Whether a token was checked and admitted (false for a request the fence let pass unchecked). */
  public boolean isAdmitted() {
    return epoch != null;
  }

  /** The admitted lock, null unless admitted. */
  public String lock() {
    return lock;
  }

  /** The admitted token, 0 unless admitted. */
  public long token() {
    return token;
  }

  /**
   * Ends an admitted request, letting a higher token's requests proceed once all of this one's have ended. Call it
   * exactly when the handler's work is done (idempotent; nothing for a pass or a rejection).
   */
  public void release() {
    if (epoch != null && released.compareAndSet(false, true)) {
      epoch.exit();
    }
  }
}
