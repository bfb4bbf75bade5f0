package dev.fencing.fence.store;

import dev.fencing.protocol.TokenGrammar;
import dev.fencing.protocol.TokenSignature;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Which requests the HTTP fence checks and how: path prefixes and methods that are side effects (POST, PUT, PATCH,
 * DELETE by default, docs/DESIGN.md section 4), the locks whose tokens it accepts, strict mode (token above the fence, for
 * per-request tokens), permissive mode (a request without a token passes, for a gradual rollout; a malformed or stale
 * one is still refused), and how long an advancing request waits for requests with the older token to finish.
 */
public final class FencePolicy {

  public static final Set<String> DEFAULT_METHODS = Collections.unmodifiableSet(
      new LinkedHashSet<>(List.of("POST", "PUT", "PATCH", "DELETE")));
  public static final Duration DEFAULT_DRAIN_TIMEOUT = Duration.ofSeconds(10);
  private static final Pattern METHOD = Pattern.compile("[A-Za-z]{1,32}");

  private final Set<String> locks;
  private final List<String> paths;
  private final Set<String> methods;
  private final boolean strict;
  private final boolean permissive;
  private final Duration drainTimeout;
  private final TokenSignature signingKey;

  private FencePolicy(Builder b) {
    if (b.locks.isEmpty()) {
      throw new IllegalArgumentException("no lock: name the lock(s) whose tokens the fence accepts");
    }
    this.locks = Collections.unmodifiableSet(new LinkedHashSet<>(b.locks));
    this.paths = List.copyOf(b.paths.isEmpty() ? List.of("/") : b.paths);
    this.methods = Collections.unmodifiableSet(new LinkedHashSet<>(b.methods));
    this.strict = b.strict;
    this.permissive = b.permissive;
    this.drainTimeout = b.drainTimeout;
    this.signingKey = b.signingKey;
  }

  /** A policy for the given locks: every path, the default methods, normal (non-strict, non-permissive) mode. */
  public static Builder forLocks(String... locks) {
    Builder b = new Builder();
    for (String lock : locks) {
      b.lock(lock);
    }
    return b;
  }

  /**
   * A policy from string settings (servlet init parameters, properties): {@code locks} (required), {@code paths},
   * {@code methods} (comma-separated), {@code strict}, {@code permissive} ({@code true}/{@code false}),
   * {@code drainTimeoutMillis}, {@code signingKeyFile}. An invalid value fails naming the key, the value and the expected form.
   */
  public static FencePolicy fromSettings(Function<String, String> settings) {
    Builder b = new Builder();
    String locks = settings.apply("locks");
    if (locks == null || locks.isBlank()) {
      throw new IllegalArgumentException("missing setting 'locks': expected comma-separated lock names");
    }
    split(locks).forEach(b::lock);
    String paths = settings.apply("paths");
    if (paths != null) {
      split(paths).forEach(b::path);
    }
    String methods = settings.apply("methods");
    if (methods != null) {
      b.methods(split(methods).toArray(String[]::new));
    }
    b.strict(bool(settings, "strict"));
    b.permissive(bool(settings, "permissive"));
    String drain = settings.apply("drainTimeoutMillis");
    if (drain != null) {
      try {
        b.drainTimeout(Duration.ofMillis(Long.parseLong(drain.trim())));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("invalid setting drainTimeoutMillis='" + drain
            + "': expected a positive number of milliseconds");
      }
    }
    String keyFile = settings.apply("signingKeyFile");
    if (keyFile != null && !keyFile.isBlank()) {
      try {
        b.signingKey(TokenSignature.load(Path.of(keyFile.trim())));
      } catch (IllegalArgumentException e) { // InvalidPathException is one
        throw new IllegalArgumentException("invalid setting signingKeyFile='" + keyFile + "': " + e.getMessage());
      }
    }
    return b.build();
  }

  public Set<String> locks() {
    return locks;
  }

  public List<String> paths() {
    return paths;
  }

  public Set<String> methods() {
    return methods;
  }

  public boolean strict() {
    return strict;
  }

  public boolean permissive() {
    return permissive;
  }

  public Duration drainTimeout() {
    return drainTimeout;
  }

  /** The key fenced requests' tokens must be signed with; null when the fence accepts unsigned tokens. */
  public TokenSignature signingKey() {
    return signingKey;
  }

  /**
   * Whether a request is fenced: its method (in any case) is a fenced one and its path lies under a fenced prefix.
   * The path is normalised first (duplicate slashes, {@code .} and {@code ..} segments), so that {@code /x/../api}
   * cannot slip past a prefix {@code /api}; a path that climbs above the root is fenced.
   */
  public boolean fences(String method, String path) {
    if (method == null || !methods.contains(method.toUpperCase(Locale.ROOT))) {
      return false;
    }
    String normal = normalise(path);
    if (normal == null) {
      return true;
    }
    for (String prefix : paths) {
      if (prefix.equals("/") || normal.equals(prefix) || normal.startsWith(prefix + "/")) {
        return true;
      }
    }
    return false;
  }

