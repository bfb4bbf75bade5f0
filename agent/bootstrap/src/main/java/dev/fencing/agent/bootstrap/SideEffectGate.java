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
   * The decision a write to a fenced destination would get now on this thread, without waiting, counting or
   * reporting; null on the agent's own threads. Read when the OpenTelemetry agent starts a client span, to stamp it
   * with {@code fencing.lock} / {@code fencing.token}.
   */
  default Decision current() {
    return null;
  }
}
