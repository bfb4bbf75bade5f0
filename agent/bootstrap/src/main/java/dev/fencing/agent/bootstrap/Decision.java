package dev.fencing.agent.bootstrap;

import dev.fencing.protocol.TokenGrammar;
import java.nio.charset.StandardCharsets;

/**
 * What a hook does with one outgoing call: {@link Kind#TAG tag} it with (lock, token), {@link Kind#PASS pass} it
 * untouched, or {@link Kind#BLOCK block} it. Instances are immutable and prebuilt by the policy, so that asking for a
 * decision on the hot path allocates nothing.
 */
public final class Decision {
  public enum Kind { TAG, PASS, BLOCK }

  private final Kind kind;
  private final String lock;
  private final long token;
  private final String tokenText;
  private final BlockReason reason;
  private final boolean observed;
  private final String signature;
  private final String grant;
  private final String[] httpHeaders;
  /** The Kafka header's value, {@code <token>;<lock>[;<grant>]} in ASCII; null unless TAG. */
  private final byte[] kafkaValue;
  /** The signature in ASCII for the Kafka signature header; null when unsigned or not TAG. */
  private final byte[] kafkaSignature;
  /** The caller exemption rule that passed the call (fencing.exempt.callers); null otherwise. */
  private final String exemptCaller;

  private Decision(Kind kind, String lock, long token, BlockReason reason, boolean observed) {
    this(kind, lock, token, reason, observed, null, null);
  }

  private Decision(Kind kind, String lock, long token, BlockReason reason, boolean observed, String signature,
      String grant) {
    this(kind, lock, token, reason, observed, signature, grant, null);
  }

  private Decision(Kind kind, String lock, long token, BlockReason reason, boolean observed, String signature,
      String grant, String exemptCaller) {
    this.exemptCaller = exemptCaller;
    this.signature = signature;
    this.grant = grant;
    this.kind = kind;
    this.lock = lock;
    this.token = token;
    this.tokenText = token > 0 ? Long.toString(token) : null;
    this.reason = reason;
    this.observed = observed;
    this.httpHeaders = kind == Kind.TAG ? httpHeaders(lock, tokenText, signature, grant) : NO_HEADERS;
    this.kafkaValue = kind == Kind.TAG ? kafkaValue(lock, token, grant) : null;
    this.kafkaSignature = kind == Kind.TAG && signature != null ? signature.getBytes(StandardCharsets.US_ASCII) : null;
  }

  /**
   * Built once per decision, as the HTTP headers are; null for what the header cannot carry (a lock name outside the
   * grammar, which configuration and inbound reading never let through, or a malformed grant, then left out).
   */
  private static byte[] kafkaValue(String lock, long token, String grant) {
    if (token <= 0 || !TokenGrammar.validLock(lock)) {
      return null;
    }
    String g = grant != null && TokenGrammar.wellFormedGrant(grant) ? grant : null;
    return TokenGrammar.kafkaValue(token, lock, g).getBytes(StandardCharsets.US_ASCII);
  }

  private static final String[] NO_HEADERS = new String[0];

  /** Built once per decision (decisions are made once per grant and reused): no work per request. */
  private static String[] httpHeaders(String lock, String token, String signature, String grant) {
    int n = 4 + (signature != null ? 2 : 0) + (grant != null ? 2 : 0);
    String[] h = new String[n];
    int i = 0;
    h[i++] = HttpHook.TOKEN_HEADER;
    h[i++] = token;
    h[i++] = HttpHook.LOCK_HEADER;
    h[i++] = lock;
    if (signature != null) {
      h[i++] = HttpHook.SIGNATURE_HEADER;
      h[i++] = signature;
    }
    if (grant != null) {
      h[i++] = HttpHook.GRANT_HEADER;
      h[i] = grant;
    }
    return h;
  }

  /** Tag the call with this lock and token. */
  public static Decision tag(String lock, long token) {
    return new Decision(Kind.TAG, lock, token, null, false);
  }

  /** Tag the call with this lock, token and the token's signature (null: unsigned). */
  public static Decision tag(String lock, long token, String signature) {
    return new Decision(Kind.TAG, lock, token, null, false, signature, null);
  }

  /**
   * Tag the call with this lock, token, the token's signature (null: unsigned) and the id of the grant that issued
   * the token (null: unknown), so that a fence can tell two grants with the same token apart.
   */
  public static Decision tag(String lock, long token, String signature, String grant) {
    return new Decision(Kind.TAG, lock, token, null, false, signature, grant);
  }

