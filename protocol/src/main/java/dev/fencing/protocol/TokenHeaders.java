package dev.fencing.protocol;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Reads {@code Fencing-Token} and {@code Fencing-Lock} (docs/DESIGN.md section 5), and {@code Fencing-Grant}, strictly. A token is exactly one header
 * of 1 to 19 ASCII digits without sign or leading zero, from 1 to 2^63-1, the same rule as the SQL fence's
 * {@code [1-9][0-9]{0,18}}. Anything else is malformed rather than guessed at: a duplicated header (also the
 * comma-joined form some proxies make of two) could carry an old and a new token, and a lenient parse would let the
 * old one through. The lock must be one header naming a lock this fence guards.
 */
public final class TokenHeaders {

  public static final String TOKEN = HttpHeaderNames.TOKEN;
  public static final String LOCK = HttpHeaderNames.LOCK;
  /** HMAC-SHA256 of (lock, token) in base64url ({@link TokenSignature}); checked by fences that hold the key. */
  public static final String SIGNATURE = HttpHeaderNames.SIGNATURE;
  /**
   * The id of the grant that issued the token (the agent sends the etcd lease id in hex): opaque, 1 to
   * {@value #MAX_GRANT} visible ASCII characters, at most one header. A fence stores it when the token advances the
   * fence and accepts an equal token only from the same grant (or when none is stored). Not signed: a forged grant
   * can only get its own request refused.
   */
  public static final String GRANT = HttpHeaderNames.GRANT;
  /** Longest grant id accepted; a longer one is malformed. */
  public static final int MAX_GRANT = TokenGrammar.MAX_GRANT_LENGTH;
  /** Set on every verdict against the token (409, 428, 400): {@code stale-token}, {@code missing-token}, ... */
  public static final String REJECTED = HttpHeaderNames.REJECTED;
  public static final int MAX_DIGITS = TokenGrammar.MAX_TOKEN_DIGITS;
  /** Longer values are not echoed back at all. */
  private static final int MAX_HEADER = 64;
  private static final String MAX = Long.toString(Long.MAX_VALUE);

  /**
   * The outcome of reading one request's headers: a valid {@code lock} and {@code token}, or a {@code rejection} with
   * its detail. {@code lock} is set whenever the lock header names a guarded lock (also beside a bad token), {@code
   * token} is 0 when it was not read.
   */
  public record Result(String lock, long token, Rejection rejection, String detail, String grant) {

    /** Without a grant. */
    public Result(String lock, long token, Rejection rejection, String detail) {
      this(lock, token, rejection, detail, null);
    }

    public boolean isValid() {
      return rejection == null;
    }

    /** The same verdict with {@code grant} (the request's grant id, null: none). */
    public Result withGrant(String grant) {
      return new Result(lock, token, rejection, detail, grant);
    }
  }

  private TokenHeaders() {
  }

  /**
   * Parses the values of each header as the server delivered them, one list element per header line (null or empty
   * when absent); {@code locks} are the lock names the fence guards.
   */
  public static Result parse(List<String> tokenValues, List<String> lockValues, Set<String> locks) {
    String lock = guardedLock(lockValues, locks);
    if (tokenValues == null || tokenValues.isEmpty()) {
      return invalid(lock, 0, Rejection.MISSING_TOKEN, "no " + TOKEN + " header on a fenced request: send the "
          + "lock holder's token and lock (" + TOKEN + ", " + LOCK + ")");
    }
    if (tokenValues.size() > 1) {
      return invalid(lock, 0, Rejection.MALFORMED_TOKEN, tokenValues.size() + " " + TOKEN + " headers: send "
          + "exactly one");
    }
    String value = strip(tokenValues.get(0));
    String problem = tokenProblem(value);
    if (problem != null) {
      return invalid(lock, 0, Rejection.MALFORMED_TOKEN, problem);
    }
    long token = Long.parseLong(value);
    if (lock == null) {
      return invalid(null, token, Rejection.UNKNOWN_LOCK, lockProblem(lockValues, locks));
    }
    return new Result(lock, token, null, null);
  }

  /**
   * For a fence holding {@code key}: the valid {@code headers} when the only signature value verifies for their (lock,
   * token), else a {@link Rejection#MISSING_SIGNATURE} or {@link Rejection#BAD_SIGNATURE} verdict. Headers that are
   * already invalid, and any headers when {@code key} is null, are returned as they are. Runs before the fence store
   * is asked, so an unsigned or forged token never moves the fence.
   */
  public static Result verify(Result headers, List<String> signatureValues, TokenSignature key) {
    if (key == null || !headers.isValid()) {
      return headers;
    }
    if (signatureValues == null || signatureValues.isEmpty()) {
      return invalid(headers.lock(), headers.token(), Rejection.MISSING_SIGNATURE, "no " + SIGNATURE + " header: "
          + "this fence accepts only signed tokens (the agent signs when fencing.signing.key-file is set)");
    }
    if (signatureValues.size() > 1) {
      return invalid(headers.lock(), headers.token(), Rejection.BAD_SIGNATURE, signatureValues.size() + " "
          + SIGNATURE + " headers: send exactly one");
    }
    if (!key.verify(headers.lock(), headers.token(), strip(signatureValues.get(0)))) {
      return invalid(headers.lock(), headers.token(), Rejection.BAD_SIGNATURE, "the " + SIGNATURE + " of token "
          + headers.token() + " for lock '" + headers.lock() + "' does not verify with this fence's key: forged, "
          + "corrupted or signed with another key");
    }
    return headers;
  }

