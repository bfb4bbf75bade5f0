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
 * {@code Fencing-Rejected} header. Reactor Netty's types are public and reached by method handles looked up once per
 * class; the Netty types behind them ({@code HttpHeaders}, {@code HttpResponseStatus}) are taken from return types,
 * never named, because the agent jar relocates its own Netty and every string naming it. java.base only.
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
      int authorityEnd = hostStart;
      while (authorityEnd < url.length() && "/?#".indexOf(url.charAt(authorityEnd)) < 0) {
        authorityEnd++;
      }
      int hostEnd = authorityEnd;
      int port = -1;
      int bracket = url.lastIndexOf(']', authorityEnd - 1);
      int colon = url.lastIndexOf(':', authorityEnd - 1);
      if (colon >= hostStart && colon > bracket) {
        port = port(url, colon + 1, authorityEnd);
        hostEnd = colon;
      }
      String host = url.substring(hostStart, hostEnd);
      return HttpAttempt.decide(method, scheme, host, port >= 0 ? port : defaultPort(scheme));
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
        HttpAttempt.responded(status, (String) r.header.invokeExact(response, HttpHook.REJECTED_HEADER));
      }
    } catch (Throwable t) {
      HttpAttempt.blocked(t); // counts the agent's failure; never a block here
    }
  }

  private static final MethodType STATUS = MethodType.methodType(int.class, Object.class);
  private static final MethodType HEADER = MethodType.methodType(String.class, Object.class, String.class);

  /** {@code status().code()} and {@code responseHeaders().get(name)} of one response class, or why there are none. */
  private static final class Responses {
    final MethodHandle status;
    final MethodHandle header;
    final RuntimeException failure;

    Responses(MethodHandle status, MethodHandle header, RuntimeException failure) {
      this.status = status;
      this.header = header;
      this.failure = failure;
    }
  }

  private static final ClassValue<Responses> RESPONSES = new ClassValue<>() {
    @Override
    protected Responses computeValue(Class<?> type) {
      String name = "reactor.netty.http.client.HttpClientResponse";
      try {
        Class<?> response = Class.forName(name, false, type.getClassLoader());
        if (!response.isAssignableFrom(type)) {
          return new Responses(null, null, new IllegalArgumentException(type.getName() + " is not a " + name));
        }
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        Method status = response.getMethod("status");
        Method headers = response.getMethod("responseHeaders");
        MethodHandle code = MethodHandles.filterReturnValue(lookup.unreflect(status),
            lookup.unreflect(status.getReturnType().getMethod("code"))).asType(STATUS);
        MethodHandle header = MethodHandles.filterArguments(
            lookup.unreflect(headers.getReturnType().getMethod("get", String.class)), 0, lookup.unreflect(headers))
            .asType(HEADER);
        return new Responses(code, header, null);
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        return new Responses(null, null, new IllegalStateException("cannot read the status and headers of "
            + type.getName() + " through " + name + ".status().code() and responseHeaders().get(String)", e));
      }
    }
  };
}
