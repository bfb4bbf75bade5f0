package dev.fencing.agent.token;

/** An immutable snapshot of the token state, replaced on every transition. */
public final class TokenView {
  private final LeasePhase phase;
  private final Grant grant;
  private final LossReason lastLoss;
  private final String detail;

  TokenView(LeasePhase phase, Grant grant, LossReason lastLoss, String detail) {
    this.phase = phase;
    this.grant = grant;
    this.lastLoss = lastLoss;
    this.detail = detail;
  }

  /** The phase as stored; {@link #phaseAt(long)} applies the local deadline. */
  public LeasePhase storedPhase() {
    return phase;
  }

  /** The phase at {@code nowNanos}: HOLDING turns into EXPIRED the moment the deadline passes, without any writer. */
  public LeasePhase phaseAt(long nowNanos) {
    return phase == LeasePhase.HOLDING && !grant.validAt(nowNanos) ? LeasePhase.EXPIRED : phase;
  }

  /** The current grant, or the last one after a loss; null if the lease was never held. */
  public Grant grant() {
    return grant;
  }

  public LossReason lastLoss() {
    return lastLoss;
  }

  /** Why the agent is FAILED or what it is doing, for status and doctor; may be null. */
  public String detail() {
    return detail;
  }
}
