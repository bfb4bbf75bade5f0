package dev.fencing.agent.bootstrap;

import java.io.IOException;

/**
 * Thrown by HTTP hooks for a blocked request. An {@link IOException}, which every HTTP client caller already
 * handles; the message names the lock, the token and the reason.
 */
public final class FencingBlockedException extends IOException {
  private static final long serialVersionUID = 1L;

  private final transient Decision decision;

  public FencingBlockedException(Channel channel, Decision decision) {
    super(decision.blockMessage(channel));
    this.decision = decision;
  }

  public Decision decision() {
    return decision;
  }
}
