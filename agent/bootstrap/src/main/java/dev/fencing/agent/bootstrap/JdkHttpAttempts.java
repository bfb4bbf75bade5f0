package dev.fencing.agent.bootstrap;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.URL;
import java.util.Map;

/**
 * The per-attempt part of the hooks on the JDK's own HTTP clients, whose attempt objects are JDK-internal classes
 * (not exported, so neither the agent nor the advice can be compiled against them): the methods it calls on them are
 * method handles found once, with the lookup of the class the advice is inlined into, which the advice hands over on
 * its first run ({@code MethodHandles.lookup()} there is that class's own lookup).
 *
 * <ul>
 *   <li>{@code HttpURLConnection}: every request it writes (the first, a redirect it follows, an authentication
 *       round, the re-send of a request whose kept-alive connection closed before the status line,
 *       {@code sun.net.http.retryPost}) goes through {@code sun.net.www.http.HttpClient.writeRequests(MessageHeader,
 *       PosterOutputStream)}; {@link #urlConnectionAttempt} decides it there, tags the {@code MessageHeader} about to
 *       be written, or closes the attempt's connection and throws the block.</li>
 *   <li>JDK {@code HttpClient}: the attempts after the first of one exchange (a followed redirect, a retry, an
 *       authentication round) are started by {@code MultiExchange.responseAsyncImpl()}; their request is a
 *       {@code jdk.internal.net.http.HttpRequestImpl}, which {@link #setSystemHeaders} tags through its system
 *       headers.</li>
 * </ul>
 */
public final class JdkHttpAttempts {
  private JdkHttpAttempts() {}

  /** {@code MessageHeader.getKey(int)}, {@code remove(String)}, {@code add(String, String)}; {@code closeServer()}. */
  private record UrlConnectionHandles(MethodHandle key, MethodHandle remove, MethodHandle add, MethodHandle close) {}

  /** {@code HttpRequestImpl.setSystemHeader(String, String)}, and its system headers' map (to remove a name). */
  private record HttpClientHandles(MethodHandle set, MethodHandle systemHeaders) {}

  private static volatile UrlConnectionHandles urlConnection;
  private static volatile HttpClientHandles httpClient;

  /** True once {@link #initUrlConnection} ran: the advice looks up its class only the first time. */
  public static boolean urlConnectionReady() {
    return urlConnection != null;
  }

  /** With the lookup of {@code sun.net.www.http.HttpClient}: finds what {@link #urlConnectionAttempt} calls. */
  public static void initUrlConnection(MethodHandles.Lookup httpClientLookup) throws ReflectiveOperationException {
    Class<?> header = httpClientLookup.findClass("sun.net.www.MessageHeader");
    MethodHandle key = httpClientLookup.findVirtual(header, "getKey", MethodType.methodType(String.class, int.class))
        .asType(MethodType.methodType(String.class, Object.class, int.class));
    MethodHandle remove = httpClientLookup.findVirtual(header, "remove",
        MethodType.methodType(void.class, String.class)).asType(MethodType.methodType(void.class, Object.class, String.class));
    MethodHandle add = httpClientLookup.findVirtual(header, "add",
        MethodType.methodType(void.class, String.class, String.class))
        .asType(MethodType.methodType(void.class, Object.class, String.class, String.class));
    MethodHandle close = httpClientLookup.findVirtual(httpClientLookup.lookupClass(), "closeServer",
        MethodType.methodType(void.class)).asType(MethodType.methodType(void.class, Object.class));
    urlConnection = new UrlConnectionHandles(key, remove, add, close);
  }

  /**
   * One request {@code connection} (a {@code sun.net.www.http.HttpClient}) is about to write to {@code url}:
   * {@code requests} (its {@code MessageHeader}, the request line first) is decided by its method. A tag replaces
   * every {@code Fencing-*} value of the pair (the same {@code MessageHeader} is written again for a re-send or a
   * 307, so the pair is carried exactly once, with this attempt's token); a block closes the attempt's connection,
   * to which nothing was written, and is thrown. A proxy's {@code CONNECT} (the tunnel, not a request to the
   * destination) is left alone. Throws the block, or what an agent error is.
   */
  public static void urlConnectionAttempt(Object connection, Object requests, URL url) throws Throwable {
    UrlConnectionHandles h = urlConnection;
    String method = requestMethod((String) h.key().invokeExact(requests, 0));
    if (method == null || method.equals("CONNECT")) {
      return;
    }
    Decision d;
    try {
      d = HttpAttempt.decide(method, url.getProtocol(), url.getHost(), url.getPort());
    } catch (FencingBlockedException blocked) {
      try {
        h.close().invokeExact(connection);
      } catch (Throwable ignored) {
        // the block is what the caller must see; the connection is closed with the HttpURLConnection at worst
      }
      throw blocked;
    }
    String[] pairs = d.httpHeaders();
    for (int i = 0; i < pairs.length; i += 2) {
      h.remove().invokeExact(requests, pairs[i]);
      h.add().invokeExact(requests, pairs[i], pairs[i + 1]);
    }
    if (HttpAttempt.dropsGrant(d)) {
      h.remove().invokeExact(requests, HttpHook.GRANT_HEADER);
    }
  }

  /** The method of an HTTP/1.1 request line ({@code POST /path HTTP/1.1}); null when it is none. */
  static String requestMethod(String requestLine) {
    if (requestLine == null) {
      return null;
    }
    int space = requestLine.indexOf(' ');
    return space > 0 ? requestLine.substring(0, space) : null;
  }

  /** True once {@link #initHttpClient} ran. */
  public static boolean httpClientReady() {
    return httpClient != null;
  }

  /** With the lookup of {@code jdk.internal.net.http.MultiExchange}: finds what {@link #setSystemHeaders} calls. */
  public static void initHttpClient(MethodHandles.Lookup multiExchangeLookup) throws ReflectiveOperationException {
    Class<?> request = multiExchangeLookup.findClass("jdk.internal.net.http.HttpRequestImpl");
    Class<?> builder = multiExchangeLookup.findClass("jdk.internal.net.http.common.HttpHeadersBuilder");
    MethodHandle set = multiExchangeLookup.findVirtual(request, "setSystemHeader",
        MethodType.methodType(void.class, String.class, String.class))
        .asType(MethodType.methodType(void.class, Object.class, String.class, String.class));
    MethodHandle systemHeaders = MethodHandles.filterReturnValue(
        multiExchangeLookup.findVirtual(request, "getSystemHeadersBuilder", MethodType.methodType(builder)),
        multiExchangeLookup.findVirtual(builder, "map", MethodType.methodType(Map.class)))
        .asType(MethodType.methodType(Map.class, Object.class));
    httpClient = new HttpClientHandles(set, systemHeaders);
  }

  /**
   * Sets the pairs of a tag on a JDK {@code HttpClient} attempt's request (an {@code HttpRequestImpl}) as system
   * headers, each replacing what is there, and removes a {@code Fencing-Grant} system header when the decision has
   * none. The client writes a system header only when the request's own headers lack that name: the advice calls this
   * for a request without a {@code Fencing-Token} of its own. A pass changes nothing.
   */
  public static void setSystemHeaders(Object request, Decision d) throws Throwable {
    HttpClientHandles h = httpClient;
    String[] pairs = d.httpHeaders();
    for (int i = 0; i < pairs.length; i += 2) {
      h.set().invokeExact(request, pairs[i], pairs[i + 1]);
    }
    if (HttpAttempt.dropsGrant(d)) {
      ((Map<?, ?>) h.systemHeaders().invokeExact(request)).remove(HttpHook.GRANT_HEADER);
    }
  }
}
