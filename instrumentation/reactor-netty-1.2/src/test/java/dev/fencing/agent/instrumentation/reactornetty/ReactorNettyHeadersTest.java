package dev.fencing.agent.instrumentation.reactornetty;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.HttpHook;
import dev.fencing.agent.bootstrap.ReactorNettyHttp;
import dev.fencing.agent.bootstrap.RequestHeaders;
import dev.fencing.agent.instrumentation.LibraryCheck;
import java.lang.reflect.Proxy;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The calls the advice passes along, on the real classes of the oldest (1.2.16, Netty 4.1) and the latest (1.3.7,
 * Netty 4.2) supported Reactor Netty: {@link RequestHeaders#REACTOR_NETTY} writes the pair exactly once into the Netty
 * headers an {@code HttpClientRequest} returns (an application's old pair replaced, a grant only when the decision has
 * one), and {@link ReactorNettyHttp#responded} reads a 409's {@code Fencing-Rejected} from an
 * {@code HttpClientResponse}, with the {@code Fencing-Lock} and the URL of the request it answers. The request and
 * response are proxies of the library's public interfaces (their implementation needs a live channel) around Netty's
 * real {@code DefaultHttpHeaders} and {@code HttpResponseStatus}.
 */
class ReactorNettyHeadersTest {
  private final List<String> responses = new ArrayList<>();

  @AfterEach
  void uninstall() {
    Fencing.installHttp(HttpHook.NOOP);
  }

  private static Object proxy(ClassLoader library, String type, String method, Object value) throws Exception {
    return Proxy.newProxyInstance(library, new Class<?>[] {library.loadClass(type)}, (self, m, args) -> {
      if (m.getName().equals(method)) {
        return value;
      }
      if (m.getName().equals("status") && value instanceof Object[]) {
        return ((Object[]) value)[0];
      }
      if (m.getName().equals("responseHeaders") && value instanceof Object[]) {
        return ((Object[]) value)[1];
      }
      if (m.getName().equals("requestHeaders") && value instanceof Object[]) {
        return ((Object[]) value)[2];
      }
      if (m.getName().equals("resourceUrl") && value instanceof Object[]) {
        return ((Object[]) value)[3];
      }
      throw new UnsupportedOperationException(m.getName());
    });
  }

  private static void add(Object headers, String name, String value) throws Exception {
    headers.getClass().getMethod("add", String.class, Object.class).invoke(headers, name, value);
  }

  @SuppressWarnings("unchecked")
  private static List<String> getAll(Object headers, String name) throws Exception {
    return (List<String>) headers.getClass().getMethod("getAll", String.class).invoke(headers, name);
  }

  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void theRequestsHeadersCarryThePairOnce(String end) throws Throwable {
    try (URLClassLoader library = LibraryCheck.isolated(LibraryCheck.versionJars("reactor-netty", end))) {
      Object headers = library.loadClass("io.netty.handler.codec.http.DefaultHttpHeaders").getConstructor()
          .newInstance();
      add(headers, "Fencing-Token", "6");
      add(headers, "Fencing-Token", "5");
      add(headers, "Fencing-Grant", "old-grant");
      Object request = proxy(library, "reactor.netty.http.client.HttpClientRequest", "requestHeaders", headers);

      RequestHeaders.REACTOR_NETTY.tag(request, Decision.tag("orders", 7, "c2ln", null));

      assertThat(getAll(headers, "Fencing-Token")).containsExactly("7");
      assertThat(getAll(headers, "Fencing-Lock")).containsExactly("orders");
      assertThat(getAll(headers, "Fencing-Signature")).containsExactly("c2ln");
      assertThat(getAll(headers, "Fencing-Grant")).as("the old grant is not this token's")
          .isEmpty();

      RequestHeaders.REACTOR_NETTY.tag(request, Decision.tag("orders", 8, null, "1a2b"));
      assertThat(getAll(headers, "Fencing-Token")).containsExactly("8");
      assertThat(getAll(headers, "Fencing-Grant")).containsExactly("1a2b");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void a409sRejectionIsReadFromTheResponse(String end) throws Throwable {
    Fencing.installHttp(new HttpHook() {
      @Override
      public Decision decide(String method, String scheme, String host, int port) {
        return Decision.pass("orders");
      }

      @Override
      public void responded(int status, String rejectedHeader) {
        responses.add(status + " " + rejectedHeader);
      }

      @Override
      public void responded(int status, String rejectedHeader, String lock, String scheme, String host, int port) {
        responses.add(status + " " + rejectedHeader + " lock " + lock + " at " + scheme + "://" + host + ":" + port);
      }

      @Override
      public void observe(CompletableFuture<?> response) {}
    });
    try (URLClassLoader library = LibraryCheck.isolated(LibraryCheck.versionJars("reactor-netty", end))) {
      Class<?> status = library.loadClass("io.netty.handler.codec.http.HttpResponseStatus");
      Object headers = library.loadClass("io.netty.handler.codec.http.DefaultHttpHeaders").getConstructor()
          .newInstance();
      add(headers, "Fencing-Rejected", "stale-token");
      Object requestHeaders = library.loadClass("io.netty.handler.codec.http.DefaultHttpHeaders").getConstructor()
          .newInstance();
      add(requestHeaders, "Fencing-Lock", "orders");
      String type = "reactor.netty.http.client.HttpClientResponse";
      String url = "http://ledger:8080/entries";

      Object conflict = status.getField("CONFLICT").get(null);
      ReactorNettyHttp.responded(proxy(library, type, "", new Object[] {conflict, headers, requestHeaders, url}));
      ReactorNettyHttp.responded(proxy(library, type, "",
          new Object[] {status.getField("OK").get(null), headers, requestHeaders, url}));

      assertThat(responses).as("the refusal goes with its attempt's target and lock, whatever thread reads it")
          .containsExactly("409 stale-token lock orders at http://ledger:8080");
    }
  }
}
