package dev.fencing.agent.bootstrap;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Writes a decision's headers onto a mutable request (or request builder) of an HTTP client library whose type has a
 * method that sets a header, replacing every value of that name, and one that removes all values of a name: Apache
 * HttpClient 4 and 5 ({@code setHeader}, {@code removeHeaders}), OkHttp's {@code Request.Builder}
 * ({@code header}, {@code removeHeader}) and Reactor Netty's {@code HttpClientRequest} (through the Netty
 * {@code HttpHeaders} its {@code requestHeaders()} returns: {@code set}, {@code remove}). The advice that calls it is inlined into the library and the agent cannot
 * see the library's classes, so the two methods are method handles on the library's own public type, looked up once
 * per request class (lock-free afterwards, no allocation per request). Public API of every version the hooks
 * support; each module's tests run it on the real classes of the oldest and the latest.
 */
public final class RequestHeaders {
  /** Apache HttpClient 4.x: {@code org.apache.http.HttpMessage.setHeader(String, String)}, {@code removeHeaders}. */
  public static final RequestHeaders APACHE_HTTPCLIENT_4 = new RequestHeaders("org.apache.http.HttpMessage",
      "setHeader", String.class, "removeHeaders");
  /** Apache HttpClient 5.x (httpcore5): {@code HttpMessage.setHeader(String, Object)}, {@code removeHeaders}. */
  public static final RequestHeaders APACHE_HTTPCLIENT_5 = new RequestHeaders("org.apache.hc.core5.http.HttpMessage",
      "setHeader", Object.class, "removeHeaders");
  /** OkHttp 4.x and 5.x: {@code okhttp3.Request.Builder.header(String, String)}, {@code removeHeader(String)}. */
  public static final RequestHeaders OKHTTP_BUILDER = new RequestHeaders("okhttp3.Request$Builder", "header",
      String.class, "removeHeader");

  /**
   * Reactor Netty 1.x: {@code reactor.netty.http.client.HttpClientRequest.requestHeaders()}, then Netty's
   * {@code HttpHeaders.set(String, Object)} and {@code remove(String)}. The Netty type is taken from the return type of
   * {@code requestHeaders()}, never named: the agent jar relocates its own Netty, and with it every string naming
   * {@code io.netty}.
   */
  public static final RequestHeaders REACTOR_NETTY = new RequestHeaders("reactor.netty.http.client.HttpClientRequest",
      "requestHeaders", "set", Object.class, "remove");

  private static final MethodType SET = MethodType.methodType(void.class, Object.class, String.class, String.class);
  private static final MethodType REMOVE = MethodType.methodType(void.class, Object.class, String.class);

  private final String messageType;
  /** The no-argument method of the message that returns the headers object to write, or null: the message itself. */
  private final String headersAccessor;
  private final String setName;
  private final Class<?> valueType;
  private final String removeName;

  /** The handles for one request class, or why there are none (kept, so a failing class is not looked up again). */
  private record Handles(MethodHandle set, MethodHandle remove, RuntimeException failure) {}

  private final ClassValue<Handles> handles = new ClassValue<>() {
    @Override
    protected Handles computeValue(Class<?> type) {
      try {
        Class<?> message = Class.forName(messageType, false, type.getClassLoader());
        if (!message.isAssignableFrom(type)) {
          return new Handles(null, null, new IllegalArgumentException(type.getName() + " is not a " + messageType));
        }
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        if (headersAccessor == null) {
          MethodHandle set = lookup.unreflect(message.getMethod(setName, String.class, valueType)).asType(SET);
          MethodHandle remove = lookup.unreflect(message.getMethod(removeName, String.class)).asType(REMOVE);
          return new Handles(set, remove, null);
        }
        java.lang.reflect.Method accessor = message.getMethod(headersAccessor);
        MethodHandle headers = lookup.unreflect(accessor);
        Class<?> headersType = accessor.getReturnType();
        MethodHandle set = MethodHandles.filterArguments(
            lookup.unreflect(headersType.getMethod(setName, String.class, valueType)), 0, headers).asType(SET);
        MethodHandle remove = MethodHandles.filterArguments(
            lookup.unreflect(headersType.getMethod(removeName, String.class)), 0, headers).asType(REMOVE);
        return new Handles(set, remove, null);
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        return new Handles(null, null, new IllegalStateException("cannot set headers on " + type.getName()
            + " through " + messageType + (headersAccessor == null ? "" : "." + headersAccessor + "()") + "."
            + setName + "(String, " + valueType.getSimpleName() + ") and "
            + removeName + "(String)",
            e));
      }
    }
  };

  private RequestHeaders(String messageType, String setName, Class<?> valueType, String removeName) {
    this(messageType, null, setName, valueType, removeName);
  }

  private RequestHeaders(String messageType, String headersAccessor, String setName, Class<?> valueType,
      String removeName) {
    this.messageType = messageType;
    this.headersAccessor = headersAccessor;
    this.setName = setName;
    this.valueType = valueType;
    this.removeName = removeName;
  }

  /**
   * Sets the pairs of {@link Decision#httpHeaders()} on {@code request} (each replacing what is there, so the pair is
   * carried exactly once, also on a request sent again), and removes a {@code Fencing-Grant} when the decision has
   * none ({@link HttpAttempt#dropsGrant}). A pass changes nothing. Throws what the library throws, or an
   * IllegalStateException when the request's class lacks the two methods (the advice counts it as a hook
   * failure; the request goes on).
   */
  public void tag(Object request, Decision d) throws Throwable {
    String[] h = d.httpHeaders();
    if (h.length == 0 && !HttpAttempt.dropsGrant(d)) {
      return;
    }
    Handles m = handles.get(request.getClass());
    if (m.failure() != null) {
      throw m.failure();
    }
    for (int i = 0; i < h.length; i += 2) {
      m.set().invokeExact(request, h[i], h[i + 1]);
    }
    if (HttpAttempt.dropsGrant(d)) {
      m.remove().invokeExact(request, HttpHook.GRANT_HEADER);
    }
  }
}
