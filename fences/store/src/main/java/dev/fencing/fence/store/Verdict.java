package dev.fencing.fence.store;

/**
 * What a {@link FenceStore} said about one token: {@code current} is the fence token after the check (the token
 * itself when accepted or replayed, the higher token that beat it when stale).
 */
public record Verdict(Outcome outcome, long token, long current) {

  public enum Outcome {
    /** Higher than anything seen: the fence moved to it. */
    ADVANCED,
    /** Equal to the fence token: the same holder, nothing written. */
    ACCEPTED,
    /** Lower than the fence token (or equal, in strict mode): rejected, the fence unchanged. */
    STALE,
    /**
     * Equal to the fence token, but the fence holds it under another grant (or the check carried none while one is
     * stored): the token was issued twice; rejected, the fence unchanged.
     */
    REPLAYED
  }

  public static Verdict advanced(long token) {
    return new Verdict(Outcome.ADVANCED, token, token);
  }

  public static Verdict accepted(long token) {
    return new Verdict(Outcome.ACCEPTED, token, token);
  }

  public static Verdict stale(long token, long current) {
    return new Verdict(Outcome.STALE, token, current);
  }

  /** The token is the fence token, issued to another grant than the one checked. */
  public static Verdict replayed(long token) {
    return new Verdict(Outcome.REPLAYED, token, token);
  }

  public boolean isAccepted() {
    return outcome != Outcome.STALE && outcome != Outcome.REPLAYED;
  }
}
