package dev.fencing.agent.bootstrap;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;

/**
 * What the Reactor Netty HttpClient advice does beyond {@link HttpAttempt}: carry the inbound token or section scope of
 * the thread that assembled a request into the Reactor context of its connection (the attempts run on a Netty event
 * loop, where the thread-local {@link TokenContext} of the application's thread is not), decide each attempt from the
 * URL Reactor Netty is about to request, under that carried context, and read a response's status and
 * {@code Fencing-Rejected} header, with the target and the {@code Fencing-Lock} of the attempt it answers. Reactor
 * Netty's types are public and reached by method handles looked up once per class; the Netty types behind them
 * ({@code HttpHeaders}, {@code HttpResponseStatus}) are taken from return types, never named, because the agent jar
 * relocates its own Netty and every string naming it. java.base only.
 */
public final class ReactorNettyHttp {
  private ReactorNettyHttp() {}

  /** The key under which the carried context is put into the Reactor context of a request's connection. */
  public static final Object CONTEXT_KEY = new Object() {
    @Override
    public String toString() {
      return "fencing-agent.carried-context";
    }
  };

  /**
   * The decision for one attempt of {@code method} to {@code url} (Reactor Netty's external form of the target:
   * {@code scheme://host[:port]/path}, the port left out when it is the scheme's default), taken with
   * {@code carried} (what {@link TokenContext#carried()} was on the assembling thread; null: what this thread
   * carries) current on this thread for the decision only. Throws the block, as {@link HttpAttempt#decide}.
   */
  public static Decision decide(Object carried, String method, String url) throws FencingBlockedException {
    Object previous = carried == null ? null : TokenContext.install(carried);
    try {
      int schemeEnd = url.indexOf("://");
      if (schemeEnd <= 0) {
        return HttpAttempt.decide(method, null, null, -1);
      }
      String scheme = url.substring(0, schemeEnd);
      int hostStart = schemeEnd + 3;
      int authorityEnd = authorityEnd(url, hostStart);
      int colon = portColon(url, hostStart, authorityEnd);
      String host = url.substring(hostStart, colon >= 0 ? colon : authorityEnd);
      return HttpAttempt.decide(method, scheme, host, port(url, colon, authorityEnd, scheme));
    } finally {
      if (carried != null) {
        TokenContext.exit(previous);
      }
    }
  }

  /** 443 for https and wss, 80 otherwise (ws, http): the port Reactor Netty leaves out of its external form. */
  static int defaultPort(String scheme) {
    return "https".equalsIgnoreCase(scheme) || "wss".equalsIgnoreCase(scheme) ? 443 : 80;
  }

  /** Where the authority that starts at {@code hostStart} ends: at the path, query or fragment, or the end. */
  private static int authorityEnd(String url, int hostStart) {
    int end = hostStart;
    while (end < url.length() && "/?#".indexOf(url.charAt(end)) < 0) {
      end++;
    }
    return end;
  }

  /** The colon before the authority's port (not one inside an IPv6 literal); -1 when there is none. */
  private static int portColon(String url, int hostStart, int authorityEnd) {
    int bracket = url.lastIndexOf(']', authorityEnd - 1);
    int colon = url.lastIndexOf(':', authorityEnd - 1);
    return colon >= hostStart && colon > bracket ? colon : -1;
  }

  /** The port after {@code colon} (-1: none), else the scheme's default. */
  private static int port(String url, int colon, int authorityEnd, String scheme) {
    int port = colon >= 0 ? port(url, colon + 1, authorityEnd) : -1;
    return port >= 0 ? port : defaultPort(scheme);
  }

  /**
   * A response read on the event loop to an attempt Reactor Netty sent to {@code url} (its external form, as
   * {@link #decide} reads it) carrying {@code lock}'s pair (null: none): a 409 goes to the hook with that target and
   * lock, never with whatever the event loop decided last.
   */
  static void responded(int status, String rejectedHeader, String lock, String url) {
    int schemeEnd = url == null ? -1 : url.indexOf("://");
    if (schemeEnd <= 0) {
      HttpAttempt.responded(status, rejectedHeader, lock, null, null, -1);
      return;
    }
    String scheme = url.substring(0, schemeEnd);
    int hostStart = schemeEnd + 3;
    int authorityEnd = authorityEnd(url, hostStart);
    int colon = portColon(url, hostStart, authorityEnd);
    HttpAttempt.responded(status, rejectedHeader, lock, scheme,
        url.substring(hostStart, colon >= 0 ? colon : authorityEnd), port(url, colon, authorityEnd, scheme));
  }

