package dev.fencing.agent.it.apps;

import java.net.URI;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.apache.hc.client5.http.async.methods.SimpleHttpRequest;
import org.apache.hc.client5.http.async.methods.SimpleHttpResponse;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.concurrent.FutureCallback;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpMessage;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.apache.hc.core5.http.message.BasicClassicHttpRequest;

/**
 * One version of Apache HttpClient 5, loaded by {@link ApacheHttpApp} in its own class loader: the default classic
 * and async clients (HttpClients.createDefault, HttpAsyncClients.createDefault: default redirect and retry
 * strategies). Compiled against the oldest supported version, so it links against every later one.
 *
 * <p>{@code SYNC <method> <url>} answers {@code STATUS <code> callerHeaders=[...]}; {@code ASYNC <method> <url>}
 * answers the same plus {@code callback=completed|failed(<exception>)}; a failure answers {@code ERR <exception>:
 * <message>}. callerHeaders are the header names of the application's request object after the call.
 */
public final class ApacheHttpDriver implements Function<String, String> {
  private final CloseableHttpClient sync = HttpClients.createDefault();
  private final CloseableHttpAsyncClient async = HttpAsyncClients.createDefault();

  public ApacheHttpDriver() {
    async.start();
  }

  @Override
  public String apply(String command) {
    if (command.equals("VERSION")) {
      String jar = HttpClients.class.getProtectionDomain().getCodeSource().getLocation().getPath();
      return jar.substring(jar.lastIndexOf('/') + 1);
    }
    String[] p = command.split(" ");
    try {
      return p[0].equals("ASYNC") ? async(p[1], URI.create(p[2])) : sync(p[1], URI.create(p[2]));
    } catch (Exception e) {
      Throwable t = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
      return "ERR " + t.getClass().getName() + ": " + t.getMessage();
    }
  }

  private String sync(String method, URI uri) throws Exception {
    BasicClassicHttpRequest request = new BasicClassicHttpRequest(method, uri);
    request.setHeader("X-App", "1");
    if (!method.equals("GET")) {
      request.setEntity(new StringEntity("x", ContentType.TEXT_PLAIN));
    }
    int code = sync.execute(request, response -> {
      EntityUtils.consume(response.getEntity());
      return response.getCode();
    });
    return "STATUS " + code + " callerHeaders=" + names(request);
  }

  private String async(String method, URI uri) throws Exception {
    SimpleHttpRequest request = new SimpleHttpRequest(method, uri);
    request.setHeader("X-App", "1");
    if (!method.equals("GET")) {
      request.setBody("x", ContentType.TEXT_PLAIN);
    }
    AtomicReference<String> outcome = new AtomicReference<>();
    CountDownLatch called = new CountDownLatch(1);
    Future<SimpleHttpResponse> future = async.execute(request, new FutureCallback<SimpleHttpResponse>() {
      @Override
      public void completed(SimpleHttpResponse result) {
        outcome.set("completed");
        called.countDown();
      }

      @Override
      public void failed(Exception ex) {
        outcome.set("failed(" + ex.getClass().getName() + ")");
        called.countDown();
      }

      @Override
      public void cancelled() {
        outcome.set("cancelled");
        called.countDown();
      }
    });
    String result;
    try {
      result = "STATUS " + future.get(20, TimeUnit.SECONDS).getCode();
    } catch (ExecutionException e) {
      result = "ERR " + e.getCause().getClass().getName() + ": " + e.getCause().getMessage();
    }
    called.await(20, TimeUnit.SECONDS);
    return result + " callback=" + outcome.get() + " callerHeaders=" + names(request);
  }

  private static String names(HttpMessage message) {
    return Arrays.toString(Arrays.stream(message.getHeaders()).map(Header::getName).toArray());
  }
}
