package dev.fencing.agent.bootstrap;

/** Implemented by the agent core's policy; asked once per side effect by every hook. */
public interface SideEffectGate {
  /**
   * @param channel the library family making the call
   * @param write   true for a side effect (SQL write, unsafe HTTP method, Kafka send); reads are never blocked
   * @param fenced  true when the destination checks tokens (configured or detected)
   */
  Decision decide(Channel channel, boolean write, boolean fenced);

  /**
   * Whether work already done may still take effect now, e.g. the commit of a transaction that wrote: the decision a
   * write would get, but never waiting for the lease ({@code fencing.standby=wait}: a later grant must not vouch for
   * work done under an earlier one), and counted and reported only when it blocks (or would, in observe mode), since
   * the work itself was counted when it was done.
   */
  default Decision checkNow(Channel channel, boolean fenced) {
    return decide(channel, true, fenced);
  }

  /**
   * Whether records decided earlier, still buffered in a client library (a Kafka producer's batches), may leave now
   * toward a destination: null when they may; otherwise the block decision, counted {@code count} times (0: only
   * asking) and reported. {@code taggedWith} is the TAG decision this gate gave them (null: they were not tagged with
   * a grant of this JVM); they may leave only while that grant is still held, before its local deadline. Never waits:
   * a later grant must not vouch for records tagged under an earlier one. Observe mode never blocks them.
   */
  default Decision recheck(Channel channel, boolean fenced, Decision taggedWith, int count) {
    return null;
  }

  /**
   * The decision a write to a fenced destination would get now on this thread, without waiting, counting or
   * reporting; null on the agent's own threads. Read when the OpenTelemetry agent starts a client span, to stamp it
   * with {@code fencing.lock} / {@code fencing.token}.
   */
  default Decision current() {
    return null;
  }

  /**
   * A hook failed to do its part for one call (an exception from the agent's own code, or from an application object
   * the hook asked something the application did not). Counted and reported (rate-limited); returns what fail-mode
   * says: block a write (closed) or let it through untagged (open). Reads are never blocked.
   */
  default Decision hookFailed(Channel channel, boolean write, Throwable error) {
    return write ? Decision.block("(unknown)", 0, BlockReason.HOOK_FAILED) : Decision.pass("(unknown)");
  }
}