  /** The path with empty and {@code .} segments dropped and {@code ..} resolved, or null when it climbs above /. */
  static String normalise(String path) {
    List<String> segments = new ArrayList<>();
    for (String s : (path == null ? "" : path).split("/")) {
      if (s.isEmpty() || s.equals(".")) {
        continue;
      }
      if (s.equals("..")) {
        if (segments.isEmpty()) {
          return null;
        }
        segments.remove(segments.size() - 1);
      } else {
        segments.add(s);
      }
    }
    return "/" + String.join("/", segments);
  }

  @Override
  public String toString() {
    return "locks " + locks + ", paths " + paths + ", methods " + methods + (strict ? ", strict" : "")
        + (permissive ? ", permissive" : "") + ", drain timeout " + drainTimeout.toMillis() + " ms"
        + (signingKey != null ? ", signed tokens only" : "");
  }

  private static List<String> split(String list) {
    List<String> out = new ArrayList<>();
    for (String s : list.split(",")) {
      if (!s.isBlank()) {
        out.add(s.trim());
      }
    }
    return out;
  }

  private static boolean bool(Function<String, String> settings, String key) {
    String v = settings.apply(key);
    if (v == null || v.isBlank()) {
      return false;
    }
    switch (v.trim().toLowerCase(Locale.ROOT)) {
      case "true":
        return true;
      case "false":
        return false;
      default:
        throw new IllegalArgumentException("invalid setting " + key + "='" + v + "': expected true or false");
    }
  }

  /** Builds a {@link FencePolicy}; each setter validates its value. */
  public static final class Builder {
    private final Set<String> locks = new LinkedHashSet<>();
    private final List<String> paths = new ArrayList<>();
    private Set<String> methods = DEFAULT_METHODS;
    private boolean strict;
    private boolean permissive;
    private Duration drainTimeout = DEFAULT_DRAIN_TIMEOUT;
    private TokenSignature signingKey;

    private Builder() {
    }

    public Builder lock(String lock) {
      if (!TokenGrammar.validLock(lock)) { // the agent's rule for lock names (fencing.lock)
        throw new IllegalArgumentException("invalid lock name '" + lock
            + "': expected 1 to 128 characters of A-Z a-z 0-9 . _ - (as for fencing.lock)");
      }
      locks.add(lock);
      return this;
    }

    /**
     * A fenced path prefix, matched by whole segments: {@code /api} fences {@code /api} and {@code /api/orders}, not
     * {@code /apix}. Without any, every path is fenced. Servlet filters match the path inside the web application
     * (without the context path), the JDK HttpServer filter the full request path.
     */
    public Builder path(String prefix) {
      if (prefix == null || !prefix.startsWith("/")) {
        throw new IllegalArgumentException("invalid path prefix '" + prefix + "': expected a path starting with /");
      }
      String normal = normalise(prefix);
      if (normal == null) {
        throw new IllegalArgumentException("invalid path prefix '" + prefix + "': it climbs above /");
      }
      paths.add(normal);
      return this;
    }

    public Builder paths(String... prefixes) {
      Arrays.stream(prefixes).forEach(this::path);
      return this;
    }

    /** The fenced methods, replacing the default POST, PUT, PATCH, DELETE. */
    public Builder methods(String... names) {
      Set<String> set = new LinkedHashSet<>();
      for (String m : names) {
        if (m == null || !METHOD.matcher(m).matches()) {
          throw new IllegalArgumentException("invalid method '" + m + "': expected an HTTP method name such as POST");
        }
        set.add(m.toUpperCase(Locale.ROOT));
      }
      if (set.isEmpty()) {
        throw new IllegalArgumentException("no method: name at least one fenced method");
      }
      this.methods = set;
      return this;
    }

    /** Accept only tokens above the fence: each token passes once (per-request tokens). */
    public Builder strict(boolean strict) {
      this.strict = strict;
      return this;
    }

    /** Let a fenced request without Fencing-Token through (rollout); malformed and stale tokens are still refused. */
    public Builder permissive(boolean permissive) {
      this.permissive = permissive;
      return this;
    }

    public Builder drainTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "timeout");
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("invalid drain timeout " + timeout + ": expected a positive duration");
      }
      this.drainTimeout = timeout;
      return this;
    }

    /**
     * Accept only tokens signed with this key ({@code Fencing-Signature}): an unsigned token gets 428, a forged one
     * 403, before the store is asked. Null (the default) accepts unsigned tokens.
     */
    public Builder signingKey(TokenSignature key) {
      this.signingKey = key;
      return this;
    }

    public FencePolicy build() {
      return new FencePolicy(this);
    }
  }
}