  /**
   * The valid {@code headers} with the request's grant id (null when it has no {@code Fencing-Grant}), or a
   * {@link Rejection#MALFORMED_TOKEN} verdict for two grant headers or a value that is not 1 to {@value #MAX_GRANT}
   * visible ASCII characters (blanks around it are no part of it). Invalid headers are returned as they are.
   */
  public static Result grant(Result headers, List<String> grantValues) {
    if (!headers.isValid() || grantValues == null || grantValues.isEmpty()) {
      return headers;
    }
    if (grantValues.size() > 1) {
      return invalid(headers.lock(), headers.token(), Rejection.MALFORMED_TOKEN, grantValues.size() + " " + GRANT
          + " headers: send exactly one");
    }
    String value = strip(grantValues.get(0));
    String problem = grantProblem(value);
    if (problem != null) {
      return invalid(headers.lock(), headers.token(), Rejection.MALFORMED_TOKEN, problem);
    }
    return headers.withGrant(value);
  }

  /** Why {@code value} (already stripped of surrounding blanks) is not a grant id, or null when it is one. */
  static String grantProblem(String value) {
    if (value.isEmpty()) {
      return "empty " + GRANT + " header";
    }
    if (value.length() > MAX_GRANT) {
      return "oversized " + GRANT + " header (" + value.length() + " characters): a grant id has at most "
          + MAX_GRANT;
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x21 || c > 0x7e) {
        return "the " + GRANT + " header " + quote(value) + " is not visible ASCII: a grant id is 1 to " + MAX_GRANT
            + " characters from '!' to '~'";
      }
    }
    return null;
  }

  /** Why {@code value} (already stripped of surrounding blanks) is not a token, or null when it is one. */
  static String tokenProblem(String value) {
    if (value.isEmpty()) {
      return "empty " + TOKEN + " header";
    }
    if (value.length() > MAX_HEADER) {
      return "oversized " + TOKEN + " header (" + value.length() + " characters): a token has at most " + MAX_DIGITS
          + " digits";
    }
    if (value.indexOf(',') >= 0) {
      return "several tokens in one " + TOKEN + " header " + quote(value) + " (a comma-joined duplicate): send "
          + "exactly one";
    }
    char first = value.charAt(0);
    if (first == '-') {
      return "negative token " + quote(value) + ": tokens are 1 to " + MAX;
    }
    if (first == '+') {
      return "signed token " + quote(value) + ": send plain decimal digits";
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < '0' || c > '9') {
        return "non-numeric token " + quote(value) + ": send decimal digits";
      }
    }
    if (first == '0') {
      return value.chars().allMatch(c -> c == '0') ? "token 0: tokens start at 1"
          : "leading zero in token " + quote(value) + ": send the plain decimal form";
    }
    if (value.length() > MAX_DIGITS) {
      return "oversized token " + quote(value) + ": more than " + MAX_DIGITS + " digits, above " + MAX + " (2^63-1)";
    }
    if (value.length() == MAX_DIGITS && value.compareTo(MAX) > 0) {
      return "token " + value + " is above " + MAX + " (2^63-1)";
    }
    return null;
  }

  /** The lock named by the only Fencing-Lock header if the fence guards it, else null. */
  private static String guardedLock(List<String> lockValues, Set<String> locks) {
    if (lockValues == null || lockValues.size() != 1) {
      return null;
    }
    String value = strip(lockValues.get(0));
    return locks.contains(value) ? value : null;
  }

  private static String lockProblem(List<String> lockValues, Set<String> locks) {
    String guarded = locks.stream().map(TokenHeaders::quote).collect(Collectors.joining(", "));
    if (lockValues == null || lockValues.isEmpty()) {
      return "no " + LOCK + " header: a token must name its lock (this fence guards " + guarded + ")";
    }
    if (lockValues.size() > 1) {
      return lockValues.size() + " " + LOCK + " headers: send exactly one";
    }
    String value = strip(lockValues.get(0));
    if (value.indexOf(',') >= 0) {
      return "several locks in one " + LOCK + " header " + quote(value) + ": send exactly one";
    }
    return "lock " + quote(value) + " is not fenced here (this fence guards " + guarded + ")";
  }

  private static Result invalid(String lock, long token, Rejection rejection, String detail) {
    return new Result(lock, token, rejection, detail);
  }

  /** Optional whitespace around a field value is not part of it (RFC 9110); servers differ in removing it. */
  private static String strip(String value) {
    if (value == null) {
      return "";
    }
    int start = 0;
    int end = value.length();
    while (start < end && (value.charAt(start) == ' ' || value.charAt(start) == '\t')) {
      start++;
    }
    while (end > start && (value.charAt(end - 1) == ' ' || value.charAt(end - 1) == '\t')) {
      end--;
    }
    return value.substring(start, end);
  }

  /** A client's value for a message: at most 24 characters, printable ASCII only, in quotes. */
  public static String quote(String value) {
    StringBuilder b = new StringBuilder("'");
    int n = Math.min(value.length(), 24);
    for (int i = 0; i < n; i++) {
      char c = value.charAt(i);
      b.append(c >= 0x20 && c < 0x7f ? c : '?');
    }
    return b.append(value.length() > n ? "...'" : "'").toString();
  }
}
