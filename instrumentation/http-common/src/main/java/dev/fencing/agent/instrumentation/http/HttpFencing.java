package dev.fencing.agent.instrumentation.http;

import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.HttpHook;
import dev.fencing.agent.bootstrap.ReentryGuard;
import dev.fencing.agent.instrumentation.api.InstrumentationConfig;
import dev.fencing.agent.instrumentation.api.AgentContext;
import dev.fencing.agent.instrumentation.api.DestinationInventory;
import dev.fencing.agent.instrumentation.api.RejectionCounters;
import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import dev.fencing.protocol.Rejection;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The HTTP side of the policy, shared by every HTTP client instrumentation: is the method a side effect, is the
 * destination fenced (fencing.fenced.http) or exempt (fencing.exempt.http), and counting the 409s fences answer with.
 */
public final class HttpFencing implements HttpHook {
  private final Set<String> unsafeMethods;
  /**
   * The same methods, interned: a client passes its method as a constant ("POST"), so a reference compare usually
   * decides without hashing (the set's probe divides by its size).
   */
  private final String[] unsafeMethodConstants;
  /** A fenced destination; port -1 means any port. */
  private record Destination(String host, int port) {
    static Destination parse(String text) {
      String t = text.trim().toLowerCase(Locale.ROOT);
      int colon = t.lastIndexOf(':');
      if (colon > 0 && t.indexOf(']') < colon) {
        try {
          return new Destination(t.substring(0, colon), Integer.parseInt(t.substring(colon + 1)));
        } catch (NumberFormatException e) {
          // "host:*" or junk after the colon: any port
          return new Destination(t.substring(0, colon), -1);
        }
      }
      return new Destination(t, -1);
    }
  }

  /** fencing.fenced.http; an array, so the match walks it without an iterator. */
  private final Destination[] fencedDestinations;
  private final RejectionCounters rejections;
  /** fencing.exempt.http, answered once per host. */
  private final HostExemptions exempt;
  private final SideEffectCounters sideEffects;
  /** What an exempt request gets: untagged, never blocked. Built once. */
  private final Decision exemptPass;
  private final DestinationInventory inventory;
  /**
   * The (destination, lock) of the thread's last unsafe request, to which a fence's 409 on this thread is attributed:
   * the blocking clients read the response on the thread that sent the request.
   */
  private final ThreadLocal<DestinationInventory.PerLock> lastWrite = new ThreadLocal<>();

  HttpFencing(InstrumentationConfig config, RejectionCounters rejections) {
    this(config, rejections, new SideEffectCounters());
  }

  HttpFencing(InstrumentationConfig config, RejectionCounters rejections, SideEffectCounters sideEffects) {
    this(config, rejections, sideEffects, new DestinationInventory());
  }

  HttpFencing(InstrumentationConfig config, RejectionCounters rejections, SideEffectCounters sideEffects,
      DestinationInventory inventory) {
    this.inventory = inventory;
    this.unsafeMethods = Set.copyOf(config.unsafeHttpMethods());
    // Loops, not streams: this runs in premain, where each lambda and method reference would spin a class.
    this.unsafeMethodConstants = new String[unsafeMethods.size()];
    int m = 0;
    for (String method : unsafeMethods) {
      unsafeMethodConstants[m++] = method.intern();
    }
    List<String> fenced = config.fencedHttp();
    this.fencedDestinations = new Destination[fenced.size()];
    for (int i = 0; i < fencedDestinations.length; i++) {
      fencedDestinations[i] = Destination.parse(fenced.get(i));
    }
    this.rejections = rejections;
    this.exempt = new HostExemptions(config.exemptHttp());
    this.sideEffects = sideEffects;
    this.exemptPass = Decision.pass(config.lock());
  }

  /** Installs the hook once, whichever HTTP client module comes first. */
  public static synchronized void install(AgentContext context) {
    if (!(Fencing.http() instanceof HttpFencing)) {
      Fencing.installHttp(new HttpFencing(context.config(), context.rejections(), context.sideEffects(),
          context.inventory()));
    }
  }

