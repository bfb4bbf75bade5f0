package dev.fencing.protocol;

/**
 * Why the fence refused a request: its HTTP status, problem type, {@code Fencing-Rejected} header value (null for the
 * 503s, which are no verdict on the token) and the {@code reason} label of fencing_fence_rejections_total.
 */
public enum Rejection {
  STALE_TOKEN(409, "stale_token", "stale-token", "Stale fencing token"),
  MISSING_TOKEN(428, "missing_token", "missing-token", "Missing fencing token"),
  MALFORMED_TOKEN(400, "malformed_token", "malformed-token", "Malformed fencing token"),
  /** Fencing-Lock missing, repeated, or naming a lock this fence does not guard. */
  UNKNOWN_LOCK(400, "unknown_lock", "unknown-lock", "Unknown fencing lock"),
  /** The fence store failed (e.g. its database is down): fail closed. */
  STORE_UNAVAILABLE(503, "store_unavailable", null, "Fence store unavailable"),
  /** An advancing request waited too long for requests with the older token to finish. */
  DRAIN_TIMEOUT(503, "drain_timeout", null, "Fence busy draining older requests"),
  /** The fence holds a signing key and the request carries a token without Fencing-Signature. */
  MISSING_SIGNATURE(428, "missing_signature", "missing-signature", "Missing fencing signature"),
  /**
   * The fence holds a signing key and the signature does not verify for (lock, token): forged, corrupted, signed with
   * another key, malformed or repeated. 403: the token may be well formed, but it is not vouched for.
   */
  BAD_SIGNATURE(403, "bad_signature", "bad-signature", "Invalid fencing signature"),
  /**
   * The token equals the fence token but was issued to another grant than the one stored with it (or the request
   * carries none while one is stored): a coordinator restored from a snapshot reissued the token to a second holder.
   */
  REPLAYED_TOKEN(409, "replayed_token", "replayed-token", "Replayed fencing token");

  /** Problem types are URNs of this prefix, e.g. {@code urn:fencing:problem:stale-token}. */
  public static final String TYPE_PREFIX = "urn:fencing:problem:";

  private final int status;
  private final String label;
  private final String header;
  private final String title;

  Rejection(int status, String label, String header, String title) {
    this.status = status;
    this.label = label;
    this.header = header;
    this.title = title;
  }

  public int status() {
    return status;
  }

  /** The {@code reason} label. */
  public String label() {
    return label;
  }

  /** The {@code Fencing-Rejected} header value, null when the response carries none. */
  public String header() {
    return header;
  }

  public String title() {
    return title;
  }

  public String type() {
    return TYPE_PREFIX + label.replace('_', '-');
  }
}