  /** The decimal port in url[from, to); -1 when it is empty or not a port. */
  private static int port(String url, int from, int to) {
    if (from >= to || to - from > 5) {
      return -1;
    }
    int p = 0;
    for (int i = from; i < to; i++) {
      char c = url.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      p = p * 10 + (c - '0');
    }
    return p <= 65535 ? p : -1;
  }

  /**
   * A response Reactor Netty received for an attempt (an {@code HttpClientResponse}): a 409 with its
   * {@code Fencing-Rejected} value goes to the hook. Never throws: a response it cannot read is counted as a hook
   * failure and left alone.
   */
  public static void responded(Object response) {
    try {
      Responses r = RESPONSES.get(response.getClass());
      if (r.failure != null) {
        throw r.failure;
      }
      int status = (int) r.status.invokeExact(response);
      if (status == 409) {
        responded(status, (String) r.header.invokeExact(response, HttpHook.REJECTED_HEADER),
            (String) r.requestHeader.invokeExact(response, HttpHook.LOCK_HEADER), (String) r.url.invokeExact(response));
      }
    } catch (Throwable t) {
      HttpAttempt.blocked(t); // counts the agent's failure; never a block here
    }
  }

  private static final MethodType STATUS = MethodType.methodType(int.class, Object.class);
  private static final MethodType HEADER = MethodType.methodType(String.class, Object.class, String.class);

  private static final MethodType URL = MethodType.methodType(String.class, Object.class);

  /**
   * {@code status().code()}, {@code responseHeaders().get(name)}, {@code requestHeaders().get(name)} and
   * {@code resourceUrl()} of one response class, or why there are none.
   */
  private static final class Responses {
    final MethodHandle status;
    final MethodHandle header;
    final MethodHandle requestHeader;
    final MethodHandle url;
    final RuntimeException failure;

    Responses(MethodHandle status, MethodHandle header, MethodHandle requestHeader, MethodHandle url,
        RuntimeException failure) {
      this.status = status;
      this.header = header;
      this.requestHeader = requestHeader;
      this.url = url;
      this.failure = failure;
    }

    Responses(RuntimeException failure) {
      this(null, null, null, null, failure);
    }
  }

  /** {@code headers().get(name)} for a method returning Netty's {@code HttpHeaders}. */
  private static MethodHandle header(MethodHandles.Lookup lookup, Method headers) throws ReflectiveOperationException {
    return MethodHandles.filterArguments(lookup.unreflect(headers.getReturnType().getMethod("get", String.class)), 0,
        lookup.unreflect(headers)).asType(HEADER);
  }

  private static final ClassValue<Responses> RESPONSES = new ClassValue<>() {
    @Override
    protected Responses computeValue(Class<?> type) {
      String name = "reactor.netty.http.client.HttpClientResponse";
      try {
        Class<?> response = Class.forName(name, false, type.getClassLoader());
        if (!response.isAssignableFrom(type)) {
          return new Responses(new IllegalArgumentException(type.getName() + " is not a " + name));
        }
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        Method status = response.getMethod("status");
        MethodHandle code = MethodHandles.filterReturnValue(lookup.unreflect(status),
            lookup.unreflect(status.getReturnType().getMethod("code"))).asType(STATUS);
        return new Responses(code, header(lookup, response.getMethod("responseHeaders")),
            header(lookup, response.getMethod("requestHeaders")),
            lookup.unreflect(response.getMethod("resourceUrl")).asType(URL), null);
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        return new Responses(new IllegalStateException("cannot read the status, headers and URL of " + type.getName()
            + " through " + name + ".status().code(), responseHeaders().get(String), requestHeaders().get(String) and "
            + "resourceUrl()", e));
      }
    }
  };
}