  @Override
  public Decision decide(String method, String scheme, String host, int port) {
    boolean write = true;
    try {
      write = unsafe(method);
      if (exempt.exempt(scheme, host, port)) {
        // Not a lock-protected side effect (fencing.exempt.http): untagged, never blocked, under any lease state.
        if (write && !ReentryGuard.isAgentThread()) {
          sideEffects.recordExempt(Channel.HTTP, false);
          inventory.method(inventory.recordExempt(inventory.http(scheme, host, port), exemptPass.lock()), method);
        }
        return exemptPass;
      }
      boolean fenced = fenced(scheme, host, port);
      Decision d = Fencing.decide(Channel.HTTP, write, fenced);
      if (write && !ReentryGuard.isAgentThread()) {
        DestinationInventory.PerLock p = inventory.record(inventory.http(scheme, host, port), fenced, d);
        inventory.method(p, method);
        if (p != null) {
          lastWrite.set(p);
        }
      }
      return d;
    } catch (Throwable t) {
      return Fencing.hookFailed(Channel.HTTP, write, t); // never an error the request would not have had
    }
  }

  /**
   * Whether the method is a side effect, ignoring case: clients send what the application wrote ("post" is accepted by
   * some), and a lower-case POST must not pass as a read. Upper-case methods, the usual case, allocate nothing
   * (toUpperCase returns the string itself when nothing changes).
   */
  boolean unsafe(String method) {
    if (method == null) {
      return true;
    }
    for (String m : unsafeMethodConstants) {
      if (m == method) {
        return true;
      }
    }
    return unsafeMethods.contains(method) || unsafeMethods.contains(method.toUpperCase(java.util.Locale.ROOT));
  }

  /**
   * Whether a fenced destination matches, ignoring the host's case. The configured hosts are lower case, as clients
   * usually send them: an exact compare (a vectorised intrinsic) decides those, and only a host of the same length
   * that differs takes the per-character case-insensitive compare.
   */
  boolean fenced(String scheme, String host, int port) {
    Destination[] fenced = fencedDestinations;
    if (fenced.length == 0 || host == null) {
      return false;
    }
    int p = port >= 0 ? port : "https".equalsIgnoreCase(scheme) ? 443 : 80;
    for (Destination d : fenced) {
      if ((d.port < 0 || d.port == p) && (d.host.equals(host) || d.host.equalsIgnoreCase(host))) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void observe(CompletableFuture<?> response) {
    if (ReentryGuard.isAgentThread()) {
      return; // the agent's own requests (OTLP export): a 409 there is no fence's verdict on this JVM's writes
    }
    response.whenComplete(onJdkResponse);
  }

  /**
   * A JDK HttpClient response, on whichever thread completes it: a 409 is attributed to its own request (the last of
   * the exchange, after redirects), never to what that thread or the sender wrote last. Made once.
   */
  private final java.util.function.BiConsumer<Object, Throwable> onJdkResponse = new JdkResponses();

  /** {@link #onJdkResponse}: a class of its own rather than a lambda, which premain would spin. */
  private final class JdkResponses implements java.util.function.BiConsumer<Object, Throwable> {
    @Override
    public void accept(Object r, Throwable error) {
      if (r instanceof HttpResponse) {
        HttpResponse<?> http = (HttpResponse<?>) r;
        if (http.statusCode() == 409) {
          java.net.URI uri = http.uri();
          responded(409, http.headers().firstValue(REJECTED_HEADER).orElse(null),
              http.request().headers().firstValue(LOCK_HEADER).orElse(null), uri.getScheme(), uri.getHost(),
              uri.getPort());
        }
      }
    }
  }

  @Override
  public void responded(int status, String rejectedHeader) {
    if (status == 409) {
      rejected(rejectedHeader, lastWrite.get());
    }
  }

  /**
   * A response read apart from its request's thread: its refusal goes to the entry of the request's lock at its
   * target, when a side effect of that lock went there; a request without a pair ({@code lock} null) is counted, but
   * credited to no destination.
   */
  @Override
  public void responded(int status, String rejectedHeader, String lock, String scheme, String host, int port) {
    if (status == 409) {
      rejected(rejectedHeader, rejectedHeader == null ? null : inventory.knownHttp(scheme, host, port, lock));
    }
  }

  private void rejected(String rejectedHeader, DestinationInventory.PerLock sent) {
    if (rejectedHeader != null) {
      String value = rejectedHeader.trim();
      boolean stale = value.equalsIgnoreCase(Rejection.STALE_TOKEN.header());
      if (stale || value.equalsIgnoreCase(Rejection.REPLAYED_TOKEN.header())) {
        rejections.record(Channel.HTTP, stale ? RejectionCounters.Reason.STALE_TOKEN
            : RejectionCounters.Reason.REPLAYED_TOKEN);
        if (sent != null) {
          sent.rejected();
        }
      }
    }
  }
}