  /** As {@link #observedBlock(String, long, BlockReason)}, carrying the token's signature (null: unsigned). */
  public static Decision observedBlock(String lock, long token, BlockReason reason, String signature) {
    return observedBlock(lock, token, reason, signature, null);
  }

  /** As {@link #observedBlock(String, long, BlockReason)}, carrying the token's signature and grant id. */
  public static Decision observedBlock(String lock, long token, BlockReason reason, String signature, String grant) {
    return new Decision(token > 0 ? Kind.TAG : Kind.PASS, lock, token, reason, true, token > 0 ? signature : null,
        token > 0 ? grant : null);
  }

  /** Observe mode: tag (or pass, when there is no token) a call that enforce mode would block for {@code reason}. */
  public static Decision observedBlock(String lock, long token, BlockReason reason) {
    return new Decision(token > 0 ? Kind.TAG : Kind.PASS, lock, token, reason, true);
  }

  /** Let the call through untagged. */
  public static Decision pass(String lock) {
    return new Decision(Kind.PASS, lock, 0, null, false);
  }

  /**
   * Let the call through untagged because its calling code matched the caller exemption rule {@code rule} (a package
   * prefix of fencing.exempt.callers or the built-in callers) where it would have been blocked.
   */
  public static Decision exemptCaller(String lock, String rule) {
    return new Decision(Kind.PASS, lock, 0, null, false, null, null, rule);
  }

  /** Block the call; {@code token} is the last token held, 0 if none. */
  public static Decision block(String lock, long token, BlockReason reason) {
    return new Decision(Kind.BLOCK, lock, token, reason, false);
  }

  public Kind kind() {
    return kind;
  }

  public boolean isTag() {
    return kind == Kind.TAG;
  }

  public boolean isBlock() {
    return kind == Kind.BLOCK;
  }

  public String lock() {
    return lock;
  }

  /** The token to carry (TAG) or the last token held (BLOCK); 0 when there is none. */
  public long token() {
    return token;
  }

  /** The token as the decimal text carried in headers and session variables; null when there is none. */
  public String tokenText() {
    return tokenText;
  }

  /**
   * The signature of (lock, token) to carry beside the token (HTTP {@code Fencing-Signature}, Kafka
   * {@code fencing-signature}, the session's {@code fencing.signature}); null when tokens are not signed, and then
   * nothing extra is sent.
   */
  public String signature() {
    return signature;
  }

  /**
   * The id of the grant that issued the token (the etcd lease id in lower-case hex), carried beside it (HTTP
   * {@code Fencing-Grant}, Kafka {@code fencing}, the session's {@code fencing.grant}); null when unknown (an
   * inbound token that came without one), and then nothing extra is sent.
   */
  public String grant() {
    return grant;
  }

  /**
   * The request headers a tagged HTTP call carries, as name, value, name, value, ...: token and lock, then the
   * signature and the grant when the decision has them (each set so that it replaces any value already there; a
   * client whose request may carry an older {@code Fencing-Grant} removes it when there is none here). Empty unless
   * {@link #isTag()}. Shared: never modify it.
   */
  public String[] httpHeaders() {
    return httpHeaders;
  }

  /**
   * The value of the Kafka header {@link KafkaHook#HEADER} a tagged record carries, {@code <token>;<lock>[;<grant>]}
   * in ASCII; null unless {@link #isTag()} (or for a lock name the header cannot carry). Shared: a record gets a
   * copy.
   */
  public byte[] kafkaValue() {
    return kafkaValue;
  }

  /** The signature in ASCII, for the Kafka signature header; null when unsigned or not a tag. Shared, as above. */
  public byte[] kafkaSignature() {
    return kafkaSignature;
  }

  /** Why the call is blocked (BLOCK), or would be in enforce mode (observed); null otherwise. */
  public BlockReason reason() {
    return reason;
  }

  /** The caller exemption rule that passed the call where it would have been blocked; null for any other decision. */
  public String exemptCaller() {
    return exemptCaller;
  }

  /** True when observe mode let through a call that enforce mode would have blocked. */
  public boolean observed() {
    return observed;
  }

  /** The message of the exception a hook throws for a blocked call. */
  public String blockMessage(Channel channel) {
    return "Fencing Agent blocked a " + channel.label() + " side effect: lock '" + lock + "', token "
        + (token > 0 ? Long.toString(token) : "none") + ": " + (reason == null ? "blocked" : reason.description());
  }

  @Override
  public String toString() {
    return kind + (observed ? "(observed)" : "") + "[lock=" + lock + ", token=" + token
        + (reason == null ? "" : ", reason=" + reason.label()) + "]";
  }
}
