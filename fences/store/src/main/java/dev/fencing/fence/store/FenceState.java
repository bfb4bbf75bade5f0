package dev.fencing.fence.store;

/**
 * A lock's fence as a store holds it: the highest token seen ({@code 0} when none) and the id of the grant that
 * advanced the fence to it ({@code null} when that request carried none, or the store keeps no grants). An equal token
 * is accepted only when {@code grant} is null or equal to the request's grant.
 */
public record FenceState(long token, String grant) {

  /** No token seen yet. */
  public static final FenceState NONE = new FenceState(0, null);

  /** Whether a request with {@code token} and {@code requestGrant} (null: none) is a replay of this fence's token. */
  public boolean replayedBy(long token, String requestGrant) {
    return token == this.token && grant != null && !grant.equals(requestGrant);
  }
}
